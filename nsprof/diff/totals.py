"""The totals of a diff: each side's GPU busy, kernel, copy and idle time, and the kernels that
account for most of the change in kernel time (`contributors`)."""

from __future__ import annotations

import numpy as np

from nsprof.diff.sides import Side
from nsprof.diff.types import Contributor, KernelRow, TotalRow

TOP_CONTRIBUTORS = 5


def totals(a: Side, b: Side) -> list[TotalRow]:
    """GPU busy, kernel, copy and idle time of each side: a run's, the mean of its runs' where it has several."""
    sides = [_mean_totals([_capture_totals(run) for run in (capture, *capture.runs)]) for capture in (a, b)]
    rows: list[TotalRow] = []
    for quantity in ("gpu_busy_ns", "kernel_ns", "copy_ns", "idle_ns"):
        before, after = sides[0].get(quantity), sides[1].get(quantity)
        change = 100 * (after / before - 1) if before and after is not None else None
        rows.append({"quantity": quantity, "a_ns": before, "b_ns": after, "change_pct": change})
    return rows


def _mean_totals(runs: list[dict]) -> dict:
    """The mean of each quantity every run has."""
    return {quantity: float(np.mean([run[quantity] for run in runs])) for quantity in runs[0]
            if all(quantity in run for run in runs)}


def _capture_totals(capture: Side) -> dict:
    """One run's GPU busy, idle, kernel and copy time (its kernel time alone where it has no timeline)."""
    analysis = capture.analyzed()
    if analysis.gpu_totals is None:
        kernels = analysis.kernels
        return {"kernel_ns": float(kernels["duration_ns"].sum())} if kernels is not None else {}
    busy = sum(device["busy_ns"] for device in analysis.gpu_utilization or [])
    span = sum(device["span_ns"] for device in analysis.gpu_utilization or [])
    return {"gpu_busy_ns": float(busy), "idle_ns": float(span - busy), **analysis.gpu_totals}


def contributors(kernels: list[KernelRow]) -> list[Contributor]:
    """The kernels whose total time changed most, each with its share of all the movement (the sum
    of every kernel's absolute change): a net change can be small while kernels moved a lot both
    ways (fused kernels added, their eager parts removed), and a share of the net would pass 100%."""
    deltas = [(row["kernel"], row["b_total_ns"] - row["a_total_ns"]) for row in kernels]
    moved_ns = sum(abs(delta) for _, delta in deltas)
    ranked = sorted(deltas, key=lambda item: -abs(item[1]))[:TOP_CONTRIBUTORS]
    return [{"kernel": name, "delta_ns": delta, "share_pct": 100 * abs(delta) / moved_ns}
            for name, delta in ranked if delta]
