"""A capture's pieces of work (its stages, and kernels outside them) as reports and rooflines show
them, and what changed from one stage to the next (pure functions over parsed profiles).

A piece of work is every profiled launch inside one nsprof stage range (`nsprof:sgemm/v6/1024x1024x1024`,
labelled `v6`) or, for launches outside any stage range (another program's ncu CSV), every launch of
one kernel (labelled by its shortened name). Columns of `work_records`:

- `key`: the stage range, or `kernel:<name>`; `label`; `op`, `stage`, `size` (stage work only)
- `kernel`: the kernel that ran longest (the stage's main kernel); `ncu_kernels`: launches profiled
- the totals of nsprof.analyze.metrics (`duration_ns`, `flops`, `tensor_*_flops`, `dram_bytes`,
  `l2_bytes`, shared-memory counts...) and their ratios, with `intensity_flop_per_l1_byte`
- every other column of the metric catalogue (nsprof.metric_catalog), aggregated over the launches
  as it says: counters summed (`l1_bytes`...), percentages and ratios averaged weighted by duration
  (`occupancy_pct` is achieved occupancy, `sm_throughput_pct`, the `stall_*` warp latencies in
  cycles per instruction...), launch attributes (`registers_per_thread`...) of the main kernel;
  NaN where not collected. `smem_per_block_bytes`: static + dynamic, of the main kernel
- `launches`, `nsys_gpu_time_ns`: the range's instances and kernel time as nsys saw them
- `nsys_time_per_launch_ns`: nsys GPU time per range instance (warm, no profiler replay in it);
  `ncu_time_per_launch_ns`: ncu's duration per launch (replayed with caches flushed, so longer)
- `time_per_launch_ns` and `time_source`: the work's time, the nsys one where nsys saw the stage,
  else the ncu one; for a CPU stage timed beside the capture (cpu_work), the wall clock's median.
  Every table, chart and roofline shows this time and names its source.
- `speedup_vs_cpu_loop`, `speedup_vs_cpu_blas`: how many times faster than the CPU's serial loop and
  its BLAS at the same size, from these times (nsprof.ladder.cpu_speedups, as bench computes them)
- `tflops_per_s`: the work's speed: the op's FLOPs (2MNK for SGEMM) over that time for stages,
  counted FLOPs over ncu's duration otherwise
- `precision`: what the op declares the stage computes in (fp32, tf32, fp16), which picks its
  compute roof; `work_flops` and `flops_source`: the FLOPs the intensities divide, ncu's count or,
  for a stage whose precision's FLOPs the capture did not count, "declared" (the op's FLOPs)
- `host_ns_per_launch`: the median time a stage's range was open on the CPU per instance (launch
  and timing calls included); above the GPU time, the launch, not the kernel, sets the pace
- `bank_conflicts_per_launch`: shared-memory bank conflicts (loads + stores) per launch: the
  excess wavefronts over each access width's minimum, which the n-way degree alone hides
- with_peaks adds `compute_roof`, `pct_of_compute_peak` and `dram_pct_of_peak`

nsprof.ladder_analysis.profiles puts them together for the report commands: work records of several
profiles (the latest of each stage), their roofline points (a CPU stage's under the host's own
roofs, host_roofs), and where each nsys capture's time went.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from nsprof import metric_catalog
from nsprof.analyze.metrics import TOTALS, all_measured_flops, kernel_metrics, measured, range_metrics, ratio, sum_measured
from nsprof.analyze.roofline import (
    COMPULSORY_INTENSITY,
    CPU_FP32_ROOF,
    CPU_MEMORY_ROOF,
    WALL_CLOCK,
    Roof,
    compute_peak,
    precision_unit,
)
from nsprof.ceilings.peaks import Ceiling
from nsprof.kernel_names import short_kernel_name
from nsprof.ladder.cpu_speedups import BLAS_KEY, LOOP_KEY, cpu_speedups
from nsprof.ladder.registry import all_ops, all_stages, baseline_of, stage_order
from nsprof.parse.model import CpuRung
from nsprof.ranges import NVTX_DOMAIN, parse_stage_range, qualify, range_name
from nsprof.sizes import parse_label

KERNEL_KEY = "kernel:"
# Catalogued columns a piece of work carries besides range_metrics' totals, by how they aggregate.
SUMMED = tuple(column for column in metric_catalog.columns(metric_catalog.SUM) if column not in TOTALS)
WEIGHTED = metric_catalog.columns(metric_catalog.WEIGHTED_MEAN)
OF_MAIN_KERNEL = metric_catalog.columns(metric_catalog.MAIN_KERNEL)

ALWAYS_WATCHED = ("time_per_launch_ns",)
# Totals over every profiled launch; per_launch divides them by the launches of the main kernel.
ADDITIVE = (frozenset(TOTALS) - {"duration_ns"}) | frozenset(SUMMED)


def host_roofs(cpu_ceilings: dict | None) -> list[Roof]:
    """The host's roofs from its ceilings document (cpu_ceilings: `nsprof ceilings --cpu`, measured
    beside the CPU stages): its memory bandwidth and FP32 peak (cpu_roof), named after its CPU; [] without one."""
    if not cpu_ceilings:
        return []
    device = cpu_ceilings.get("device")
    device = device if isinstance(device, dict) else {}
    named = device.get("cpu") or str(device.get("device") or "").removeprefix("CPU ").strip()
    created = cpu_ceilings.get("created")
    when = f"measured {created[:10]}" if isinstance(created, str) and created else "measured"
    found: list[Roof] = []
    for key, name, kind, field_name in (("cpu_memory", CPU_MEMORY_ROOF, "memory", "dram_tbyte_per_s"),
                                        ("cpu_fp32", CPU_FP32_ROOF, "compute", "fp32_tflops")):
        value = cpu_roof(cpu_ceilings, field_name)
        if np.isnan(value):
            continue
        method = cpu_ceilings["ceilings"][field_name].get("method")
        source = f"{when} by {method}" if method else when
        found.append(Roof(key, name, kind, value * 1e12, f"{source}; from the profile's ceilings-cpu.json",
                          named if isinstance(named, str) and named else "CPU"))
    return found


def work_records(launches: pd.DataFrame | None, nsys_ranges: pd.DataFrame | None, cpu: CpuRung | None = None) -> pd.DataFrame:
    """One row per piece of work (columns: module docstring), from ncu launches (the parser's
    kernels table), nsys range totals (range_summary) and the CPU stages timed beside the capture
    (cpu_work); any may be None."""
    parts = []
    if launches is not None and len(launches):
        parts.append(_ncu_work(launches))
    if nsys_ranges is not None:
        parts.append(_nsys_stage_work(nsys_ranges))
    if cpu is not None and cpu.results:
        parts.append(cpu_work(cpu))
    if not parts:
        return pd.DataFrame(columns=["key", "label", "op", "stage", "size", "precision"])
    work = parts[0]
    for part in parts[1:]:
        work = work.merge(part, on="key", how="outer")
    described = pd.DataFrame([_describe(key) for key in work["key"]], index=work.index,
                             columns=["label", "op", "stage", "size", "precision"], dtype=object)
    repeat = described.groupby(["label", "size"], dropna=False).cumcount()  # kernels whose short names look alike: numbered apart
    described["label"] = [label if n == 0 else f"{label} [{n + 1}]" for label, n in zip(described["label"], repeat)]
    work = _with_times(pd.concat([work[["key"]], described, work.drop(columns="key")], axis=1))
    loads = per_launch(work, "smem_ld_conflicts")
    work["bank_conflicts_per_launch"] = loads.add(per_launch(work, "smem_st_conflicts"), fill_value=0).where(loads.notna())
    return work


def combine(records: Sequence[tuple[str, dt.datetime | None, pd.DataFrame]], keep_all: bool = False) -> pd.DataFrame:
    """Work records of several profiles (name, start time or None, records; oldest first) as one table in
    ladder order, with `profile` and `started` columns. Unless `keep_all`, each piece of work comes
    from the latest profile that has it; with `keep_all`, repeated labels get a ' #2', ' #3' suffix."""
    frames = [frame.assign(profile=name, started=started) for name, started, frame in records if len(frame)]
    if not frames:
        return pd.DataFrame(columns=["key", "label", "op", "stage", "size", "profile", "started"])
    work = pd.concat(frames, ignore_index=True)
    if keep_all:
        repeat = work.groupby(["label", "size"], dropna=False).cumcount()
        work["label"] = [label if n == 0 else f"{label} #{n + 1}" for label, n in zip(work["label"], repeat)]
    else:
        work = work.drop_duplicates("key", keep="last")
    rows = work[[column for column in ("stage", "size", "op", "started", "duration_ns", "label") if column in work]]
    keys = [_ladder_order(row) for row in rows.to_dict("records")]  # dicts: 20,000 rows as Series took 10 s
    order = sorted(range(len(work)), key=keys.__getitem__)
    return _with_percent_of_library(work.iloc[order].reset_index(drop=True))


def _with_percent_of_library(work: pd.DataFrame) -> pd.DataFrame:
    """Add `baseline` (the library stage a stage is compared with: cuBLAS in the stage's own precision,
    v9 for SGEMM's fp32 stages, v9t for its TF32 ones) and `pct_of_library`: that stage's time at the
    same op and size over each stage's time, in percent (over 100: faster than the library)."""
    work = work.copy()
    baselines = [baseline_of(op, stage) if isinstance(stage, str) else None for op, stage in zip(work["op"], work["stage"])]
    work["baseline"] = [b.stage if b else None for b in baselines]
    times = work.drop_duplicates(["op", "stage", "size"], keep="last").set_index(["op", "stage", "size"])["time_per_launch_ns"]
    reference = [times.get((op, base, size), np.nan) if base else np.nan
                 for op, base, size in zip(work["op"], work["baseline"], work["size"])]
    work["pct_of_library"] = 100 * pd.Series(reference, index=work.index, dtype=float) / work["time_per_launch_ns"]
    speedups = pd.DataFrame(cpu_speedups(work.to_dict("records"), "time_per_launch_ns"), index=work.index,
                            columns=[LOOP_KEY, BLAS_KEY], dtype=float)
    return pd.concat([work, speedups], axis=1)


def per_launch(work: pd.DataFrame, column: str) -> pd.Series:
    """A column per launch of the work: ncu counts (bytes, FLOPs, conflicts) are totals over every
    profiled launch, so they are divided by the launches of the main kernel; others are as they are."""
    values = _numeric(work, column)
    if column in ADDITIVE:
        values = ratio(values, _numeric(work, "main_kernel_launches"))
    return values


def watched() -> dict[str, tuple[str, ...]]:
    """What each stage's change should move, compared with the stage before it (the registry's
    `watch` columns), read when asked, so that an op registered after import has its own. Time per
    launch (ALWAYS_WATCHED) is compared as well."""
    return {stage.key: stage.watch for stage in all_stages()}


def stage_changes(work: pd.DataFrame) -> list[dict]:
    """For each stage, its watched() columns (and time per launch) next to the previous stage's at
    the same op and size, per launch: {"label", "size", "previous", "column", "before", "after"}.
    Columns that were not collected have None values; a first stage has no previous (None)."""
    changes = []
    stages = work[work["stage"].notna()]
    watch = watched()
    columns = {column for columns in watch.values() for column in columns} | set(ALWAYS_WATCHED)
    values = pd.DataFrame({column: per_launch(stages, column) for column in columns}, index=stages.index)
    found = values.to_dict("index")  # per row, once (20,000 rows by iterrows took 17 s)
    described = stages[["op", "stage", "label", "size"]].to_dict("index")
    groups = sorted(stages.groupby(["op", "size"], sort=False).indices.values(), key=lambda rows: rows[0])
    for positions in groups:  # in the order the groups first appear, as the ladder lists them
        previous = None
        for index in stages.index[positions]:
            row = described[index]
            for column in (*watch.get(f"{row['op']}/{row['stage']}", ()), *ALWAYS_WATCHED):
                changes.append({
                    "label": row["label"], "size": row["size"],
                    "previous": None if previous is None else previous[1]["label"], "column": column,
                    "before": None if previous is None else _value(found[previous[0]][column]),
                    "after": _value(found[index][column]),
                })
            previous = (index, row)
    return changes


def _ncu_work(launches: pd.DataFrame) -> pd.DataFrame:
    launches = launches.reset_index(drop=True)
    metrics = kernel_metrics(launches)
    groups = [work_key(nvtx, kernel) for nvtx, kernel in zip(metrics["nvtx"], metrics["kernel"])]
    totals = range_metrics(metrics.assign(nvtx=[[group] for group in groups]))
    # ncu's own rate (counted FLOPs over its replayed duration) is not the work's speed: _with_times decides that
    totals = totals.rename(columns={"range": "key", "kernels": "ncu_kernels"}).drop(columns="gflops_per_s").set_index("key")
    catalogued = (*SUMMED, *WEIGHTED, *OF_MAIN_KERNEL)
    rows = pd.DataFrame({"key": groups, "kernel": metrics["kernel"], "duration_ns": metrics["duration_ns"],
                         **{column: measured(launches, column) for column in catalogued}})
    rows["smem_per_block_bytes"] = sum_measured(rows["smem_static_per_block_bytes"], rows["smem_dynamic_per_block_bytes"])
    by_work = rows.groupby("key", sort=False)
    for column in SUMMED:
        totals[column] = by_work[column].sum(min_count=1)
    counted = all_measured_flops(totals["flops"], totals["fp16_flops"], totals["tensor_flops"])
    totals["intensity_flop_per_l1_byte"] = ratio(counted, totals["l1_bytes"])
    weight = rows["duration_ns"].fillna(0)
    for column in WEIGHTED:
        weighted = (rows[column].fillna(0) * weight).groupby(rows["key"]).sum()
        totals[column] = ratio(weighted, weight.where(rows[column].notna(), 0).groupby(rows["key"]).sum())
    main = rows.loc[rows["duration_ns"].fillna(-1).groupby(rows["key"]).idxmax()].set_index("key")
    of_main = ["kernel", *OF_MAIN_KERNEL, "smem_per_block_bytes"]
    totals[of_main] = main[of_main]
    is_main = rows["kernel"].to_numpy() == main.loc[rows["key"], "kernel"].to_numpy()
    totals["main_kernel_launches"] = rows[is_main].groupby("key").size()
    return totals.reset_index()


def cpu_work(cpu: CpuRung) -> pd.DataFrame:
    """The CPU stages as work: keyed like a stage's range, with the wall-clock median of their runs
    (`cpu_time_per_launch_ns`), its spread, and `cpu_message` where a size was skipped as too slow
    (no time) or the stage failed."""
    rows = [{"key": qualify(NVTX_DOMAIN, range_name(r["op"], r["stage"], parse_label(r["size"]))), "cpu_runs": r.get("runs"),
             "cpu_time_per_launch_ns": r["median_ms"] * 1e6 if r["status"] == "ok" and r.get("median_ms") else np.nan,
             "cpu_spread_pct": r.get("spread_pct"),
             "cpu_message": None if r["status"] == "ok" else r.get("message") or r["status"]}
            for r in cpu.results]
    return pd.DataFrame(rows, columns=["key", "cpu_runs", "cpu_time_per_launch_ns", "cpu_spread_pct", "cpu_message"])


def _nsys_stage_work(ranges: pd.DataFrame) -> pd.DataFrame:
    if ranges.empty:  # an export without NVTX ranges
        return pd.DataFrame(columns=["key", "launches", "nsys_kernels", "nsys_gpu_time_ns", "host_ns_per_launch"])
    stages = ranges[[parse_stage_range(str(name)) is not None for name in ranges["range"]]]
    by_range = stages.groupby("range")
    grouped = by_range[["count", "kernels", "kernel_ns"]].sum()  # a stage's time: its kernels', not its memsets'
    grouped["host_ns_per_launch"] = by_range["median_ns"].max() if "median_ns" in stages else np.nan
    return grouped.rename(columns={"count": "launches", "kernels": "nsys_kernels",
                                   "kernel_ns": "nsys_gpu_time_ns"}).rename_axis("key").reset_index()


def _with_times(work: pd.DataFrame) -> pd.DataFrame:
    """The work's time and speed, decided here once for every table and figure (module docstring)."""
    nsys_time = ratio(_numeric(work, "nsys_gpu_time_ns"), _numeric(work, "launches").where(_numeric(work, "nsys_kernels") > 0))
    ncu_time = ratio(_numeric(work, "duration_ns"), _numeric(work, "main_kernel_launches"))
    cpu_time = _numeric(work, "cpu_time_per_launch_ns")
    work["nsys_time_per_launch_ns"], work["ncu_time_per_launch_ns"] = nsys_time, ncu_time
    work["time_per_launch_ns"] = nsys_time.fillna(ncu_time).fillna(cpu_time)
    # numpy's stubs refuse None as a choice of np.where (an object array takes it)
    sources = np.select([nsys_time.notna(), ncu_time.notna(), cpu_time.notna()], ["nsys", "ncu", WALL_CLOCK], default="")
    work["time_source"] = pd.Series(sources, index=work.index, dtype=object).replace("", None)
    op_flops = pd.Series([_op_flops(op, size) for op, size in zip(work["op"], work["size"])], index=work.index, dtype=float)
    counted = all_measured_flops(_numeric(work, "flops"), _numeric(work, "fp16_flops"), _numeric(work, "tensor_flops"))
    measured = ratio(counted, _numeric(work, "duration_ns"))
    work["tflops_per_s"] = ratio(op_flops, work["time_per_launch_ns"]).fillna(measured) / 1e3
    return _with_work_flops(work, counted, op_flops)


def _with_work_flops(work: pd.DataFrame, counted: pd.Series, op_flops: pd.Series) -> pd.DataFrame:
    """`work_flops`, the FLOPs over the profiled launches that the intensities divide, and their
    `flops_source`: ncu's count, or "declared" (the op's FLOPs per launch x launches) for a stage
    whose own precision's FLOPs ncu did not count (NaN: not collected, or a partial counter's
    zero). Such a stage's counts of that unit stay NaN, never a 0 that reads as measured."""
    declared = op_flops * _numeric(work, "main_kernel_launches")
    uncounted = pd.Series(False, index=work.index)
    for index, precision in work["precision"].items():
        unit = precision_unit(precision)
        if unit is None or pd.isna(declared[index]) or pd.notna(_numeric(work, unit.flops_column)[index]):
            continue
        uncounted[index] = True
        tensor = unit.key != "fp32"  # a tensor unit's FLOPs are part of tensor_flops too
        work.loc[index, [unit.flops_column, *(("tensor_flops",) if tensor else ())]] = np.nan
    work["work_flops"] = counted.where(~uncounted, declared)
    # numpy's stubs refuse None as a choice of np.where (an object array takes it)
    work["flops_source"] = np.where(uncounted, "declared", np.where(counted > 0, "ncu", None))  # type: ignore[call-overload]
    for column, denominator in (("intensity_flop_per_byte", "dram_bytes"), ("intensity_flop_per_l2_byte", "l2_bytes"),
                                ("intensity_flop_per_l1_byte", "l1_bytes")):
        work[column] = ratio(work["work_flops"], _numeric(work, denominator))
    return work


def with_peaks(work: pd.DataFrame, ceiling: Ceiling | None, cpu_ceilings: dict | None = None) -> pd.DataFrame:
    """`work` with how close it comes to the GPU's peaks, from the same speed every table shows:
    `compute_roof` (the units that did its counted FLOPs) and `pct_of_compute_peak` (tflops_per_s
    over that roof's peak), `dram_pct_of_peak` (ncu's DRAM bandwidth over the DRAM peak). A CPU
    stage's are against the host's own FP32 roof (`cpu_ceilings`: `nsprof ceilings --cpu`, measured
    beside it), never the GPU's; NaN without one."""
    peak = compute_peak(work, ceiling)
    dram_peak = ceiling.dram_tbyte_per_s if ceiling is not None and ceiling.dram_tbyte_per_s else np.nan
    on_cpu = work["time_source"] == WALL_CLOCK if "time_source" in work else pd.Series(False, index=work.index)
    peak.loc[on_cpu, "compute_roof"] = CPU_FP32_ROOF
    peak.loc[on_cpu, "compute_gflops_per_s"] = cpu_roof(cpu_ceilings, "fp32_tflops") * 1e3
    return work.assign(compute_roof=peak["compute_roof"],
                       pct_of_compute_peak=100 * _numeric(work, "tflops_per_s") * 1e3 / peak["compute_gflops_per_s"],
                       dram_pct_of_peak=100 * _numeric(work, "dram_gbytes_per_s") / (dram_peak * 1e3))


def cpu_roof(cpu_ceilings: dict | None, name: str) -> float:
    """One of the host's measured roofs (fp32_tflops, dram_tbyte_per_s) from its ceilings document; NaN where absent."""
    entry = ((cpu_ceilings or {}).get("ceilings") or {}).get(name)
    value = entry.get("value") if isinstance(entry, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else np.nan


def compulsory_intensity(op, size) -> float:
    """The op's FLOPs over its compulsory bytes at a size (Op.flops / Op.min_bytes: each input read once,
    the output written once), in FLOP/byte; NaN for an op this nsprof does not know."""
    spec = all_ops().get(op) if isinstance(op, str) else None
    if spec is None or not isinstance(size, str):
        return np.nan
    dims = parse_label(size)
    least = spec.min_bytes(dims)
    return spec.flops(dims) / least if least > 0 else np.nan


def with_compulsory_intensity(work: pd.DataFrame) -> pd.DataFrame:
    """`work` with COMPULSORY_INTENSITY: where a CPU stage sits on the roofline (compulsory_intensity
    of its op and size; NaN for work that is no stage)."""
    if "op" not in work or "size" not in work:
        return work.assign(**{COMPULSORY_INTENSITY: np.nan})
    return work.assign(**{COMPULSORY_INTENSITY: [compulsory_intensity(op, size)
                                                 for op, size in zip(work["op"], work["size"])]})


def work_key(nvtx: list[str], kernel: str) -> str:
    """The innermost stage range open at a launch, else the kernel's own key."""
    return next((name for name in reversed(nvtx or []) if parse_stage_range(name)), f"{KERNEL_KEY}{kernel}")


def _describe(key: str) -> tuple:
    """(label, op, stage, size) of a work key."""
    stage = parse_stage_range(key)
    if stage:
        return stage["stage"], stage["op"], stage["stage"], stage["size"], _precision(stage["op"], stage["stage"])
    return short_kernel_name(key.removeprefix(KERNEL_KEY)), None, None, None, None


def _precision(op: str, stage: str) -> str | None:
    """The precision the op declares for the stage (fp32, tf32, fp16); None for a stage it lacks."""
    spec = all_ops().get(op)
    return next((s.precision.name for s in spec.stages if s.stage == stage), None) if spec else None


def _op_flops(op, size) -> float:
    if op not in all_ops() or not isinstance(size, str):
        return np.nan
    return float(all_ops()[op].flops(parse_label(size)))


def _ladder_order(row: Mapping) -> tuple:
    """Stages first (by op, problem size, stage number), then other work, longest first."""
    if isinstance(row["stage"], str):
        volume = np.prod(parse_label(row["size"]))
        return (0, row["op"], volume, stage_order(row["stage"]), str(row["started"]))
    duration = row.get("duration_ns")
    return (1, "", 0, -(duration if duration is not None and pd.notna(duration) else 0), row["label"])


def _numeric(frame: pd.DataFrame, column: str) -> pd.Series:
    """A column as floats; all NaN when it is not there (not collected)."""
    if column not in frame:
        return pd.Series(np.nan, index=frame.index)
    return pd.to_numeric(frame[column], errors="coerce").astype(float)


def _value(value) -> float | None:
    return None if value is None or pd.isna(value) else float(value)
