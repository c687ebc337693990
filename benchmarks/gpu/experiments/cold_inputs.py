"""Does h6's paired reading hold when no launch finds its inputs in L2? `nsprof bench` alternates h6 and the
library on one problem's buffers, so each launch starts on what the other left in L2 (at 128 x 4096 x 14336,
A and about 40% of the 117 MB B). Here, per size, h6's plan is paired (paired_medians, both orders) with
torch.mm and with the library stage's kept cuBLASLt candidate twice: on one set of buffers ("warm", as the
bench) and rotating among enough sets that each launch's were last touched 3 L2s of traffic ago ("cold":
every launch moves to the next set before it starts, outside nothing: the host is held ahead). One JSON line
a size (appended to --out): the sets, and per partner and mode h6's % of the partner's speed in each order.

    python3 benchmarks/gpu/experiments/cold_inputs.py --sizes 128x4096x14336 --out $OUT/cold-inputs.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))


def rotating(run, problem, turn):
    """`run`, each call first pointing the problem at the next set ((A, B, C)) of `turn`, a cycle the launches
    paired with it share: each launch moves on from the set the one before it ran on."""
    def launch():
        problem.A, problem.B, problem.C = next(turn)
        run()
    return launch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--out")
    args = ap.parse_args()
    from benchmarks.gpu.experiments.h6_plans import emit, h6_and_library
    from nsprof.ladder.registry import get_op, get_stage
    from nsprof.ladder_runs.torch_baseline import torch_launch
    from nsprof.launch.measure import paired_medians
    from nsprof.launch.tools import launch_tools
    from nsprof.sizes import parse_sizes, size_label

    tools, op = launch_tools(), get_op("hgemm")
    l2 = tools.xp.cuda.Device().attributes["L2CacheSize"]
    h7 = get_stage("hgemm", "h7")
    for size in parse_sizes([args.sizes], op.dims):
        problem = op.workload.problem(tools.xp, size)
        ours, kept = h6_and_library(tools, problem, size)
        partners = {"torch.mm": torch_launch(op.workload.library_call(h7, problem), "fp16"),
                    f"cuBLAS {kept.tile_label}": kept.run}
        m, n, k = size
        footprint = 2 * (m * k + k * n + m * n)
        count = 1 + math.ceil(3 * l2 / footprint)
        sets = [(problem.A, problem.B, problem.C)]
        for seed in range(1, count):
            other = op.workload.problem(tools.xp, size, seed=seed)
            sets.append((other.A, other.B, other.C))
        row: dict = {"size": size_label(size), "h6": ours.tile_label, "l2_bytes": l2, "sets": count, "pct": {}}
        for mode, chosen in (("warm", sets[:1]), ("cold", sets)):
            for name, partner in partners.items():
                turn = itertools.cycle(chosen)
                h6_first = paired_medians(rotating(ours.run, problem, turn), rotating(partner, problem, turn))
                turn = itertools.cycle(chosen)
                partner_first = paired_medians(rotating(partner, problem, turn), rotating(ours.run, problem, turn))
                row["pct"][f"{mode} {name}"] = [100 * h6_first[1] / h6_first[0], 100 * partner_first[0] / partner_first[1]]
        problem.A, problem.B, problem.C = sets[0]
        del sets
        emit(row, args.out)
        tools.xp.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
