"""ncu's launches grouped by kernel and launch configuration (pure function).

ncu lists every launch it profiled, and a program runs one kernel many times (a training step
runs one GEMM per layer and step). `kernel_groups` gives one row per kernel (its full name) and
launch configuration (grid and block), in the order of each group's first launch:

- `kernel`, `grid`, `block`: the group (grid and block are None where the capture lacks them)
- `launches`, and `ids`: ncu's ids of those launches
- `median_ns`, `min_ns`, `max_ns`: of the launches' durations
- every other numeric column of the launch table (CaptureAnalysis.kernels: counters, rates,
  findings, % of peak): its median over the group's launches, over those that measured it
  (NaN when none did)
- `bound`, `bound_rule`: launch_findings.bound of the median SM and memory throughputs
"""

from __future__ import annotations

import pandas as pd

from nsprof.analyze.launch_findings import bound

GROUP_KEY = ("kernel", "grid", "block")
TIMES = ("launches", "median_ns", "min_ns", "max_ns")


def kernel_groups(kernels: pd.DataFrame) -> pd.DataFrame:
    """One row per kernel and launch configuration of `kernels` (columns: module docstring)."""
    key = list(GROUP_KEY)
    medians = [column for column in kernels.select_dtypes("number") if column not in ("id", "duration_ns")]
    grouped = kernels.groupby(key, sort=False, dropna=False)  # no launch stats: grid and block None, still a group
    groups = grouped["duration_ns"].agg(launches="size", median_ns="median", min_ns="min", max_ns="max")
    groups = groups.join(grouped[medians].median()).join(grouped["id"].agg(list).rename("ids")).reset_index()
    decided = [bound(sm, memory) for sm, memory in zip(groups["sm_throughput_pct"], groups["memory_throughput_pct"])]
    groups["bound"] = [word for word, _ in decided]
    groups["bound_rule"] = [rule for _, rule in decided]
    return groups[[*key, *TIMES, *medians, "bound", "bound_rule", "ids"]]
