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
`graphs`), `copy_ns` (memcpys and memsets, graph nodes included) and `gpu_time_ns`, their sum, so a
range that only copies has GPU time. Work that overlaps counts in full, so `gpu_time_ns` may exceed
the range's span on the GPU: it is not nvtx_gpu_proj_sum's "Proj Time" (first operation's start to
last one's end). `gpu_ops` counts the API calls that started GPU work (a graph launch traced node by
node is one call, however many kernels it ran), as nvtx_gpu_proj_sum's "Total GPU Ops" does, except
that nsys leaves graph-level graph launches out of it.

Vectorized: the calls are sorted once by (thread or process, time) with running totals of what
they launched, and each range's totals are the difference of two binary searches, so a million
kernels and ten thousand ranges take well under a second, with no loop over ranges.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from nsprof.parse.nsys_sqlite import NsysExport
from nsprof.ranges import qualify

WORK_COLUMNS = ("kernels", "graphs", "gpu_time_ns", "kernel_ns", "copy_ns", "memcpy_count", "memcpy_bytes",
                "memset_count", "memset_bytes", "gpu_ops")
SUMMARY_COLUMNS = ("range", "domain", "name", "count", "median_ns", "kernels", "graphs", "gpu_time_ns", "kernel_ns",
                   "copy_ns", "memcpy_bytes", "memcpy_count", "memset_bytes", "memset_count", "gpu_ops")
THREAD, PROCESS = "thread", "process"
ATTRIBUTIONS = (THREAD, PROCESS)
_THREAD_BITS = 0x1000000  # serialized id = (process part) * 2**24 + thread id


def attribute_work(export: NsysExport, attribution: str = THREAD, calls: pd.DataFrame | None = None) -> pd.DataFrame:
    """export.nvtx (one row per range instance) plus WORK_COLUMNS: the kernels and graph launches,
    memcpys and memsets (counts, bytes, summed durations: module docstring) whose API call started
    while the range was open, on the threads `attribution` gives it (THREAD or PROCESS). `calls` is
    launching_calls(export), where the caller has it already (the join is the costly part)."""
    ranges = export.nvtx.reset_index(drop=True)
    calls = launching_calls(export) if calls is None else calls
    values = calls[list(WORK_COLUMNS)].to_numpy(dtype=np.int64)
    start = ranges["start_ns"].to_numpy(dtype=np.int64, na_value=0)
    end = ranges["end_ns"].to_numpy(dtype=np.int64, na_value=np.iinfo(np.int64).max)  # never closed
    thread = ranges["global_tid"].to_numpy(dtype=np.int64, na_value=-1)  # -1 matches no call
    push_pop = _thread_scoped(ranges, attribution)
    scope = np.where(push_pop, thread, np.where(thread >= 0, thread // _THREAD_BITS, -1))
    sums = np.zeros((len(ranges), len(WORK_COLUMNS)), dtype=np.int64)
    sums[push_pop] = _window_sums(calls["thread"].to_numpy(), calls["start_ns"].to_numpy(), values,
                                  scope[push_pop], start[push_pop], end[push_pop])
    sums[~push_pop] = _window_sums(calls["process"].to_numpy(), calls["start_ns"].to_numpy(), values,
                                   scope[~push_pop], start[~push_pop], end[~push_pop])
    return pd.concat([ranges, pd.DataFrame(sums, columns=list(WORK_COLUMNS))], axis=1)


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


def _natural(names: pd.Series) -> pd.Series:
    """Sort keys that read numbers as numbers: sgemm/v2 before sgemm/v10."""
    return names.map(lambda name: tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                                        for part in re.split(r"(\d+)", str(name)) if part))


def range_summary(export: NsysExport, attribution: str = THREAD) -> pd.DataFrame:
    """One row per NVTX range name of an export: see summarize_ranges."""
    return summarize_ranges(attribute_work(export, attribution))


def unattributed_work(exports: list[NsysExport], attribution: str = THREAD,
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


def _outside_ranges(export: NsysExport, attribution: str, calls: pd.DataFrame) -> tuple[int, int]:
    """(kernels and graph launches, their GPU time) of one export that no range received."""
    covered = np.zeros(len(calls), dtype=bool)
    ranges = export.nvtx.dropna(subset=["global_tid", "start_ns"])
    end = ranges["end_ns"].to_numpy(dtype=np.float64, na_value=np.inf)  # never closed: open to the end
    thread = ranges["global_tid"].to_numpy(dtype=np.int64)
    push_pop = _thread_scoped(ranges, attribution)
    for mine, scope, call_scope in ((push_pop, thread, calls["thread"]), (~push_pop, thread // _THREAD_BITS, calls["process"])):
        for key in np.unique(scope[mine]):
            own = mine & (scope == key)
            covered |= (call_scope == key).to_numpy() & _inside(calls["start_ns"].to_numpy(),
                                                                 ranges["start_ns"].to_numpy()[own], end[own])
    launched = calls["kernels"] + calls["graphs"]
    return (int(len(export.kernels) + len(export.graphs) - launched[covered].sum()),
            int(export.kernels["duration_ns"].sum() + export.graphs["duration_ns"].sum()
                - calls["kernel_ns"][covered].sum()))


def _inside(times: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Whether each time falls in at least one [start, end) window (windows may overlap)."""
    order = np.argsort(starts, kind="stable")
    starts, reach = starts[order], np.maximum.accumulate(ends[order])  # the furthest end of any window begun so far
    last = np.searchsorted(starts, times, side="right") - 1
    return (last >= 0) & (times < reach[np.maximum(last, 0)])


def launching_calls(export: NsysExport) -> pd.DataFrame:
    """One row per API call that started GPU work: thread, process, start_ns and WORK_COLUMNS.

    Sorted NumPy arrays, no pandas group-by or merge: this join is the largest cost of the
    attribution on a 10M-kernel export."""
    kernels, memcpys, memsets, graphs = export.kernels, export.memcpys, export.memsets, export.graphs
    parts = [_work(kernels, kernels=1, kernel_ns=kernels["duration_ns"]),
             _work(graphs, graphs=1, kernel_ns=graphs["duration_ns"]),
             _work(memcpys, memcpy_count=1, memcpy_bytes=memcpys["bytes"], copy_ns=memcpys["duration_ns"]),
             _work(memsets, memset_count=1, memset_bytes=memsets["bytes"], copy_ns=memsets["duration_ns"])]
    work_process = np.concatenate([process for process, _, _ in parts])
    work_id = np.concatenate([ids for _, ids, _ in parts])
    values = np.concatenate([columns for _, _, columns in parts])
    calls = export.runtime[["correlation_id", "global_tid", "start_ns"]].dropna()
    call_id, thread, start = (calls[column].to_numpy(dtype=np.int64) for column in ("correlation_id", "global_tid", "start_ns"))
    call_process = thread // _THREAD_BITS
    # (process, correlation id) packed into one sortable key: processes get small codes
    codes, _ = pd.factorize(np.concatenate([work_process, call_process]))
    width = int(max(work_id.max(initial=0), call_id.max(initial=0))) + 1
    work_key = codes[:len(work_process)] * width + work_id
    call_key = codes[len(work_process):] * width + call_id
    # one row per call: a graph launch traced node by node started several kernels (and copies)
    order = np.argsort(work_key, kind="stable")
    work_key = work_key[order]
    first = np.flatnonzero(np.r_[True, work_key[1:] != work_key[:-1]]) if len(work_key) else np.empty(0, dtype=np.int64)
    per_call = np.add.reduceat(values[order], first, axis=0) if len(first) else values[:0]
    work_key = work_key[first]
    # Older exports record some calls twice (cudaMalloc and cudaMalloc_v3020 share one id): the first call counts.
    order = np.lexsort((start, call_key))
    call_key, thread, start = call_key[order], thread[order], start[order]
    unique = np.r_[True, call_key[1:] != call_key[:-1]] if len(call_key) else np.empty(0, dtype=bool)
    call_key, thread, start = call_key[unique], thread[unique], start[unique]
    at = np.minimum(np.searchsorted(call_key, work_key), max(len(call_key) - 1, 0))
    matched = (at < len(call_key)) & (call_key[at] == work_key) if len(call_key) else np.zeros(len(work_key), dtype=bool)
    at, per_call = at[matched], per_call[matched]
    summed = dict(zip(_PER_CALL, per_call.T))
    return pd.DataFrame({
        "thread": thread[at], "process": thread[at] // _THREAD_BITS, "start_ns": start[at],
        **{column: summed.get(column) for column in WORK_COLUMNS},
        "gpu_ops": np.ones(len(at), dtype=np.int64), "gpu_time_ns": summed["kernel_ns"] + summed["copy_ns"],
    })[["thread", "process", "start_ns", *WORK_COLUMNS]]


_PER_CALL = [column for column in WORK_COLUMNS if column not in ("gpu_ops", "gpu_time_ns")]


def _work(events: pd.DataFrame, **values) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(process, correlation id, _PER_CALL values) of the events nsys matched to a call."""
    known = (events["correlation_id"].notna() & events["global_pid"].notna()).to_numpy()
    columns = np.zeros((int(known.sum()), len(_PER_CALL)), dtype=np.int64)
    for column, value in values.items():
        column_values = value.to_numpy(dtype=np.int64, na_value=0)[known] if isinstance(value, pd.Series) else value
        columns[:, _PER_CALL.index(column)] = column_values
    return (events["global_pid"].to_numpy(dtype=np.int64, na_value=-1)[known] // _THREAD_BITS,
            events["correlation_id"].to_numpy(dtype=np.int64, na_value=-1)[known], columns)


def _window_sums(item_scope: np.ndarray, item_time: np.ndarray, item_values: np.ndarray,
                 scope: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """For each window (scope, start, end): the sum of item_values over items of the same scope
    with start <= item_time < end. Windows may nest and overlap."""
    if len(item_time) == 0 or len(start) == 0:
        return np.zeros((len(start), item_values.shape[1]), dtype=np.int64)
    # Pack (scope, time) into one sortable int64: scopes get arbitrary codes, times their rank
    # among all times (equal times share a rank), so no product can overflow.
    times = np.sort(np.concatenate([item_time, start, end]))
    scope_codes = pd.factorize(np.concatenate([item_scope, scope]))[0]
    width = len(times) + 1
    item_key = scope_codes[:len(item_scope)] * width + np.searchsorted(times, item_time)
    window_scope = scope_codes[len(item_scope):] * width
    order = np.argsort(item_key, kind="stable")
    item_key = item_key[order]
    running = np.zeros((item_values.shape[1], len(order) + 1), dtype=np.int64)
    np.cumsum(item_values[order].T, axis=1, out=running[:, 1:])
    first = np.searchsorted(item_key, window_scope + np.searchsorted(times, start))
    past_last = np.searchsorted(item_key, window_scope + np.searchsorted(times, end))
    return (running[:, past_last] - running[:, first]).T
