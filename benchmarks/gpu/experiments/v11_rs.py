"""Issue 33's TF32 gap: v11 without its transpose of B (sgemm_v11_rs_256x128: wgmma's A operand
from registers, C^T = B^T.A^T; see its header in kernels/sgemm/v11_wgmma_tma.cu). Verifies the entry
at square, ragged and extreme shapes (NaN-poisoned output, float64 reference, v11's tolerance),
then times it and its tuning variants (tile order, ring depth; each verified at the timed size)
paired with torch.mm (TF32) and with v11 as declared, at 4096^3 and 8192^3.

    python3 benchmarks/gpu/experiments/v11_rs.py --out $OUT/v11-rs.jsonl
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

CHECK = "1x1x1,17x33x9,1000x1200x808,4095x4097x4093,128x4096x1024,4096x128x1024,256,1024"
RINGS = {256: 4, 128: 6}  # stages by the tile's rows of A (V11_RS_STAGES, V11_RS_STAGES_128)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rows", type=int, default=256, choices=sorted(RINGS), help="the tile's rows of A: 256 or 128")
    ap.add_argument("--sizes", default="4096,8192")
    ap.add_argument("--against", default="128x256", help="the transposing tile to pair it with")
    args = ap.parse_args()
    from nsprof.ladder.registry import Tile, get_op, get_stage
    from nsprof.ladder_runs.torch_baseline import torch_launch
    from nsprof.launch.measure import paired_medians, verify
    from nsprof.launch.tools import launch_tools
    from nsprof.sizes import parse_sizes, size_label

    tools, op, v11 = launch_tools(), get_op("sgemm"), get_stage("sgemm", "v11")
    rows = args.rows
    smem = 1024 + RINGS[rows] * (rows * 32 * 4 + 32 * 128 * 4) + 256
    tile = Tile(rows, 128, 32, (384, 1), f"sgemm_v11_rs_{rows}x128", smem, arch="sm_90a",
                tma_boxes=((rows, 32), (32, 32)), swizzle=128, persistent=True, b_in_registers=True)
    rs = dataclasses.replace(v11, tiles=(tile,))

    def out(rec):
        with open(args.out, "a") as sink:
            sink.write(json.dumps(rec) + "\n")
        print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()), flush=True)

    variants = {"rs": ()} if rows == 128 else {
        "rs": (), "rs group 1024": ("V11_GROUP_ROWS=1024",), "rs group 4096": ("V11_GROUP_ROWS=4096",),
        "rs group 8192": ("V11_GROUP_ROWS=8192",), "rs 3 stages": ("V11_RS_STAGES=3",)}
    checked = {"rs"}  # the others are verified at the sizes they are timed at
    passed = dict.fromkeys(variants, True)
    for size in parse_sizes([CHECK], op.dims):
        for name, defines in ((name, defines) for name, defines in variants.items() if name in checked):
            problem = op.workload.problem(tools.xp, size, seed=7)
            try:
                launcher = op.workload.launcher(rs, problem, tools, defines=defines)
                error = verify(launcher, problem)
            except Exception as exc:  # a build or launch error ends this variant
                out({"phase": "verify", "variant": name, "size": size_label(size), "message": f"{type(exc).__name__}: {exc}"[:400]})
                passed[name] = False
                continue
            ok = error <= v11.tolerance(size)
            passed[name] &= ok
            out({"phase": "verify", "variant": name, "size": size_label(size), "rel_error": error,
                 "tolerance": v11.tolerance(size), "ok": ok})
    for size in parse_sizes([args.sizes], op.dims):
        problem = op.workload.problem(tools.xp, size)
        mm = torch_launch(op.workload.library_call(get_stage("sgemm", "v9t"), problem), "tf32")
        declared = op.workload.launcher(v11, problem, tools, tile_shape=args.against)  # a transposing tile
        for name, defines in variants.items():
            if not passed[name]:
                continue
            launcher = op.workload.launcher(rs, problem, tools, defines=defines)
            if not verify(launcher, problem) <= v11.tolerance(size):
                out({"phase": "verify", "variant": name, "size": size_label(size), "ok": False})
                continue
            for round_ in range(1, args.rounds + 1):
                ours, theirs = paired_medians(launcher.run, mm, 60 if size[0] <= 4096 else 15)
                mine, v11_ms = paired_medians(launcher.run, declared.run, 60 if size[0] <= 4096 else 15)
                out({"phase": "paired", "variant": name, "size": size_label(size), "round": round_, "median_ms": ours,
                     "torch_ms": theirs, "ratio_torch": theirs / ours, "v11_ms": v11_ms, "ratio_v11": v11_ms / mine,
                     "tflops": op.flops(size) / ours / 1e9})


if __name__ == "__main__":
    main()
