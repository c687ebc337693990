"""Which GPU work happened inside which NVTX range, from an nsys export (pure functions).

GPU work runs later than the CPU code that asked for it, so it is attributed by its CUDA API call,
matched through `correlation_id` (within one process): a kernel, memcpy, memset or graph launch
belongs to every range that was open when its API call started, nested ranges included. Whose calls
a range counts is the attribution:

- THREAD (NVTX's own rule, and `nsys stats -r nvtx_gpu_proj_sum`'s): a push/pop range counts the
  calls of the thread that pushed it; a start/end range, which may end on another thread, those of
  its whole process.
- PROCESS: every range counts the calls of any thread of its process. PyTorch launches the backward
  pass from its autograd thread, so only this rule gives a `backward` range its kernels.

Time is summed over the work a range received, each operation's duration in full: `kernel_ns`
(kernels, and graphs traced at graph level, nsys's default: one GPU operation each, counted in
`graphs`), `copy_ns` (memcpys and memsets, graph nodes included; `pageable_ns` the part of it in
copies with a pageable side) and `gpu_time_ns`, their sum, so a range that only copies has GPU time.
Work that overlaps counts in full, so `gpu_time_ns` may exceed the range's span on the GPU: it is
not nvtx_gpu_proj_sum's "Proj Time" (first operation's start to last one's end). `gpu_ops` counts
the API calls that started GPU work (a graph launch traced node by node is one call, however many
kernels it ran), as nvtx_gpu_proj_sum's "Total GPU Ops" does, except that nsys leaves graph-level
graph launches out of it.

Vectorized: the calls are sorted once by (thread or process, time) with running totals of what
they launched, and each range's totals are the difference of two binary searches, so a million
kernels and ten thousand ranges take well under a second, with no loop over ranges.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import pandas as pd

from nsprof.analyze.families import family_column
from nsprof.analyze.host_calls import pageable_copies
from nsprof.parse.model import THREAD_IDS, GpuTimeline
from nsprof.ranges import qualify

WORK_COLUMNS = ("kernels", "graphs", "gpu_time_ns", "kernel_ns", "copy_ns", "memcpy_count", "memcpy_bytes",
                "memset_count", "memset_bytes", "gpu_ops")
# per range instance, WORK_COLUMNS and the copies' part with a pageable side (the noise floors' category)
INSTANCE_COLUMNS = (*WORK_COLUMNS, "pageable_ns")
SUMMARY_COLUMNS = ("range", "domain", "name", "count", "median_ns", "kernels", "graphs", "gpu_time_ns", "kernel_ns",
                   "copy_ns", "memcpy_bytes", "memcpy_count", "memset_bytes", "memset_count", "gpu_ops")
THREAD, PROCESS = "thread", "process"
ATTRIBUTIONS = (THREAD, PROCESS)
# event tables, each with, per launching_calls column, the event column it sums (1: counts the events)
_EventParts = list[tuple[pd.DataFrame, dict[str, str | int]]]


def attribute_work(export: GpuTimeline, attribution: str = THREAD, calls: pd.DataFrame | None = None) -> pd.DataFrame:
    """export.nvtx (one row per range instance) plus INSTANCE_COLUMNS: the kernels and graph launches,
    memcpys and memsets (counts, bytes, summed durations: module docstring) whose API call started
    while the range was open, on the threads `attribution` gives it (THREAD or PROCESS). `calls` is
    launching_calls(export), where the caller has it already (the join is the costly part)."""
    ranges = export.nvtx.reset_index(drop=True)
    calls = launching_calls(export) if calls is None else calls
    start = ranges["start_ns"].to_numpy(dtype=np.int64, na_value=0)
    end = ranges["end_ns"].to_numpy(dtype=np.int64, na_value=np.iinfo(np.int64).max)  # never closed
    thread = ranges["global_tid"].to_numpy(dtype=np.int64, na_value=-1)  # -1 matches no call
    push_pop = _thread_scoped(ranges, attribution)
    scope = np.where(push_pop, thread, np.where(thread >= 0, thread // THREAD_IDS, -1))
    # gpu_ops counts the calls (each call's 1), gpu_time_ns adds kernel and copy time: sums of sums
    columns = ["gpu_ops", *(column for column in _PER_CALL if column in calls)]
    sums = np.zeros((len(ranges), len(columns)), dtype=np.int64)
    for rows, by_process in ((push_pop, False), (~push_pop, True)):
        if rows.any():
            sums[rows] = _window_sums(_call_scope(calls, by_process), calls["start_ns"].to_numpy(),
                                      [calls[column] for column in columns[1:]],
                                      scope[rows], start[rows], end[rows])
    work = pd.DataFrame(sums, columns=columns)
    for column in _PER_CALL:
        if column not in work:
            work[column] = np.zeros(len(ranges), dtype=np.int64)
    work["gpu_time_ns"] = work["kernel_ns"] + work["copy_ns"]
    return pd.concat([ranges, work[list(INSTANCE_COLUMNS)]], axis=1)


def summarize_ranges(attributed: pd.DataFrame) -> pd.DataFrame:
    """One row per range name (SUMMARY_COLUMNS): `count` instances, their `median_ns` time open on
    the CPU (nsys stats -r nvtx_sum's Med; NaN for ranges never closed), and their attributed work
    summed. A range nested in itself (recursion) counts its work once per instance."""
    grouped = attributed.groupby(["domain", "name"], dropna=False, sort=False)
    summary = grouped[list(WORK_COLUMNS)].sum()
    summary.insert(0, "count", grouped.size())
    open_ns = (pd.to_numeric(attributed["end_ns"], errors="coerce") - pd.to_numeric(attributed["start_ns"], errors="coerce"))
    summary.insert(1, "median_ns", open_ns.groupby([attributed["domain"], attributed["name"]], dropna=False, sort=False).median())
    summary = summary.reset_index()
    summary["domain"] = summary["domain"].astype(object).where(summary["domain"].notna(), None)
    summary["range"] = [qualify(domain, name) for domain, name in zip(summary["domain"], summary["name"])]
    return summary[list(SUMMARY_COLUMNS)].sort_values("range", key=_natural, kind="stable").reset_index(drop=True)


def summarize_range_families(attributed: pd.DataFrame) -> pd.DataFrame:
    """summarize_ranges over name families (nsprof.analyze.families: names that differ only in
    per-instance arguments or ids are one row), plus `names`, how many distinct names a family
    holds, and `members`, their full (domain-qualified) names. Without such names, one row per
    name, as summarize_ranges gives."""
    names = attributed["name"].astype(str)
    family = family_column(names)
    summary = summarize_ranges(attributed.assign(name=family))
    pairs = pd.DataFrame({"domain": attributed["domain"].astype(object), "name": names, "family": family}).drop_duplicates()
    pairs["range"] = [qualify(domain if isinstance(domain, str) else None, family)
                      for domain, family in zip(pairs["domain"], pairs["family"])]
    pairs["member"] = [qualify(domain if isinstance(domain, str) else None, name)
                       for domain, name in zip(pairs["domain"], pairs["name"])]
    members = pairs.groupby("range", sort=False)["member"].agg(list)
    summary["members"] = summary["range"].map(members)
    summary.insert(summary.columns.get_loc("count"), "names", summary["members"].map(len))
    return summary


def _natural(names: pd.Series) -> pd.Series:
    """Sort keys that read numbers as numbers: sgemm/v2 before sgemm/v10."""
    return names.map(lambda name: tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                                        for part in re.split(r"(\d+)", str(name)) if part))


def range_summary(export: GpuTimeline, attribution: str = THREAD) -> pd.DataFrame:
    """One row per NVTX range name of an export: see summarize_ranges."""
    return summarize_ranges(attribute_work(export, attribution))


def unattributed_work(exports: list[GpuTimeline], attribution: str = THREAD,
                      calls: list[pd.DataFrame] | None = None) -> dict:
    """The kernels and graph launches no range received, by the same rule as attribute_work:
    `kernels` (graph launches included), `kernel_ns`, and `pct` of all kernel and graph time, so
    that the ranges' kernel_ns and this add up, and `other_thread_kernels`: how many of them another
    thread launched while a range of its process was open. Work nsys matched to no API call counts here too.
    (Under THREAD attribution, PyTorch's backward kernels, launched from its autograd thread, land
    here.)"""
    calls = [launching_calls(export) for export in exports] if calls is None else calls
    outside = [_outside_ranges(export, attribution, launched) for export, launched in zip(exports, calls)]
    total_ns = sum(int(export.kernels["duration_ns"].sum() + export.graphs["duration_ns"].sum()) for export in exports)
    outside_ns = sum(ns for _, ns in outside)
    kernels = sum(kernels for kernels, _ in outside)
    # Of those, the ones PROCESS attribution would give a range: launched by another thread of a
    # process while one of its ranges was open (the case --attribution process is for).
    by_process = kernels if attribution == PROCESS else \
        sum(n for n, _ in (_outside_ranges(e, PROCESS, launched) for e, launched in zip(exports, calls)))
    return {"kernels": kernels, "kernel_ns": outside_ns, "pct": 100 * outside_ns / total_ns if total_ns else 0.0,
            "other_thread_kernels": kernels - by_process}


def _thread_scoped(ranges: pd.DataFrame, attribution: str) -> np.ndarray:
    """Which ranges count only their own thread's calls (push/pop ones under THREAD attribution)."""
    if attribution not in ATTRIBUTIONS:
        raise ValueError(f"attribution must be one of {ATTRIBUTIONS}, not {attribution!r}")
    return (ranges["kind"] == "push_pop").to_numpy() & (attribution == THREAD)


def _outside_ranges(export: GpuTimeline, attribution: str, calls: pd.DataFrame) -> tuple[int, int]:
    """(kernels and graph launches, their GPU time) of one export that no range received. `calls`
    is launching_calls(export): sorted by thread, so a thread's or a process's calls are one slice."""
    covered = np.zeros(len(calls), dtype=bool)
    ranges = export.nvtx.dropna(subset=["global_tid", "start_ns"])
    end = ranges["end_ns"].to_numpy(dtype=np.float64, na_value=np.inf)  # never closed: open to the end
    thread = ranges["global_tid"].to_numpy(dtype=np.int64)
    push_pop = _thread_scoped(ranges, attribution)
    call_thread, call_start = calls["thread"].to_numpy(), calls["start_ns"].to_numpy()
    for mine, scope, bits in ((push_pop, thread, 1), (~push_pop, thread // THREAD_IDS, THREAD_IDS)):
        for key in np.unique(scope[mine]):
            own = mine & (scope == key)
            # the scope's calls: threads key * bits up to (key + 1) * bits (a thread, or a process's threads)
            low, high = np.searchsorted(call_thread, [key * bits, (key + 1) * bits], side="left")
            covered[low:high] |= _inside(call_start[low:high], ranges["start_ns"].to_numpy()[own], end[own])
    launched = sum(int(work_column(calls, column).sum(where=covered)) for column in ("kernels", "graphs"))
    return (int(len(export.kernels) + len(export.graphs) - launched),
            int(export.kernels["duration_ns"].sum() + export.graphs["duration_ns"].sum()
                - work_column(calls, "kernel_ns").sum(where=covered)))


def _call_scope(calls: pd.DataFrame, by_process: bool) -> np.ndarray:
    """Each call's thread, or its process (the serialized thread id's process part)."""
    thread = calls["thread"].to_numpy()
    return thread // THREAD_IDS if by_process else thread


def work_column(calls: pd.DataFrame, column: str) -> np.ndarray:
    """A work column of launching_calls' table as int64 (zeros where the table leaves it out)."""
    return calls[column].to_numpy(np.int64) if column in calls else np.zeros(len(calls), dtype=np.int64)


def _inside(times: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Whether each time falls in at least one [start, end) window (windows may overlap)."""
    order = np.argsort(starts, kind="stable")
    starts, reach = starts[order], np.maximum.accumulate(ends[order])  # the furthest end of any window begun so far
    last = np.searchsorted(starts, times, side="right") - 1
    return (last >= 0) & (times < reach[np.maximum(last, 0)])


def launching_calls(export: GpuTimeline) -> pd.DataFrame:
    """One row per API call that started GPU work, by (process, correlation id): `thread` (its
    serialized id: the process is thread // 2**24), `start_ns` and what it started (_PER_CALL: `kernels`, `graphs`, `kernel_ns`,
    `copy_ns`, `memcpy_count`, `memcpy_bytes`, `memset_count`, `memset_bytes`), leaving out the
    columns that are zero for every call (a capture without memsets has no memset columns: a
    10M-call table is 80 MB a column); sorted by thread, then start.

    Sorted NumPy arrays, column by column, no pandas group-by or merge: this join is the largest
    cost of the attribution on a 10M-kernel export. Each event finds its call by binary search in
    the sorted calls, and a call's totals are bincounts over its events."""
    parts: _EventParts = [(export.kernels, {"kernels": 1, "kernel_ns": "duration_ns"}),
             (export.graphs, {"graphs": 1, "kernel_ns": "duration_ns"}),
             (_with_pageable_ns(export.memcpys),
              {"memcpy_count": 1, "memcpy_bytes": "bytes", "copy_ns": "duration_ns", "pageable_ns": "pageable_ns"}),
             (export.memsets, {"memset_count": 1, "memset_bytes": "bytes", "copy_ns": "duration_ns"})]
    runtime = export.runtime
    has_call = (runtime["correlation_id"].notna() & runtime["global_tid"].notna() & runtime["start_ns"].notna()).to_numpy()

    def call_column(column: str) -> np.ndarray:
        values = runtime[column].to_numpy(dtype=np.int64, na_value=-1)
        return values if has_call.all() else values[has_call]

    # Arrays the length of the runtime table are made and reordered one at a time (each is 80 MB
    # for 10M calls): held in one dict, so that each goes as its successor is made.
    thread = call_column("global_tid")
    processes, width = _key_space(thread, runtime, parts)
    calls = {"key": _call_keys(processes, width, thread, call_column("correlation_id")), "thread": thread}
    del thread
    calls["start"] = call_column("start_ns")
    _first_of_each_key(calls)
    sums = _sums_per_call(parts, processes, width, calls.pop("key"))
    return _launching_frame(calls, sums)


def _key_space(thread: np.ndarray, runtime: pd.DataFrame, parts: _EventParts) -> tuple[np.ndarray, int]:
    """The processes (sorted) and the width that pack (process, correlation id) into one sortable
    key (_call_keys): processes get small codes."""
    processes = np.unique(np.concatenate([pd.unique(thread // THREAD_IDS)] + [
        pd.unique(chunk["global_pid"][chunk["known"]] // THREAD_IDS)
        for events, _ in parts for chunk in _event_chunks(events, ["global_pid"])]))
    ids = [runtime["correlation_id"].max()] + [events["correlation_id"].max() for events, _ in parts if len(events)]
    return processes, 1 + max([0] + [int(i) for i in ids if not pd.isna(i)])


def _first_of_each_key(calls: dict[str, np.ndarray]) -> None:
    """The calls sorted by key, the first call of each key kept, in place, one array at a time."""
    key = calls["key"]
    # Older exports record some calls twice (cudaMalloc and cudaMalloc_v3020 share one id): the first call counts.
    # Calls in the order of their ids already, one each (one process's calls in time order: the sort is seconds at 10M)
    if len(key) and not (key[1:] > key[:-1]).all():
        order = np.lexsort((calls["start"], key))
        del key
        for name in calls:
            calls[name] = calls[name][order]
        del order
        key = calls["key"]
    unique = np.r_[True, key[1:] != key[:-1]] if len(key) else np.empty(0, dtype=bool)
    del key
    if not unique.all():
        for name in calls:
            calls[name] = calls[name][unique]


def _sums_per_call(parts: _EventParts, processes: np.ndarray, width: int,
                   call_key: np.ndarray) -> dict[str, np.ndarray]:
    """Per output column of `parts`, each call's total over the events it launched (events nsys
    matched to no call, or to one the runtime table lacks, count for none), a chunk of events at a
    time: the keys of a 10M-kernel table are 80 MB each."""
    sums: dict[str, np.ndarray] = {}
    for events, spec in parts:
        sources = [source for source in spec.values() if isinstance(source, str)]
        for chunk in _event_chunks(events, ["global_pid", "correlation_id", *sources]):
            known = chunk["known"]
            if not known.any() or not len(call_key):
                continue
            key = _call_keys(processes, width, chunk["global_pid"][known], chunk["correlation_id"][known])
            at = np.minimum(np.searchsorted(call_key, key), len(call_key) - 1)
            matched = call_key[at] == key
            at = at[matched]
            if len(at):
                _add_chunk(sums, spec, len(call_key), at, {source: chunk[source][known][matched] for source in sources})
    return sums


def _add_chunk(sums: dict[str, np.ndarray], spec: dict[str, str | int], calls: int, at: np.ndarray,
               values: dict[str, np.ndarray]) -> None:
    """A chunk's events added to their calls' totals (`at`: each event's call; `values`: its summed
    columns), bincounts over the range of calls the chunk's events lie in only."""
    low, high = int(at.min()), int(at.max()) + 1
    at -= low
    for column, source in spec.items():
        if column not in sums:  # counts int32 (a call starts a few operations): 4 bytes a call saved
            sums[column] = np.zeros(calls, dtype=np.int32 if source == 1 else np.int64)
        if isinstance(source, str):  # float64 sums are exact below 2**53 (104 days of ns, 9 PB) per call
            summed = np.bincount(at, weights=values[source], minlength=high - low)
        else:
            summed = np.bincount(at, minlength=high - low)
        sums[column][low:high] += summed.astype(sums[column].dtype)


def _launching_frame(calls: dict[str, np.ndarray], sums: dict[str, np.ndarray]) -> pd.DataFrame:
    """The calls that launched GPU work, by thread then start, with their work columns that are not
    all zero (sparse where mostly zero); `calls` and `sums` are emptied as the frame is made."""
    launched = np.zeros(len(calls["thread"]), dtype=bool)
    for column in ("kernels", "graphs", "memcpy_count", "memset_count"):
        if column in sums:
            launched |= sums[column] > 0
    # by thread, then time: the order attribute_work's thread-scoped window sums need, so they sort nothing
    chosen = np.flatnonzero(launched)
    del launched
    chosen = chosen[np.lexsort((calls["start"][chosen], calls["thread"][chosen]))]
    frame = {"thread": calls.pop("thread")[chosen]}
    frame["start_ns"] = calls.pop("start")[chosen]
    for column in _PER_CALL:  # one column at a time: each call's totals go as its column is made
        total: np.ndarray | None = sums.pop(column, None)
        if total is not None and total.any():
            summed = total[chosen]
            # mostly zeros (copies beside millions of kernels): kept sparse, dense only while read
            sparse = np.count_nonzero(summed) < len(summed) // SPARSE_BELOW
            frame[column] = pd.arrays.SparseArray(summed, fill_value=0) if sparse else summed
    return pd.DataFrame(frame, copy=False)


def _with_pageable_ns(memcpys: pd.DataFrame) -> pd.DataFrame:
    """The copies with `pageable_ns`: the duration of those with a pageable side (their speed
    follows the host's, nsprof.diff.noise), else 0."""
    return memcpys.assign(pageable_ns=memcpys["duration_ns"].where(pageable_copies(memcpys), 0))


SPARSE_BELOW = 8  # a work column with fewer than 1 call in 8 nonzero is stored sparse


EVENT_CHUNK_ROWS = 1_000_000


def _event_chunks(events: pd.DataFrame, columns: list[str]) -> Iterator[dict[str, np.ndarray]]:
    """The columns as int64 arrays (<NA> as 0), EVENT_CHUNK_ROWS rows at a time, with `known`:
    the rows whose correlation id and process nsys recorded."""
    for first in range(0, len(events), EVENT_CHUNK_ROWS):
        rows = slice(first, first + EVENT_CHUNK_ROWS)
        chunk = {column: events[column].array[rows].to_numpy(dtype=np.int64, na_value=0) for column in columns}
        chunk["known"] = ~(np.asarray(events["correlation_id"].array[rows].isna())
                           | np.asarray(events["global_pid"].array[rows].isna()))
        yield chunk


def _call_keys(processes: np.ndarray, width: int, serialized: np.ndarray, correlation: np.ndarray) -> np.ndarray:
    """(process, correlation id) as one int64: the process's index in `processes`, times `width`
    (above every correlation id), plus the id."""
    process = serialized // THREAD_IDS
    key = np.searchsorted(processes, process)
    del process
    key *= width
    key += correlation
    return key


_PER_CALL = [column for column in INSTANCE_COLUMNS if column not in ("gpu_ops", "gpu_time_ns")]


def _window_sums(item_scope: np.ndarray, item_time: np.ndarray, item_values: list,
                 scope: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """For each window (scope, start, end): how many items of the same scope have start <= item_time
    < end, then the sum of each of item_values (arrays or Series, made dense one at a time) over
    them. Windows may nest and overlap."""
    sums = np.zeros((len(start), 1 + len(item_values)), dtype=np.int64)
    if len(item_time) == 0 or len(start) == 0:
        return sums
    # Items sorted by (scope, time): each scope's items are one slice, sorted by time, and a
    # window's items are the part of its scope's slice between two binary searches. (Items that
    # come sorted, launching_calls' by thread, are not copied.)
    order = None if _sorted_by(item_scope, item_time) else np.lexsort((item_time, item_scope))
    if order is not None:
        item_scope, item_time = item_scope[order], item_time[order]
    first, past_last = np.zeros(len(start), dtype=np.int64), np.zeros(len(start), dtype=np.int64)
    for key in np.unique(scope):
        windows = np.flatnonzero(scope == key)
        low, high = np.searchsorted(item_scope, key, side="left"), np.searchsorted(item_scope, key, side="right")
        times = item_time[low:high]
        first[windows] = low + np.searchsorted(times, start[windows], side="left")
        past_last[windows] = low + np.searchsorted(times, end[windows], side="left")
    del item_scope, item_time
    sums[:, 0] = past_last - first
    running = np.zeros(len(item_values[0]) + 1 if item_values else 1, dtype=np.int64)
    for i, values in enumerate(item_values, start=1):  # one column at a time: a 10M-call table is wide
        values = np.asarray(values, dtype=np.int64)  # a sparse column is dense only here
        np.cumsum(values if order is None else values[order], out=running[1:])
        sums[:, i] = running[past_last] - running[first]
    return sums


def _sorted_by(scope: np.ndarray, time: np.ndarray) -> bool:
    """Whether items are sorted by scope, then time."""
    if not (scope[1:] >= scope[:-1]).all():
        return False
    same = scope[1:] == scope[:-1]
    return bool((time[1:][same] >= time[:-1][same]).all())
