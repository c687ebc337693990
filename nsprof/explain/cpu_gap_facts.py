"""`nsprof explain gpu-vs-cpu`: why the GPU wins, and by what factor, each number read from a capture
with CPU stages beside it (bench-cpu.json and ceilings-cpu.json, which `nsprof profile` writes):
the two machines' roofs and ridge points, the measured speed-ups over the CPU's serial loop and its
BLAS (the analysis's columns, nsprof.ladder.cpu_speedups), and the computation-to-memory ratio of a tiled
product against each machine's ridge point."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import pandas as pd

from nsprof.analyze import Ceiling
from nsprof.analyze.roofline import precision_unit
from nsprof.errors import NsprofError, ParseError, UsageError
from nsprof.explain.cpu_gap_types import (
    AgainstRoofs,
    AtIntensity,
    CpuGapFacts,
    CpuMachine,
    CpuRoofs,
    GpuMachine,
    GpuRoofs,
    LadderTile,
    Roofs,
    SerialLoop,
    TileNeed,
    Tiling,
    TimedStage,
)
from nsprof.ladder.cpu_speedups import BLAS_KEY, LOOP_KEY
from nsprof.ladder.ops.tiles import as_tile
from nsprof.ladder.registry import get_op, get_stage
from nsprof.ladder_analysis.capture import stages_of
from nsprof.ladder_analysis.work import WALL_CLOCK, cpu_roof
from nsprof.profile_layout import CPU_RESULTS
from nsprof.sizes import parse_label

if TYPE_CHECKING:
    from nsprof.analyze.capture_analysis import CaptureAnalysis
    from nsprof.parse.profile import Capture

CAPTURE_FIX = "capture one with `nsprof profile --stage v0,v0b,v0blas,v1,v11`"
# ladder stages whose kernels stage tiles of A and B in fast memory (v1 reads every operand from global memory)
TILED_STAGES = {"sgemm": ("v2", "v3", "v8", "v11")}
# float32 lanes of one vector instruction, by the extension host_info names (SVE's width varies by CPU)
SIMD_LANES = {"avx512f": 16, "avx2": 8, "avx": 8, "asimd": 4, "neon": 4}
TIME_SOURCES = {"nsys": "kernel time under nsys", "ncu": "duration under ncu"}  # how a GPU stage was timed
# why the op's serial loop is slow, beyond one core and scalar arithmetic ({row_bytes}: a row of B, M x N x K's N)
LOOP_MEMORY = {
    "sgemm": "its innermost loop walks B down a column, {row_bytes:,} bytes from one element to the next, so each "
             "multiply-add touches another cache line of B, and all of B is read again for every row of C (from the "
             "caches where it fits, else from memory)",
    "sgemv": "each row's sum is one chain of dependent adds, each waiting for the one before, so the loop runs at "
             "the adder's latency, not at the speed memory delivers A",
}


def cpu_gap_facts(path: Path, profile: Capture, analysis: CaptureAnalysis, op: str | None = None,
                  stage: str | None = None) -> CpuGapFacts:
    """The two machines' roofs and ridge points, the stages measured at the largest size where the
    CPU and the GPU both ran (the fastest GPU stage, or `stage`), how the speed-up over the CPU's
    BLAS compares with the ratio of the roofs, why the serial loop is far below its own roof, and
    what tiling does to FLOPs per byte. None where the capture lacks what a number needs. The
    capture at `path` comes opened and analyzed (nsprof.verbs.explain_sources)."""
    if profile.cpu is None or not profile.cpu.results:
        raise ParseError(f"{path}: no CPU stages in it (no {CPU_RESULTS})", CAPTURE_FIX)
    rows = _stage_rows(stages_of(analysis))
    ops = list(dict.fromkeys(rows.loc[rows["cpu_role"].notna(), "op"]))
    if op is not None and op not in ops:
        raise UsageError(f"{path} has no CPU stage of the {op} ladder", f"give --op {' or --op '.join(ops)}" if ops else None)
    op = op or next(iter(ops), None)
    if op is None:
        raise ParseError(f"{path}: no CPU stage of this nsprof's ladders was timed", CAPTURE_FIX)
    rows = rows[rows["op"] == op]
    size, cpu_rows, gpu_rows = _size(rows, path, op)
    if stage is not None:
        gpu_rows = gpu_rows[gpu_rows["stage"] == get_stage(op, stage).stage]
        if gpu_rows.empty:
            raise UsageError(f"{path}: GPU stage {stage} was not timed at {size}", "leave out --stage for the fastest one")
    spec, dims = get_op(op), parse_label(size)
    intensity = spec.flops(dims) / spec.min_bytes(dims)
    gpu_roofs, cpu_roofs = _gpu(analysis.gpu, analysis.ceiling), _cpu(profile.cpu.env or {}, profile.cpu.ceilings)
    gpu: GpuMachine = {**gpu_roofs, **_at_intensity(gpu_roofs, intensity)}
    cpu: CpuMachine = {**cpu_roofs, **_at_intensity(cpu_roofs, intensity)}
    roles: dict[str, TimedStage] = {}
    for _, row in cpu_rows.iterrows():  # in ladder order: loop, blocked, BLAS
        roles.setdefault(row["cpu_role"], _record(row))
    fastest = gpu_rows.loc[gpu_rows["time_per_launch_ns"].idxmin()]
    blas_precision = get_stage(op, roles["blas"]["stage"]).precision.name if "blas" in roles else "fp32"
    same_precision = gpu_rows[gpu_rows["precision"] == blas_precision]
    like = same_precision.loc[same_precision["time_per_launch_ns"].idxmin()] if len(same_precision) else None
    facts: CpuGapFacts = {
        "source": str(path), "op": op, "op_title": spec.title, "size": size, "gpu": gpu, "cpu": cpu,
        "fp32_ratio": _ratio(gpu["fp32_tflop_per_s"], cpu["fp32_tflop_per_s"]),
        "bandwidth_ratio": _ratio(gpu["dram_tbyte_per_s"], cpu["dram_tbyte_per_s"]),
        "op_intensity_flop_per_byte": intensity, "min_bytes_rule": spec.min_bytes_rule,
        "roof_ratio": _ratio(gpu["attainable_tflop_per_s"], cpu["attainable_tflop_per_s"]),
        "cpu_stages": roles,
        "cpu_not_timed": [{"stage": r["stage"], "status": r["status"], "message": r.get("message")} for r in profile.cpu.results
                          if r.get("op") == op and r.get("size") == size and r.get("status") != "ok"],
        "fastest_gpu": _record(fastest, analysis.ceiling),
        "like_for_like": _against_roofs(like, roles.get("blas"), gpu, cpu) if like is not None else None,
        "serial_loop": _serial_loop(roles.get("loop"), cpu, op, dims, spec.element_bytes),
        "tiling": _tiling(op, spec.element_bytes, spec.ndim, intensity, gpu, cpu),
    }
    return facts


def _gpu(name: str | None, ceiling: Ceiling | None) -> GpuRoofs:
    """The GPU's roofs as the analysis resolved them (measured where `nsprof ceilings` saved them)."""
    if ceiling is None:
        return {"name": name, "fp32_tflop_per_s": None, "dram_tbyte_per_s": None, "fp32_source": None, "dram_source": None}
    return {"name": name, "fp32_tflop_per_s": _value(ceiling.fp32_tflop_per_s),
            "dram_tbyte_per_s": _value(ceiling.dram_tbyte_per_s), "fp32_source": ceiling.source_of("fp32_tflop_per_s"),
            "dram_source": ceiling.source_of("dram_tbyte_per_s")}


def _at_intensity(roofs: Roofs, intensity: float) -> AtIntensity:
    """A machine's ridge point, its roofline at the op's FLOPs per byte, and which roof bounds it there."""
    ridge = _ratio(roofs["fp32_tflop_per_s"], roofs["dram_tbyte_per_s"])
    return {"ridge_flop_per_byte": ridge, "attainable_tflop_per_s": _attainable(roofs, intensity),
            "bound": _bound(ridge, intensity)}


def _cpu(env: dict, ceilings: dict | None) -> CpuRoofs:
    """The host of the CPU stages (bench-cpu.json's env) and its roofs (ceilings-cpu.json), if measured."""
    measured = (ceilings or {}).get("ceilings") or {}
    return {"name": env.get("cpu"), "cores": env.get("cpu_cores"), "simd": env.get("cpu_simd"), "blas": env.get("blas"),
            "fp32_tflop_per_s": _value(cpu_roof(ceilings, "fp32_tflops")),
            "dram_tbyte_per_s": _value(cpu_roof(ceilings, "dram_tbyte_per_s")),
            "fp32_source": (measured.get("fp32_tflops") or {}).get("method"),
            "dram_source": (measured.get("dram_tbyte_per_s") or {}).get("method")}


def _stage_rows(stages: pd.DataFrame) -> pd.DataFrame:
    """The analysis's stage rows with a time, each with its CPU role (loop, blocked, blas; None on the GPU)."""
    from nsprof.ladder.cpu_roles import cpu_role

    rows = stages[stages["stage"].notna() & (pd.to_numeric(stages["time_per_launch_ns"], errors="coerce") > 0)].copy()

    def role(row) -> str | None:
        if row["time_source"] != WALL_CLOCK:
            return None
        try:
            return cpu_role(get_stage(row["op"], row["stage"]))
        except NsprofError:  # a stage this nsprof does not have
            return None

    rows["cpu_role"] = [role(row) for _, row in rows.iterrows()] if len(rows) else []
    return rows


def _size(rows: pd.DataFrame, path: Path, op: str) -> tuple[str, pd.DataFrame, pd.DataFrame]:
    """The largest size at which a CPU stage and a GPU stage were both timed (one with the CPU's BLAS
    first), its CPU rows and its GPU rows."""
    on_cpu, on_gpu = rows[rows["cpu_role"].notna()], rows[rows["time_source"] != WALL_CLOCK]
    both = [size for size in dict.fromkeys(on_cpu["size"]) if (on_gpu["size"] == size).any()]
    if not both:
        raise ParseError(f"{path}: no GPU stage of the {op} ladder was timed at a size of its CPU stages",
                         "profile the CPU and GPU stages together, at the same --size")
    with_blas = [size for size in both if ((on_cpu["size"] == size) & (on_cpu["cpu_role"] == "blas")).any()]
    size = max(with_blas or both, key=lambda label: math.prod(parse_label(label)))
    return size, on_cpu[on_cpu["size"] == size], on_gpu[on_gpu["size"] == size]


def _record(row: pd.Series, ceiling: Ceiling | None = None) -> TimedStage:
    """One timed stage as the facts name it: its time, rate and the analysis's speed-ups; for a
    GPU stage, the peak of the units its precision computes on."""
    declared = get_stage(row["op"], row["stage"])
    record: TimedStage = {
        "stage": declared.stage, "title": declared.title, "precision": declared.precision.name,
        "time_ms": float(row["time_per_launch_ns"]) / 1e6, "time_source": row["time_source"],
        "tflops_per_s": _value(row.get("tflops_per_s")), "pct_of_compute_peak": _value(row.get("pct_of_compute_peak")),
        LOOP_KEY: _value(row.get(LOOP_KEY)), BLAS_KEY: _value(row.get(BLAS_KEY))}
    if ceiling is not None and (unit := precision_unit(declared.precision.name)) and unit.ceiling_field:
        record["compute_roof"], record["compute_roof_tflop_per_s"] = unit.name, _value(getattr(ceiling, unit.ceiling_field))
    return record


def _against_roofs(row: pd.Series, blas: TimedStage | None, gpu: GpuMachine, cpu: CpuMachine) -> AgainstRoofs:
    """The fastest GPU stage of the CPU's BLAS's precision against that BLAS: its speed-up, the ratio
    of the two machines' roofs at the op's intensity, and how close each side came to its roof (the
    speed-up is the roof ratio x the GPU's fraction / the CPU's fraction)."""
    record = _record(row)
    gpu_fraction = _ratio(record["tflops_per_s"], gpu["attainable_tflop_per_s"])
    cpu_fraction = _ratio(blas["tflops_per_s"], cpu["attainable_tflop_per_s"]) if blas else None
    roof_ratio = _ratio(gpu["attainable_tflop_per_s"], cpu["attainable_tflop_per_s"])
    return {**record, "gpu_pct_of_roof": _pct(gpu_fraction), "cpu_blas_pct_of_roof": _pct(cpu_fraction),
            "roof_ratio": roof_ratio, "pct_of_roof_ratio": _pct(_ratio(record[BLAS_KEY], roof_ratio))}


def _serial_loop(loop: TimedStage | None, cpu: CpuMachine, op: str, dims: tuple[int, ...],
                 element_bytes: int) -> SerialLoop | None:
    """How far the serial loop is below the CPU's roof, and the one core's share of that roof it had."""
    if loop is None:
        return None
    from nsprof.ladder.cpu_roles import SERIAL_FLAGS

    cores, simd = cpu["cores"], cpu["simd"]
    core_share = _ratio(cpu["fp32_tflop_per_s"], cores) if isinstance(cores, int) and cores > 0 else None
    reason = LOOP_MEMORY.get(op)
    return {**loop, "pct_of_cpu_roof": _pct(_ratio(loop["tflops_per_s"], cpu["attainable_tflop_per_s"])),
            "pct_of_cpu_fp32": loop["pct_of_compute_peak"], "one_core_tflop_per_s": core_share,
            "pct_of_one_core": _pct(_ratio(loop["tflops_per_s"], core_share)), "cores": cores, "simd": simd,
            "simd_lanes": SIMD_LANES.get(simd or ""), "flags": " ".join(SERIAL_FLAGS),
            "why": reason.format(row_bytes=dims[1] * element_bytes) if reason and len(dims) == 3 else reason}


def _tiling(op: str, element_bytes: int, ndim: int, intensity: float, gpu: GpuMachine, cpu: CpuMachine) -> Tiling:
    """FLOPs per byte loaded: the naive loop's (one multiply-add per two elements loaded), a T x T
    tile's (2T^3 FLOPs per 2T^2 elements: T / element_bytes), the tile each machine needs to turn
    compute-bound (T >= element_bytes x its ridge point), and the ladder's own tiles."""
    naive = 2 / (2 * element_bytes)
    gpu_need, cpu_need = (_tile_need(machine["ridge_flop_per_byte"], element_bytes) for machine in (gpu, cpu))
    tiles: list[LadderTile] = []
    for stage_name in TILED_STAGES.get(op, ()) if ndim == 3 else ():
        stage = get_stage(op, stage_name)
        tile = as_tile(stage.tiles[0])  # its first (largest) tile
        bm, bn = tile.bm, tile.bn
        flop_per_byte = 2 * bm * bn / (element_bytes * (bm + bn))
        tiles.append({"stage": stage.stage, "title": stage.title, "tile": f"{bm}x{bn}", "flop_per_byte": flop_per_byte,
                      "above_gpu_ridge": _above(flop_per_byte, gpu_need), "above_cpu_ridge": _above(flop_per_byte, cpu_need)})
    return {"matrix_product": ndim == 3, "element_bytes": element_bytes, "naive_flop_per_byte": naive,
            "op_intensity_flop_per_byte": intensity, "gpu": gpu_need, "cpu": cpu_need, "ladder_tiles": tiles}


def _tile_need(ridge: float | None, element_bytes: int) -> TileNeed:
    return {"ridge_flop_per_byte": ridge, "min_tile": element_bytes * ridge if ridge else None}


def _above(flop_per_byte: float, need: TileNeed) -> bool | None:
    """Whether a tile's FLOPs per byte reach a machine's ridge (None: the machine has no ridge point)."""
    ridge = need["ridge_flop_per_byte"]
    return (flop_per_byte >= ridge) if ridge else None


def _attainable(roofs: Roofs, intensity: float) -> float | None:
    """The roofline at the op's intensity: min(compute roof, intensity x bandwidth), TFLOP/s."""
    peak, bandwidth = roofs["fp32_tflop_per_s"], roofs["dram_tbyte_per_s"]
    return min(peak, intensity * bandwidth) if peak and bandwidth else None


def _bound(ridge: float | None, intensity: float) -> Literal["compute", "memory"] | None:
    return None if ridge is None else "compute" if intensity >= ridge else "memory"


def _value(value) -> float | None:
    """A number as JSON keeps it: None for a missing one (None, NaN, not a number)."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return None
    return float(value)


def _ratio(top: float | None, bottom: float | None) -> float | None:
    return top / bottom if top is not None and bottom else None


def _pct(fraction: float | None) -> float | None:
    return None if fraction is None else 100 * fraction


# --- the facts as sentences ----------------------------------------------------------------------

def fact_sections(facts: CpuGapFacts) -> dict[str, list[str]]:
    """The facts as sentences with their numbers (Markdown), under the headings of the page."""
    return {"roofs": _roof_lines(facts), "measured": _measured_lines(facts), "tiling": _tiling_lines(facts)}


def _roof_lines(facts: CpuGapFacts) -> list[str]:
    gpu, cpu = facts["gpu"], facts["cpu"]
    lines = []
    gpu_fp32, cpu_fp32, gpu_dram, cpu_dram = (gpu["fp32_tflop_per_s"], cpu["fp32_tflop_per_s"], gpu["dram_tbyte_per_s"],
                                              cpu["dram_tbyte_per_s"])
    if facts["fp32_ratio"] and facts["bandwidth_ratio"]:
        assert gpu_fp32 and cpu_fp32 and gpu_dram and cpu_dram  # a ratio is of two roofs
        lines.append(f"The GPU's FP32 roof is **{num(facts['fp32_ratio'])}x** the CPU's ({num(gpu_fp32)} "
                     f"against {num(cpu_fp32)} TFLOP/s); its memory bandwidth **"
                     f"{num(facts['bandwidth_ratio'])}x** ({num(gpu_dram * 1e3)} against "
                     f"{num(cpu_dram * 1e3)} GB/s).")
    else:
        for what, ratio, gpu_roof, cpu_roof in (("FP32 roof", facts["fp32_ratio"], gpu_fp32, cpu_fp32),
                                                ("bandwidth", facts["bandwidth_ratio"], gpu_dram, cpu_dram)):
            lines.append(f"The GPU's {what} is **{num(ratio)}x** the CPU's." if ratio else
                         f"The two {what}s are not compared: {_missing(gpu_roof, cpu_roof)}.")
    sources = {_source(gpu["fp32_source"]), _source(gpu["dram_source"])}
    lines.append(f"The GPU, {gpu['name'] or 'unknown'}: {' and '.join(sorted(sources))} (`nsprof ceilings`). The CPU, "
                 f"{cpu['name'] or 'the host'} ({cpu['cores'] or '?'} hardware threads, {cpu['simd'] or 'no known SIMD'}, "
                 f"{cpu['blas'] or 'its BLAS'}): "
                 + ("measured beside its stages (`nsprof ceilings --cpu`), "
                    + "; ".join(part for part in (cpu["fp32_source"], cpu["dram_source"]) if part)
                    if cpu["fp32_source"] or cpu["dram_source"] else "no roofs measured beside its stages") + ".")
    if gpu["ridge_flop_per_byte"] and cpu["ridge_flop_per_byte"]:
        higher = gpu["ridge_flop_per_byte"] > cpu["ridge_flop_per_byte"]
        lines.append(f"Ridge points, compute roof over bandwidth, the FLOPs per byte from which a kernel is compute-bound: "
                     f"the GPU's {num(gpu['ridge_flop_per_byte'])} FLOP/byte, the CPU's {num(cpu['ridge_flop_per_byte'])}. "
                     + ("The GPU's compute outruns its memory by more than the CPU's does: it needs more reuse of each "
                        "byte to reach its roof." if higher else
                        "The GPU's memory keeps up with its compute better than the CPU's does: it needs less reuse of "
                        "each byte to reach its roof."))
    intensity, size = facts["op_intensity_flop_per_byte"], facts["size"]
    bounds = {gpu["bound"], cpu["bound"]}
    where = ("above both ridges: compute-bound on both machines, so the FP32 ratio is the one to compare with"
             if bounds == {"compute"} else
             "below both ridges: memory-bound on both machines, so the bandwidth ratio is the one to compare with"
             if bounds == {"memory"} else
             f"compute-bound on the {'GPU' if gpu['bound'] == 'compute' else 'CPU'} only"
             if None not in bounds else "against ridge points this capture lacks")
    line = (f"{facts['op_title']} at {size} does {num(intensity)} FLOPs per byte at its minimum traffic "
            f"({facts['min_bytes_rule']} bytes), {where}")
    if facts["roof_ratio"]:
        gpu_roof, cpu_roof = gpu["attainable_tflop_per_s"], cpu["attainable_tflop_per_s"]
        assert gpu_roof and cpu_roof  # the ratio is of both
        line += (f"; the roofs at that intensity, min(compute, intensity x bandwidth), are "
                 f"{num(gpu_roof)} and {num(cpu_roof)} TFLOP/s: "
                 f"**{num(facts['roof_ratio'])}x**")
    lines.append(line + ".")
    return lines


def _measured_lines(facts: CpuGapFacts) -> list[str]:
    """The stages measured, in sentences: the CPU's, the fastest GPU stage's, like for like, against
    the ratio of the roofs, and why the serial loop is slow."""
    return [_cpu_stages_line(facts), _fastest_line(facts), *_like_for_like_lines(facts), *_serial_loop_lines(facts)]


def _cpu_stages_line(facts: CpuGapFacts) -> str:
    timed = ", ".join(f"{_named(r)} {num(r['time_ms'])} ms" for r in facts["cpu_stages"].values())
    return (f"The CPU stages at {facts['size']}, median wall-clock time of a run: {timed}."
            + "".join(f" {r['stage']} was not timed ({r['message'] or r['status']})." for r in facts["cpu_not_timed"]))


def _fastest_line(facts: CpuGapFacts) -> str:
    fastest = facts["fastest_gpu"]
    speedups = [f"**{num(times)}x** the CPU's {what}"
                for times, what in ((fastest[LOOP_KEY], "serial loop"), (fastest[BLAS_KEY], "BLAS")) if times]
    return (f"The fastest GPU stage, {_named(fastest)}, took {num(fastest['time_ms'] * 1e3)} µs "
            f"({TIME_SOURCES.get(fastest['time_source'], fastest['time_source'])})"
            + (": " + " and ".join(speedups) if speedups else "") + ".")


def _like_for_like_lines(facts: CpuGapFacts) -> list[str]:
    """The fastest stage in the CPU stages' precision where the fastest is in another, and that
    stage's speed-up over the CPU's BLAS against the ratio of the roofs."""
    lines = []
    fastest, like, blas = facts["fastest_gpu"], facts["like_for_like"], facts["cpu_stages"].get("blas")
    cpu_fp32 = facts["cpu"]["fp32_tflop_per_s"]
    if like and fastest["stage"] != like["stage"]:
        line = f"{fastest['stage']} computes in {fastest['precision'].upper()}, not {like['precision'].upper()}"
        if (roof := fastest.get("compute_roof_tflop_per_s")) and cpu_fp32:
            line += (f": under the {fastest['compute_roof']} roof of {num(roof)} TFLOP/s, "
                     f"{num(roof / cpu_fp32)}x the CPU's FP32 roof")
        lines.append(line + f". Like for like, the fastest {like['precision'].upper()} GPU stage is "
                     f"{_named(like)}, {num(like['time_ms'] * 1e3)} µs"
                     + (f": {num(like[BLAS_KEY])}x the CPU's BLAS." if like[BLAS_KEY] else "."))
    if like and blas and like[BLAS_KEY] and like["roof_ratio"]:
        share, gpu_pct, cpu_pct = like["pct_of_roof_ratio"], like["gpu_pct_of_roof"], like["cpu_blas_pct_of_roof"]
        # the roofs are both known (their ratio is), and a stage with a time has a rate: the op's FLOPs over it
        assert share is not None and gpu_pct is not None and cpu_pct is not None
        over = cpu_pct > 100
        lines.append(f"Against the ratio of the roofs: {like['stage']}'s {num(like[BLAS_KEY])}x over the CPU's BLAS is "
                     f"**{num(share)}%** of the {num(like['roof_ratio'])}x the roofs allow. The speed-up "
                     f"is that ratio x how close each side came to its own roof: {like['stage']} reached "
                     f"{num(gpu_pct)}% of the GPU's, the CPU's BLAS {num(cpu_pct)}% "
                     "of the CPU's"
                     + (" (over 100%: the CPU's roofs were measured on other problems, a large product and a large copy; "
                        "a smaller one can run faster, its operands held in the caches)" if over else "") + ".")
    elif not blas:
        lines.append("No CPU BLAS stage was timed at this size: profile it too (`--stage` with the ladder's BLAS stage) "
                     "for the like-for-like speed-up.")
    return lines


def _serial_loop_lines(facts: CpuGapFacts) -> list[str]:
    """How far the serial loop is below the CPU's roof, and why: one thread, scalar arithmetic."""
    loop = facts["serial_loop"]
    if not loop:
        return []
    rate = loop["tflops_per_s"]
    assert rate is not None  # a stage with a time (_stage_rows keeps those) has a rate: the op's FLOPs over it
    line = f"The serial loop {loop['stage']} reached {num(rate * 1e3)} GFLOP/s"
    if loop["pct_of_cpu_roof"] is not None:
        line += f", **{num(loop['pct_of_cpu_roof'])}%** of the CPU's own roof at this intensity"
    if loop["pct_of_cpu_fp32"] is not None and facts["cpu"]["bound"] == "memory":
        line += f" ({num(loop['pct_of_cpu_fp32'])}% of its FP32 roof)"
    if loop["cores"]:
        line += f". It runs on one of the host's {loop['cores']} hardware threads"
        if loop["pct_of_one_core"] is not None:
            line += f" ({num(loop['pct_of_one_core'])}% of one thread's share of the FP32 roof)"
    line += (f", compiled `{loop['flags']}` without `-march`, so its multiply-adds are scalar"
             + (f": one float at a time, where {loop['simd']} does {loop['simd_lanes']} per instruction"
                if loop["simd_lanes"] else f", although the host has {loop['simd']}" if loop["simd"] else ""))
    if loop["why"]:
        line += f"; and {loop['why']}"
    return [line + "."]


def _tiling_lines(facts: CpuGapFacts) -> list[str]:
    tiling, gpu, cpu = facts["tiling"], facts["gpu"], facts["cpu"]
    eb, naive = tiling["element_bytes"], tiling["naive_flop_per_byte"]
    gpu_ridge, cpu_ridge = gpu["ridge_flop_per_byte"], cpu["ridge_flop_per_byte"]
    if not tiling["matrix_product"]:
        intensity = tiling["op_intensity_flop_per_byte"]
        below = (f", below the GPU's ridge ({num(gpu_ridge)}) and the CPU's ({num(cpu_ridge)}): no tiling makes it "
                 "compute-bound, and the speed-up is bounded by the bandwidth ratio."
                 if gpu_ridge and cpu_ridge and intensity < gpu_ridge and intensity < cpu_ridge else ".")
        return [f"Each element of A is used by one multiply-add: {num(intensity)} FLOP per byte "
                "at most, whatever the blocking (only x is reused)" + below]
    below_both = all(ridge and naive < ridge for ridge in (gpu_ridge, cpu_ridge))
    lines = [f"The naive loop loads two {eb}-byte elements for each multiply-add: 2 FLOPs per {2 * eb} bytes, "
             f"{num(naive)} FLOP/byte" + (", below both ridges" if below_both else "") + ". A block computing a T x T "
             f"tile of C loads a T x T tile of A and one of B (2T² elements, {2 * eb}T² bytes) into fast memory and does "
             f"T³ multiply-adds (2T³ FLOPs) with them: **T/{eb} FLOP per byte**, 2·bm·bn / ({eb}·(bm + bn)) for a "
             "bm x bn tile, whatever the depth of its k step."]
    gpu_tile, cpu_tile = tiling["gpu"]["min_tile"], tiling["cpu"]["min_tile"]
    if gpu_tile and cpu_tile:
        lines.append(f"Compute-bound from T ≥ {eb} x ridge: T ≥ {num(gpu_tile)} on the GPU, T ≥ {num(cpu_tile)} on the "
                     "CPU, whose fast memory is its caches and registers.")
    for tile in tiling["ladder_tiles"]:
        sides = {m: above for m, above in (("GPU", tile["above_gpu_ridge"]), ("CPU", tile["above_cpu_ridge"]))
                 if above is not None}
        if len(set(sides.values())) == 1 and len(sides) == 2:
            where = f", {'above' if sides['GPU'] else 'below'} both ridges"
        else:
            where = "".join(f", {'above' if above else 'below'} the {m}'s ridge" for m, above in sides.items())
        lines.append(f"{_named(tile)}: {tile['tile']} tiles, {num(tile['flop_per_byte'])} FLOP per byte "
                     f"loaded{where}.")
    lines.append(f"At {facts['size']} the product itself allows {num(tiling['op_intensity_flop_per_byte'])} FLOP/byte, "
                 "each element crossing DRAM once: the tile, not the problem, sets what a kernel attains.")
    return lines


def _named(record: TimedStage | LadderTile) -> str:
    """A stage and its title, without the CPU stages' "CPU: " (the sentence says which machine):
    "v8 (double buffering)", "v10 tensor cores (TF32 mma.sync)" (no parentheses in parentheses)."""
    title = record["title"].removeprefix("CPU: ")
    return f"{record['stage']} {title}" if "(" in title else f"{record['stage']} ({title})"


def num(value: float) -> str:
    """Three significant digits, thousands separated, never an exponent: 63.1, 0.252, 1,234."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    digits = max(0, 2 - math.floor(math.log10(abs(value))))
    return f"{value:,.{digits}f}"


def _source(source: str | None) -> str:
    """A GPU ceiling's source in a word: measured (by nsprof ceilings) or the datasheet's."""
    return "measured" if source and source.startswith("measured") else source or "unknown source"


def _missing(gpu_value: float | None, cpu_value: float | None) -> str:
    missing = [what for what, value in (("the GPU's (an unknown GPU: pass --ceilings)", gpu_value),
                                        ("the CPU's (no ceilings-cpu.json: `nsprof ceilings --cpu`)", cpu_value))
               if not value]
    return f"there is no roof for {' or '.join(missing)}"
