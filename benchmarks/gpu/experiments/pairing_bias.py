"""Does the way two kernels take turns move their ratio? h6 against the library's kept candidate at each size,
timed with CUDA events after warm-up, in four schedules on one card in one process:

- paired: launches alternate ABAB (nsprof bench's method, nsprof.launch.measure.paired_medians), h6 first
  and library first;
- controls: each kernel paired with itself (the ratio must read 100%);
- blocks: 40 launches of one, then 40 of the other, eight times (the first 10 of each block left out);
- phases: each alone, launch after launch, for --seconds, twice in turn (the power controller settles on each).

    python3 benchmarks/gpu/experiments/pairing_bias.py --sizes 4096,2048x14336x4096 --out $OUT/pairing.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--out")
    args = ap.parse_args()
    import cupy
    import numpy as np

    from nsprof.ladder.registry import get_op, get_stage
    from nsprof.ladder_runs.stage_launch import stage_launcher
    from nsprof.launch.measure import paired_medians
    from nsprof.launch.tools import launch_tools
    from nsprof.sizes import parse_sizes, size_label

    tools, op = launch_tools(), get_op("hgemm")
    h6, library = get_stage("hgemm", "h6"), get_stage("hgemm", "h7")

    def timed(run, count):
        events = [(cupy.cuda.Event(), cupy.cuda.Event()) for _ in range(count)]
        for start, end in events:
            start.record()
            run()
            end.record()
        events[-1][1].synchronize()
        return [cupy.cuda.get_elapsed_time(start, end) for start, end in events]

    def blocks(a, b):
        times_a, times_b = [], []
        for _ in range(8):
            times_a += timed(a, 40)[10:]
            times_b += timed(b, 40)[10:]
        return float(np.median(times_a)), float(np.median(times_b))

    def phases(a, b):
        medians: dict[str, list[float]] = {"a": [], "b": []}
        for key, run in (("a", a), ("b", b), ("a", a), ("b", b)):
            t0, times = time.time(), []
            while time.time() - t0 < args.seconds:
                times += timed(run, 50)
            medians[key].append(float(np.median(times[len(times) // 4:])))  # past the first quarter
        return float(np.median(medians["a"])), float(np.median(medians["b"]))

    def schedules(a, b) -> dict:
        return {
            "paired, h6 first": lambda: paired_medians(a, b),
            "paired, library first": lambda: paired_medians(b, a)[::-1],
            "control: h6 with itself": lambda: paired_medians(a, a),
            "control: library with itself": lambda: paired_medians(b, b),
            "blocks of 40": lambda: blocks(a, b),
            f"phases of {args.seconds:g} s": lambda: phases(a, b),
        }

    for size in parse_sizes([args.sizes], op.dims):
        problem = op.workload.problem(tools.xp, size)
        ours, theirs = stage_launcher(h6, problem, tools), stage_launcher(library, problem, tools)
        for name, schedule in schedules(ours.run, theirs.run).items():
            for attempt in (1, 2):
                a_ms, b_ms = schedule()
                row = {"size": size_label(size), "schedule": name, "attempt": attempt, "h6": ours.tile_label,
                       "library": theirs.tile_label, "a_ms": a_ms, "b_ms": b_ms, "pct": 100 * b_ms / a_ms}
                print(json.dumps(row), flush=True)
                if args.out:
                    with open(args.out, "a") as sink:
                        sink.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
