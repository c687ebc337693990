"""Statements computed for a topic from the registry (tiles, declared accesses, precision) and,
where given, the measurements: the numbers that make a topic's text concrete for this ladder."""

from __future__ import annotations

import math
from collections import Counter

from nsprof import metric_catalog
from nsprof.explain.coalescing import SECTOR_BYTES, analyze_global
from nsprof.explain.evidence import QUANTITIES, Measurements, staged
from nsprof.explain.prediction import predict_mix, sass_name
from nsprof.ladder.ops.tiles import Tile  # the block tile's geometry: what these facts are about
from nsprof.ladder.registry import Stage, get_op
from nsprof.render.bench_table import sass_counts
from nsprof.render.format import bytes_per_s, flops_per_s
from nsprof.sizes import parse_label


def topic_facts(topic: str, stages: list[Stage], m: Measurements | None) -> list[str]:
    compute = _FACTS.get(topic)
    return compute(stages, m) if compute else []


def _block_tile(stage: Stage) -> Tile | None:
    """The block tile the stage's declared accesses describe (`modelled_tile`, else its default, the
    first); None where that is no block tile."""
    wanted = stage.modelled_tile or (stage.tiles[0].shape if stage.tiles else None)
    config = next((c for c in stage.tiles if c.shape == wanted), None)
    return config if isinstance(config, Tile) else None


def _thread_tile_side(stage: Stage) -> int | None:
    """An FP32 stage's thread tile is side x side outputs of C (default block tile); None otherwise."""
    tile = _block_tile(stage)
    if stage.precision.name != "fp32" or tile is None:
        return None
    outputs = tile.bm * tile.bn // (tile.threads[0] * tile.threads[1])
    side = math.isqrt(outputs)
    return side if side * side == outputs else None


def _register_tiling(stages: list[Stage], m: Measurements | None) -> list[str]:
    facts = []
    for stage in stages:
        side, mix, tile = _thread_tile_side(stage), predict_mix(stage, "load"), _block_tile(stage)
        if side is None or tile is None:  # a side is only found on a block tile
            continue
        outputs = side * side
        facts.append(f"{stage.stage}: {side}x{side} outputs of C per thread; per step of k, {outputs} "
                     f"FMA{'s' if outputs > 1 else ''} for {2 * side} values read from shared memory "
                     f"({outputs / (2 * side):g} per value).")
        if mix is not None:
            flops = 2 * 32 * outputs * tile.bk  # per warp and K tile
            facts.append(f"{stage.stage}: {mix.instructions} shared-load instructions per warp per {tile.bk}-deep "
                         f"K tile ({mix.describe()}): {flops / mix.instructions:,.1f} FLOPs per shared-load "
                         "instruction predicted.")
    return facts


def _instruction_mix(stages: list[Stage], m: Measurements | None) -> list[str]:
    facts = []
    for stage in stages:
        parts = [f"{mix.instructions} shared {op}s ({mix.describe()})"
                 for op in ("load", "store") if (mix := predict_mix(stage, op)) is not None]
        loads: Counter[str] = Counter()
        for access in stage.accesses:
            if access.space == "global" and access.op == "load":
                loads[sass_name(access)] += access.count
        if loads:
            parts.append("global loads: " + " + ".join(f"{count} {name}" for name, count in loads.items()))
        if parts:
            facts.append(f"{stage.stage}, per warp per K tile: " + "; ".join(parts) + ".")
    return facts


def _tiling(stages: list[Stage], m: Measurements | None) -> list[str]:
    facts = []
    for stage in stages:
        loads, tile = [a for a in stage.accesses if a.space == "global" and a.op == "load"], _block_tile(stage)
        if not loads or tile is None:
            continue
        sector_bytes = sum(len(analyze_global(a).sectors) * SECTOR_BYTES * a.count for a in loads)
        bk = tile.bk
        per_tile = f" ({sector_bytes} per {bk}-deep K tile)" if bk > 1 else ""
        facts.append(f"{stage.stage}: a warp's global loads touch {sector_bytes / bk:g} bytes of sectors "
                     f"per step of k{per_tile}.")
    return facts


def _roofline(stages: list[Stage], m: Measurements | None) -> list[str]:
    facts = []
    if m is not None and m.ceiling is not None:
        c = m.ceiling
        fp32, dram = c.fp32_tflop_per_s, c.dram_tbyte_per_s
        if fp32 is not None and dram is not None:
            facts.append(f"{c.gpu}: {flops_per_s(fp32 * 1e12)} FP32 ({_source(c, 'fp32_tflop_per_s')}) / "
                         f"{bytes_per_s(dram * 1e12)} DRAM "
                         f"({_source(c, 'dram_tbyte_per_s')}) = ridge at {fp32 / dram:.1f} FLOP/B.")
        else:
            missing = " and ".join(name for name, value in (("FP32", fp32), ("DRAM", dram)) if value is None)
            facts.append(f"{c.gpu}: no {missing} peak known, so no ridge point (measure it: nsprof ceilings).")
    measured = {size for _, size, _ in staged(m)} if m is not None else {"1024x1024x1024", "4096x4096x4096"}
    sizes = sorted(measured, key=parse_label)
    op = get_op("sgemm")
    for size in sizes:
        dims = parse_label(size)
        facts.append(f"{op.title} {size}: {op.flops(dims):,} FLOPs over at least {op.min_bytes(dims) / 1e6:,.1f} MB "
                     f"= {op.flops(dims) / op.min_bytes(dims):,.1f} FLOP/B with each matrix moved once.")
    return facts


def _source(ceiling, field: str) -> str:
    """'datasheet', or 'measured <date>' (the method is in analyze --json and the report)."""
    return ceiling.source_of(field).split(" by ")[0]


SWIZZLE_ATOM_ROWS = 8  # a 128-byte swizzle repeats every 8 rows: 1,024-byte atoms
WGMMA_K_BYTES = 32  # one wgmma k step reads 32 bytes of each operand row: k16 in fp16, k8 in TF32


def _wgmma_operands(stage: Stage) -> list[str]:
    """What a wgmma + TMA stage's tiles declare, as the instruction and the shared-memory layout they imply."""
    facts = []
    elem = get_op(stage.op).element_bytes
    k = WGMMA_K_BYTES // elem
    for tile in stage.tiles:
        if not isinstance(tile, Tile) or not tile.tma_boxes or tile.arch != "sm_90a":
            continue
        (a_rows, a_cols), (b_rows, b_cols) = tile.tma_boxes
        per_stage = (tile.bm * a_cols + tile.bn * tile.bk) * elem
        ring = (tile.dynamic_smem_bytes - 1024) // per_stage
        n = tile.bn
        if tile.b_in_registers:  # C^T = B^T A^T: A's rows are the MMA's N, B's columns its M, from registers
            n = tile.bm
            b = (f"B as given (N-major) in boxes of {b_rows} rows of K x {b_cols * elem} bytes of N, read into registers "
                 f"as the MMA's first operand (C^T = B^T A^T: no transpose; A's {a_rows} rows are the MMA's N)")
        elif tile.b_k_major:
            b = (f"Bt (B transposed to N x K first) in boxes of {b_rows} rows x {b_cols * elem} bytes of K, "
                 "K-major like A")
        else:
            b = f"B as given (N-major, imm-trans-b) in boxes of {b_rows} rows of K x {b_cols * elem} bytes of N"
        facts.append(
            f"{stage.stage} {tile.shape}: wgmma m64n{n}k{k} ({64 * n * k:,} multiply-adds per warpgroup "
            f"instruction, {tile.bk // k} per k tile of {tile.bk}); A in TMA boxes of {a_rows} rows x {a_cols * elem} bytes "
            f"of K (K-major, {tile.swizzle}-byte swizzle: {SWIZZLE_ATOM_ROWS}-row atoms of {SWIZZLE_ATOM_ROWS * tile.swizzle:,} "
            f"bytes, a k step {WGMMA_K_BYTES} bytes); {b}; {per_stage // 1024} KB per stage, {ring} stages in its "
            f"{tile.dynamic_smem_bytes / 1024:.0f} KB of shared memory.")
    return facts


def _tensor_cores(stages: list[Stage], m: Measurements | None) -> list[str]:
    """The precision of each tensor-core ladder, what each wgmma stage's tiles declare (instruction,
    operand layouts, ring), and the tensor FLOPs each measured stage did against the op's count
    (2MNK): every multiply-add on the tensor cores, none on the FP32 pipes."""
    facts = []
    for op in dict.fromkeys(stage.op for stage in stages):
        for precision in get_op(op).precisions.values():
            facts.append(f"{get_op(op).title} {precision.name}: {precision.description}; passes at a relative "
                         f"error of at most {precision.rule}.")
    for stage in stages:
        facts += _wgmma_operands(stage)
    tensor_flops = QUANTITIES["tensor_flops"].value  # per launch of the stage, as the evidence shows it
    for stage, size, group in staged(m, [s.stage for s in stages]) if m is not None else []:
        if stage.op not in {s.op for s in stages} or "tensor_flops" not in group or tensor_flops is None:
            continue
        measured = tensor_flops(group)
        if measured:
            expected = get_op(stage.op).flops(parse_label(size))
            facts.append(f"{stage.stage} at {size}: {measured:,.0f} tensor FLOPs per launch measured, 2MNK = {expected:,}.")
    return facts


def _blocks(stages: list[Stage], m: Measurements | None) -> list[str]:
    if m is None:
        return []
    facts = []
    for stage, size, group in staged(m, [s.stage for s in stages]):
        blocks, sms = (group.get(metric_catalog.BY_COLUMN[column].name) for column in ("blocks", "sm_count"))
        if blocks is not None and sms is not None:
            facts.append(f"{stage.stage} at {size}: {blocks.iloc[0]:,.0f} blocks on {sms.iloc[0]:.0f} SMs.")
    return facts


def _float_sums(stages: list[Stage], m: Measurements | None) -> list[str]:
    """Each precision's tolerance at a few K, and the errors the profile's own verification measured."""
    facts = []
    for stage in {stage.precision.name: stage for stage in stages}.values():
        precision, ndim = stage.precision, get_op(stage.op).ndim
        at = ", ".join(f"{precision.tolerance((k,) * ndim):.1e} at K = {k:,}" for k in (256, 4096, 2**20))
        facts.append(f"{precision.name}: passes at a relative error of at most {precision.rule}: {at}.")
    if m is not None and m.manifest:
        checks = m.manifest.get("verification", [])
        names = {stage.stage for stage in stages}
        for check in checks:
            if check.get("stage") in names and check.get("tool") == "ncu" and check.get("rel_error") is not None:
                tolerance = f" (tolerance {check['tolerance']:.1e})" if check.get("tolerance") is not None else ""
                facts.append(f"{check['stage']} at {check['size']}: relative error {check['rel_error']:.1e} against float64"
                             f"{tolerance}.")
    return facts


def _triton(stages: list[Stage], m: Measurements | None) -> list[str]:
    """Each Triton stage's configurations and, from the profile's bench record, what its tuning kept
    and what Triton compiled it to; and how far each is from the hand-written stage beside it."""
    facts = []
    for stage in stages:
        if stage.kind.autotuned:
            facts.append(f"{stage.stage} is tuned over {len(stage.tiles)} configurations: "
                         + ", ".join(config.shape for config in stage.tiles) + ".")
    for (name, size), details in sorted((m.tuning or {}).items()) if m is not None else []:
        if "compiled" not in details:  # a library stage's tuning over cuBLAS's algorithms
            continue
        tuning, compiled = details["autotune"], details["compiled"]
        path = ", ".join(sass_counts(compiled.get("sass"))) or "not read"
        facts.append(f"{name} at {size}: kept {tuning['kept']} of {len(tuning['trials'])} tried; {compiled.get('registers')} "
                     f"registers, {compiled.get('spills')} spills, {(compiled.get('shared_bytes') or 0) / 1024:.0f} KB "
                     f"shared memory; its SASS: {path}.")
    if m is not None and not m.stages.empty:
        figures = m.stages.set_index(["stage", "size"])
        for stage in (s for s in stages if s.kind.autotuned):
            hand = _HAND_WRITTEN.get(stage.key)
            for (other, size), row in figures.iterrows():
                if other != hand or (stage.stage, size) not in figures.index:
                    continue
                mine = figures.loc[(stage.stage, size)]
                sources = " and ".join(dict.fromkeys((str(mine["time_source"]), str(row["time_source"]))))
                facts.append(f"{stage.stage} at {size}: {100 * row['time_per_launch_ns'] / mine['time_per_launch_ns']:.0f}% "
                             f"of {hand}'s speed, the same work in {mine['time_per_launch_ns'] / 1e3:.2f} µs against "
                             f"{row['time_per_launch_ns'] / 1e3:.2f} µs (time per launch, {sources}).")
    return facts


_HAND_WRITTEN = {"hgemm/h8": "h6", "sgemm/v12t": "v11", "sgemm/v12": "v8", "sgemv/s8": "s6"}  # the stage teaching the same idea


_FACTS = {
    "triton": _triton,
    "float-sums": _float_sums,
    "register-tiling": _register_tiling,
    "vectorized-loads": _instruction_mix,
    "shared-memory-tiling": _tiling,
    "roofline": _roofline,
    "tensor-cores": _tensor_cores,
    "double-buffering": _blocks,
}
