"""Issue 33's HGEMM gap at 4096^3: h6 storing C by TMA (hgemm_h6_tma_128x256 and its stream-K form, EPI 2; see
store_slab_tma in kernels/hgemm/h6_wgmma_tma.cu). The consumer warpgroups write their slab of C into
swizzled staging boxes with stmatrix and hand them to the TMA unit, then go on to the next tile's MMAs,
where the staged epilogue (EPI 1) makes every warp read its rows back and store them itself.

Each variant (staging boxes x ring depth) is h6 as declared, whose two 128x256 tiles (stream-K, and the
plain one the launcher runs where nothing is shared) store C by TMA. Verifies it at square, ragged and
extreme shapes (NaN-poisoned output, float64 reference, the op's tolerance; twice), then times it paired
with the same tiles on the staged epilogue (their declared form until this experiment; the JSON still calls
it "declared") and with torch.mm.

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
STAGED = {"hgemm_h6_sk_tma_128x256": "hgemm_h6_sk_128x256", "hgemm_h6_tma_128x256": "hgemm_h6_128x256"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", default="4096,8192,3072,5120")
    ap.add_argument("--check", default=CHECK)
    ap.add_argument("--variants", default=";".join(VARIANTS), help="which, separated by ;: " + "; ".join(VARIANTS))
    args = ap.parse_args()
    from nsprof.ladder.registry import get_op, get_stage
    from nsprof.ladder_runs.torch_baseline import torch_launch
    from nsprof.launch.measure import paired_medians, verify
    from nsprof.launch.tools import launch_tools
    from nsprof.sizes import parse_sizes, size_label

    tools, op, h6 = launch_tools(), get_op("hgemm"), get_stage("hgemm", "h6")
    variants = {name: VARIANTS[name] for name in args.variants.split(";")}

    def out(rec):
        with open(args.out, "a") as sink:
            sink.write(json.dumps(rec) + "\n")
        print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()), flush=True)

    def variant(boxes: int, stages: int):
        """h6 as declared (its two 128x256 tiles, stream-K and plain, store C by TMA), at this staging and ring."""
        smem = 1024 + stages * 49152 + 2 * boxes * 8192 + 256
        tiles = tuple(dataclasses.replace(t, dynamic_smem_bytes=smem) if t.entry in STAGED else t for t in h6.tiles)
        return dataclasses.replace(h6, tiles=tiles), (f"H6_TMA_BOXES={boxes}", f"H6_TMA_STAGES={stages}")

    # the same tiles with the staged epilogue (each warp reads its rows back and stores them itself)
    staged = dataclasses.replace(h6, tiles=tuple(
        dataclasses.replace(t, entry=STAGED[t.entry], tma_store=False, dynamic_smem_bytes=214272)
        if t.entry in STAGED else t for t in h6.tiles))

    passed = dict.fromkeys(variants, True)
    for size in parse_sizes([args.check], op.dims):
        for name, (boxes, stages) in variants.items():
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
                 "entry": launcher.entry, "rel_error": max(errors), "tolerance": h6.tolerance(size), "ok": ok})

    for size in parse_sizes([args.sizes], op.dims):
        problem = op.workload.problem(tools.xp, size)
        mm = torch_launch(op.workload.library_call(get_stage("hgemm", "h7"), problem), "fp16")
        base = op.workload.launcher(staged, problem, tools)
        pairs = PAIRS.get(size[0], 100)
        for name, (boxes, stages) in variants.items():
            if not passed[name]:
                continue
            stage, defines = variant(boxes, stages)
            launcher = op.workload.launcher(stage, problem, tools, defines=defines)
            if not verify(launcher, problem) <= h6.tolerance(size):
                out({"phase": "verify", "variant": name, "size": size_label(size), "ok": False})
                continue
            for round_ in range(1, args.rounds + 1):
                ms, base_ms = paired_medians(launcher.run, base.run, pairs)  # base: the staged epilogue
                ms2, torch_ms = paired_medians(launcher.run, mm, pairs)
                base2_ms, torch2_ms = paired_medians(base.run, mm, pairs)
                out({"phase": "paired", "variant": name, "size": size_label(size), "round": round_,
                     "tile": launcher.tile_label, "entry": launcher.entry, "declared_entry": base.entry, "ms": ms, "declared_ms": base_ms, "over_declared": base_ms / ms,
                     "ratio_torch": torch_ms / ms2, "declared_ratio_torch": torch2_ms / base2_ms,
                     "tflops": op.flops(size) / ms / 1e9})


if __name__ == "__main__":
    main()
