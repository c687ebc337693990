"""Tuning sweep (GPU): one stage over launch plans x compile-time knobs x sizes.

Each point is verified before it is timed, and compared with cuBLAS in the stage's own precision
(v9t, cuBLAS TF32, for v10 and v11). Used to choose the defaults in
kernels/sgemm/v08_double_buffering.cu, v10_tensor_cores.cu and v11_wgmma_tma.cu and the tile rule
in nsprof.ladder.ops.launch_plan.choose_plan (any op: --op hgemm). Prints one JSON line per point, then a table.

    python3 benchmarks/gpu/tune_stage.py --stage v8 --sizes 1024,4096 \\
        --plans auto,128x128/1,64x128/1 --knobs "V8_BK=8,16;V8_MIN_BLOCKS=1,2" --knobs "V8_TN=16"
    python3 benchmarks/gpu/tune_stage.py --stage v11 --sizes 4096 --plans 128x256/1,128x128/1 \\
        --knobs "V11_STAGES_256=3,4;V11_STAGES_128=5,6"
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json

from nsprof.ladder.ops.sgemm import V8_STAGES, _v8_smem, _v10_smem, _v11_smem
from nsprof.ladder.registry import Stage, baseline_stage, get_op, get_stage
from nsprof.ladder_runs.stage_launch import stage_launcher
from nsprof.launch.measure import time_launches, verify
from nsprof.launch.tools import launch_tools
from nsprof.sizes import parse_sizes


def knob_combinations(spec: str) -> list[tuple[str, ...]]:
    """"A=1,2;B=3" -> [("A=1", "B=3"), ("A=2", "B=3")]"""
    if not spec:
        return [()]
    axes = [[f"{name}={v}" for v in values.split(",")]
            for name, values in (part.split("=", 1) for part in spec.split(";"))]
    return list(itertools.product(*axes))


def stage_variant(stage: Stage, knobs: tuple[str, ...]) -> Stage:
    """The stage as the knobs compile it: a K tile depth or a ring depth changes the
    padding multiple and the dynamic shared memory the launcher must request; V8_TN the
    threads of v8's 128x128 tile (8 x V8_TN outputs each). V8_PAD=1 is no compile knob: it
    makes the launcher pad A, B and C to whole tiles (what v8 did before issue 22); v11: the ring
    depth of each tile width, V11_STAGES_<bn>."""
    values = dict(k.split("=", 1) for k in knobs)
    tiles = []
    for tile in stage.tiles:
        if "V8_BK" in values:
            tile = dataclasses.replace(tile, bk=int(values["V8_BK"]))
        if stage.stage == "v8" and ("V8_BK" in values or "V8_STAGES" in values):  # the ring's bytes, asked for at launch
            bk, stages = int(values.get("V8_BK", tile.bk)), int(values.get("V8_STAGES", V8_STAGES))
            tile = dataclasses.replace(tile, dynamic_smem_bytes=_v8_smem(tile.bm, tile.bn, bk, stages))
        if "V8_ASYNC" in values:  # only V8_ASYNC 2 (the default) reads A transposed
            tile = dataclasses.replace(tile, a_m_major=values["V8_ASYNC"] == "2")
        if "V8_TN" in values and tile.shape == "128x128":
            tile = dataclasses.replace(tile, threads=(128 * 128 // (8 * int(values["V8_TN"])), 1))
        if "STAGES" in values and stage.stage == "v10":
            tile = dataclasses.replace(tile, dynamic_smem_bytes=_v10_smem(tile.bm, tile.bn, int(values["STAGES"])))
        if f"V11_STAGES_{tile.bn}" in values and stage.stage == "v11":
            tile = dataclasses.replace(tile, dynamic_smem_bytes=_v11_smem(tile.bn, int(values[f"V11_STAGES_{tile.bn}"])))
        tiles.append(tile)
    ragged = "pad" if values.get("V8_PAD") == "1" else stage.ragged
    return dataclasses.replace(stage, tiles=tuple(tiles), ragged=ragged)


def parse_plan(plan: str) -> tuple[str | None, int | None]:
    if plan == "auto":
        return None, None
    shape, _, split = plan.partition("/")
    return shape, int(split or 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--op", default="sgemm")
    parser.add_argument("--stage", default="v8")
    parser.add_argument("--sizes", default="1024,2048,4096")
    parser.add_argument("--plans", default="auto")
    parser.add_argument("--knobs", action="append",
                        help='"A=1,2;B=3": every combination; repeat the option for a union of such sets')
    parser.add_argument("--source", help="compile this .cu instead of the stage's own (same entry points)")
    parser.add_argument("--verify-only", action="store_true", help="verify every point, time none (no cuBLAS)")
    args = parser.parse_args()
    tools = launch_tools()
    op = get_op(args.op)
    stage = get_stage(op.name, args.stage)
    cublas = baseline_stage(op.name, stage.precision.name)
    if args.source:
        stage = dataclasses.replace(stage, kernel_file=args.source)
    rows = []
    for size in parse_sizes([args.sizes], op.dims):
        problem = op.workload.problem(tools.xp, size)
        label = "x".join(map(str, size))
        if not args.verify_only:
            base = time_launches(stage_launcher(cublas, problem, tools).run).median_ms
        variants = [combo for spec in args.knobs or [""] for combo in knob_combinations(spec)]
        for plan, knobs in itertools.product(args.plans.split(","), variants):
            shape, split = parse_plan(plan)
            variant = stage_variant(stage, knobs)
            try:
                launcher = op.workload.launcher(variant, problem, tools, tile_shape=shape, split_k=split, defines=knobs)
                problem.refresh()
                err = verify(launcher, problem)
            except Exception as exc:  # a knob that does not compile is one failed point, not a failed sweep
                row = {"size": label, "plan": plan, "knobs": " ".join(knobs), "err": float("nan"), "ok": False,
                       "error": f"{type(exc).__name__}: {exc}"[:300], "ms": float("nan"), "tflops": float("nan"),
                       "pct_cublas": float("nan"), "baseline": cublas.stage}
                rows.append(row)
                print(json.dumps(row), flush=True)
                continue
            ok = err <= stage.tolerance(size)
            ms = time_launches(launcher.run).median_ms if ok and not args.verify_only else float("nan")
            row = {"size": label, "plan": launcher.tile_label, "entry": launcher.entry, "knobs": " ".join(knobs),
                   "err": err, "ok": ok,
                   "padded": launcher.padded_shape is not None, "ms": ms, "tflops": op.flops(size) / ms / 1e9,
                   "pct_cublas": float("nan") if args.verify_only else 100 * base / ms,
                   "baseline": cublas.stage}
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(f"{'size':>14} {'plan':>18} {'knobs':>34} {'TFLOP/s':>8} {'%cuBLAS':>8} {'err':>9}")
    for r in rows:
        print(f"{r['size']:>14} {r['plan']:>18} {r['knobs']:>34} {r['tflops']:>8.2f} {r['pct_cublas']:>8.1f} {r['err']:>9.1e}")


if __name__ == "__main__":
    main()
