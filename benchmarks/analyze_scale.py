"""Scale benchmark (CPU only): `nsprof analyze EXPORT --json` on synthetic nsys exports of 1M, 5M
and 10M kernels with 100k memcpys and 100k NVTX ranges: wall time and peak resident memory.

    python benchmarks/analyze_scale.py [--kernels 1000000 5000000 10000000] [--memcpys 100000]
                                       [--ranges 100000] [--runs 1] [--label after] [--record]

Exports come from benchmarks/synthetic_export.py (a real export's schema and rows, tiled). Each
run is the command itself in a fresh process (`python -m nsprof analyze ... --json`, imports
included): its wall time, and its peak resident set size from os.wait4's rusage (ru_maxrss, the
child's own peak, not the builder's). With --record, the results are stored under --label in
benchmarks/records/2026-11-24-cpu-analyze-scale/analyze_scale.json (the table in analyze_scale.md is written from it).
Targets on a 2-core machine: 10M kernels in at most 20 s and 2 GB, growing linearly.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from synthetic_export import write_export  # noqa: E402

RESULTS = ROOT / "benchmarks/records/2026-11-24-cpu-analyze-scale/analyze_scale.json"


def run_command(argv: list[str]) -> tuple[float, float, bytes]:
    """(seconds, peak RSS in MB, stdout) of one command in a fresh process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE, env=env, cwd=ROOT)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode:
            raise SystemExit(f"{' '.join(argv)} failed: {process.stderr.read().decode()[-2000:]}")
        out.seek(0)
        return seconds, usage.ru_maxrss / 1024, out.read()


def measure(path: Path, runs: int) -> dict:
    """Median and spread of the wall time over `runs` runs, the largest peak RSS, and the 1-minute
    load average before each run (other work on the machine slows the runs down, never the memory)."""
    argv = [sys.executable, "-m", "nsprof", "analyze", str(path), "--json"]
    results, loads = [], []
    for _ in range(runs):
        loads.append(round(os.getloadavg()[0], 2))
        results.append(run_command(argv))
    analysis = json.loads(results[0][2])
    launches = sum(row["count"] for row in analysis["kernel_summary"])
    seconds = [r[0] for r in results]
    return {"kernels": launches, "seconds": round(statistics.median(seconds), 2),
            "seconds_min": round(min(seconds), 2), "seconds_max": round(max(seconds), 2),
            "peak_rss_mb": round(max(r[1] for r in results)), "runs": runs, "load_avg_1min": loads}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, nargs="+", default=[1_000_000, 5_000_000, 10_000_000])
    parser.add_argument("--memcpys", type=int, default=100_000)
    parser.add_argument("--ranges", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--label", default="current")
    parser.add_argument("--record", action="store_true", help=f"store the results in {RESULTS.name}")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kernels in args.kernels:
            path = Path(tmp) / f"synthetic-{kernels}.sqlite"
            started = time.perf_counter()
            write_export(path, kernels, args.memcpys, args.ranges)
            built = time.perf_counter() - started
            row = {**measure(path, args.runs), "memcpys": args.memcpys, "ranges": args.ranges,
                   "export_mb": round(path.stat().st_size / 1e6)}
            path.unlink()
            rows.append(row)
            print(f"{kernels:>11,} kernels ({row['export_mb']:,} MB, built in {built:.0f} s): "
                  f"{row['seconds']:.2f} s ({row['seconds_min']:.2f}-{row['seconds_max']:.2f}), peak {row['peak_rss_mb']:,} MB, "
                  f"load {row['load_avg_1min']}", flush=True)
    if args.record:
        recorded = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        recorded[args.label] = {"machine": f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}",
                                "python": platform.python_version(), "rows": rows}
        RESULTS.write_text(json.dumps(recorded, indent=2) + "\n")


if __name__ == "__main__":
    main()
