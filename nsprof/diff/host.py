"""The host side of two captures compared (nsprof.analyze.host_side's figures): GPU busy, the GPU's
idle time by cause, launches, host time between launches and waits, per iteration of the program's
repeating range. Only where both sides have one: a change that removes launches changes the window,
and two windows of different lengths compare different amounts of work. A side of several runs
gives the mean of its runs. Figures, not tests: diff's statistics are for kernels, ranges and stages."""

from __future__ import annotations

import numpy as np

from nsprof.analyze.host_idle import HOST_WORK, LAUNCHING, WAITED
from nsprof.analyze.host_types import HostSide
from nsprof.analyze.host_verdict import UNDECIDED, busiest
from nsprof.diff.types import HostChange, HostRow

# (key, label, unit): "ns" and "count" are per iteration where the sides have iterations; "pct" is a share
QUANTITIES = (("window_ns", "time", "ns"), ("gpu_busy_pct", "GPU busy", "pct"), ("gpu_idle_ns", "GPU idle", "ns"),
              ("launch_overhead_ns", f"idle: {LAUNCHING}", "ns"), ("synchronization_ns", f"idle: {WAITED}", "ns"),
              ("host_work_ns", f"idle: {HOST_WORK}", "ns"), ("launches", "launches", "count"),
              ("host_between_launches_ns", "host time between launches", "median"), ("waits", "waits", "count"))


def host_figures(host: HostSide | None) -> dict[str, float | None] | None:
    """One capture's QUANTITIES, per iteration of its repeating range; None without a host side or
    without iterations in its window."""
    iterations = host["iterations"]["count"] if host and host["iterations"] else None
    if host is None or not iterations:
        return None
    device = busiest(host)
    causes = device["idle_causes"]
    totals: dict[str, float | None] = {"window_ns": host["window"]["span_ns"], "gpu_idle_ns": device["idle_ns"],
                                       "launch_overhead_ns": causes[LAUNCHING], "synchronization_ns": causes[WAITED],
                                       "host_work_ns": causes[HOST_WORK], "launches": host["launches"]["count"],
                                       "waits": host["waits"]["count"]}
    if host["verdict"]["verdict"] == UNDECIDED:  # its idle time has no causes: a cause's 0 ns is unknown, not none
        totals.update(launch_overhead_ns=None, synchronization_ns=None, host_work_ns=None)
    figures = {key: None if value is None else value / iterations for key, value in totals.items()}
    figures["gpu_busy_pct"] = device["busy_pct"]
    figures["host_between_launches_ns"] = host["launches"]["median_between_ns"]
    return figures


def host_rows(a: list[HostSide | None], b: list[HostSide | None]) -> HostChange | None:
    """The comparison of two sides' host analyses (each a list, one per run): `basis` (per iteration
    of which range), each side's verdict, and `rows` (quantity, label, unit, a, b, change_pct: a
    relative change, in points for a share). None where a run has no host side or no iterations."""
    figures = [[run for run in map(host_figures, runs) if run is not None] for runs in (a, b)]
    if not a or not b or len(figures[0]) < len(a) or len(figures[1]) < len(b):
        return None
    sides = [_mean(side) for side in figures]
    rows: list[HostRow] = []
    for key, label, unit in QUANTITIES:
        before, after = sides[0][key], sides[1][key]
        if before is None or after is None:
            change = None
        elif unit == "pct":
            change = after - before
        else:
            change = 100 * (after / before - 1) if before else None
        rows.append({"quantity": key, "label": label, "unit": unit, "a": before, "b": after, "change_pct": change})
    first_a, first_b = a[0], b[0]
    assert first_a is not None and first_a["iterations"] is not None and first_b is not None  # they have figures
    return {"basis": f"per iteration of {first_a['iterations']['range']}", "a_verdict": first_a["verdict"]["verdict"],
            "b_verdict": first_b["verdict"]["verdict"], "rows": rows}


def _mean(runs: list[dict[str, float | None]]) -> dict[str, float | None]:
    return {key: None if any(run[key] is None for run in runs) else float(np.mean([run[key] for run in runs]))
            for key in runs[0]}
