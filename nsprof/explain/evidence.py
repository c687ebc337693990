"""Measured numbers for `nsprof explain`: what a profile's Nsight Compute (and Nsight Systems) data
say per ladder stage, per kernel and per optimization step (the explain verb finds the profile and
opens it through the front door: nsprof.verbs.explain_sources).

Everything is read through nsprof.parse and nsprof.analyze. Per-launch values are averages over
the launches ncu profiled; "not measured" stays None, never 0.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from nsprof import metric_catalog
from nsprof.analyze import Ceiling
from nsprof.analyze.metrics import TOTALS
from nsprof.errors import NsprofError
from nsprof.explain.explain_types import KernelConflicts, L1BytesRow, SharedMemoryRow, SharedPrediction, StepTime
from nsprof.explain.occupancy import blocks_by_registers
from nsprof.explain.prediction import MixPrediction, predict_l1_bytes, predict_mix
from nsprof.ladder.ops.tiles import Tile  # a block tile: what the launch geometry is counted in
from nsprof.ladder.registry import Stage, all_stages
from nsprof.ladder_analysis.capture import stages_of
from nsprof.ladder_runs.bench_types import StageDetails
from nsprof.ranges import parse_stage_range
from nsprof.render.format import count, flops_per_s  # FLOP counts as the report shows them: 2.15 G
from nsprof.sizes import parse_label

if TYPE_CHECKING:
    from nsprof.analyze.capture_analysis import CaptureAnalysis
    from nsprof.parse.profile import Capture

@dataclass(frozen=True)
class Source:
    path: Path
    reason: str  # why this profile was read


@dataclass(frozen=True)
class Measurements:
    source: Source
    gpu: str | None
    ceiling: Ceiling | None  # the GPU's peaks: measured where saved, else the datasheet's (None: unknown GPU)
    launches: pd.DataFrame  # one row per ncu launch: kernel_metrics columns, launch columns, op/stage/size
    stages: pd.DataFrame  # per stage and size: nsprof.ladder_analysis.work's work columns (CaptureAnalysis.stages)
    manifest: dict | None = None  # the profile directory's manifest.json, where it has one
    tuning: dict[tuple[str, str], StageDetails] | None = None  # its tuned stages', (stage, size) -> details (read_tuning)


def measurements(source: Source, profile: Capture, analysis: CaptureAnalysis) -> Measurements:
    """The measurements of the profile read from `source`, analyzed as `nsprof analyze` analyzes it
    (the explain verb finds it, nsprof.verbs.explain_sources, and opens it through the front door,
    nsprof.profile_analysis.opened)."""
    if analysis.kernels is None or analysis.launches is None:  # the profile has no ncu output
        raise NsprofError(f"{source.path}: no Nsight Compute CSV to read measurements from",
                          "give a profile directory, an .ncu-rep or an ncu .csv (nsprof profile --tool ncu writes one)")
    launches = _launches(analysis.kernels, analysis.launches)
    return Measurements(source, analysis.gpu, analysis.ceiling, launches, stages_of(analysis), profile.manifest, profile.tuning)


def _launches(kernels: pd.DataFrame, raw: pd.DataFrame) -> pd.DataFrame:
    """The analysis's kernel metrics beside each launch's raw columns, with the stage it ran in."""
    launches = pd.concat([kernels, raw.drop(columns=[c for c in raw if c in kernels])], axis=1)
    keys = [_stage_keys(ranges) for ranges in launches["nvtx"]]
    for column in ("op", "stage", "size"):
        launches[column] = [k[column] if k else None for k in keys]
    return launches


def _stage_keys(ranges: list[str]) -> dict | None:
    """The innermost nsprof stage range a launch ran in."""
    return next((keys for keys in map(parse_stage_range, reversed(ranges)) if keys), None)


def staged(m: Measurements, names: list[str] | None = None) -> list[tuple[Stage, str, pd.DataFrame]]:
    """(stage, size, its launches) for each ladder stage measured, in ladder order. The launches are
    the stage's own kernel's where it declares one: a step it also runs (v8's and v11's transposes)
    is another kernel, which the stage's declared accesses do not describe."""
    ladder = {s.key: s for s in all_stages()}
    groups = []
    for (op, stage, size), group in m.launches.dropna(subset=["stage"]).groupby(["op", "stage", "size"], sort=False):
        if f"{op}/{stage}" in ladder and (names is None or stage in names):
            declared = ladder[f"{op}/{stage}"]
            entries = {entry for tile in declared.tiles for entry in tile.entries}
            own = group[group["kernel"].astype(str).isin(entries)]
            groups.append((declared, size, own if len(own) else group))
    return sorted(groups, key=lambda g: (g[0].op, g[0].order, [int(d) for d in g[1].split("x")]))


# -- shared memory: predicted against measured ---------------------------------------------------

_KINDS = (("load", "ld"), ("store", "st"))


def shared_memory_comparison(m: Measurements, names: list[str] | None = None) -> list[SharedMemoryRow]:
    """Per stage, size and op (load/store): the declared mix's prediction beside the kernel's
    measured shared-memory counters, all per launch. A stage that declares no such access but
    executed some has its measured side only."""
    rows: list[SharedMemoryRow] = []
    for stage, size, group in staged(m, names):
        geometry = launch_geometry(stage, size, group)
        warp_tiles = None if geometry is None else geometry[0] * geometry[1]
        for op, kind in _KINDS:
            mix = predict_mix(stage, op)
            instructions = _mean(group[f"smem_{kind}_instructions"])
            if mix is None and not instructions:
                continue
            wavefronts = _mean(group[f"smem_{kind}_wavefronts"])
            rows.append({
                "stage": stage.stage, "size": size, "op": op, "launches": len(group),
                "mix": mix.describe() if mix else "not declared in the registry",
                **_predicted(mix, warp_tiles),
                "measured_wavefronts_per_instruction": _ratio(wavefronts, instructions),
                "measured_instructions": instructions,
                "measured_wavefronts": wavefronts,
                "measured_conflicts": _mean(group[f"smem_{kind}_conflicts"]),
            })
    return rows


def _predicted(mix: MixPrediction | None, warp_tiles: int | None) -> SharedPrediction:
    if mix is None:
        return {"predicted_wavefronts_per_instruction": None, "predicted_instructions": None,
                "predicted_wavefronts": None, "predicted_conflicts": None}
    return {"predicted_wavefronts_per_instruction": round(mix.wavefronts_per_instruction, 4),
            "predicted_instructions": _times(mix.instructions, warp_tiles),
            "predicted_wavefronts": _times(mix.wavefronts, warp_tiles),
            "predicted_conflicts": _times(mix.excess_wavefronts, warp_tiles)}


def l1_bytes_comparison(m: Measurements, names: list[str] | None = None) -> list[L1BytesRow]:
    """Per stage and size: sector bytes of every declared global access (the sector model) beside
    l1tex__t_bytes (bytes requested from L1), per launch."""
    rows: list[L1BytesRow] = []
    for stage, size, group in staged(m, names):
        if not any(a.space == "global" for a in stage.accesses):
            continue
        geometry = launch_geometry(stage, size, group)
        rows.append({"stage": stage.stage, "size": size, "launches": len(group),
                     "predicted_l1_bytes": None if geometry is None else predict_l1_bytes(stage, *geometry),
                     "measured_l1_bytes": _catalogued("l1_bytes")(group)})
    return rows


def launch_geometry(stage: Stage, size: str, group: pd.DataFrame) -> tuple[int, int] | None:
    """(warps, K tiles per block) of a launch: what per-warp, per-K-tile counts multiply into
    totals. None when the launch geometry or the kernel's tile is unknown."""
    tile = next((t for t in stage.tiles if group["kernel"].iloc[0] in t.entries and isinstance(t, Tile)), None)
    grid, block = (_dims(group[c].iloc[0]) if c in group else None for c in ("grid_size", "block_size"))
    if tile is None or not grid or not block:
        return None
    k = parse_label(size)[-1]  # K is the last dimension of every op's size
    split_k = grid[2] if len(grid) > 2 else 1
    warps = math.prod(grid) * -(-math.prod(block) // 32)
    return warps, -(-k // (tile.bk * split_k))


def _dims(text) -> list[int] | None:
    """'(8, 8, 4)' -> [8, 8, 4]."""
    numbers = [int(n) for n in re.findall(r"\d+", str(text))]
    return numbers or None


def kernels_by_conflicts(m: Measurements) -> list[KernelConflicts]:
    """Every kernel with shared-memory counters, most bank conflicts per launch first."""
    measured = m.launches.dropna(subset=["smem_ld_conflicts", "smem_st_conflicts"], how="all")
    rows: list[KernelConflicts] = []
    for kernel, group in measured.groupby("kernel", sort=False):
        ld, st = _mean(group["smem_ld_conflicts"]), _mean(group["smem_st_conflicts"])
        rows.append({
            "kernel": str(kernel), "launches": len(group), "conflicts": (ld or 0) + (st or 0),
            "ld_conflicts": ld, "st_conflicts": st,
            "ld_wavefronts_per_instruction": _ratio(_mean(group["smem_ld_wavefronts"]), _mean(group["smem_ld_instructions"])),
            "st_wavefronts_per_instruction": _ratio(_mean(group["smem_st_wavefronts"]), _mean(group["smem_st_instructions"])),
        })
    return sorted(rows, key=lambda row: -row["conflicts"])


def step_times(m: Measurements, steps: tuple[tuple[str, str], ...]) -> list[StepTime]:
    """Time per launch before and after each optimization step, per size: from nsys (the timeline
    run) where the profile has it, and ncu's gpu__time_duration (measured under replay)."""
    rows: list[StepTime] = []
    stages = m.stages
    for before, after in steps:
        for size in stages.loc[stages["stage"] == before, "size"]:
            pair = [stages[(stages["stage"] == s) & (stages["size"] == size)] for s in (before, after)]
            if any(p.empty for p in pair):
                continue
            nsys, ncu = (_before_after(pair, column) for column in ("nsys_time_per_launch_ns", "ncu_time_per_launch_ns"))
            rows.append({"before": before, "after": after, "size": size,
                         "nsys_before_us": nsys[0], "nsys_after_us": nsys[1], "nsys_change_pct": nsys[2],
                         "ncu_before_us": ncu[0], "ncu_after_us": ncu[1], "ncu_change_pct": ncu[2]})
    return rows


def _before_after(pair: list[pd.DataFrame], column: str) -> tuple[float | None, float | None, float | None]:
    """A time column of the stages before and after a step: both in us, and the change in %."""
    b, a = (_plain(p[column].iloc[0]) if column in p else None for p in pair)
    return (None if b is None else b / 1e3, None if a is None else a / 1e3,
            None if not (a and b) else 100 * (a - b) / b)


# -- other measured quantities, by name (topics list the names they show) -----------------------

@dataclass(frozen=True)
class Quantity:
    label: str
    spec: str | Callable  # format spec (or function) for tables: nsprof.render.terminal_table.cell
    metrics: tuple[str, ...]  # raw ncu metrics it needs: named in the note when not collected
    value: Callable[[pd.DataFrame], float | None] | None  # from one stage's launches; None for a stage column
    stage_column: str | None = None  # or the stage's own figure (Measurements.stages), as every report shows it
    precisions: frozenset[str] | None = None  # shown only beside stages of these precisions (None: any)

    def applies_to(self, precisions: set[str]) -> bool:
        return self.precisions is None or bool(self.precisions & precisions)


def _column(name: str, aggregate: str = "per_launch") -> Callable[[pd.DataFrame], float | None]:
    """A column over one stage's launches: "sum"; or "per_launch", per launch of the stage: counts
    (FLOPs, bytes, instructions) summed over every kernel the stage ran (a split-K stage runs its
    reduction too) and divided by the stage's launches, other figures (percentages, registers)
    averaged over the launches of its main kernel, the one that ran longest."""
    def value(group: pd.DataFrame) -> float | None:
        if name not in group:
            return None
        numbers = pd.to_numeric(group[name], errors="coerce")
        if aggregate == "sum" or _additive(name):
            present = numbers.dropna()
            if present.empty:
                return None
            return float(present.sum() if aggregate == "sum" else present.sum() / group.groupby("kernel").size().max())
        main = numbers[group["kernel"] == _main_kernel(group)].dropna()
        return None if main.empty else float(main.mean())
    return value


def _additive(name: str) -> bool:
    """Whether a column (derived, or a raw ncu metric) adds up over kernels."""
    metric = metric_catalog.BY_NAME.get(name) or metric_catalog.BY_COLUMN.get(name)
    return name in TOTALS or (metric is not None and metric.aggregate == metric_catalog.SUM)


def _main_kernel(group: pd.DataFrame) -> str:
    if "duration_ns" not in group:
        return group["kernel"].iloc[0]
    return pd.to_numeric(group["duration_ns"], errors="coerce").groupby(group["kernel"]).sum().idxmax()


def _per(numerator: str, denominator: str) -> Callable[[pd.DataFrame], float | None]:
    return lambda group: _ratio(_column(numerator, "sum")(group), _column(denominator, "sum")(group))


def _all_flops(group: pd.DataFrame) -> float | None:
    """FP32 and tensor-core FLOPs together, as nsprof analyze counts them."""
    parts = [v for v in (_column("flops", "sum")(group), _column("tensor_flops", "sum")(group)) if v is not None]
    return sum(parts) if parts else None


def _catalogued(column: str) -> Callable[[pd.DataFrame], float | None]:
    """A column of the metric catalogue per launch, from the first of its metric names collected."""
    names = metric_catalog.names(column)

    def value(group: pd.DataFrame) -> float | None:
        name = next((name for name in names if name in group), None)
        return None if name is None else _column(name)(group)
    return value


def _measured(column: str) -> Quantity:
    """A catalogued metric as ncu measured it, labelled and formatted as the catalogue says."""
    metric = metric_catalog.BY_COLUMN[column]
    return Quantity(metric.heading or metric.label, metric.spec, metric_catalog.names(column), _catalogued(column))


def _megabytes(value: Callable[[pd.DataFrame], float | None]) -> Callable[[pd.DataFrame], float | None]:
    return lambda group: None if (v := value(group)) is None else v / 1e6


def _model_blocks(group: pd.DataFrame) -> float | None:
    registers, threads = _catalogued("registers_per_thread")(group), _catalogued("threads_per_block")(group)
    if registers is None or threads is None:
        return None
    return blocks_by_registers(int(registers), int(threads))


_NAME = metric_catalog.requested  # the metric name to collect for a column
_TENSOR = frozenset({"tf32", "fp16"})  # the precisions that run on the tensor cores
_LD_SECTORS = (_NAME("global_ld_sectors"), _NAME("global_ld_requests"))
_ST_SECTORS = (_NAME("global_st_sectors"), _NAME("global_st_requests"))

QUANTITIES: dict[str, Quantity] = {
    # the stage's time and speed as report, roofline and analyze show them (nsprof.ladder_analysis.work)
    "tflops_per_s": Quantity("TFLOP/s", lambda value: flops_per_s(value * 1e12, unit=False), (), None, "tflops_per_s"),
    "pct_of_compute_peak": Quantity("% of peak", ".1f", (), None, "pct_of_compute_peak"),
    "fp32_flops": Quantity("FP32 FLOPs", count, (_NAME("ffma_thread_instructions"),), _column("flops")),
    "tensor_flops": Quantity("tensor FLOPs", count, (_NAME("tensor_fp16_flops"), _NAME("tensor_tf32_flops")),
                             _column("tensor_flops"), precisions=_TENSOR),
    # wgmma's own counter is per input type: FP16 for HGEMM, TF32 for SGEMM's tensor stages
    "tensor_hgmma_flops": Quantity("of which wgmma", count, (_NAME("tensor_hgmma_fp16_flops"),),
                                   _catalogued("tensor_hgmma_fp16_flops"), precisions=frozenset({"fp16"})),
    "tensor_hgmma_tf32_flops": Quantity("of which wgmma", count, (_NAME("tensor_hgmma_tf32_flops"),),
                                        _catalogued("tensor_hgmma_tf32_flops"), precisions=frozenset({"tf32"})),
    "dram_pct_of_peak": Quantity("% DRAM peak", ".1f", (), _column("dram_pct_of_peak")),
    "intensity_flop_per_byte": Quantity("FLOP per DRAM byte", ",.1f", (_NAME("dram_read_bytes"), _NAME("dram_write_bytes")),
                                        lambda g: _ratio(_all_flops(g), _column("dram_bytes", "sum")(g))),
    "l1_mbytes": Quantity("L1 MB requested", ",.1f", (_NAME("l1_bytes"),), _megabytes(_catalogued("l1_bytes"))),
    "l2_mbytes": Quantity("L2 MB requested", ",.1f", (_NAME("l2_bytes"),), _megabytes(_column("l2_bytes"))),
    "smem_ld_instructions": _measured("smem_ld_instructions"),
    "smem_st_instructions": _measured("smem_st_instructions"),
    "smem_ld_wavefronts": _measured("smem_ld_wavefronts"),
    "smem_ldsm_instructions": _measured("smem_ldsm_instructions"),
    "smem_ld_conflicts": _measured("smem_ld_conflicts"),
    "flops_per_smem_ld": Quantity("FLOPs per shared load", ",.1f", (_NAME("smem_ld_instructions"),),
                                  _per("flops", "smem_ld_instructions")),
    "global_ld_sectors_per_request": Quantity("global load sectors/request", ".2f", _LD_SECTORS, _per(*_LD_SECTORS)),
    "global_st_sectors_per_request": Quantity("global store sectors/request", ".2f", _ST_SECTORS, _per(*_ST_SECTORS)),
    "registers": _measured("registers_per_thread"),
    "threads_per_block": _measured("threads_per_block"),
    "blocks": _measured("blocks"),
    "waves": _measured("waves_per_sm"),
    "blocks_per_sm_registers_model": Quantity("blocks/SM by registers (model)", ".0f",
                                              (_NAME("registers_per_thread"), _NAME("threads_per_block")), _model_blocks),
    "blocks_per_sm_registers_ncu": _measured("blocks_per_sm_by_registers"),
    "occupancy_theoretical_pct": _measured("occupancy_theoretical_pct"),
    "occupancy_achieved_pct": _measured("occupancy_pct"),
    **{f"stall_{name}": _measured(f"stall_{name}") for name in ("short_scoreboard", "long_scoreboard", "barrier")},
}


def stage_quantities(m: Measurements, names: list[str], keys: tuple[str, ...]) -> tuple[list[dict], list[str], list[str]]:
    """Per stage and size, the named quantities that apply to the stages shown (a tensor-core count
    beside stages that run on the tensor cores, in their precision); the raw metrics the profile
    lacks for them; and the keys shown."""
    staged_here = list(staged(m, names))
    precisions = {stage.precision.name for stage, _, _ in staged_here}
    keys = tuple(key for key in keys if QUANTITIES[key].applies_to(precisions))
    figures = m.stages.set_index(["stage", "size"])
    def value(key: str, stage: Stage, size: str, group: pd.DataFrame):
        quantity = QUANTITIES[key]
        if quantity.value is not None:
            return quantity.value(group)
        return _plain(figures[quantity.stage_column].get((stage.stage, size))) if quantity.stage_column in figures else None
    rows = [{"stage": stage.stage, "size": size, **{key: value(key, stage, size, group) for key in keys}}
            for stage, size, group in staged_here]
    missing = sorted({metric for key in keys for metric in QUANTITIES[key].metrics
                      if not any(row[key] is not None for row in rows) and not _has(m.launches, metric)})
    return rows, missing, list(keys)


def _has(frame: pd.DataFrame, column: str) -> bool:
    return column in frame and pd.to_numeric(frame[column], errors="coerce").notna().any()


def _mean(series: pd.Series) -> float | None:
    numbers = pd.to_numeric(series, errors="coerce").dropna()
    return None if numbers.empty else float(numbers.mean())


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    return None if numerator is None or not denominator else numerator / denominator


def _times(per_warp_tile: int, warp_tiles: int | None) -> int | None:
    return None if warp_tiles is None else per_warp_tile * warp_tiles


def _plain(value) -> float | None:
    return None if value is None or pd.isna(value) else float(value)
