"""Issue 33's HGEMM question on the card at hand: h6's launch configurations and tuning variants
against torch.mm at 4096^3 and 8192^3, in interleaved rounds (each round times every variant and
torch.mm back to back, so a clock or power change hits all of them alike), each verified first.

    python3 benchmarks/gpu/experiments/hgemm_vs_torch.py --out $OUT/hgemm-vs-torch.jsonl [--rounds 3]

One JSON line per (round, size, variant): median ms, spread, TFLOP/s, and the ratio to torch.mm's
median of the same round. With --paired, each variant's launches alternate one by one with
torch.mm's (ABAB, each launch between its own CUDA events), so that a clock that moves under the
power limit moves both alike: the ratio is torch.mm's median over the variant's, of the same pairs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/gpu (hgemm_dev)

GROUPS = ("H6_GROUP_ROWS=512", "H6_GROUP_ROWS=1024", "H6_GROUP_ROWS=4096")


def variants():
    import dataclasses

    from hgemm_dev import variants_of

    from nsprof.ladder.registry import get_stage

    h6 = get_stage("hgemm", "h6")
    own = {tile.shape: dataclasses.replace(h6, tiles=(tile,)) for tile in h6.tiles if tile.persistent}
    found = [(f"h6 {shape}", stage, ()) for shape, stage in own.items()]
    found += [(f"h6 128x256 {d.split('=')[0][3:].lower()}={d.split('=')[1]}", own["128x256"], (d,))
              for d in (*GROUPS, "H6_EPI=0")]
    declared = ("epi1", "s6")  # the JSON's variants that the declared tiles already are
    for path in ("benchmarks/experiments/2026-11-22-h200-hgemm-variants/h6b.json",):  # h6.json's cl2 entry predates the staged epilogue's 16 KB
        for stage, tile, defines, label in variants_of("h6", path):
            if len(stage.tiles) == 1 and tile.persistent and "debug" not in tile.entry \
                    and not (tile.entry in ("hgemm_h6_128x256", "hgemm_h6_128x128") and label.endswith(declared)):
                found.append((label, stage, defines))
                if tile.entry == "hgemm_h6_cl2_256x256":  # the cluster's own tile order
                    found += [(f"{label} {d.split('=')[0][3:].lower()}={d.split('=')[1]}", stage, (*defines, d))
                              for d in GROUPS]
    # persistent grids of fewer blocks than SMs: the same rounds of tiles (512 = 4 x 128 at 4096^3, 2048 =
    # 16 x 128 at 8192^3), with 4 SMs idle instead of 16 idle in the last round (power under the limit)
    found += [(f"h6 128x256 grid={blocks}", own["128x256"], ("GRID", blocks)) for blocks in (128, 120)]
    return found


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", default="4096,8192")
    ap.add_argument("--paired", action="store_true", help="alternate each launch with torch.mm's (ABAB)")
    ap.add_argument("--only", default="", help="a regular expression: only the variants it finds (torch.mm always)")
    args = ap.parse_args()
    from nsprof.ladder.registry import get_op, get_stage
    from nsprof.ladder_runs.torch_baseline import torch_launch
    from nsprof.launch.measure import paired_medians, time_launches, verify
    from nsprof.launch.tools import launch_tools
    from nsprof.sizes import parse_sizes, size_label

    op, tools = get_op("hgemm"), launch_tools()
    def out(rec):
        with open(args.out, "a") as sink:
            sink.write(json.dumps(rec) + "\n")
        print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()), flush=True)

    import dataclasses
    import re

    chosen = [v for v in variants() if re.search(args.only, v[0])]
    for size in parse_sizes([args.sizes], op.dims):
        problem = op.workload.problem(tools.xp, size)
        launchers = {}
        for label, stage, defines in chosen:
            try:
                lent = tools
                if defines[:1] == ("GRID",):  # not a -D knob: the persistent grid's size, through the SM count
                    lent, defines = dataclasses.replace(tools, sm_count=defines[1]), ()
                launcher = op.workload.launcher(stage, problem, lent, tile_shape=stage.tiles[0].shape, defines=defines)
                error = verify(launcher, problem)
                ok = error <= stage.tolerance(size)
                out({"phase": "verify", "size": size_label(size), "variant": label, "rel_error": error, "ok": ok})
                if ok:
                    launchers[label] = launcher
            except Exception as exc:  # a variant that does not build or launch: recorded, skipped
                out({"phase": "verify", "size": size_label(size), "variant": label, "ok": False,
                     "message": f"{type(exc).__name__}: {str(exc)[:300]}"})
        mm = torch_launch(op.workload.library_call(get_stage("hgemm", "h7"), problem), "fp16")
        problem.poison_output()
        mm()
        out({"phase": "verify", "size": size_label(size), "variant": "torch.mm", "rel_error": problem.relative_error(), "ok": True})
        repeat = 60 if size[0] <= 4096 else 12
        if args.paired:
            for round_ in range(1, args.rounds + 1):
                for label, launcher in launchers.items():
                    ours, theirs = paired_medians(launcher.run, mm, 5 * repeat)
                    out({"phase": "paired", "round": round_, "size": size_label(size), "variant": label,
                         "median_ms": ours, "torch_ms": theirs, "tflops": op.flops(size) / ours / 1e9,
                         "ratio": theirs / ours})
            continue
        for round_ in range(1, args.rounds + 1):
            torch_ms = time_launches(mm, repeat=repeat).median_ms
            out({"phase": "time", "round": round_, "size": size_label(size), "variant": "torch.mm", "median_ms": torch_ms,
                 "tflops": op.flops(size) / torch_ms / 1e9, "ratio": 1.0})
            for label, launcher in launchers.items():
                timing = time_launches(launcher.run, repeat=repeat).summary()
                out({"phase": "time", "round": round_, "size": size_label(size), "variant": label,
                     "median_ms": timing["median_ms"], "spread_pct": timing["spread_pct"],
                     "tflops": op.flops(size) / timing["median_ms"] / 1e9, "ratio": torch_ms / timing["median_ms"]})
        launchers.clear()
        tools.xp.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
