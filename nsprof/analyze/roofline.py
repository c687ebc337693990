"""Roofline model (pure): roofs from a GPU's ceilings, one point per piece of work and memory level,
whether the point sits under a memory roof or the compute roof, and how close it comes to it.

A point's arithmetic intensity is its FLOPs per byte moved at one level of the memory hierarchy
(DRAM, L2, L1): the same kernel has one intensity per level, all at the same FLOP/s. The roof
over a point is min(bandwidth x intensity, compute peak); the point is memory-bound when the
bandwidth term is the smaller one. Its compute peak is the peak of the units that did its FLOPs
(FP32 pipes or tensor cores; for a stage, the units of its declared precision); work that mixes
them gets the rate at which that mix would run
(total FLOPs over the sum of each part's time at its own peak). FP16 math on CUDA cores is placed
against no peak: nsprof keeps none for it (its counted FLOPs are a lower bound for packed half2
code, nsprof.analyze.metrics.HALF_FLOPS_PER_INST, so a % of the datasheet's FP16 rate would mean
little), and work with such FLOPs has no compute roof.

Input (`work`): one row per piece of work with `label`, `kernel`, FLOP counts `flops` (FP32),
`fp16_flops` (FP16 on CUDA cores), `tensor_tf32_flops`, `tensor_16bit_flops`, byte counts `dram_bytes`,
`l2_bytes`, `l1_bytes` (any
may be missing or NaN: that level is then not plotted), and its speed: `tflops_per_s` with
`time_per_launch_ns` and `time_source` (nsprof.ladder_analysis.work: the one figure every table shows),
or else `duration_ns`, over which the counted FLOPs give the speed. Optional `op`, `stage`, `size`,
`profile` and `key` (the work's identity) are carried through.

Output (POINT_COLUMNS), one row per work row and measured level:
- `intensity_flop_per_byte` (FLOPs per byte), `flops_source` (whose FLOPs: ncu, counted, or
  declared, the op's 2MNK for a stage whose precision's FLOPs ncu did not count), `gflops_per_s` (the work's speed),
  `duration_ns` (the time that speed is over) and `time_source` (nsys, ncu, or the wall clock)
- `compute_roof`: FP32, FP16 CUDA cores, TF32 tensor, FP16 tensor or mixed; `compute_gflops_per_s`
  its peak; `main_unit`: the unit that did most of its FLOPs (the roof a chart of it shows)
- `roof_gflops_per_s`: the roof above the point; `bound`: memory or compute
- `pct_of_roof`: 100 x gflops_per_s / roof_gflops_per_s; `roof_source`: where that roof's
  ceiling comes from (datasheet, or measured on a date by a method)
Roofs or bounds that need an unknown ceiling are NaN / None.

A CPU stage (timed on the `wall clock` beside a capture: nsprof.ladder_analysis.work.cpu_work) has no
counters: it gets one point, at the COMPULSORY level, at the op's FLOPs over its compulsory bytes
(Op.min_bytes: each input read once, the output written once; declared, not measured traffic) and
its wall-clock speed, bound against the host's own roofs (`cpu_roofs`: its memory bandwidth and
FP32 peak, measured by `nsprof ceilings --cpu`), never the GPU's. Without those roofs it is left
out (unplaced_work says so).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nsprof.analyze.metrics import TENSOR_COLUMNS, all_measured_flops, ratio, sum_measured
from nsprof.ceilings.peaks import Ceiling


@dataclass(frozen=True)
class Level:
    key: str
    name: str
    bytes_column: str
    ceiling_field: str  # TB/s


@dataclass(frozen=True)
class Unit:
    key: str
    name: str
    flops_column: str
    ceiling_field: str | None  # TFLOP/s; None: nsprof keeps no peak for the unit


UNSEEN_SHARE = 0.5  # a cache level counting under this share of the DRAM bytes did not see the traffic
LEVELS = (
    Level("dram", "DRAM", "dram_bytes", "dram_tbyte_per_s"),
    Level("l2", "L2", "l2_bytes", "l2_tbyte_per_s"),
    Level("l1", "L1", "l1_bytes", "l1_tbyte_per_s"),
)
UNITS = (
    Unit("fp32", "FP32", "flops", "fp32_tflop_per_s"),
    Unit("half", "FP16 CUDA cores", "fp16_flops", None),
    Unit("tf32", "TF32 tensor", "tensor_tf32_flops", "tf32_tensor_tflop_per_s"),
    Unit("fp16", "FP16 tensor", "tensor_16bit_flops", "fp16_tensor_tflop_per_s"),
    Unit("fp8", "FP8 tensor", "tensor_fp8_flops", "fp8_tensor_tflop_per_s"),
    Unit("int8", "INT8 tensor", "tensor_int8_ops", "int8_tensor_tops"),
)
WALL_CLOCK = "wall clock"  # the time source of a CPU stage: the host's clock around each run
CPU_FP32_ROOF = "CPU FP32"  # a CPU stage's compute roof: the host's BLAS, measured by `nsprof ceilings --cpu`
CPU_MEMORY_ROOF = "CPU memory"  # a CPU stage's memory roof: the host's streaming copy, measured beside it
COMPULSORY = "compulsory"  # a CPU stage's one level: the op's compulsory bytes (Op.min_bytes), not measured traffic
# the column of a CPU stage's work that places it there: its op's FLOPs over those bytes
# (nsprof.ladder_analysis.work.with_compulsory_intensity: the ladder knows its ops, this module does not)
COMPULSORY_INTENSITY = "compulsory_intensity_flop_per_byte"
CARRIED = ("key", "profile", "op", "stage", "size")  # `key` tells apart work whose labels look alike
POINT_COLUMNS = ("label", "kernel", *CARRIED, "level", "intensity_flop_per_byte", "flops_source", "gflops_per_s", "duration_ns",
                 "time_source", "compute_roof", "main_unit", "compute_gflops_per_s", "roof_gflops_per_s", "bound", "pct_of_roof",
                 "roof_source")


@dataclass(frozen=True)
class Roof:
    key: str  # a Level or Unit key
    name: str
    kind: str  # "memory" (rate in byte/s) or "compute" (FLOP/s)
    per_second: float
    source: str
    host: str | None = None  # a host's roof (kind "memory" or "compute" of its CPU): the CPU's name; None: the GPU's

    def gflops_at(self, intensity: np.ndarray | float) -> np.ndarray | float:
        """The roof's height (GFLOP/s) at an intensity (FLOP/byte)."""
        if self.kind == "memory":
            return self.per_second * np.asarray(intensity) / 1e9
        return np.full_like(np.asarray(intensity, dtype=float), self.per_second / 1e9)


def roofs(ceiling: Ceiling | None) -> list[Roof]:
    """Every roof the ceiling knows: memory levels (byte/s) then compute units (FLOP/s)."""
    if ceiling is None:
        return []
    # a value the ceiling holds has a source (source_of is None only where the value is)
    found = [Roof(level.key, level.name, "memory", getattr(ceiling, level.ceiling_field) * 1e12, source)
             for level in LEVELS
             if getattr(ceiling, level.ceiling_field) and (source := ceiling.source_of(level.ceiling_field))]
    found += [Roof(unit.key, unit.name, "compute", getattr(ceiling, unit.ceiling_field) * 1e12, source)
              for unit in UNITS if unit.ceiling_field and getattr(ceiling, unit.ceiling_field)
              and (source := ceiling.source_of(unit.ceiling_field))]
    return found


def precision_unit(precision) -> Unit | None:
    """The unit a stage of a declared precision (nsprof.ladder.op_model.Precision.name) computes on: fp32 on
    the FP32 pipes, tf32 and fp16 on the tensor cores; None for another name or none."""
    return next((unit for unit in UNITS if unit.key == precision), None) if isinstance(precision, str) else None


def compute_peak(work: pd.DataFrame, ceiling: Ceiling | None) -> pd.DataFrame:
    """Per work row, its compute roof: `compute_roof` (a Unit's name or mixed), `main_unit` (the
    unit that did most of its FLOPs), `compute_gflops_per_s` and `compute_source`. A stage's is its
    declared `precision`'s unit (precision_unit), whatever
    ncu counted (a capture may miss its FLOPs: cuBLAS TF32's wgmma under the HMMA-only counter);
    other work's is that of the units that did its counted FLOPs. NaN / None where no FLOPs were
    counted or the peak is unknown."""
    parts = {unit.key: _column(work, unit.flops_column) for unit in UNITS}
    peaks = {unit.key: _ceiling(ceiling, unit.ceiling_field) for unit in UNITS}
    out = pd.DataFrame({"compute_roof": _compute_roof_names(parts), "main_unit": _main_unit_names(parts),
                        "compute_gflops_per_s": _mixed_peak(parts, peaks) / 1e9,
                        "compute_source": _compute_sources(parts, ceiling)}, index=work.index)
    declared = work["precision"] if "precision" in work else pd.Series(None, index=work.index, dtype=object)
    for precision in pd.unique(declared.dropna()):  # a few precisions, however many rows (20,000 CPU stages)
        if unit := precision_unit(precision):
            rows = (declared == precision).to_numpy()
            out.loc[rows, ["compute_roof", "main_unit", "compute_source"]] = [
                unit.name, unit.name, ceiling.source_of(unit.ceiling_field) if ceiling and unit.ceiling_field else None]
            out.loc[rows, "compute_gflops_per_s"] = _ceiling(ceiling, unit.ceiling_field) / 1e9
    return out


def work_speed(work: pd.DataFrame) -> tuple[pd.Series, pd.Series, pd.Series]:
    """(GFLOP/s, the time it is over in ns, that time's source) per work row: the work's own
    `tflops_per_s` over `time_per_launch_ns` where it has them, else counted FLOPs over `duration_ns`."""
    by_count = ratio(_counted_flops(work), _column(work, "duration_ns"))
    if "tflops_per_s" not in work:
        return by_count, _column(work, "duration_ns"), pd.Series("ncu", index=work.index, dtype=object)
    return (_column(work, "tflops_per_s") * 1e3).fillna(by_count), _column(work, "time_per_launch_ns"), work["time_source"]


def roofline_points(work: pd.DataFrame, ceiling: Ceiling | None, cpu_roofs: Sequence[Roof] = ()) -> pd.DataFrame:
    """One row per work row and memory level with measured bytes (columns: module docstring), and one
    per CPU stage at its compulsory intensity under `cpu_roofs` (the host's, from
    nsprof.ladder_analysis.work.host_roofs). Work without counted FLOPs, speed or bytes has no place on a
    roofline and is left out (unplaced_work says which and why)."""
    work = work.reset_index(drop=True)
    all_flops = _counted_flops(work)
    peak = compute_peak(work, ceiling)
    compute_gflops = peak["compute_gflops_per_s"]
    gflops, duration, time_source = work_speed(work)
    frames = []
    if len(cpu_roofs) and (on_cpu := _on_cpu(work)).any():  # first: the CPU stages come first in a ladder
        frames.append(_compulsory_points(work[on_cpu], gflops[on_cpu], duration[on_cpu], cpu_roofs))
    for level in LEVELS:
        level_bytes = _level_bytes(work, level)
        keep = (all_flops > 0) & (gflops > 0) & (level_bytes > 0)
        if not keep.any():
            continue
        intensity = all_flops / level_bytes
        memory_gflops = _ceiling(ceiling, level.ceiling_field) * intensity / 1e9
        roof = np.fmin(memory_gflops, compute_gflops).where(memory_gflops.notna() & compute_gflops.notna())
        memory_bound = memory_gflops < compute_gflops
        frame = pd.DataFrame({
            "label": work["label"], "kernel": work["kernel"],
            **{column: work.get(column) for column in CARRIED},
            "level": level.key, "intensity_flop_per_byte": intensity,
            "flops_source": work.get("flops_source", "ncu"), "gflops_per_s": gflops,
            "duration_ns": duration, "time_source": time_source,
            "compute_roof": peak["compute_roof"], "main_unit": peak["main_unit"], "compute_gflops_per_s": compute_gflops,
            "roof_gflops_per_s": roof,
            # numpy's stubs refuse None as a choice of np.where (an object array takes it)
            "bound": np.where(roof.isna(), None, np.where(memory_bound, "memory", "compute")),  # type: ignore[call-overload]
            "pct_of_roof": 100 * gflops / roof,
            "roof_source": np.where(roof.isna(), None, np.where(  # type: ignore[call-overload]
                memory_bound, ceiling.source_of(level.ceiling_field) if ceiling else None, peak["compute_source"])),
        })
        frames.append(frame[keep])
    frames = [frame for frame in frames if len(frame)]
    if not frames:
        return pd.DataFrame(columns=list(POINT_COLUMNS))
    return pd.concat(frames, ignore_index=True)[list(POINT_COLUMNS)]


def _compulsory_points(work: pd.DataFrame, gflops: pd.Series, duration: pd.Series, cpu_roofs: Sequence[Roof]) -> pd.DataFrame:
    """The CPU stages' points (module docstring): at their compulsory intensity, their wall-clock speed,
    bound by the host's memory or FP32 roof, whichever is lower there."""
    memory = next((roof for roof in cpu_roofs if roof.kind == "memory"), None)
    compute = next((roof for roof in cpu_roofs if roof.kind == "compute"), None)
    intensity = _compulsory_intensities(work)
    memory_gflops = intensity * (memory.per_second / 1e9 if memory else np.nan)
    compute_gflops = pd.Series(compute.per_second / 1e9 if compute else np.nan, index=work.index, dtype=float)
    roof = np.fmin(memory_gflops, compute_gflops).where(memory_gflops.notna() & compute_gflops.notna())
    memory_bound = memory_gflops < compute_gflops
    memory_source, compute_source = (memory.source if memory else None), (compute.source if compute else None)
    frame = pd.DataFrame({
        "label": work["label"], "kernel": work.get("kernel"), **{column: work.get(column) for column in CARRIED},
        "level": COMPULSORY, "intensity_flop_per_byte": intensity, "flops_source": "declared", "gflops_per_s": gflops,
        "duration_ns": duration, "time_source": WALL_CLOCK, "compute_roof": CPU_FP32_ROOF, "main_unit": CPU_FP32_ROOF,
        "compute_gflops_per_s": compute_gflops, "roof_gflops_per_s": roof,
        # numpy's stubs refuse None as a choice of np.where (an object array takes it)
        "bound": np.where(roof.isna(), None, np.where(memory_bound, "memory", "compute")),  # type: ignore[call-overload]
        "pct_of_roof": 100 * gflops / roof,
        "roof_source": [None if pd.isna(height) else memory_source if under_memory else compute_source
                        for height, under_memory in zip(roof, memory_bound)],
    }, index=work.index)
    return frame[(intensity > 0) & (gflops > 0)]


def _compulsory_intensities(work: pd.DataFrame) -> pd.Series:
    """Each work row's COMPULSORY_INTENSITY (NaN where the work does not say: no stage, or an op the
    ladder does not know)."""
    if COMPULSORY_INTENSITY not in work:
        return pd.Series(np.nan, index=work.index, dtype=float)
    return pd.to_numeric(work[COMPULSORY_INTENSITY], errors="coerce").astype(float)


def _on_cpu(work: pd.DataFrame) -> pd.Series:
    """The CPU stages among the work: those timed on the wall clock."""
    return work["time_source"] == WALL_CLOCK if "time_source" in work else pd.Series(False, index=work.index)


def unplaced_work(work: pd.DataFrame, cpu_roofs: Sequence[Roof] = ()) -> pd.DataFrame:
    """The work rows roofline_points (given the same `cpu_roofs`) leaves out, with `label`, `kernel`,
    `size` and `reason`."""
    work = work.reset_index(drop=True)
    flops, (gflops, _, _) = _counted_flops(work), work_speed(work)
    measured_bytes = pd.concat([_level_bytes(work, level) > 0 for level in LEVELS], axis=1).any(axis=1)
    on_cpu = _on_cpu(work)
    compulsory = _compulsory_intensities(work) if on_cpu.any() else pd.Series(np.nan, index=work.index)
    reasons = np.select([on_cpu & ~(gflops > 0), on_cpu & (len(cpu_roofs) == 0), on_cpu & ~(compulsory > 0), on_cpu,
                         ~(flops > 0), ~(gflops > 0), ~measured_bytes],
                        ["no time measured", "a CPU stage: the host's roofs were not measured (nsprof ceilings --cpu)",
                         "a CPU stage of an op nsprof does not know: no compulsory bytes", "",
                         "no FLOPs counted (no floating-point math, or ncu did not count it)",
                         "no time measured", "no bytes measured at any memory level"], default="")
    out = pd.DataFrame({"label": work["label"], "kernel": work.get("kernel"),
                        "size": work.get("size"), "reason": reasons})
    return out[out["reason"] != ""].reset_index(drop=True)


def _level_bytes(work: pd.DataFrame, level: Level) -> pd.Series:
    """The bytes a level's counter saw, NaN where a cache level saw less than half what DRAM moved:
    every DRAM byte passes through L2 and, for loads through L1, through L1, so far fewer means the
    traffic went around that counter (TMA and wgmma read their operands into shared memory past L1:
    v9t's L1 bytes, 3% of its DRAM bytes, would put it at 8,000 FLOP/byte) and the point would mean
    nothing (unseen_levels). Counts near DRAM's (a streaming kernel, v11's 99.9%) stay."""
    level_bytes = _column(work, level.bytes_column)
    if level.key == LEVELS[0].key:
        return level_bytes
    return level_bytes.mask(level_bytes < UNSEEN_SHARE * _column(work, LEVELS[0].bytes_column))


def unseen_levels(work: pd.DataFrame) -> pd.DataFrame:
    """The work rows and cache levels left off the roofline because their counter saw far less than
    DRAM moved (_level_bytes): `label`, `size`, `level` (its name) and `reason`."""
    work = work.reset_index(drop=True)
    rows = []
    for level in LEVELS[1:]:
        measured, seen = _column(work, level.bytes_column), _level_bytes(work, level)
        for index in work.index[(measured > 0) & seen.isna()]:
            rows.append({"label": work.at[index, "label"], "size": work.get("size", pd.Series(index=work.index)).get(index),
                         "level": level.name,
                         "reason": f"{measured[index]:,.0f} bytes counted, under half of DRAM's "
                                   f"{_column(work, LEVELS[0].bytes_column)[index]:,.0f}: the loads went around it "
                                   "(TMA, cp.async.bulk)"})
    return pd.DataFrame(rows, columns=["label", "size", "level", "reason"])


def ridge_intensity(memory: Roof, compute: Roof) -> float:
    """The intensity (FLOP/byte) where a memory roof meets a compute roof."""
    return compute.per_second / memory.per_second


def chart_groups(points: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The points split into one roofline each, in the order they come: a ladder's stages (every
    profile and size of that op: its own precision, its own roofs) and, per profile, the other
    kernels it captured. Keys: the op, or the profile's name ('kernels' when it has none)."""
    stage = points["stage"].notna() if "stage" in points else pd.Series(False, index=points.index)
    profile = points["profile"] if "profile" in points else pd.Series(None, index=points.index)
    keys = pd.Series(np.where(stage, points["op"].astype(object) if "op" in points else None,
                              profile.where(profile.notna(), "kernels").astype(object)), index=points.index)
    return [(str(key), points[keys == key]) for key in dict.fromkeys(keys)]


def binding_points(points: pd.DataFrame) -> pd.DataFrame:
    """Per piece of work, the level whose roof its point comes closest to (the highest % of roof):
    the limit that matters most. Work with no known roof keeps its first level's row."""
    work = ["label", *CARRIED]
    first_seen = points.groupby(work, dropna=False, sort=False).ngroup()  # keeps the work's order
    ranked = points.assign(_work=first_seen, _rank=points["pct_of_roof"].fillna(-1.0))
    ranked = ranked.sort_values(["_work", "_rank"], ascending=[True, False], kind="stable")
    return ranked.drop_duplicates("_work").drop(columns=["_work", "_rank"]).reset_index(drop=True)


def _counted_flops(work: pd.DataFrame) -> pd.Series:
    """The work's FLOPs over its bytes: `work_flops` where the work has it (nsprof.ladder_analysis.work: a
    stage's declared FLOPs where ncu did not count its precision's), else FP32, FP16 (CUDA cores) and
    tensor FLOPs; NaN where FP32 FLOPs were not counted."""
    if "work_flops" in work:
        return _column(work, "work_flops")
    tensor = sum_measured(*(_column(work, column) for column in TENSOR_COLUMNS))
    return all_measured_flops(_column(work, "flops"), _column(work, "fp16_flops"), tensor)


def _column(work: pd.DataFrame, name: str) -> pd.Series:
    if name not in work:
        return pd.Series(np.nan, index=work.index)
    return pd.to_numeric(work[name], errors="coerce").astype(float)


def _ceiling(ceiling: Ceiling | None, field: str | None) -> float:
    value = getattr(ceiling, field) if ceiling is not None and field else None
    return np.nan if value is None else value * 1e12


def _mixed_peak(parts: dict[str, pd.Series], peaks: dict[str, float]) -> pd.Series:
    """FLOP/s at which each row's mix of FP32 and tensor FLOPs would run at peak: total FLOPs over
    the time each part takes at its own peak. NaN when a part with FLOPs has no known peak."""
    total = sum_measured(*parts.values())
    seconds = pd.Series(0.0, index=total.index)
    for key, flops in parts.items():
        used = flops.fillna(0) > 0
        seconds = seconds + np.where(used, flops.fillna(0) / peaks[key], 0.0)
    return total / seconds.where(seconds > 0)


def _compute_sources(parts: dict[str, pd.Series], ceiling: Ceiling | None) -> np.ndarray:
    """Per row, the sources of the compute peaks its FLOPs used ('; '-joined when several)."""
    sources = {unit.key: source for unit in UNITS
               if ceiling and unit.ceiling_field and (source := ceiling.source_of(unit.ceiling_field))}
    used = pd.DataFrame({key: flops.fillna(0) > 0 for key, flops in parts.items()})
    return np.array(["; ".join(dict.fromkeys(sources[key] for key in used.columns if row[key] and key in sources)) or None
                     for _, row in used.iterrows()], dtype=object)


def _main_unit_names(parts: dict[str, pd.Series]) -> np.ndarray:
    """Per row, the name of the unit with the most counted FLOPs; None where none counted any."""
    flops = pd.DataFrame({key: values.fillna(0) for key, values in parts.items()})
    main = flops.idxmax(axis=1).map({unit.key: unit.name for unit in UNITS})
    # numpy's stubs refuse None as a choice of np.where (an object array takes it)
    return np.where(flops.max(axis=1) > 0, main, None)  # type: ignore[return-value]


def _compute_roof_names(parts: dict[str, pd.Series]) -> np.ndarray:
    used = pd.DataFrame({key: flops.fillna(0) > 0 for key, flops in parts.items()})
    units_used = used.sum(axis=1)
    only = used.idxmax(axis=1).map({unit.key: unit.name for unit in UNITS})
    # numpy's stubs refuse None as a choice of np.where (an object array takes it)
    return np.where(units_used == 1, only, np.where(units_used > 1, "mixed", None))  # type: ignore[call-overload, return-value]
