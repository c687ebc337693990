"""Issue 33's HGEMM gap at 4096^3: h6 storing C by TMA (hgemm_h6_sk_tma_128x256, EPI 2; see
store_slab_tma in kernels/hgemm/h6_wgmma_tma.cu). The consumer warpgroups write their slab of C into
swizzled staging boxes with stmatrix and hand them to the TMA unit, then go on to the next tile's MMAs,
where the staged epilogue (EPI 1) makes every warp read its rows back and store them itself.

Verifies each variant (staging boxes x ring depth) at square, ragged and extreme shapes (NaN-poisoned
output, float64 reference, the op's tolerance; twice), then times it paired with the declared h6 tile
(the same kernel with the staged epilogue) and with torch.mm.

    python3 benchmarks/gpu/experiments/h6_tma_store.py --out $OUT/h6-tma.jsonl [--rounds 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

CHECK = "1x1x1,17x33x9,1000x1200x808,4095x4097x4093,128x4096x1024,4096x128x1024,300x520x296,3072,8192"
PAIRS = {4096: 200, 8192: 40}
VARIANTS = {"2 boxes, 4 stages": (2, 4), "4 boxes, 3 stages": (4, 3)}  # H6_TMA_BOXES, H6_TMA_STAGES


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", default="4096,8192,3072,5120")
    ap.add_argument("--check", default=CHECK)
    args = ap.parse_args()
    from nsprof.launch.measure import paired_medians, verify
    from nsprof.launch.tools import launch_tools
    from nsprof.launch.torch_baseline import torch_launch
    from nsprof.registry import get_op, get_stage
    from nsprof.sizes import parse_sizes, size_label

    tools, op, h6 = launch_tools(), get_op("hgemm"), get_stage("hgemm", "h6")
    declared = next(t for t in h6.tiles if t.entry == "hgemm_h6_sk_128x256")

    def out(rec):
        with open(args.out, "a") as sink:
            sink.write(json.dumps(rec) + "\n")
        print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()), flush=True)

    def variant(boxes: int, stages: int):
        smem = 1024 + stages * 49152 + 2 * boxes * 8192 + 256
        tile = dataclasses.replace(declared, entry="hgemm_h6_sk_tma_128x256", dynamic_smem_bytes=smem, tma_store=True)
        return dataclasses.replace(h6, tiles=(tile,)), (f"H6_TMA_BOXES={boxes}", f"H6_TMA_STAGES={stages}")

    passed = dict.fromkeys(VARIANTS, True)
    for size in parse_sizes([args.check], op.dims):
        for name, (boxes, stages) in VARIANTS.items():
            stage, defines = variant(boxes, stages)
            problem = op.workload.problem(tools.xp, size, seed=sum(size))
            try:
                launcher = op.workload.launcher(stage, problem, tools, defines=defines)
                errors = [verify(launcher, problem) for _ in range(2)]
            except Exception as exc:  # a build or launch error ends this variant
                out({"phase": "verify", "variant": name, "size": size_label(size), "message": f"{type(exc).__name__}: {exc}"[:400]})
                passed[name] = False
                continue
            ok = max(errors) <= h6.tolerance(size)
            passed[name] &= ok
            out({"phase": "verify", "variant": name, "size": size_label(size), "tile": launcher.tile_label,
                 "rel_error": max(errors), "tolerance": h6.tolerance(size), "ok": ok})

    for size in parse_sizes([args.sizes], op.dims):
        problem = op.workload.problem(tools.xp, size)
        mm = torch_launch(op.workload.library_call(get_stage("hgemm", "h7"), problem), "fp16")
        base = op.workload.launcher(h6, problem, tools)
        pairs = PAIRS.get(size[0], 100)
        for name, (boxes, stages) in VARIANTS.items():
            if not passed[name]:
                continue
            stage, defines = variant(boxes, stages)
            launcher = op.workload.launcher(stage, problem, tools, defines=defines)
            if not verify(launcher, problem) <= h6.tolerance(size):
                out({"phase": "verify", "variant": name, "size": size_label(size), "ok": False})
                continue
            for round_ in range(1, args.rounds + 1):
                ms, base_ms = paired_medians(launcher.run, base.run, pairs)
                ms2, torch_ms = paired_medians(launcher.run, mm, pairs)
                base2_ms, torch2_ms = paired_medians(base.run, mm, pairs)
                out({"phase": "paired", "variant": name, "size": size_label(size), "round": round_,
                     "tile": launcher.tile_label, "ms": ms, "declared_ms": base_ms, "over_declared": base_ms / ms,
                     "ratio_torch": torch_ms / ms2, "declared_ratio_torch": torch2_ms / base2_ms,
                     "tflops": op.flops(size) / ms / 1e9})


if __name__ == "__main__":
    main()
