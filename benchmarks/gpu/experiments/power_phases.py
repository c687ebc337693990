"""Does h6 draw more power per FLOP than the library's kernel? Each of h6 and the library's kept candidate runs
alone, launch after launch, for a few seconds at a time (h6, library, h6, library), while nvidia-smi samples the
card's power draw and SM clock every 20 ms. At the power limit the clock each settles at says which one costs
more energy per cycle; launches per second say how fast each ran there.

    python3 benchmarks/gpu/experiments/power_phases.py --sizes 2048x14336x4096,4096 --seconds 2.5 --out $OUT/power.jsonl
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--seconds", type=float, default=2.5)
    ap.add_argument("--out")
    args = ap.parse_args()
    import cupy
    import numpy as np

    from nsprof.ladder.registry import get_op, get_stage
    from nsprof.ladder_runs.stage_launch import stage_launcher
    from nsprof.launch.tools import launch_tools
    from nsprof.sizes import parse_sizes, size_label

    tools, op = launch_tools(), get_op("hgemm")
    h6, library = get_stage("hgemm", "h6"), get_stage("hgemm", "h7")
    sampler = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,power.draw,clocks.sm", "--format=csv,noheader,nounits",
                                "-lms", "20"], stdout=subprocess.PIPE, text=True)
    phases = []
    for size in parse_sizes([args.sizes], op.dims):
        problem = op.workload.problem(tools.xp, size)
        runs = {"h6": stage_launcher(h6, problem, tools), "library": stage_launcher(library, problem, tools)}
        for name in ("h6", "library", "h6", "library"):
            run = runs[name].run
            for _ in range(20):
                run()
            cupy.cuda.Device().synchronize()
            t0, launches = time.time(), 0
            while time.time() - t0 < args.seconds:
                for _ in range(50):
                    run()
                launches += 50
                cupy.cuda.Device().synchronize()
            phases.append({"size": size_label(size), "kernel": name, "label": runs[name].tile_label, "t0": t0,
                           "t1": time.time(), "launches": launches, "flops": op.flops(size)})
    sampler.terminate()
    samples = []
    for line in sampler.communicate()[0].splitlines():
        stamp, watts, mhz = (part.strip() for part in line.split(","))
        when = time.mktime(time.strptime(stamp.split(".")[0], "%Y/%m/%d %H:%M:%S")) + float("0." + stamp.split(".")[1])
        samples.append((when, float(watts), float(mhz)))
    for phase in phases:
        inside = [(w, c) for t, w, c in samples if phase["t0"] + 0.5 <= t <= phase["t1"]]  # past the first half second
        seconds = phase["t1"] - phase["t0"]
        phase.update(samples=len(inside), watts=float(np.median([w for w, _ in inside])) if inside else None,
                     mhz=float(np.median([c for _, c in inside])) if inside else None,
                     tflops=phase["flops"] * phase["launches"] / seconds / 1e12)
        print(json.dumps(phase), flush=True)
        if args.out:
            with open(args.out, "a") as sink:
                sink.write(json.dumps(phase) + "\n")


if __name__ == "__main__":
    main()
