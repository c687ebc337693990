"""What an ncu capture says about each kernel launch, whatever sections it holds (pure functions).

ncu's default sections hold no FLOP or byte counters, but they do hold its Speed Of Light
throughputs, occupancy, launch configuration and rule results. From those:

- `launch_findings`: per launch, `sm_throughput_pct` and `memory_throughput_pct` (SOL: the busiest
  SM unit and the busiest memory unit, % of peak), `occupancy_pct` (achieved),
  `occupancy_theoretical_pct`, `registers_per_thread`, `smem_per_block_bytes` (static + dynamic),
  `waves_per_sm`, `grid` and `block` ("(x, y, z)"), and `bound`, one word with the `bound_rule`
  that decided it:
  - compute or memory: the busier of the two is at least BUSY_PCT of its peak;
  - latency: both are below BUSY_PCT, the threshold under which ncu's SOL rule says latency,
    not throughput, limits the kernel (too few warps in flight, or a grid too small for the GPU).
- `rule_results`: ncu's own advice, one row per rule result, largest estimated speedup first.
- `missing_metrics`: the metrics nsprof's analysis reads that the capture lacks, and the ncu option
  that collects them.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from nsprof import metric_catalog
from nsprof.analyze.metrics import is_partial, measured, served, sum_measured
from nsprof.parse.model import RULE_FIELDS, LaunchCounters

BUSY_PCT = 60.0
FINDING_COLUMNS = ("sm_throughput_pct", "memory_throughput_pct", "occupancy_pct", "occupancy_theoretical_pct",
                   "registers_per_thread", "smem_per_block_bytes", "waves_per_sm", "grid", "block", "bound",
                   "bound_rule")
RULE_COLUMNS = ("id", "kernel", *RULE_FIELDS[1:])


def launch_findings(launches: pd.DataFrame) -> pd.DataFrame:
    """FINDING_COLUMNS, one row per launch of ncu's launch table (LaunchCounters.kernels)."""
    out = pd.DataFrame(index=launches.index)
    for column in ("sm_throughput_pct", "memory_throughput_pct", "occupancy_pct", "occupancy_theoretical_pct",
                   "registers_per_thread", "waves_per_sm"):
        out[column] = measured(launches, column)
    out["smem_per_block_bytes"] = sum_measured(measured(launches, "smem_static_per_block_bytes"),
                                               measured(launches, "smem_dynamic_per_block_bytes"))
    out["grid"] = _text(launches, "grid_size")
    out["block"] = _text(launches, "block_size")
    decided = [bound(sm, memory) for sm, memory in zip(out["sm_throughput_pct"], out["memory_throughput_pct"])]
    out["bound"] = [word for word, _ in decided]
    out["bound_rule"] = [rule for _, rule in decided]
    return out


def bound(sm_pct: float, memory_pct: float) -> tuple[str | None, str | None]:
    """('compute' | 'memory' | 'latency', the rule that decided it); (None, None) without SOL figures."""
    if _missing(sm_pct) or _missing(memory_pct):
        return None, None
    figures = f"SM {sm_pct:.1f}%, memory {memory_pct:.1f}% of peak"
    if max(sm_pct, memory_pct) < BUSY_PCT:
        return "latency", f"{figures}: both under {BUSY_PCT:.0f}%, so neither unit is the limit"
    word = "compute" if sm_pct >= memory_pct else "memory"
    return word, f"{figures}: {'SM' if word == 'compute' else 'memory'} is the busier, at {BUSY_PCT:.0f}% or more"


def rule_results(reports: list[LaunchCounters]) -> pd.DataFrame:
    """RULE_COLUMNS: every report's rule results with the launch's kernel name, largest estimated
    speedup first (results without an estimate last, in ncu's order). A result found in two
    reports of one capture is kept once."""
    frames = [report.rules.merge(report.kernels[["id", "kernel"]], on="id", how="left")
              for report in reports if len(report.rules)]
    if not frames:
        return pd.DataFrame(columns=list(RULE_COLUMNS))
    rules = pd.concat(frames, ignore_index=True).drop_duplicates(subset=["id", "kernel", "rule", "message"])
    return rules.sort_values("speedup_pct", ascending=False, na_position="last", kind="stable")[
        list(RULE_COLUMNS)].reset_index(drop=True)


def missing_metrics(launches: pd.DataFrame, manifest: dict | None = None) -> dict:
    """The metrics of nsprof's default capture preset that no launch has (`metrics`, with the
    catalogue's `labels`), and `ncu_options` that collect them; empty lists when none is missing.
    A column filled only by a partial counter counts as missing; `partial` names each such counter
    the capture has, with what it cannot see.
    For nsprof's own capture (a `manifest` listing the metrics it asked ncu for): `nsprof_version`
    that captured it, and `asked`, those of `metrics` it asked for (ncu gave them no value)."""
    missing, partial = {}, {}
    for name in metric_catalog.preset(metric_catalog.DEFAULT):
        column = metric_catalog.BY_NAME[name].column
        narrower = served(launches, column)  # a partial counter in its place is no substitute
        if column not in missing and (measured(launches, column).isna().all() or is_partial(narrower or "")):
            missing[column] = metric_catalog.requested(column)
            if narrower and is_partial(narrower):
                partial[narrower] = metric_catalog.BY_NAME[narrower].partial
    names = list(dict.fromkeys(missing.values()))
    found: dict = {"metrics": names, "labels": [metric_catalog.BY_NAME[name].label for name in names],
             "ncu_options": f"--metrics {','.join(names)}" if names else "", "partial": partial}
    if manifest and isinstance(manifest.get("metrics"), list):
        found |= {"nsprof_version": manifest.get("nsprof_version"), "asked": [n for n in names if n in manifest["metrics"]]}
    return found


def _text(launches: pd.DataFrame, column: str) -> pd.Series:
    if column not in launches:
        return pd.Series([None] * len(launches), index=launches.index, dtype=object)
    return launches[column].map(lambda value: None if _missing(value) or not str(value).strip() else str(value))


def _missing(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, (float, np.floating)) and math.isnan(value))
