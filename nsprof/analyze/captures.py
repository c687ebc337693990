"""Many captures side by side: one row per capture, the kernel summary merged across them, and
stragglers among the ranks of one run (pure functions; nsprof.many runs the per-capture part on Dask).

Per capture (`capture_row`, from that capture's own kernel_summary, memcpy_summary and
gpu_utilization, so the numbers equal the capture analyzed alone):
- `kernel_ns`, `copy_ns`: summed kernel (and graph) time, summed memcpy and memset time;
- `gpu_busy_pct`, `idle_ns`: busy over span, and span minus busy, summed over the capture's GPUs;
- `comm_ns`: time in communication, overlaps counted once. Communication is the NCCL kernels
  (names containing "nccl") where there are any; otherwise NVTX ranges named like collectives
  (COLLECTIVE_RANGE: allreduce, all_gather, barrier, nccl..., as a CPU backend such as gloo is
  wrapped), in CPU time. `comm_source` says which;
- `comm_overlap_pct`: the share of comm_ns during which non-communication kernels ran on the GPU;
- `top_kernel`, `top_kernel_pct`: the kernel with the most time, and its share.

Stragglers (`stragglers`): where every capture has the same step range (an NVTX range whose name
contains "step", the one with the longest median instance, or the name given; a capture with none
has its loop's iterations, the one notion of an iteration that analyze judges it by:
nsprof.analyze.iterations, another repeating range or the loop found in its GPU work), the n-th
instance on each rank is one step (the ranks' loops only where their counts agree within
LOOP_AGREEMENT: a slow rank's extra work can repeat into a loop of its own). A rank's `wait_ns` in a
step is its communication started inside the step (NVTX collectives by their start, NCCL kernels by
their launching call's start); its `compute_ns` is the step's duration less that wait, or the GPU
time of the (other) kernels launched inside the step where that is longer (a rank whose kernels run
long returns to the CPU quickly and then waits for its own GPU inside the collective). In a
synchronous step the collective ends when the last rank arrives, so the rank with the most compute
finished last, and the others waited inside collectives for it: per step, the last rank,
`late_by_ns` (its compute less the median of the others'), and `others_wait_ns` (the median of the
others' wait). Durations, not timestamps, are compared: each report keeps its own clock.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from nsprof.analyze.captures_types import CaptureRow, MergedKernelRow, StepRow, StragglerRow
from nsprof.analyze.gpu_events import covered_ns
from nsprof.analyze.nvtx_attribution import launching_calls, work_column
from nsprof.parse.model import GpuTimeline

COLLECTIVE_RANGE = re.compile(r"all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|broadcast|barrier|nccl|gloo",
                              re.IGNORECASE)
COMM_KERNEL = re.compile(r"nccl", re.IGNORECASE)
STEP_RANGE = re.compile(r"step", re.IGNORECASE)
LOOP_STEP = "iteration"  # a capture with no step range: its loop's iterations (nsprof.analyze.iterations)
LOOP_AGREEMENT = 1.1  # the most iterations a rank's loop may have over the fewest another's has, to be one loop
NCCL, NVTX, NO_COMM = "nccl kernels", "nvtx ranges", "none"
# each table's columns: its row type's keys, in order (nsprof.analyze.captures_types)
CAPTURE_COLUMNS, STEP_COLUMNS, MERGED_COLUMNS, STRAGGLER_COLUMNS = (
    tuple(row.__annotations__) for row in (CaptureRow, StepRow, MergedKernelRow, StragglerRow))


def communication(export: GpuTimeline) -> tuple[str, pd.DataFrame]:
    """(comm_source, its events: start_ns, end_ns, anchor_ns): NCCL kernels (anchored at their
    launching call's start) or, without any, NVTX collective ranges (anchored at their start)."""
    kernels = export.kernels
    names = kernels["kernel"].astype("category")
    nccl = names.cat.codes.isin(np.flatnonzero(names.cat.categories.str.contains(COMM_KERNEL))).to_numpy()
    if nccl.any():
        chosen = kernels[nccl]
        calls = export.runtime[["correlation_id", "start_ns"]].dropna().drop_duplicates("correlation_id")
        anchor = chosen[["correlation_id"]].merge(calls, how="left", on="correlation_id")["start_ns"]
        return NCCL, pd.DataFrame({"start_ns": chosen["start_ns"].to_numpy(np.int64),
                                   "end_ns": chosen["end_ns"].to_numpy(np.int64),
                                   "anchor_ns": anchor.to_numpy(dtype=np.float64, na_value=np.nan)})
    ranges = export.nvtx.dropna(subset=["start_ns", "end_ns"])
    ranges = ranges[ranges["name"].astype(str).str.contains(COLLECTIVE_RANGE)]
    if ranges.empty:
        return NO_COMM, pd.DataFrame({"start_ns": [], "end_ns": [], "anchor_ns": []}, dtype=np.int64)
    start, end = ranges["start_ns"].to_numpy(np.int64), ranges["end_ns"].to_numpy(np.int64)
    return NVTX, pd.DataFrame({"start_ns": start, "end_ns": end, "anchor_ns": start.astype(np.float64)})


def capture_row(export: GpuTimeline, kernels: pd.DataFrame, copies: pd.DataFrame, utilization: list[dict],
                comm: tuple[str, pd.DataFrame]) -> dict:
    """CAPTURE_COLUMNS but file and rank, from the capture's own summaries (nsprof.analyze.summaries
    kernel_summary and memcpy_summary, gpu_utilization) and communication(export)."""
    source, events = comm
    busy = sum(device["busy_ns"] for device in utilization)
    span = sum(device["span_ns"] for device in utilization)
    comm_start, comm_end = events["start_ns"].to_numpy(np.int64), events["end_ns"].to_numpy(np.int64)
    comm_ns = covered_ns(comm_start, comm_end)
    compute = _compute_kernels(export) if source == NCCL else export.kernels
    compute_start, compute_end = compute["start_ns"].to_numpy(np.int64), compute["end_ns"].to_numpy(np.int64)
    # overlap = |comm| + |compute| - |comm or compute|: each union counts overlaps once
    overlap = comm_ns + covered_ns(compute_start, compute_end) - covered_ns(np.r_[comm_start, compute_start],
                                                                             np.r_[comm_end, compute_end])
    top = kernels.iloc[0] if len(kernels) else None
    return {"gpu_busy_pct": 100 * busy / span if span else 0.0,
            "kernel_ns": int(kernels["total_ns"].sum()), "copy_ns": int(copies["total_ns"].sum()),
            "comm_ns": int(comm_ns), "comm_overlap_pct": 100 * overlap / comm_ns if comm_ns else None,
            "idle_ns": int(span - busy),
            "top_kernel": None if top is None else str(top["kernel"]),
            "top_kernel_pct": None if top is None else float(top["pct"]), "comm_source": source}


def _compute_kernels(export: GpuTimeline) -> pd.DataFrame:
    names = export.kernels["kernel"].astype("category")
    return export.kernels[~names.cat.codes.isin(np.flatnonzero(names.cat.categories.str.contains(COMM_KERNEL))).to_numpy()]


def step_table(export: GpuTimeline, comm: tuple[str, pd.DataFrame], step_range: str | None = None) -> pd.DataFrame:
    """STEP_COLUMNS for every closed instance of the candidate step ranges (names containing
    "step", or exactly `step_range`), numbered 1, 2, ... in time order per name."""
    ranges = export.nvtx.dropna(subset=["start_ns", "end_ns"])
    names = ranges["range"].astype(str)
    ranges = ranges[names == step_range] if step_range else ranges[names.str.contains(STEP_RANGE)]
    ranges = ranges.sort_values("start_ns", kind="stable")
    if ranges.empty and not step_range:
        ranges = _loop_iterations(export)
    if ranges.empty:
        return pd.DataFrame({column: pd.Series(dtype=object if column == "step_range" else "int64")
                             for column in STEP_COLUMNS})
    events = comm[1].dropna(subset=["anchor_ns"])
    anchor = np.sort(events["anchor_ns"].to_numpy(np.float64))
    durations = (events["end_ns"] - events["start_ns"]).to_numpy(np.int64)[np.argsort(events["anchor_ns"].to_numpy(),
                                                                                         kind="stable")]
    running = np.r_[0, np.cumsum(durations)]
    start, end = ranges["start_ns"].to_numpy(np.int64), ranges["end_ns"].to_numpy(np.int64)
    wait = running[np.searchsorted(anchor, end, side="left")] - running[np.searchsorted(anchor, start, side="left")]
    step_ns = end - start
    # GPU compute launched in the step (any thread: PyTorch's backward launches from its own): a
    # rank whose kernels run long may return to the CPU quickly and wait for them inside the collective
    calls = launching_calls(export).sort_values("start_ns", kind="stable")
    call_start = calls["start_ns"].to_numpy(np.int64)
    launched = np.r_[0, np.cumsum(work_column(calls, "kernel_ns"))]
    gpu_ns = launched[np.searchsorted(call_start, end)] - launched[np.searchsorted(call_start, start)]
    if comm[0] == NCCL:
        gpu_ns = gpu_ns - wait  # the NCCL kernels are the wait, not compute
    table = pd.DataFrame({"step_range": ranges["range"].astype(str).to_numpy(), "step_ns": step_ns, "wait_ns": wait,
                          "compute_ns": np.maximum(np.maximum(step_ns - wait, gpu_ns), 0)})
    table.insert(1, "step", table.groupby("step_range", sort=False).cumcount() + 1)
    return table[list(STEP_COLUMNS)]


def _loop_iterations(export: GpuTimeline) -> pd.DataFrame:
    """The capture's loop (nsprof.analyze.iterations: another repeating range, or found in the GPU
    work) as instances of a step range LOOP_STEP, each from its start to the next one's."""
    from nsprof.analyze.iterations import capture_loop

    iterations = capture_loop(export).iterations
    if iterations is None:
        return pd.DataFrame({"range": pd.Series(dtype=object), "start_ns": pd.Series(dtype="int64"),
                             "end_ns": pd.Series(dtype="int64")})
    starts = np.asarray(iterations.starts_ns, dtype=np.int64)
    return pd.DataFrame({"range": LOOP_STEP, "start_ns": starts, "end_ns": np.r_[starts[1:], iterations.end_ns]})


def merged_kernels(summaries: list[pd.DataFrame]) -> pd.DataFrame:
    """MERGED_COLUMNS: each kernel's launches and time over all captures (kernel_summary frames,
    one per capture), and the spread of its per-capture total_ns over the captures that ran it."""
    stacked = pd.concat([summary[["kernel", "count", "total_ns"]] for summary in summaries if len(summary)],
                        ignore_index=True) if any(len(s) for s in summaries) else pd.DataFrame(
        {"kernel": pd.Series(dtype=object), "count": pd.Series(dtype="int64"), "total_ns": pd.Series(dtype="int64")})
    grouped = stacked.groupby("kernel", sort=False)
    merged = grouped["total_ns"].agg(captures="count", total_ns="sum", min_ns="min", median_ns="median",
                                     max_ns="max").reset_index()
    merged["count"] = grouped["count"].sum().to_numpy()
    total = merged["total_ns"].sum()
    merged["pct"] = 100 * merged["total_ns"] / total if total else 0.0
    return merged.sort_values(["total_ns", "kernel"], ascending=[False, True], ignore_index=True)[list(MERGED_COLUMNS)]


def choose_step_range(steps: list[pd.DataFrame]) -> str | None:
    """The step range name every capture has (at least two instances each): the one with the
    longest median instance (the whole training step, not a phase of it); None without one."""
    if len(steps) < 2 or any(table.empty for table in steps):
        return None
    counts = [table["step_range"].value_counts() for table in steps]
    common = set.intersection(*(set(count.index[count >= 2]) for count in counts))
    loops = [count.get(LOOP_STEP, 0) for count in counts]
    if LOOP_STEP in common and max(loops) > LOOP_AGREEMENT * min(loops):
        common.discard(LOOP_STEP)  # the ranks' loops are not one loop (a rank's extra work repeating on its own)
    if not common:
        return None
    median = pd.concat(steps, ignore_index=True).groupby("step_range")["step_ns"].median()
    return max(sorted(common), key=lambda name: median[name])


def stragglers(steps: list[pd.DataFrame], labels: list[tuple[str, int | None]]) -> tuple[str | None, pd.DataFrame]:
    """(the step range, STRAGGLER_COLUMNS per step): which capture finished its compute last in
    the n-th instance of the step range on every capture, by how much, and how long the others
    waited (module docstring). `labels` are the captures' (file, rank). Empty without a common
    step range."""
    name = choose_step_range(steps)
    if name is None:
        return None, pd.DataFrame({column: [] for column in STRAGGLER_COLUMNS})
    tables = [table[table["step_range"] == name].reset_index(drop=True) for table in steps]
    n = min(len(table) for table in tables)
    compute = np.stack([table["compute_ns"].to_numpy(np.int64)[:n] for table in tables])  # ranks x steps
    wait = np.stack([table["wait_ns"].to_numpy(np.int64)[:n] for table in tables])
    step_ns = np.stack([table["step_ns"].to_numpy(np.int64)[:n] for table in tables])
    last = np.argmax(compute, axis=0)
    others = np.ones_like(compute, dtype=bool)
    others[last, np.arange(n)] = False
    rest = compute.T[others.T].reshape(n, -1)  # per step, the other ranks' compute
    rest_wait = wait.T[others.T].reshape(n, -1)
    rows = pd.DataFrame({
        "step": np.arange(1, n + 1), "rank": [labels[i][1] for i in last], "file": [labels[i][0] for i in last],
        "compute_ns": compute[last, np.arange(n)],
        "late_by_ns": (compute[last, np.arange(n)] - np.median(rest, axis=1)).astype(np.int64),
        "others_wait_ns": np.median(rest_wait, axis=1).astype(np.int64),
        "step_ns": np.median(step_ns, axis=0).astype(np.int64)})
    return name, rows[list(STRAGGLER_COLUMNS)]
