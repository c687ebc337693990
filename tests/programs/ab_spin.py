"""A program whose one change has a known size, for `nsprof diff` across runs.

Each training-like step runs, in NVTX ranges of domain `ab`:
- `compute`: `spin`, a kernel that waits a fixed number of SM clock cycles (SPIN_CYCLES, times
  1 + --slower/100), so that its duration moves by exactly that factor at a given clock; then
  `scale`, a memory-bound kernel over 64 MiB;
- `copy`: a 64 MiB host-to-device copy from pinned memory.

    python3 tests/programs/ab_spin.py --steps 40               # the baseline
    python3 tests/programs/ab_spin.py --steps 40 --slower 5    # spin made 5% slower, nothing else
    python3 tests/programs/ab_spin.py --true-size 5            # that change as CUDA events see it

--true-size times the two spin kernels alternately in one process (CUDA events, 1,000 of each)
and prints the ratio of their median times as JSON: the true size the diff's interval must hold.
"""

from __future__ import annotations

import argparse
import json

import cupy as cp
import numpy as np
from program_ranges import range_maker

SPIN_CYCLES = 400_000  # about 0.2 ms at the H100's and H200's 1.98 GHz
ELEMENTS = 16 * 2**20  # 64 MiB of float32

SPIN = cp.RawKernel(r"""
extern "C" __global__ void spin(long long cycles, int *sink) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
    if (threadIdx.x == 0 && cycles < 0) sink[blockIdx.x] = 1;  // never: keeps the loop from being removed
}
""", "spin")

SCALE = cp.ElementwiseKernel("float32 x", "float32 y", "y = 1.0001f * x", "scale")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--slower", type=float, default=0.0, help="percent more cycles for the spin kernel")
    parser.add_argument("--true-size", type=float, default=None, metavar="PCT", help="time spin and spin + PCT%%")
    args = parser.parse_args()
    if args.true_size is not None:
        print(json.dumps(true_size(args.true_size)))
        return
    ranged = range_maker("ab")
    cycles = round(SPIN_CYCLES * (1 + args.slower / 100))
    sink = cp.zeros(132, dtype=cp.int32)
    x = cp.ones(ELEMENTS, dtype=cp.float32)
    y = cp.empty_like(x)
    host = cp.cuda.alloc_pinned_memory(ELEMENTS * 4)
    staged = np.frombuffer(host, dtype=np.float32, count=ELEMENTS)
    staged[:] = 1.0
    for _ in range(3):  # warm-up: module loads, clocks ramp
        SPIN((132,), (32,), (cp.int64(cycles), sink))
        SCALE(x, y)
    cp.cuda.Device().synchronize()
    for _ in range(args.steps):
        with ranged("step"):
            with ranged("compute"):
                SPIN((132,), (32,), (cp.int64(cycles), sink))
                SCALE(x, y)
            with ranged("copy"):
                x.set(staged)
            cp.cuda.Device().synchronize()
    print(f"{args.steps} steps, spin {cycles:,} cycles")


def true_size(pct: float, launches: int = 1000) -> dict:
    """Median CUDA-event times of spin at SPIN_CYCLES and at PCT% more, launched alternately."""
    sink = cp.zeros(132, dtype=cp.int32)
    cycles = {"base": SPIN_CYCLES, "slower": round(SPIN_CYCLES * (1 + pct / 100))}
    times: dict[str, list[float]] = {name: [] for name in cycles}
    for launch in range(launches + 20):
        for name, count in cycles.items():
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            SPIN((132,), (32,), (cp.int64(count), sink))
            end.record()
            end.synchronize()
            if launch >= 20:  # warm-up
                times[name].append(cp.cuda.get_elapsed_time(start, end))
    medians = {name: float(np.median(values)) for name, values in times.items()}
    return {"pct": pct, "cycles": cycles, "median_ms": medians,
            "change_pct": 100 * (medians["slower"] / medians["base"] - 1)}


if __name__ == "__main__":
    main()
