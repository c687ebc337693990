"""Why one GPU sat idle, gap by gap: each stretch without GPU work is charged to what held up the
work that ended it (pure functions; each cause is a rule of nsprof.analyze.host_verdict.IDLE_RULES,
which states its condition).

A gap ends when the next operation starts; its launch call (nsprof.analyze.host_calls) says why the
GPU waited. Either the host had not yet issued it:
- after a wait on that thread that was blocked when the GPU ran out of work and returned before the
  launch (WAITED, or COPY_WAITED for a blocking copy): the wait is charged at most the time it was
  blocked while the GPU still worked, which the host could have spent on what it did after it; the
  rest of the gap is the host's own, as below;
- with module loading or allocation calls filling most of the gap: LOADED;
- otherwise LAUNCHING for a gap of at most HOST_WORK_NS (the host's time between launches), and
  HOST_WORK for a longer one (the host ran its own code: data preparation, Python);
or it was queued and waited on something else (QUEUED: another stream, an event, the launch
latency). The events are walked GAP_CHUNK_ROWS at a time: a 10M-kernel capture's gaps are not held
at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nsprof.analyze.host_calls import COPY, HostCalls

LOADING_SHARE = 0.5  # module loading or allocation calls filling this share of a gap caused it
WAIT_SLACK_NS = 5_000  # a wait returns a few microseconds after the GPU finished what it waited for
# A host gap longer than this is the host's own work, not the time it takes to launch: PyTorch's eager
# dispatch spends 15-35 us between launches (an H200's captures), a data loader milliseconds.
HOST_WORK_NS = 200_000
LAUNCHING, HOST_WORK, WAITED, COPY_WAITED, LOADED, QUEUED, UNMATCHED = (
    "launch overhead", "host work", "synchronization", "blocking copy", "module loading and allocation", "queued",
    "unmatched")
CAUSES = (LAUNCHING, HOST_WORK, WAITED, COPY_WAITED, LOADED, QUEUED, UNMATCHED)
GAP_CHUNK_ROWS = 1_000_000


def idle_causes(start: np.ndarray, end: np.ndarray, rows: np.ndarray, calls: HostCalls,
                window_start: int) -> dict[str, int]:
    """One device's idle time by cause (CAUSES), from its GPU work by start (`start`, `end`, and each
    operation's launch call, `rows` of `calls`: -1 for none) within a window opening at
    `window_start`: the time before its first work counts for the cause of that first gap."""
    totals = np.zeros(len(CAUSES), dtype=np.int64)  # integer sums: nanoseconds stay exact
    for gaps in _gaps(start, end, rows, calls, window_start):
        np.add.at(totals, gaps.cause, gaps.rest)
        np.add.at(totals, gaps.charged_to, gaps.charged)
    return {cause: int(total) for cause, total in zip(CAUSES, totals)}


def idle_gaps(start: np.ndarray, end: np.ndarray, rows: np.ndarray, calls: HostCalls, window_start: int,
              shown: tuple[int, int]) -> pd.DataFrame:
    """The gaps of idle_causes that overlap `shown` ([start, end) ns), each with the cause that took
    most of it: start_ns, end_ns, cause (for a timeline to mark)."""
    found = []
    for gaps in _gaps(start, end, rows, calls, window_start):
        seen = (gaps.end > shown[0]) & (gaps.start < shown[1])
        main = np.where(gaps.charged > gaps.rest, gaps.charged_to, gaps.cause)[seen]
        found.append(pd.DataFrame({"start_ns": gaps.start[seen], "end_ns": gaps.end[seen],
                                   "cause": np.asarray(CAUSES, dtype=object)[main]}))
    return pd.concat(found, ignore_index=True) if found else pd.DataFrame(columns=["start_ns", "end_ns", "cause"])


@dataclass(frozen=True)
class _Gaps:
    """One chunk's gaps: where they are, their cause codes (of CAUSES), the part charged to a wait
    before them and to which cause (WAITED or COPY_WAITED), and the rest."""

    start: np.ndarray
    end: np.ndarray
    cause: np.ndarray
    rest: np.ndarray
    charged: np.ndarray
    charged_to: np.ndarray


def _gaps(start: np.ndarray, end: np.ndarray, rows: np.ndarray, calls: HostCalls, window_start: int) -> Iterator[_Gaps]:
    """The gaps between a device's GPU work (by start), classified, GAP_CHUNK_ROWS operations at a time."""
    waits, loading = calls.blocking_by_thread, calls.loading_by_thread
    reach = window_start
    for first in range(0, len(start), GAP_CHUNK_ROWS):
        chunk = slice(first, first + GAP_CHUNK_ROWS)
        ends = np.maximum.accumulate(np.r_[reach, end[chunk]])
        reach = int(ends[-1])
        gap_start = ends[:-1]
        opens = np.flatnonzero(start[chunk] > gap_start)
        if len(opens):
            yield _classify(gap_start[opens], start[chunk][opens], rows[chunk][opens], calls, waits, loading)


def _classify(gap_start: np.ndarray, gap_end: np.ndarray, rows: np.ndarray, calls: HostCalls,
              waits: dict[int, pd.DataFrame], loading: dict[int, pd.DataFrame]) -> _Gaps:
    """Each gap's causes (module docstring)."""
    matched = rows >= 0
    safe = np.maximum(rows, 0)
    call_start = np.where(matched, calls.start[safe], -1)
    call_end, thread = calls.end[safe], calls.thread[safe]
    length = gap_end - gap_start
    code = {cause: np.int8(i) for i, cause in enumerate(CAUSES)}
    issued_late = matched & (call_start > gap_start)
    cause = np.full(len(gap_start), code[UNMATCHED], dtype=np.int8)
    queued = matched & ~issued_late
    cause[queued] = np.where(call_end[queued] > gap_start[queued], code[LAUNCHING], code[QUEUED])
    late = np.flatnonzero(issued_late)
    cause[late] = np.where(length[late] > HOST_WORK_NS, code[HOST_WORK], code[LAUNCHING])
    charged = np.zeros(len(gap_start), dtype=np.int64)  # the part of a gap charged to a wait before it
    charged_to = np.full(len(gap_start), code[WAITED], dtype=np.int8)
    for tid in np.unique(thread[late]):
        mine = late[thread[late] == tid]
        own = waits.get(int(tid))
        if own is not None:
            # the wait this thread was in when the GPU ran dry (a thread's calls do not overlap: the last
            # to start before the gap), if it returned before the launch call
            starts, ends = own["start_ns"].to_numpy(np.int64), own["end_ns"].to_numpy(np.int64)
            at = np.searchsorted(starts, gap_start[mine], side="left") - 1
            last = np.maximum(at, 0)
            waited = (at >= 0) & (ends[last] >= gap_start[mine] - WAIT_SLACK_NS) & (ends[last] <= call_start[mine])
            charged[mine] = np.where(waited, np.minimum(gap_start[mine] - starts[last], length[mine]), 0)
            charged_to[mine] = np.where((own["kind"] == COPY).to_numpy()[last], code[COPY_WAITED], code[WAITED])
        busy = loading.get(int(tid))
        if busy is not None:
            inside = _time_inside(busy, gap_start[mine], call_start[mine])
            cause[mine[inside >= LOADING_SHARE * (call_start[mine] - gap_start[mine])]] = code[LOADED]
    rest = length - charged
    cause[(rest <= HOST_WORK_NS) & (cause == code[HOST_WORK])] = code[LAUNCHING]  # what is left after the wait
    return _Gaps(gap_start, gap_end, cause, rest, charged, charged_to)


def _time_inside(calls: pd.DataFrame, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """For each [start, end): the time the calls (one thread's, by start: they do not overlap) spent inside it."""
    call_start, call_end = calls["start_ns"].to_numpy(np.int64), calls["end_ns"].to_numpy(np.int64)
    before = np.r_[0, np.cumsum(call_end - call_start)]

    def covered(t: np.ndarray) -> np.ndarray:  # time spent in calls before t
        i = np.searchsorted(call_start, t, side="right")
        last = np.maximum(i - 1, 0)
        partial = np.minimum(t, call_end[last]) - call_start[last]
        return before[last] + np.where(i > 0, np.maximum(partial, 0), 0)

    return covered(ends) - covered(starts)
