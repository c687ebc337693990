"""Why the time moved: the ncu counters that moved with it, and ncu's rules that appeared or went
away (pure pandas).

A kernel's counters are the median over its profiled launches of ncu's per-launch figures
(nsprof.analyze.metrics.kernel_metrics, launch_findings); a stage's are its work record's, per
launch (nsprof.ladder_analysis.work.per_launch), and include what the stage's change should move (the
registry's `watch` columns). A counter moved when it changed by MOVED_PCT or more, or went to or
from zero; only counters measured on both sides are compared.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from nsprof.analyze.capture_analysis import CaptureAnalysis
from nsprof.analyze.metrics import sum_measured
from nsprof.ladder_analysis.work import per_launch, watched

MOVED_PCT = 5.0
# DRAM and L2 bytes, bank conflicts, occupancy, SOL throughput, FLOP rate, tensor-core use.
KERNEL_COUNTERS = ("dram_bytes", "l2_bytes", "bank_conflicts_per_launch", "occupancy_pct", "sm_throughput_pct",
                   "memory_throughput_pct", "gflops_per_s", "tensor_flops")
STAGE_COUNTERS = ("dram_bytes", "l2_bytes", "bank_conflicts_per_launch", "occupancy_pct", "sm_throughput_pct",
                  "memory_throughput_pct", "tflops_per_s", "tensor_flops")


def kernel_counters(kernels: pd.DataFrame | None) -> pd.DataFrame:
    """KERNEL_COUNTERS per kernel name (index): the median over its profiled launches. Input:
    CaptureAnalysis.kernels (one row per ncu launch); an empty frame without ncu."""
    if kernels is None or kernels.empty:
        return pd.DataFrame(columns=list(KERNEL_COUNTERS))
    per_launch_rows = kernels.assign(bank_conflicts_per_launch=sum_measured(kernels["smem_ld_conflicts"],
                                                                            kernels["smem_st_conflicts"]))
    present = [column for column in KERNEL_COUNTERS if column in per_launch_rows]
    values = per_launch_rows[present].apply(pd.to_numeric, errors="coerce")
    return values.groupby(per_launch_rows["kernel"].astype(str)).median()


def stage_counters(stages: pd.DataFrame) -> pd.DataFrame:
    """STAGE_COUNTERS and each stage's watched columns, per launch, indexed by the stage range."""
    if stages is None or stages.empty:
        return pd.DataFrame(columns=list(STAGE_COUNTERS))
    watch = watched()  # from the registry now: an op registered after import has its own
    columns = list(dict.fromkeys([*STAGE_COUNTERS, *(column for key in (f"{op}/{stage}" for op, stage in
                                                                         zip(stages["op"], stages["stage"]))
                                                     for column in watch.get(key, ()))]))
    return pd.DataFrame({column: per_launch(stages, column).to_numpy() for column in columns}, index=stages["key"])


def moved(a: pd.Series | None, b: pd.Series | None) -> dict:
    """{counter: {"a", "b", "change_pct"}} for the counters that moved between two rows of
    counters (module docstring); {} when either side has none."""
    if a is None or b is None:
        return {}
    out = {}
    for column in a.index.intersection(b.index):
        before, after = _number(a[column]), _number(b[column])
        if before is None or after is None:
            continue
        change = 100 * (after / before - 1) if before else (0.0 if after == 0 else None)
        if change is None or abs(change) >= MOVED_PCT:
            out[column] = {"a": before, "b": after, "change_pct": change}
    return out


def kernel_rules(rules: pd.DataFrame | None) -> dict[str, set[str]]:
    """The ncu rules that fired (gave a message) for each kernel name, over its launches."""
    if rules is None or rules.empty:
        return {}
    fired = rules.dropna(subset=["rule"])
    return {str(kernel): set(group["rule"].astype(str)) for kernel, group in fired.groupby("kernel", sort=False)}


def capture_rules(analysis: CaptureAnalysis) -> dict | None:
    """kernel_rules of a capture; None where it holds no rule results."""
    return kernel_rules(analysis.rules) if analysis.rules is not None and len(analysis.rules) else None


def rule_changes(a: set[str] | None, b: set[str] | None) -> dict:
    """{"rules_appeared", "rules_gone"}: rule names only B's or only A's launches raised; {}
    when either side's capture holds no rule results."""
    if a is None or b is None:
        return {}
    return {"rules_appeared": sorted(b - a), "rules_gone": sorted(a - b)}


def add_why(record: dict, counters: dict, rules: dict, keys: dict, kernels: dict) -> None:
    """Adds to a row's `record` the counters that moved (`metrics`, where any did) and the rules that
    appeared or went away. Per side ("a", "b"): `counters` and `rules` are its capture's (absent or
    None where it has none), `keys` the row's key among its counters, `kernels` the kernel whose
    rules are the row's (None where the side lacks the row)."""
    metrics = moved(*(_counters_row(counters.get(side), keys[side]) for side in ("a", "b")))
    if metrics:
        record["metrics"] = metrics
    record.update(rule_changes(*(None if rules.get(side) is None or kernels[side] is None
                                 else rules[side].get(kernels[side], set()) for side in ("a", "b"))))


def _counters_row(frame: pd.DataFrame | None, key) -> pd.Series | None:
    return None if frame is None or key is None or key not in frame.index else frame.loc[key]


def _number(value) -> float | None:
    value = pd.to_numeric(value, errors="coerce")
    return None if value is None or pd.isna(value) or not np.isfinite(value) else float(value)
