"""Why the GPU waits: the host side of one program's nsys capture, over its steady state (pure functions).

The window is the program's steady state (nsprof.analyze.iterations: its loop, marked or found in the
GPU work, from its second iteration or the first after its warm-up, to the end of its last GPU
work), or, without one, the
span of its GPU work; where that holds more than MAX_WINDOW_OPERATIONS GPU operations, its last
iterations that hold at most that many (or its last operations, without iterations): a steady state
repeats itself, and the analysis then takes the same time on a 10M-kernel capture as on a 2M one.
In the window, per device:

- how busy the GPU was (the union of kernels, copies, memsets and graphs; work that began before the
  window and runs into it, such as the previous iteration's graph, counts for its part inside), and
  how much of that was copies; the same per stream;
- the launches: how many per second, the median kernel, the host's time between launch calls and in
  each, how long after its launch call a kernel started, and the queue depth (GPU work launched and
  not finished when a launch call begins: 0 means the GPU had nothing left to do);
- the waits (synchronizations and blocking copies), pageable copies, module loading and allocations;
- the GPU's idle time split by cause (charged gap by gap as nsprof.analyze.host_idle says);
- what the host did in the GPU's idle time, where the capture holds CPU samples
  (nsprof.analyze.host_activity: numerical work, Python and dispatch, CUDA calls, compiling);

and from those, the verdict and the fixes (nsprof.analyze.host_verdict).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from nsprof.analyze.framework import framework
from nsprof.analyze.gpu_events import GRAPH, KERNEL, gpu_events, merged_intervals
from nsprof.analyze.host_activity import host_activity, idle_stretches
from nsprof.analyze.host_calls import ALLOCATION, COPY, KINDS, LAUNCH, LOADING, HostCalls, host_calls, pageable_copies
from nsprof.analyze.host_idle import idle_causes, idle_gaps
from nsprof.analyze.host_types import (
    BusyAndIdle,
    CallSummary,
    Copies,
    DeviceFigures,
    HostFigures,
    HostSide,
    IterationsJudged,
    Launches,
    PageableCopies,
    StreamFigures,
)
from nsprof.analyze.host_types import Window as WindowJson
from nsprof.analyze.host_verdict import PINNED_SAMPLE_BYTES, host_fixes, verdict
from nsprof.analyze.host_where import call_places
from nsprof.analyze.program_harness import SteadyState
from nsprof.ceilings.peaks import Ceiling
from nsprof.parse.model import GpuTimeline

MAX_WINDOW_OPERATIONS = 2_000_000


@dataclass(frozen=True)
class Window:
    start_ns: int
    end_ns: int
    source: str  # what defines it: the steady state's rule, or the span of GPU work
    iterations: int | None = None  # instances of the repeating range it holds

    def to_json(self) -> WindowJson:
        return {"start_ns": self.start_ns, "end_ns": self.end_ns, "span_ns": self.end_ns - self.start_ns,
                "source": self.source}


def host_side(export: GpuTimeline, state: SteadyState | None, ceiling: Ceiling | None = None) -> HostSide | None:
    """The host-side analysis of one export (keys below), or None where it has no GPU work or no
    CUDA API calls. `state`: its steady state (nsprof.analyze.iterations.steady_part's; None:
    the window is the span of its GPU work). `ceiling`: the GPU's, for the bus's pinned rate each way.

    Keys: window, devices (per device: busy and copy figures, idle_ns, idle causes), launches,
    waits, copies, loading, allocation, startup_ns (before the window), verdict (verdict, rule,
    evidence) and fixes (host-side causes as fixes, largest saving first)."""
    if export.runtime.empty:
        return None
    spans = gpu_events([export], ("start_ns", "end_ns"))  # by start: what the window is drawn from
    if spans.empty:
        return None
    window = _window(spans, state)
    gaps = _idle_where_sampled(export, spans, window)
    del spans
    # every GPU operation of the window, and only those: a 10M-kernel capture's whole table is not made
    inside = gpu_events([_within(export, window)],
                        ("device_id", "stream_id", "kind", "start_ns", "end_ns", "correlation_id", "pid"))
    carried = gpu_events([_within(export, window, carried=True)], ("device_id", "stream_id", "kind", "end_ns"))
    calls = host_calls(export)
    others = calls.others
    others = others.iloc[slice(*np.searchsorted(others["start_ns"].to_numpy(), [window.start_ns, window.end_ns]))]
    waits = others[others["blocking"].to_numpy() & (others["kind"] != COPY).to_numpy()]
    rows = calls.find(*_ids(inside))  # each operation's launch call, found once
    devices = [_device(device, inside[mine], rows[mine], calls, window,
                       carried[(carried["device_id"] == device).to_numpy()]) for device, mine in _split(inside["device_id"])]
    activity = host_activity(export, gaps, _launching_threads(calls, window)) if gaps is not None else None
    figures: HostFigures = {"window": window.to_json(), "devices": devices,
              "launches": _launches(export, calls, inside, rows, window),
              "waits": {**_call_summary(waits), "where": call_places(export, waits)},
              "copies": _copies(export, others, window, ceiling),
              "loading": _call_summary(others[(others["kind"] == LOADING).to_numpy()]),
              "allocation": _call_summary(others[(others["kind"] == ALLOCATION).to_numpy()]),
              "startup_ns": max(0, window.start_ns - int(calls.start.min())),
              "untraced": list(export.untraced), "tool": export.tool, "framework": framework(export),
               "iterations": _judged(state, window),
               "activity": activity.to_json() if activity is not None else None}
    return {**figures, "verdict": verdict(figures), "fixes": host_fixes(figures)}


def _judged(state: SteadyState | None, window: Window) -> IterationsJudged | None:
    """The iterations the window holds, of the steady state's repeating range; None without one."""
    return None if state is None else {"range": state.range, "count": window.iterations, "source": state.source}


def _window(events: pd.DataFrame, state: SteadyState | None) -> Window:
    """The window of the module docstring; `events` by start."""
    start = events["start_ns"].to_numpy()
    end = int(events["end_ns"].max())
    cap = MAX_WINDOW_OPERATIONS

    if state is not None and state.start_ns < end:
        starts = np.asarray(state.instance_starts, dtype=np.int64)
        starts = starts[starts >= state.start_ns] if (starts >= state.start_ns).any() else np.array([state.start_ns])
        within_cap = len(start) - np.searchsorted(start, starts) <= cap  # the later an iteration, the fewer follow
        first = int(np.argmax(within_cap)) if within_cap.any() else len(starts) - 1
        iterations = len(starts) - first
        if first == 0:
            skipped = state.instances - len(starts)
            return Window(int(starts[0]), end, f"steady state: from iteration {skipped + 1} of {state.instances} of "
                                          f"{state.range} to the end of the last GPU work", iterations)
        return Window(int(starts[first]), end, f"steady state: the last {iterations:,} of its {len(starts):,} iterations "
                                          f"of {state.range} (at most {cap:,} GPU operations), to the end of the last "
                                          "GPU work", iterations)
    if len(start) > cap:
        return Window(int(start[-cap]), end, f"the last {cap:,} GPU operations of the capture (no loop found and no "
                                             "repeating NVTX range: mark each iteration with one to analyze the steady "
                                             "state)")
    return Window(int(start[0]), end, "the span of the capture's GPU work, start-up included (no loop found in the GPU "
                  "work and no repeating NVTX range: mark each iteration with one to analyze the steady state)")


def idle_marks(export: GpuTimeline, events: pd.DataFrame, shown: tuple[int, int]) -> pd.DataFrame | None:
    """The GPU's idle gaps in one program's capture that overlap `shown`, each with the cause that
    took most of it (nsprof.analyze.host_idle): device_id, start_ns, end_ns, cause; None where the
    capture has no CUDA calls. `events`: its gpu_events, with pid and correlation_id."""
    if export.runtime.empty or events.empty:
        return None
    events = events[((events["end_ns"] > shown[0]) & (events["start_ns"] < shown[1])).to_numpy()]  # a zoom's few
    if events.empty:
        return None
    calls = host_calls(export)
    rows = calls.find(*_ids(events))
    start, end = events["start_ns"].to_numpy(np.int64), events["end_ns"].to_numpy(np.int64)
    marks = [idle_gaps(start[mine], end[mine], rows[mine], calls, int(start[mine][0]), shown).assign(device_id=device)
             for device, mine in _split(events["device_id"])]
    return pd.concat(marks, ignore_index=True)[["device_id", "start_ns", "end_ns", "cause"]]


def _within(export: GpuTimeline, window: Window, carried: bool = False) -> GpuTimeline:
    """The export's GPU operations that start in the window, with the columns gpu_events reads; with
    `carried`, those that began before it and run into it instead (a graph launched in the iteration
    before the window, still running when it opens)."""
    def rows(frame: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
        start = frame["start_ns"].to_numpy()
        kept = [column for column in columns if column in frame]
        if carried:
            return frame.loc[(start < window.start_ns) & (frame["end_ns"].to_numpy() > window.start_ns), kept]
        return frame.loc[(start >= window.start_ns) & (start < window.end_ns), kept]

    ids = ("start_ns", "end_ns", "device_id", "stream_id", "correlation_id", "global_pid", "pid")
    return replace(export, kernels=rows(export.kernels, (*ids, "kernel")), graphs=rows(export.graphs, (*ids, "name")),
                   memcpys=rows(export.memcpys, (*ids, "bytes", "copy_kind")), memsets=rows(export.memsets, (*ids, "bytes")))


def _device(device_id: int, events: pd.DataFrame, rows: np.ndarray, calls: HostCalls, window: Window,
            carried: pd.DataFrame) -> DeviceFigures:
    """One device's busy time, copy share and idle time by cause over the window (`rows`: each
    event's launch call; `carried`: its work that began before the window and runs into it), and the
    same of each of its streams (`streams`: a stream is idle while it runs nothing, though others may)."""
    figures = _busy_and_idle(events, rows, calls, window, carried)
    parts = _split(events["stream_id"])
    streams: list[StreamFigures] = [
        {"stream_id": stream, **(figures if len(parts) == 1 and carried["stream_id"].isin([stream]).all()
                                 else _busy_and_idle(events[mine], rows[mine], calls, window,
                                                     carried[(carried["stream_id"] == stream).to_numpy()]))}
        for stream, mine in parts]
    return {"device_id": device_id, **figures, "streams": streams}


def _split(ids: pd.Series) -> list[tuple[int, slice | np.ndarray]]:
    """Each distinct id and which rows hold it: all of them, as a slice (no copy), where there is one."""
    values = ids.to_numpy()
    distinct = np.unique(values)
    if len(distinct) == 1:
        return [(int(distinct[0]), slice(None))]
    return [(int(value), values == value) for value in distinct]


def _busy_and_idle(events: pd.DataFrame, rows: np.ndarray, calls: HostCalls, window: Window,
                   carried: pd.DataFrame) -> BusyAndIdle:
    """Busy time (the union of the work in the window, and of the part in it of work `carried` into
    it), the copies' part of it, and the idle time by cause: the GPU is idle from the window's start
    only once the carried work has ended."""
    start = events["start_ns"].to_numpy(np.int64)
    end = events["end_ns"].to_numpy(np.int64)

    def busy_ns(mine: np.ndarray, carried_mine: np.ndarray) -> tuple[int, int]:
        """The union's length, and the end of the carried work (the window's start without any)."""
        reach = min(int(carried["end_ns"].to_numpy(np.int64)[carried_mine].max(initial=window.start_ns)), window.end_ns)
        merged_start, merged_end = merged_intervals(np.r_[window.start_ns, np.maximum(start[mine], window.start_ns)],
                                                    np.r_[reach, np.minimum(end[mine], window.end_ns)])
        return int((merged_end - merged_start).sum()), reach

    busy, reach = busy_ns(np.ones(len(start), dtype=bool), np.ones(len(carried), dtype=bool))
    copy_busy, _ = busy_ns(~_is_work(events), ~_is_work(carried))
    span = window.end_ns - window.start_ns
    return {"busy_ns": busy, "busy_pct": 100 * busy / span if span else 100.0,
            "copy_busy_ns": copy_busy, "idle_ns": span - busy,
            "idle_causes": idle_causes(start, end, rows, calls, reach)}


def _is_work(events: pd.DataFrame) -> np.ndarray:
    """Which events are kernels or graphs (the rest: copies and memsets)."""
    return events["kind"].isin([KERNEL, GRAPH]).to_numpy()


def _ids(events: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each event's Linux process id and correlation id (-1 where nsys left one out)."""
    return (events["pid"].to_numpy(dtype=np.int64, na_value=-1),
            events["correlation_id"].to_numpy(dtype=np.int64, na_value=-1))


def _launches(export: GpuTimeline, calls: HostCalls, events: pd.DataFrame, rows: np.ndarray, window: Window) -> Launches:
    """The launch figures of the module docstring, over the window (`rows`: each event's launch call)."""
    in_window = slice(*np.searchsorted(calls.start, [window.start_ns, window.end_ns])) \
        if _sorted(calls.start) else np.flatnonzero((calls.start >= window.start_ns) & (calls.start < window.end_ns))
    launched = np.arange(len(calls.start))[in_window]
    launched = launched[calls.kind[launched] == KINDS.index(LAUNCH)]
    span = window.end_ns - window.start_ns
    kernel_start = export.kernels["start_ns"].to_numpy(np.int64)
    kernels = (kernel_start >= window.start_ns) & (kernel_start < window.end_ns)
    thread, starts = calls.thread[launched], calls.start[launched]
    if len(thread) and (thread == thread[0]).all() and _sorted(starts):  # one launching thread: no sort
        between = np.diff(starts)
    else:
        order = np.lexsort((starts, thread))
        between = np.diff(starts[order])[thread[order][1:] == thread[order][:-1]]
        del order
    work = _is_work(events)
    rows = rows[work]
    matched = rows >= 0
    call_start, call_end = calls.start[rows[matched]], calls.end[rows[matched]]
    to_start = events["start_ns"].to_numpy(np.int64)[work][matched] - call_end
    depth = _queue_depth(call_start, events["end_ns"].to_numpy(np.int64)[work][matched])
    graphs = [i for i, name in enumerate(calls.api.categories) if "GraphLaunch" in str(name)]
    durations = calls.end[launched] - starts
    return {"count": len(launched), "per_s": 1e9 * len(launched) / span if span else None,
            "kernels": int(kernels.sum()), "graphs": int(np.isin(calls.api.codes[launched], graphs).sum()),
            "median_kernel_ns": _median(export.kernels["duration_ns"].to_numpy(np.int64)[kernels]),
            "median_call_ns": _median(durations), "median_between_ns": _median(between),
            "median_to_start_ns": _median(to_start), "median_queue_depth": _median(depth),
            "empty_queue_pct": 100 * float((depth == 0).mean()) if len(depth) else None,
            "threads": len(np.unique(thread)), "host_ns": int(durations.sum())}


def _idle_where_sampled(export: GpuTimeline, spans: pd.DataFrame, window: Window) -> tuple[np.ndarray, np.ndarray] | None:
    """The GPU's idle stretches in the window, between every operation that overlaps it (one that
    began before counts), where the capture holds CPU samples to weigh them with; else None."""
    if export.samples.empty:
        return None
    starts, ends = spans["start_ns"].to_numpy(np.int64), spans["end_ns"].to_numpy(np.int64)
    overlapping = (ends > window.start_ns) & (starts < window.end_ns)
    return idle_stretches(starts[overlapping], ends[overlapping], (window.start_ns, window.end_ns))


def _launching_threads(calls: HostCalls, window: Window) -> np.ndarray:
    """The threads that made launch calls in the window."""
    launched = (calls.kind == KINDS.index(LAUNCH)) & (calls.start >= window.start_ns) & (calls.start < window.end_ns)
    return np.unique(calls.thread[launched])


def _sorted(values: np.ndarray) -> bool:
    return bool((values[1:] >= values[:-1]).all())


def _queue_depth(launch_start: np.ndarray, work_end: np.ndarray) -> np.ndarray:
    """At each launch call's start: the GPU work launched before it that had not yet finished."""
    starts, ends = np.sort(launch_start, kind="stable"), np.sort(work_end, kind="stable")  # nearly sorted: fast
    return np.searchsorted(starts, launch_start, side="left") - np.searchsorted(ends, launch_start, side="right")


def _call_summary(calls: pd.DataFrame) -> CallSummary:
    """Count and host time of some calls, and the APIs that took most of it."""
    by_api = calls.groupby("api", observed=True)["duration_ns"].agg(["count", "sum"])
    top = by_api.sort_values("sum", ascending=False).head(5)
    return {"count": len(calls), "host_ns": int(calls["duration_ns"].sum()),
            "apis": [{"api": str(api), "count": int(row["count"]), "host_ns": int(row["sum"])} for api, row in top.iterrows()]}


def _copies(export: GpuTimeline, window_calls: pd.DataFrame, window: Window, ceiling: Ceiling | None) -> Copies:
    """Copies in the window: all, and those with a pageable side (count, bytes, GPU time), the host
    time blocked in copy calls (`window_calls`: HostCalls.others in the window), and per direction
    the pageable copies with the pinned rate they are held against (`pageable`)."""
    every = export.memcpys.assign(pageable=pageable_copies(export.memcpys))
    copies = every[(every["start_ns"] >= window.start_ns) & (every["start_ns"] < window.end_ns)]
    pageable = copies[copies["pageable"]]
    blocking = window_calls[window_calls["blocking"].to_numpy() & (window_calls["kind"] == COPY).to_numpy()]
    directions: list[PageableCopies] = []
    for direction, group in pageable.groupby(pageable["copy_kind"].astype(str), observed=True):
        rate, source = _pinned_rate(every, direction, ceiling)
        directions.append({"direction": direction, "count": len(group), "bytes": int(group["bytes"].sum()),
                           "gpu_ns": int(group["duration_ns"].sum()), "pinned_bytes_per_s": rate, "rate_source": source})
    return {"count": len(copies), "bytes": int(copies["bytes"].sum()), "gpu_ns": int(copies["duration_ns"].sum()),
            "pageable_count": len(pageable), "pageable_bytes": int(pageable["bytes"].sum()),
            "pageable_gpu_ns": int(pageable["duration_ns"].sum()), "pageable": directions,
            "blocking_calls": len(blocking), "blocking_host_ns": int(blocking["duration_ns"].sum())}


def _pinned_rate(copies: pd.DataFrame, direction: str, ceiling: Ceiling | None) -> tuple[float | None, str | None]:
    """The pinned rate of one direction: the GPU's measured bus, else the capture's own large pinned
    copies of that direction; (None, None) where neither says."""
    fields = {"Host-to-Device": "h2d_tbyte_per_s", "Device-to-Host": "d2h_tbyte_per_s"}
    bus = getattr(ceiling, fields[direction]) if ceiling is not None and direction in fields else None
    if bus:
        assert ceiling is not None
        source = ceiling.source_of(fields[direction]) or "datasheet"  # the label says which, as --json does
        said = "as its datasheet gives it" if source == "datasheet" else f"as nsprof ceilings measured it ({source})"
        return 1e12 * bus, f"the GPU's bus {said}"
    kinds = {"Host-to-Device": ("src_kind", "Pinned"), "Device-to-Host": ("dst_kind", "Pinned")}
    if direction not in kinds or kinds[direction][0] not in copies:
        return None, None
    side, pinned_kind = kinds[direction]
    pinned = copies[(copies["copy_kind"].astype(str) == direction) & (copies[side].astype(str) == pinned_kind)
                    & (copies["bytes"] >= PINNED_SAMPLE_BYTES)]
    if pinned.empty or not pinned["duration_ns"].sum():
        return None, None
    return 1e9 * float(pinned["bytes"].sum() / pinned["duration_ns"].sum()), "this capture's pinned copies of 1 MiB or more"


def _median(values) -> float | None:
    values = np.asarray(values, dtype=np.float64)
    return float(np.median(values)) if len(values) else None
