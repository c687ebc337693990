"""Does the host's launch time leak into the paired timings? `paired_medians` records a CUDA event, launches,
records another; where the host takes longer to queue a pair than the GPU takes to run it, the GPU has caught
up, runs the start event at once and then waits for the kernel, so the interval holds part of the launch's host
time. Here each size's h6 plan and the library's kept candidate are timed in turn twice: as paired_medians does,
and with a head start (a hold of the GPU while the host queues CHUNK pairs, so they then run back to
back). Prints, per size, both medians of each, their ratio (% of the library), and how much of the GPU's time
the head-started chunks left idle between kernels.

    python3 benchmarks/gpu/experiments/launch_gaps.py --sizes 1x4096x4096,2048 --out $OUT/launch-gaps.jsonl
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))


def head_started(ours, theirs, chunks: int, chunk: int):
    """Medians of ours and theirs in turn, each chunk of pairs queued behind a hold of the GPU
    (nsprof.launch.measure.hold_gpu) long enough for the host to queue it (twice the host time the last chunk
    took), and the idle share inside the chunks."""
    import cupy as cp
    import numpy as np

    from nsprof.launch.measure import hold_gpu

    host_s = 2e-3
    ours_t, theirs_t, idle = [], [], []
    for _ in range(chunks):
        hold_gpu(2 * host_s)
        t0 = time.perf_counter()
        events = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(2 * chunk)]
        for i, (start, end) in enumerate(events):
            start.record()
            (ours if i % 2 == 0 else theirs)()
            end.record()
        host_s = time.perf_counter() - t0
        events[-1][1].synchronize()
        times = [cp.cuda.get_elapsed_time(s, e) for s, e in events]
        span = cp.cuda.get_elapsed_time(events[0][0], events[-1][1])
        ours_t += times[0::2]
        theirs_t += times[1::2]
        idle.append(1 - sum(times) / span)
    return float(np.median(ours_t)), float(np.median(theirs_t)), float(np.median(idle)), host_s / (2 * chunk)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--out")
    ap.add_argument("--chunk", type=int, default=40)
    ap.add_argument("--chunks", type=int, default=12)
    args = ap.parse_args()
    from benchmarks.gpu.experiments.h6_plans import emit, h6_and_library
    from nsprof.ladder.registry import get_op
    from nsprof.launch.measure import paired_medians
    from nsprof.launch.tools import launch_tools
    from nsprof.sizes import parse_sizes, size_label

    tools, op = launch_tools(), get_op("hgemm")
    for size in parse_sizes([args.sizes], op.dims):
        problem = op.workload.problem(tools.xp, size)
        ours, library = h6_and_library(tools, problem, size)
        row = {"size": size_label(size), "h6": ours.tile_label, "library": library.tile_label}
        for order in (1, 2):
            a, b = paired_medians(ours.run, library.run)
            c, d, idle, host = head_started(ours.run, library.run, args.chunks, args.chunk)
            row[f"order{order}"] = {"paired_us": [a * 1e3, b * 1e3], "paired_pct": 100 * b / a,
                                    "head_start_us": [c * 1e3, d * 1e3], "head_start_pct": 100 * d / c,
                                    "idle_in_chunks": idle, "host_us_per_launch": host * 1e6}
        emit(row, args.out)


if __name__ == "__main__":
    main()
