"""Does a kernel's paired reading depend on its partner? `nsprof bench` pairs h6 with the faster of torch.mm and
the library stage's kept cuBLASLt candidate, that one chosen by pairing the two libraries. Here, per size, h6's
plan, torch.mm and the kept candidate are each timed alone (the host held ahead, as the bench times), then every
ordered pair of them in turn (paired_medians), over --rounds rounds. Prints one JSON line a size (appended to
--out): the medians alone (us) and, per pair, both medians and the first's % of the second's speed. --cold: every
launch on the next of the sets of buffers nsprof bench rotates among.

    python3 benchmarks/gpu/experiments/pair_partners.py --sizes 128x4096x14336 --out $OUT/pair-partners.jsonl
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out")
    ap.add_argument("--separate", action="store_true",
                    help="h6 on buffers of its own (default: all three share them; in nsprof bench torch.mm keeps "
                         "the arrays it was made on while a stage's refresh makes new ones)")
    ap.add_argument("--cold", action="store_true",
                    help="every launch on the next of the sets of buffers nsprof bench rotates among (with all three "
                         "on one problem's buffers)")
    args = ap.parse_args()
    if args.cold and args.separate:
        ap.error("--cold rotates the one problem all three share: leave out --separate")
    from benchmarks.gpu.experiments.h6_plans import emit, h6_and_library
    from nsprof.ladder.registry import get_op, get_stage
    from nsprof.ladder_runs.torch_baseline import torch_launch
    from nsprof.launch.measure import paired_medians, time_launches
    from nsprof.launch.rotation import rotating_inputs
    from nsprof.launch.tools import launch_tools
    from nsprof.sizes import parse_sizes, size_label

    tools, op = launch_tools(), get_op("hgemm")
    h7 = get_stage("hgemm", "h7")
    for size in parse_sizes([args.sizes], op.dims):
        problem = op.workload.problem(tools.xp, size)
        own = op.workload.problem(tools.xp, size, seed=1) if args.separate else problem
        ours, kept = h6_and_library(tools, problem, size, own)
        runs = {"h6": ours.run, "torch.mm": torch_launch(op.workload.library_call(h7, problem), "fp16"),
                f"cuBLAS {kept.tile_label}": kept.run}
        row: dict = {"size": size_label(size), "h6": ours.tile_label, "separate": args.separate, "cold": args.cold,
                     "alone_us": {}, "pairs": []}
        with rotating_inputs(problem) if args.cold else contextlib.nullcontext():
            for _ in range(args.rounds):
                for name, run in runs.items():
                    row["alone_us"].setdefault(name, []).append(time_launches(run).median_ms * 1e3)
                for first, second in itertools.permutations(runs, 2):
                    a, b = paired_medians(runs[first], runs[second])
                    row["pairs"].append({"first": first, "second": second, "us": [a * 1e3, b * 1e3],
                                         "pct": 100 * b / a})
        emit(row, args.out)


if __name__ == "__main__":
    main()
