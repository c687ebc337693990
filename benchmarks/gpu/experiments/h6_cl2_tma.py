"""Issue 33's HGEMM gap at 4096^3: h6 in clusters of two blocks (B's tile multicast to both, so each
block fetches half of it) with C stored by TMA (hgemm_h6_cl2_tma_256x256). With the staged epilogue the
cluster was no faster (benchmarks/records/2026-11-26-h100-paired-library/h100-paired-library.md); the TMA stores freed the MMAs of part of the
epilogue, which may leave L2 traffic the thing that limits.

Verifies the entry at square, ragged and extreme shapes (NaN-poisoned output, float64 reference, twice),
then pairs it with h6 as declared (its 128x256 TMA-store tile) and each with torch.mm, in rounds.

    python3 benchmarks/gpu/experiments/h6_cl2_tma.py --out $OUT/h6-cl2-tma.jsonl [--rounds 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

CHECK = "1x1x1,17x33x9,1000x1200x808,4095x4097x4093,128x4096x1024,4096x128x1024,3072,8192"
PAIRS = {4096: 200, 8192: 40}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", default="4096,8192")
    args = ap.parse_args()
    from nsprof.ladder.registry import get_op, get_stage
    from nsprof.ladder_runs.torch_baseline import torch_launch
    from nsprof.launch.measure import paired_medians, verify
    from nsprof.launch.tools import launch_tools
    from nsprof.sizes import parse_sizes, size_label

    tools, op, h6 = launch_tools(), get_op("hgemm"), get_stage("hgemm", "h6")
    plain = next(t for t in h6.tiles if t.entry == "hgemm_h6_tma_128x256")
    declared = dataclasses.replace(h6, tiles=(plain,))
    cluster = dataclasses.replace(h6, tiles=(dataclasses.replace(plain, entry="hgemm_h6_cl2_tma_256x256", bm=256),))

    def out(rec):
        with open(args.out, "a") as sink:
            sink.write(json.dumps(rec) + "\n")
        print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()), flush=True)

    ok = True
    for size in parse_sizes([CHECK], op.dims):
        problem = op.workload.problem(tools.xp, size, seed=sum(size))
        try:
            launcher = op.workload.launcher(cluster, problem, tools)
            error = max(verify(launcher, problem) for _ in range(2))
        except Exception as exc:  # a build or launch error ends the experiment
            out({"phase": "verify", "size": size_label(size), "message": f"{type(exc).__name__}: {exc}"[:400]})
            return
        ok &= error <= h6.tolerance(size)
        out({"phase": "verify", "size": size_label(size), "entry": launcher.entry, "rel_error": error,
             "tolerance": h6.tolerance(size), "ok": error <= h6.tolerance(size)})
    if not ok:
        return
    for size in parse_sizes([args.sizes], op.dims):
        problem = op.workload.problem(tools.xp, size)
        mm = torch_launch(op.workload.library_call(get_stage("hgemm", "h7"), problem), "fp16")
        ours, base = op.workload.launcher(cluster, problem, tools), op.workload.launcher(declared, problem, tools)
        pairs = PAIRS.get(size[0], 100)
        for round_ in range(1, args.rounds + 1):
            ms, base_ms = paired_medians(ours.run, base.run, pairs)
            ms2, torch_ms = paired_medians(ours.run, mm, pairs)
            base2_ms, torch2_ms = paired_medians(base.run, mm, pairs)
            out({"phase": "paired", "size": size_label(size), "round": round_, "ms": ms, "declared_ms": base_ms,
                 "over_declared": base_ms / ms, "ratio_torch": torch_ms / ms2, "declared_ratio_torch": torch2_ms / base2_ms,
                 "tflops": op.flops(size) / ms / 1e9})


if __name__ == "__main__":
    main()
