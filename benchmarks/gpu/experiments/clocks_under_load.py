"""Is a stage slower alone than in turn with the library because of its own power draw? Runs h6 and
torch.mm at 4096^3, each alone for a few seconds of back-to-back launches, then alternating, while
nvidia-smi samples the SM clock and the power draw every 50 ms; prints each phase's median clock,
power and per-launch times.

    python3 benchmarks/gpu/experiments/clocks_under_load.py --out $OUT/clocks.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

PHASE_S = 3.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", default="4096")
    args = ap.parse_args()
    import cupy as cp
    import numpy as np

    from nsprof.launch.measure import verify
    from nsprof.launch.tools import launch_tools
    from nsprof.launch.torch_baseline import torch_launch
    from nsprof.registry import get_op, get_stage
    from nsprof.sizes import parse_sizes

    tools, op = launch_tools(), get_op("hgemm")
    size = parse_sizes([args.size], op.dims)[0]
    problem = op.workload.problem(tools.xp, size)
    h6 = op.workload.launcher(get_stage("hgemm", "h6"), problem, tools)
    assert verify(h6, problem) <= get_stage("hgemm", "h6").tolerance(size)
    mm = torch_launch(op.workload.library_call(get_stage("hgemm", "h7"), problem), "fp16")
    sampler = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw", "--format=csv,noheader,nounits",
                                "-lms", "50"], stdout=subprocess.PIPE, text=True)
    phases = []

    def run(name, launches):
        events = []
        start = time.time()
        while time.time() - start < PHASE_S:  # chunks of 100 launches queued ahead, one wait per chunk
            chunk = []
            for _ in range(100 // len(launches)):
                for launch in launches:
                    a, b = cp.cuda.Event(), cp.cuda.Event()
                    a.record()
                    launch()
                    b.record()
                    chunk.append((launch is h6.run, a, b))
            if events:
                events[-1][2].synchronize()  # the previous chunk: this one is queued behind it, the GPU never idles
            events += chunk
        events[-1][2].synchronize()
        end = time.time()
        times = {"h6": [cp.cuda.get_elapsed_time(a, b) for ours, a, b in events if ours],
                 "torch.mm": [cp.cuda.get_elapsed_time(a, b) for ours, a, b in events if not ours]}
        phases.append({"phase": name, "start": start, "end": end,
                       **{f"{k}_median_ms": float(np.median(v)) for k, v in times.items() if v}})
        time.sleep(1.0)  # the clock settles between phases

    time.sleep(1.0)
    for _ in range(2):
        run("h6 alone", [h6.run])
        run("torch.mm alone", [mm])
        run("in turn", [h6.run, mm])
    sampler.terminate()
    samples = []
    for line in sampler.stdout.read().splitlines():
        parts = [p.strip() for p in line.split(",")]
        try:
            stamp = time.mktime(time.strptime(parts[0].split(".")[0], "%Y/%m/%d %H:%M:%S")) + float("0." + parts[0].split(".")[1])
            samples.append((stamp, float(parts[1]), float(parts[2])))
        except (ValueError, IndexError):
            continue
    offset = 0.0  # nvidia-smi prints local time; the machine runs in UTC like time.time()
    for phase in phases:
        inside = [(c, p) for t, c, p in samples if phase["start"] + 0.3 <= t + offset <= phase["end"]]
        phase["sm_clock_mhz"] = float(np.median([c for c, _ in inside])) if inside else None
        phase["power_w"] = float(np.median([p for _, p in inside])) if inside else None
        phase["samples"] = len(inside)
        print(phase, flush=True)
    Path(args.out).write_text(json.dumps({"size": args.size, "phases": phases, "samples": samples}, indent=1))


if __name__ == "__main__":
    main()
