"""Where the time goes and what to fix first: nsys's time per kernel joined with ncu's findings.

One row per kernel and launch configuration (full name, grid, block). From nsys: `launches`,
`total_ns`, `median_ns` and `pct` of all kernel time (graph launches traced at graph level
included). From ncu, over the launches it profiled of that kernel and configuration
(`ncu_launches`, grouped by nsprof.analyze.kernel_groups): the medians of `sm_throughput_pct`,
`memory_throughput_pct`, `occupancy_pct`, the `bound` those SOL medians give, the FLOP rate and DRAM
bandwidth with the % of the roof that bounds the kernel, and ncu's rule with the largest
estimated speedup (`top_rule`, `speedup_pct`, `speedup_type`: global estimates, of the whole
kernel, are preferred over local ones, of the part a rule looks at). `ncu_saving_ns` is ncu's
own estimate of the time a fix could save: nsys's total time of the kernel times that speedup.
`saving_ns` is that estimate bounded by physics: a kernel at a fraction f of a roof can gain at most
(1 - f) of its time, so the saving is at most `headroom_ns` = total time x (1 - f), f being the
highest of the kernel's % of the roof that bounds it (`pct_of_roof`, against the GPU's ceilings)
and ncu's SM and memory throughputs (% of their peaks). `saving_bound` says which figure bounds it.

Rows are ranked by `saving_ns`, then by total time: the kernels ncu did not profile come after
the ones it did, and say why (`note`).

The hot kernels are the fewest rows that together make up at least COVERAGE of kernel time, at
most `top`: the same rule picks what the guided capture (`nsprof profile -- CMD`) hands to ncu
(`hot_rows`). Harness work (nsprof.analyze.harness: nsprof's own in a ladder capture, autotuners'
and benchmark harnesses' in a program's) is never hot.

nsys and ncu demangle names differently (nsys: `at::native::f<(int)8>`, ncu: `at::f<8>`), so the
join compares nsprof.kernel_names.kernel_key: the name without namespaces, integer casts and spacing.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from nsprof.analyze.categorical import as_categorical
from nsprof.analyze.harness import HARNESS_RULE_WORDS, NSPROF_TUNING, harness_kernels, is_tuning_range, launched_inside
from nsprof.analyze.iterations import steady_part
from nsprof.analyze.kernel_groups import kernel_groups
from nsprof.analyze.launch_configs import LAUNCH_SIZES, combined_codes, launch_config
from nsprof.analyze.launch_findings import launch_findings
from nsprof.analyze.metrics import kernel_metrics
from nsprof.analyze.percent_of_peak import percent_of_peak
from nsprof.analyze.program_harness import HarnessKey, SteadyState
from nsprof.ceilings.peaks import Ceiling
from nsprof.kernel_names import kernel_key
from nsprof.parse.model import GpuTimeline

COVERAGE_PCT = 80.0
DEFAULT_TOP = 100  # a JAX ResNet-50's steady state needs 78 configurations for 80% of its kernel time
HOT_KERNEL_COLUMNS = ("kernel", "grid", "block", "launches", "total_ns", "median_ns", "pct", "ncu_launches", "bound",
                      "sm_throughput_pct", "memory_throughput_pct", "occupancy_pct", "tflops_per_s",
                      "dram_gbytes_per_s", "pct_of_roof", "roof", "top_rule", "speedup_pct", "speedup_type",
                      "ncu_saving_ns", "headroom_ns", "saving_ns", "saving_bound", "note")
NCU_ESTIMATE = "ncu's estimate"
NOT_PROFILED = "not profiled by ncu"
GRAPH_LEVEL = "a CUDA graph traced at graph level: its kernels are unseen (nsys --cuda-graph-trace=node)"

def launch_table(launches: pd.DataFrame, ceiling: Ceiling | None) -> pd.DataFrame:
    """ncu's launches with their derived metrics, findings and % of peak: CaptureAnalysis.kernels."""
    kernels = pd.concat([kernel_metrics(launches), launch_findings(launches)], axis=1)
    return percent_of_peak(kernels, ceiling) if ceiling is not None else kernels


def capture_hot_kernels(nsys: list[GpuTimeline], kernels: pd.DataFrame | None, rules: pd.DataFrame | None,
                        top: int = DEFAULT_TOP,
                        steady: tuple[list[GpuTimeline], SteadyState | None] | None = None) -> tuple[pd.DataFrame, dict]:
    """A capture's hot kernels (hot_kernels) and its harness (harness_summary), from its nsys exports
    and ncu's launch table and rules (None without ncu). A program with a steady state
    (nsprof.analyze.program_harness.steady_state) is ranked by its steady-state launches only;
    the harness's share is of the whole capture's kernel time. `steady`: steady_part(nsys), where
    the caller has it already."""
    steady_exports, state = steady if steady is not None else steady_part(nsys)
    harness = harness_kernels(nsys, state)
    rows = nsys_kernel_rows(nsys, harness, [launched_inside(export, is_tuning_range) for export in nsys])
    ranked = nsys_kernel_rows(steady_exports, harness) if state is not None else rows
    return hot_kernels(ranked, kernels, rules, top), {**harness_summary(rows),
                                                       "steady_state": state.to_json() if state is not None else None}


def harness_summary(rows: pd.DataFrame) -> dict:
    """The harness work (nsprof.analyze.harness: nsprof's own in a ladder capture, autotuners' and
    benchmark harnesses' in a program's): its kernel names, launches, time and share of all kernel
    time, and per rule that found some (`rules`: rule, says, kernels, configurations (kernel, grid,
    block: for the rules that name configurations, such as an autotuner's trials), launches,
    total_ns, pct); no kernels where there is none. A kernel whose every configuration is harness
    work is one of `kernels`."""
    mine = rows[rows["harness"]]
    kept = set(rows.loc[~rows["harness"], "kernel"])
    rules = [{"rule": rule, "says": HARNESS_RULE_WORDS[rule], "kernels": sorted(set(found["kernel"]) - kept),
              "configurations": [{"kernel": row.kernel, "grid": row.grid, "block": row.block}
                                 for row in found[found["kernel"].isin(kept)].itertuples()],
              "launches": int(found["launches"].sum()), "total_ns": int(found["total_ns"].sum()),
              "pct": float(found["pct"].sum())}
             for rule, found in mine.groupby("harness_rule", sort=False)]
    return {"kernels": sorted(set(mine["kernel"]) - kept), "launches": int(mine["launches"].sum()),
            "total_ns": int(mine["total_ns"].sum()), "pct": float(mine["pct"].sum()),
            "rules": sorted(rules, key=lambda rule: -rule["total_ns"])}


def _keys(names: pd.Series) -> pd.Series:
    return pd.Series([kernel_key(name) for name in names], index=names.index, dtype=object)


def nsys_kernel_rows(exports: list[GpuTimeline], harness: Mapping[HarnessKey, str] | None = None,
                     tuning: list[np.ndarray | None] | None = None) -> pd.DataFrame:
    """One row per kernel and launch configuration of nsys's trace (and per graph traced at graph
    level): kernel, grid, block, launches, total_ns, median_ns, mangled_name (None where the export
    lacks it), pct (of all kernel and graph time, harness included), harness (bool) and harness_rule
    (the rule of nsprof.analyze.harness that found it, None for the rest; `harness` maps kernel names,
    or (kernel, grid, block) configurations, to rules), largest total first. `tuning`, per export, the
    kernel launches of a Triton stage's tuning (nsprof.analyze.harness.launched_inside): rows of their
    own, harness work by NSPROF_TUNING, apart from the same configuration's measured launches."""
    harness = harness or {}
    tuning = tuning or [None] * len(exports)
    # Group on one integer key per launch (name code and launch sizes, factorized), and format the
    # few groups' names and configurations afterwards: no Python object and no copy of the table per
    # launch (10M launches are 10M strings, or a gigabyte of grouping columns, otherwise).
    parts = _launch_parts(exports, tuning)
    if not parts:
        return _no_kernel_rows()
    names = union_categoricals([as_categorical(name) for name, _, _, _ in parts], ignore_order=True)
    mangled = union_categoricals([as_categorical(name) for _, name, _, _ in parts], ignore_order=True)
    sizes: list[np.ndarray] = [_stack([list(sizes)[i] for _, _, sizes, _ in parts])  # and the tuning flag
                               for i in range(len(LAUNCH_SIZES) + 1)]
    duration = pd.Series(_stack([d.to_numpy(dtype=np.int64) for _, _, _, d in parts]))
    key = combined_codes(sizes, key=names.codes.astype(np.int64))
    grouped = duration.groupby(key, sort=True)
    rows = pd.DataFrame({"launches": grouped.count(), "total_ns": grouped.sum()})  # one statistic at a time
    rows["median_ns"] = grouped.median()
    rows = rows.reset_index(drop=True)
    del grouped
    first = pd.Series(key).drop_duplicates().index.to_numpy()  # each group's first launch, group by group
    rows.insert(0, "kernel", np.asarray(names.take(first), dtype=object).astype(str))
    rows["mangled_name"] = _first_mangled(mangled, key, len(rows))
    for prefix, axes in (("grid", sizes[:3]), ("block", sizes[3:6])):  # graphs traced at graph level (-1): none
        rows.insert(1 if prefix == "grid" else 2, prefix,
                    pd.Series([None if x < 0 else launch_config(x, y, z) for x, y, z in zip(*(a[first] for a in axes))],
                              dtype=object))
    total = rows["total_ns"].sum()
    rows["pct"] = 100 * rows["total_ns"] / total if total else 0.0
    tuned = sizes[len(LAUNCH_SIZES)][first].astype(bool)
    rows["harness_rule"] = _harness_rules(rows, tuned, harness)
    rows["harness"] = rows["harness_rule"].notna()
    return rows.sort_values(["total_ns", "kernel"], ascending=[False, True], ignore_index=True)


def _launch_parts(exports: list[GpuTimeline], tuning: list[np.ndarray | None]) -> list[tuple]:
    """Per export, its kernels and its graph launches traced at graph level as (names, mangled
    names, the launch sizes and a tuning flag, durations), those without launches left out."""
    config = list(LAUNCH_SIZES)
    return [part for export, tuned in zip(exports, tuning) for part in (
        (export.kernels["kernel"], export.kernels["mangled_name"],
         [*(export.kernels[column].to_numpy() for column in config),
          np.zeros(len(export.kernels), dtype=np.int8) if tuned is None else tuned.astype(np.int8)],
         export.kernels["duration_ns"]),
        (export.graphs["name"].astype(object), pd.Series([None] * len(export.graphs), dtype=object),
         [*[np.full(len(export.graphs), -1, dtype=np.int32)] * len(config), np.zeros(len(export.graphs), dtype=np.int8)],
         export.graphs["duration_ns"])) if len(part[3])]


def _no_kernel_rows() -> pd.DataFrame:
    """nsys_kernel_rows' table without rows, its columns typed."""
    return pd.DataFrame({column: pd.Series(dtype=object if column in ("kernel", "grid", "block", "mangled_name") else
                                           "float64" if column in ("median_ns", "pct") else "bool" if column == "harness"
                                           else "int64")
                         for column in ["kernel", "grid", "block", "launches", "total_ns", "median_ns", "mangled_name",
                                        "pct", "harness"]}).assign(harness_rule=pd.Series(dtype=object))


def _first_mangled(mangled: pd.Categorical, key: np.ndarray, groups: int) -> pd.Series:
    """Each group's first mangled name, None where it has none (a group-by's `first` skips missing ones)."""
    has_mangled = mangled.codes >= 0
    found = pd.Series(mangled.codes[has_mangled]).groupby(key[has_mangled], sort=True).first()
    codes = found.reindex(range(groups), fill_value=-1).to_numpy()
    return pd.Series(pd.Categorical.from_codes(codes, mangled.categories), dtype=object).where(codes >= 0, None)


def _harness_rules(rows: pd.DataFrame, tuned: np.ndarray, harness: Mapping[HarnessKey, str]) -> pd.Series:
    """Per row, the harness rule that found it: NSPROF_TUNING for a stage's tuning launches, else
    the rule `harness` gives its kernel name or configuration (None for the program's own work)."""
    return pd.Series([NSPROF_TUNING if apart else harness.get(kernel, harness.get((kernel, grid, block)))
                      for kernel, grid, block, apart in zip(rows["kernel"], rows["grid"], rows["block"], tuned)],
                     dtype=object)


def _stack(arrays: list[np.ndarray]) -> np.ndarray:
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


def hot_rows(rows: pd.DataFrame, top: int = DEFAULT_TOP, coverage_pct: float = COVERAGE_PCT) -> pd.DataFrame:
    """The fewest of nsys_kernel_rows' rows (harness left out) that make up at least `coverage_pct`
    of the non-harness kernel time, largest first, at most `top`."""
    work = rows[~rows["harness"]].sort_values("total_ns", ascending=False, kind="stable")
    total = work["total_ns"].sum()
    if work.empty or total == 0:
        return work.head(0)
    before = 100 * (work["total_ns"].cumsum() - work["total_ns"]) / total  # the share of the rows above
    return work[(before < coverage_pct).to_numpy()].head(top)


def hot_kernels(rows: pd.DataFrame, kernels: pd.DataFrame | None, rules: pd.DataFrame | None,
                top: int = DEFAULT_TOP) -> pd.DataFrame:
    """HOT_KERNEL_COLUMNS for the hot rows plus every row ncu profiled, ranked as the module
    docstring says. `kernels` is CaptureAnalysis.kernels (one row per ncu launch, % of peak
    added), `rules` CaptureAnalysis.rules; both None for a capture without ncu."""
    hot = hot_rows(rows, top)
    findings = _ncu_findings(kernels, rules)
    keyed = rows.assign(key=_keys(rows["kernel"]))
    joined = keyed.merge(findings, how="left", left_on=["key", "grid", "block"], right_index=True)
    chosen = joined[joined.index.isin(hot.index) | (joined["ncu_launches"].fillna(0) > 0) & ~joined["harness"]]
    chosen = chosen.assign(ncu_saving_ns=chosen["total_ns"] * chosen["speedup_pct"] / 100,
                           ncu_launches=chosen["ncu_launches"].fillna(0).astype(int),
                           note=[_note(row) for row in chosen.itertuples()])
    chosen = _bounded_savings(chosen)
    ranked = chosen.sort_values(["saving_ns", "total_ns"], ascending=[False, False], na_position="last", kind="stable")
    return ranked[list(HOT_KERNEL_COLUMNS)].reset_index(drop=True)


# the figures that say how close a kernel is to a roof, and how the bound names each
_ACHIEVED = {"pct_of_roof": "its % of the {roof}", "sm_throughput_pct": "ncu's SM throughput",
             "memory_throughput_pct": "ncu's memory throughput"}


def _bounded_savings(rows: pd.DataFrame) -> pd.DataFrame:
    """headroom_ns, saving_ns and saving_bound (module docstring) for rows with ncu_saving_ns."""
    achieved = pd.DataFrame({name: pd.to_numeric(rows[name], errors="coerce").astype(float) for name in _ACHIEVED},
                            index=rows.index)
    achieved = achieved.clip(lower=0, upper=100)
    closest = achieved.fillna(-1).idxmax(axis=1).where(achieved.notna().any(axis=1))
    fraction = achieved.max(axis=1) / 100
    headroom = rows["total_ns"] * (1 - fraction)
    estimate = rows["ncu_saving_ns"].astype(float)
    bounded = (headroom.fillna(np.inf) < estimate.fillna(-np.inf)).to_numpy()
    bound = [None if pd.isna(saving) else
             _ACHIEVED[str(name)].format(roof=roof) + f" ({100 * f:.0f}%)" if is_bounded else NCU_ESTIMATE
             for saving, name, roof, f, is_bounded in zip(estimate, closest, rows["roof"], fraction, bounded)]
    return rows.assign(headroom_ns=headroom, saving_ns=estimate.where(~bounded, headroom), saving_bound=bound)


def _note(row) -> str | None:
    if row.grid is None or (isinstance(row.grid, float) and np.isnan(row.grid)):
        return GRAPH_LEVEL
    return NOT_PROFILED if not row.ncu_launches else None


def _ncu_findings(kernels: pd.DataFrame | None, rules: pd.DataFrame | None) -> pd.DataFrame:
    """Per (kernel_key, grid, block): ncu's launches and the medians and rule of the module docstring."""
    columns = [column for column in HOT_KERNEL_COLUMNS[7:]
               if column not in ("ncu_saving_ns", "headroom_ns", "saving_ns", "saving_bound", "note")]
    if kernels is None or kernels.empty:
        return pd.DataFrame(columns=columns, index=pd.MultiIndex.from_tuples([], names=["key", "grid", "block"]))
    launches = kernels.assign(key=_keys(kernels["kernel"]))
    # kernel_groups' medians and bound, over the launches whose names agree on the key
    found = kernel_groups(launches.assign(kernel=launches["key"])).rename(columns={"kernel": "key", "launches": "ncu_launches"})
    found = found.set_index(["key", "grid", "block"])
    found["tflops_per_s"] = found["gflops_per_s"] / 1e3
    roofs = [_roof(row) for row in found.itertuples()]
    found["pct_of_roof"] = [pct for pct, _ in roofs]
    found["roof"] = [name for _, name in roofs]
    top_rules = _top_rules(launches, rules)
    found = found.join(top_rules)
    return found[columns]


_PEAKS = ("fp32_pct_of_peak", "tensor_pct_of_peak", "dram_pct_of_peak")
_ROOF_NAMES = {"fp32_pct_of_peak": "FP32 peak", "tensor_pct_of_peak": "tensor peak", "dram_pct_of_peak": "DRAM bandwidth"}


def _roof(row) -> tuple[float | None, str | None]:
    """The roof the kernel is closest to: the largest of its % of the FP32, tensor and DRAM peaks."""
    known = {name: getattr(row, name) for name in _PEAKS if name in row._fields and not pd.isna(getattr(row, name))}
    if not known:
        return None, None
    name = max(known, key=known.__getitem__)
    return float(known[name]), _ROOF_NAMES[name]


def _top_rules(launches: pd.DataFrame, rules: pd.DataFrame | None) -> pd.DataFrame:
    """Per (key, grid, block): the rule with the largest median estimated speedup over the launches
    it fired on, global estimates before local ones."""
    empty = pd.DataFrame(columns=["top_rule", "speedup_pct", "speedup_type"],
                         index=pd.MultiIndex.from_tuples([], names=["key", "grid", "block"]))
    if rules is None or rules.empty:
        return empty
    estimated = rules.dropna(subset=["speedup_pct"]).merge(
        launches[["id", "kernel", "key", "grid", "block"]], on=["id", "kernel"], how="inner")
    if estimated.empty:
        return empty
    medians = estimated.groupby(["key", "grid", "block", "rule", "speedup_type"], sort=False)["speedup_pct"].median()
    medians = medians.reset_index()
    medians["is_global"] = medians["speedup_type"].eq("global")
    best = medians.sort_values(["is_global", "speedup_pct"], ascending=[False, False], kind="stable")
    best = best.drop_duplicates(["key", "grid", "block"]).set_index(["key", "grid", "block"])
    return best.rename(columns={"rule": "top_rule"})[["top_rule", "speedup_pct", "speedup_type"]]
