"""Issue 22 probe (GPU): where v8 loses to cuBLAS FP32 at 8192^3.

Two questions, one run:
- Is it the last wave? 8192^3 has 4096 tiles of 128x128 for 264 block slots (132 SMs x 2), 15.5
  waves. At 7680x8448x8192 (3960 tiles, 15 waves exactly) and 4096x4224x4096 (4 waves) the tail
  is gone: if v8 matches cuBLAS there, the tail is the gap. v8 with its last tiles shared out by
  k steps (stream-K: the last wave's) is timed beside it, with each of its large tiles (the
  256x128 tile has cuBLAS's shape there: the first run's ncu).
- Is it the clock? The SM clock and board power are sampled (nvidia-smi, every 50 ms) while each
  variant is timed.

    python3 benchmarks/gpu/experiments/v8_tail_probe.py --sizes 8192,7680x8448x8192
    ncu ... python3 benchmarks/gpu/experiments/v8_tail_probe.py --ncu 8192   # one launch of each
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import threading
import time

import numpy as np

from nsprof.ladder.registry import baseline_stage, get_op, get_stage
from nsprof.launch.measure import time_launches, verify
from nsprof.launch.tools import launch_tools
from nsprof.sizes import parse_sizes


class Sampler:
    """nvidia-smi's SM clock (MHz) and power (W) every 50 ms, with the time each line arrived."""

    def __init__(self):
        self.rows: list[tuple[float, float, float]] = []
        self.proc = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits", "-lms", "50"],
            stdout=subprocess.PIPE, text=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                clock, power = (float(x) for x in line.split(","))
            except ValueError:
                continue
            self.rows.append((time.monotonic(), clock, power))

    def window(self, t0: float, t1: float) -> dict:
        inside = [(c, p) for t, c, p in self.rows if t0 <= t <= t1]
        if not inside:
            return {"clock_mhz": float("nan"), "power_w": float("nan"), "samples": 0}
        c, p = np.asarray(inside).T
        return {"clock_mhz": float(np.median(c)), "power_w": float(np.median(p)), "samples": len(inside)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="8192,7680x8448x8192,4096,4096x4224x4096")
    parser.add_argument("--tiles", default="256x128,128x128", help="v8's tiles to force (split 1)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--verify", help="only verify v8 at these sizes, every tile, split 1 and 2")
    parser.add_argument("--ncu", help="one launch of cuBLAS and of v8 at this size, between profiler start and stop")
    args = parser.parse_args()
    tools = launch_tools()
    op = get_op("sgemm")
    v8, cublas = get_stage("sgemm", "v8"), baseline_stage("sgemm", "fp32")
    if args.ncu:
        import cupy

        problem = op.workload.problem(tools.xp, parse_sizes([args.ncu], op.dims)[0])
        runs = [op.workload.launcher(s, problem, tools).run for s in (cublas, v8)]
        for run in runs:
            for _ in range(5):
                run()
        cupy.cuda.Device().synchronize()
        cupy.cuda.profiler.start()
        for run in runs:
            run()
        cupy.cuda.Device().synchronize()
        cupy.cuda.profiler.stop()
        return

    if args.verify:
        for size in parse_sizes([args.verify], op.dims):
            problem = op.workload.problem(tools.xp, size, seed=sum(size))
            for tile, split in itertools.product([None, *[t.shape for t in v8.tiles]], (1, 2)):
                launcher = op.workload.launcher(v8, problem, tools, tile_shape=tile, split_k=split if tile else None)
                problem.refresh()
                err = verify(launcher, problem)
                print(json.dumps({"size": "x".join(map(str, size)), "plan": launcher.tile_label,
                                  "entry": launcher.entry, "err": err, "ok": err <= v8.tolerance(size)}), flush=True)
        return

    sampler = Sampler()
    for size in parse_sizes([args.sizes], op.dims):
        problem = op.workload.problem(tools.xp, size)
        label = "x".join(map(str, size))
        variants = {"cuBLAS": op.workload.launcher(cublas, problem, tools),
                    "v8 (plan)": op.workload.launcher(v8, problem, tools)}
        for shape in args.tiles.split(","):  # each tile with the last wave's tiles shared (the rule) and without
            for tail in (None, 0):
                launcher = op.workload.launcher(v8, problem, tools, tile_shape=shape, split_k=1, tail=tail)
                variants.setdefault(launcher.tile_label, launcher)
        errors = {}
        for name, launcher in variants.items():
            problem.refresh()
            errors[name] = verify(launcher, problem)
        ok = {name: err <= v8.tolerance(size) for name, err in errors.items()}
        repeat = max(10, int(500 / (op.flops(size) / 50e12 * 1e3)))  # about 0.5 s of launches at 50 TFLOP/s
        times: dict[str, list[float]] = {name: [] for name in variants}
        power: dict[str, list[dict]] = {name: [] for name in variants}
        for _ in range(args.rounds):
            for name, launcher in variants.items():
                if not ok[name]:
                    continue
                t0 = time.monotonic()
                times[name].append(time_launches(launcher.run, repeat=repeat).median_ms)
                power[name].append(sampler.window(t0, time.monotonic()))
        base = float(np.median(times["cuBLAS"]))
        for name in variants:
            ms = float(np.median(times[name])) if times[name] else float("nan")
            row = {"size": label, "variant": name, "ok": ok[name], "err": errors[name], "ms": ms,
                   "ms_rounds": times[name], "tflops": op.flops(size) / ms / 1e9, "pct_cublas": 100 * base / ms,
                   "clock_mhz": [p["clock_mhz"] for p in power[name]], "power_w": [p["power_w"] for p in power[name]]}
            print(json.dumps(row), flush=True)
    sampler.proc.terminate()


if __name__ == "__main__":
    main()
