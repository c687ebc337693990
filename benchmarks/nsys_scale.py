"""Scale benchmark (CPU only): load a large synthetic nsys export and attribute its GPU work to
NVTX ranges, timing it and measuring peak memory.

    python benchmarks/nsys_scale.py [--kernels 1000000] [--ranges 10000] [--runs 3]

The synthetic export has the tables and columns nsprof reads, in nsys's own names: every kernel
launched by a cudaLaunchKernel call on one of two threads of one process; push/pop ranges three
deep on the first thread (an outer range holds 3 middle ranges, each holding 2 inner ones); 1% of
the ranges are process-wide start/end ranges spanning many launches. Generation runs in a child
process, so that the peak resident memory measured here is nsprof's alone.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import sqlite3
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nsprof.analyze.nvtx_attribution import range_summary
from nsprof.parse.nsys_sqlite import load_nsys

PROCESS = (1 << 24) + 4242  # serialized: hardware/VM part 1, pid 4242
THREADS = (PROCESS << 24) + 4242, (PROCESS << 24) + 4243
LAUNCH_GAP_NS = 1_000  # one launch call per microsecond
SCHEMA = """
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,
    gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
    blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
    registersPerThread INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
    eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
    returnValue INTEGER NOT NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
    text TEXT, globalTid INTEGER, textId INTEGER, domainId INTEGER);
"""


def write_export(path: Path, kernels: int, ranges: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    conn = sqlite3.connect(path)
    conn.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;" + SCHEMA)
    names = [f"kernel_{i}(float*, int)" for i in range(20)] + ["cudaLaunchKernel_v7000", "outer", "middle", "inner"]
    conn.executemany("INSERT INTO StringIds VALUES (?, ?)", enumerate(names, start=1))
    launch = np.arange(kernels, dtype=np.int64) * LAUNCH_GAP_NS + 1_000_000
    correlation = np.arange(kernels, dtype=np.int64) + 1
    thread = np.where(rng.random(kernels) < 0.5, THREADS[0], THREADS[1])
    duration = rng.integers(2_000, 80_000, kernels)
    kernel_start = launch + 5_000  # GPU work trails its launch call
    name = rng.integers(1, 21, kernels)
    ones, zeros = np.ones(kernels, dtype=np.int64), np.zeros(kernels, dtype=np.int64)
    conn.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        zip(*(column.tolist() for column in (
            kernel_start, kernel_start + duration, zeros, ones, ones * 7, correlation, ones * (PROCESS << 24),
            name, name, ones * 128, ones, ones, ones * 256, ones, ones, ones * 64, ones * 8192, zeros))))
    conn.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,?)",
        zip(*(column.tolist() for column in (launch, launch + 400, ones, thread, correlation, ones * 21, zeros))))
    conn.executemany("INSERT INTO NVTX_EVENTS VALUES (?,?,?,?,?,?,?)", _nvtx_rows(kernels, ranges))
    conn.commit()
    conn.close()


def _nvtx_rows(kernels: int, ranges: int) -> list[tuple]:
    """Outer ranges of 3 middle ranges of 2 inner ranges (10 push/pop ranges per outer), tiling the
    launches of the first thread, plus process-wide start/end ranges: `ranges` in all."""
    start_end = ranges // 100
    outers = (ranges - start_end) // 10
    span = kernels * LAUNCH_GAP_NS // outers
    rows = []
    for o in range(outers):
        begin = 1_000_000 + o * span
        rows.append((begin, begin + span - 1, 59, None, THREADS[0], 22, 0))
        for m in range(3):
            middle = begin + m * span // 3
            rows.append((middle, middle + span // 3 - 1, 59, None, THREADS[0], 23, 0))
            for i in range(2):
                inner = middle + i * span // 6
                rows.append((inner, inner + span // 6 - 1, 59, None, THREADS[0], 24, 0))
    window = kernels * LAUNCH_GAP_NS // start_end
    for s in range(start_end):
        begin = 1_000_000 + s * window
        rows.append((begin, begin + window // 2, 60, f"window {s}", THREADS[1], None, 0))
    return rows


def measure(path: Path) -> tuple[float, int, int]:
    """Seconds to load and summarize, and the number of kernels and NVTX ranges."""
    start = time.perf_counter()
    export = load_nsys(path)
    summary = range_summary(export)
    seconds = time.perf_counter() - start
    assert summary["count"].sum() == len(export.nvtx)
    return seconds, len(export.kernels), len(export.nvtx)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=1_000_000)
    parser.add_argument("--ranges", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3, help="timed runs (the first one starts cold)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "synthetic.sqlite"
        started = time.perf_counter()
        child = multiprocessing.Process(target=write_export, args=(path, args.kernels, args.ranges))
        child.start()
        child.join()
        print(f"generated {path.stat().st_size / 1e6:.0f} MB in {time.perf_counter() - started:.1f} s")
        runs = [measure(path) for _ in range(args.runs)]
        peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        tracemalloc.start()
        measure(path)
        traced_peak_mb = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
    seconds = sorted(run[0] for run in runs)
    _, kernels, ranges = runs[0]
    print(f"{kernels:,} kernels, {args.kernels:,} runtime calls, {ranges:,} NVTX ranges")
    print(f"load_nsys + range_summary, {args.runs} runs: median {seconds[len(seconds) // 2]:.2f} s "
          f"(min {seconds[0]:.2f}, max {seconds[-1]:.2f})")
    print(f"peak resident memory of this process: {peak_rss_mb:.0f} MB; "
          f"peak traced by tracemalloc (Python + numpy allocations): {traced_peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
