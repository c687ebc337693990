"""Issue 33's HGEMM gap at 4096^3: h6 with a stream-K tail (hgemm_h6_sk_tma_128x256; see its header in
kernels/hgemm/h6_wgmma_tma.cu). 512 tiles of 128x256 fill 3.88 waves of 132 blocks, so the last wave
leaves 16 SMs idle; the stream-K entry can share the last 116 tiles' k steps out over all 132 blocks.

Verifies the entry at square, ragged and extreme shapes (NaN-poisoned output, float64 reference, the
op's tolerance; twice, as a counter left raised would break the next launch), then times it as the
launcher plans it (the last wave shared only when at most 0.6 full) paired with torch.mm and with the
plain 128x256 entry (same kernel body, no sharing), and alone (each in its own burst, as the clock
falls at the power limit); with --every-tail, also with the last wave shared at any fill.

    python3 benchmarks/gpu/experiments/h6_stream_k.py --out $OUT/h6-sk.jsonl [--rounds 3] [--every-tail]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

CHECK = "1x1x1,17x33x9,1000x1200x808,4095x4097x4093,128x4096x1024,4096x128x1024,2048x4096x264,3072,5120,8192"
PAIRS = {4096: 200, 8192: 40}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", default="4096,8192,3072,6144")
    ap.add_argument("--check", default=CHECK)
    ap.add_argument("--every-tail", action="store_true", help="also time it with the last wave shared at any fill")
    args = ap.parse_args()
    from nsprof.ladder.ops.launch_plan import stream_k_tail
    from nsprof.ladder.registry import get_op, get_stage
    from nsprof.ladder_runs.torch_baseline import torch_launch
    from nsprof.launch.measure import paired_medians, time_launches, verify
    from nsprof.launch.tools import launch_tools
    from nsprof.sizes import parse_sizes, size_label

    tools, op, h6 = launch_tools(), get_op("hgemm"), get_stage("hgemm", "h6")

    def out(rec):
        with open(args.out, "a") as sink:
            sink.write(json.dumps(rec) + "\n")
        print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()), flush=True)

    def launchers(problem):
        """The stream-K entry with its own tail, and the plain entry (the declared tile after it)."""
        sk = op.workload.launcher(h6, problem, tools, tile_shape="128x256")
        plain_tile = next(t for t in h6.tiles if t.shape == "128x256" and not t.stream_k)
        plain = op.workload.launcher(dataclasses.replace(h6, tiles=(plain_tile,)), problem, tools)
        return sk, plain

    for size in parse_sizes([args.check], op.dims):
        problem = op.workload.problem(tools.xp, size, seed=sum(size))
        sk, _ = launchers(problem)
        errors = [verify(sk, problem) for _ in range(2)]  # twice: a flag left raised breaks the next launch
        out({"phase": "verify", "size": size_label(size), "tile": sk.tile_label, "entry": sk.entry,
             "rel_error": max(errors), "tolerance": h6.tolerance(size), "ok": max(errors) <= h6.tolerance(size)})

    for size in parse_sizes([args.sizes], op.dims):
        problem = op.workload.problem(tools.xp, size)
        mm = torch_launch(op.workload.library_call(get_stage("hgemm", "h7"), problem), "fp16")
        sk, plain = launchers(problem)
        if not verify(sk, problem) <= h6.tolerance(size) or not verify(plain, problem) <= h6.tolerance(size):
            out({"phase": "verify", "size": size_label(size), "ok": False})
            continue
        pairs = PAIRS.get(size[0], 100)
        if args.every_tail:  # the last wave shared whatever its fill (the tile shares it only up to 0.6 full)
            tiles = -(-size[0] // 128) * -(-size[1] // 256)
            every = op.workload.launcher(h6, problem, tools, tile_shape="128x256", split_k=1,
                                         tail=stream_k_tail(tiles, tools.sm_count))
            for round_ in range(1, args.rounds + 1):
                ms, plain_ms = paired_medians(every.run, plain.run, pairs)
                out({"phase": "every tail", "size": size_label(size), "round": round_, "tile": every.tile_label,
                     "ms": ms, "plain_ms": plain_ms, "over_plain": plain_ms / ms})
        for round_ in range(1, args.rounds + 1):
            sk_ms, torch_ms = paired_medians(sk.run, mm, pairs)
            plain_ms, torch2_ms = paired_medians(plain.run, mm, pairs)
            sk2_ms, plain2_ms = paired_medians(sk.run, plain.run, pairs)
            out({"phase": "paired", "size": size_label(size), "round": round_, "tile": sk.tile_label,
                 "sk_ms": sk_ms, "torch_ms": torch_ms, "ratio_torch": torch_ms / sk_ms,
                 "plain_ms": plain_ms, "plain_ratio_torch": torch2_ms / plain_ms,
                 "sk_over_plain": plain2_ms / sk2_ms, "tflops": op.flops(size) / sk_ms / 1e9})
        for round_ in range(1, args.rounds + 1):  # alone: each its own burst, at whatever clock it gets
            alone = {name: time_launches(launch).median_ms for name, launch in
                     (("sk", sk.run), ("torch", mm), ("plain", plain.run))}
            out({"phase": "alone", "size": size_label(size), "round": round_, **{f"{k}_ms": v for k, v in alone.items()},
                 "ratio_torch": alone["torch"] / alone["sk"], "plain_ratio_torch": alone["torch"] / alone["plain"]})


if __name__ == "__main__":
    main()
