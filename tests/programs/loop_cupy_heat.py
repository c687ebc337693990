"""A CuPy loop that steps the 2D heat equation with an explicit five-point stencil: a loop for nsprof to
find from the GPU work alone (captured with nsys's defaults and no NVTX range of the program's own).
The grid (`--size` squared, float32) has its top edge held at 1 and the other edges at 0, a square
source at its centre, and every value clipped to [0, 1] after each step.

- `--variant eager` (default): each step is 14 of CuPy's own small kernels on slices of the grid (the
  Laplacian's sums, the update, the copy into the next grid, the four edges, the source, the clip):
  a few microseconds each on the GPU, more to launch from Python (launch-bound).
- `--variant fused`: the same step as one cupy.RawKernel (compiled with --fmad=false so that its
  products and sums round as the eager step's do), one kernel a step.

Either way, after the loop, the same steps of the eager step's code run with NumPy on the host from the
same initial grid, and the JSON says whether the GPU's final grid matches them within float tolerance
("matches_eager", "max_abs_diff"): no extra work on the GPU.

`--markers` wraps each step in an NVTX range `step` (cupy.cuda.nvtx); without it the program opens no
NVTX range of its own. The loop runs `--steps` iterations, the first `--warmup` untimed (the first step
compiles CuPy's kernels). The loop does not synchronize: the time of an iteration (time.perf_counter,
from the previous iteration's end to its own) is the host's time to launch the step, which is the
step's time while the host launches slower than the GPU runs; median_ms, min_ms and max_ms are of
those. "mean_synced_ms" is the timed iterations' wall time up to a synchronization after the loop,
divided by their count. At its end the program prints one JSON line: program, variant, iterations,
warmup, median_ms, min_ms, max_ms, mean_synced_ms, matches_eager, max_abs_diff.

    python3 tests/programs/loop_cupy_heat.py --variant eager --steps 300
    python3 tests/programs/loop_cupy_heat.py --variant fused --steps 300 --markers
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time

import cupy as cp
import numpy as np
from cupy.cuda import nvtx

ZERO, ONE, FOUR = np.float32(0), np.float32(1), np.float32(4)

HEAT_STEP = cp.RawKernel(r"""
extern "C" __global__ void heat_step(const float* u, float* out, int n, float alpha, float top, float source,
                                     int lo, int hi) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= n) return;
    float v;
    if (j == 0 || j == n - 1) v = 0.0f;  // the eager step writes the side columns after the rows
    else if (i == 0) v = top;
    else if (i == n - 1) v = 0.0f;
    else {
        float c = u[i * n + j];
        float lap = u[(i + 1) * n + j] + u[(i - 1) * n + j];
        lap = lap + u[i * n + j + 1];
        lap = lap + u[i * n + j - 1];
        lap = lap - 4.0f * c;
        v = alpha * lap + c;
        if (i >= lo && i < hi && j >= lo && j < hi) v = v + source;
    }
    out[i * n + j] = fminf(fmaxf(v, 0.0f), 1.0f);
}
""", "heat_step", options=("--fmad=false",))


class Heat:
    def __init__(self, n: int, alpha: float, top: float, source: float) -> None:
        self.n, self.alpha, self.top, self.source = n, np.float32(alpha), np.float32(top), np.float32(source)
        self.lo, self.hi = n // 2 - n // 32, n // 2 + n // 32

    def eager(self, xp, u, out) -> None:
        """One step from `u` into `out` with `xp` (cupy or numpy): 14 kernels on the GPU."""
        c = u[1:-1, 1:-1]
        lap = u[2:, 1:-1] + u[:-2, 1:-1]
        lap += u[1:-1, 2:]
        lap += u[1:-1, :-2]
        lap -= c * FOUR  # the arrays on the left: CuPy's operators, not NumPy's scalar's
        new = lap * self.alpha
        new += c
        out[1:-1, 1:-1] = new
        out[0, :] = self.top
        out[-1, :] = ZERO
        out[:, 0] = ZERO
        out[:, -1] = ZERO
        out[self.lo:self.hi, self.lo:self.hi] += self.source
        xp.clip(out, ZERO, ONE, out=out)

    def fused(self, u, out) -> None:
        """The same step as one kernel."""
        block = (32, 8)
        grid = ((self.n + block[0] - 1) // block[0], (self.n + block[1] - 1) // block[1])
        HEAT_STEP(grid, block, (u, out, np.int32(self.n), self.alpha, self.top, self.source,
                                np.int32(self.lo), np.int32(self.hi)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=("eager", "fused"), default="eager")
    parser.add_argument("--steps", type=int, default=300, help="loop iterations, the warm-up included")
    parser.add_argument("--warmup", type=int, default=10, help="the first iterations, not timed")
    parser.add_argument("--markers", action="store_true", help="an NVTX range `step` around each iteration")
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--alpha", type=float, default=0.2, help="diffusion number: stable up to 0.25")
    args = parser.parse_args()
    assert args.steps > args.warmup >= 0
    heat = Heat(args.size, args.alpha, top=1.0, source=0.05)
    initial = np.zeros((args.size, args.size), np.float32)
    initial[1:-1, 1:-1] = np.float32(0.1) * np.random.default_rng(0).random((args.size - 2,) * 2, dtype=np.float32)
    u = cp.asarray(initial)
    out = cp.empty_like(u)
    marks = [time.perf_counter()]
    for _ in range(args.steps):
        if args.markers:
            nvtx.RangePush("step")
        if args.variant == "eager":
            heat.eager(cp, u, out)
        else:
            heat.fused(u, out)
        u, out = out, u
        if args.markers:
            nvtx.RangePop()
        marks.append(time.perf_counter())
    cp.cuda.Device().synchronize()
    synced = time.perf_counter()
    result = cp.asnumpy(u)
    reference, scratch = initial.copy(), np.empty_like(initial)
    for _ in range(args.steps):  # the eager step's own code, with NumPy on the host
        heat.eager(np, reference, scratch)
        reference, scratch = scratch, reference
    times = [1e3 * (b - a) for a, b in itertools.pairwise(marks)][args.warmup:]
    print(json.dumps({
        "program": "loop_cupy_heat", "variant": args.variant, "iterations": args.steps, "warmup": args.warmup,
        "median_ms": round(statistics.median(times), 4), "min_ms": round(min(times), 4),
        "max_ms": round(max(times), 4),
        "mean_synced_ms": round(1e3 * (synced - marks[args.warmup]) / (args.steps - args.warmup), 4),
        "matches_eager": bool(np.allclose(result, reference, rtol=1e-5, atol=1e-6)),
        "max_abs_diff": float(np.abs(result - reference).max())}))


if __name__ == "__main__":
    main()
