"""Scale benchmark (CPU only): `nsprof diff` of two synthetic nsys exports of about 1,000,000
kernels each, built from a real export's schema and rows.

    python benchmarks/diff_scale.py [--kernels 1000000] [--runs 3]

Each export is built by benchmarks/synthetic_export.py from the real
tests/data/timeline/nsys-12000-kernels.sqlite (its kernels, CUDA API calls and NVTX ranges
repeated, shifted in time and correlation id, until it holds --kernels kernels). In B one kernel
name runs 5% longer: the benchmark checks that diff measures it about +5% and calls nothing (the
kernel runs under 10 us, which one run a side never calls: nsprof.diff.noise; it is left
undecided). It times api.diff (loading both exports, attribution, statistics), the whole of what
the command computes.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from synthetic_export import SOURCE, write_export  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from nsprof import api

    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(SOURCE)
        slower_id, slower_name = conn.execute(
            "SELECT k.demangledName, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName "
            "GROUP BY k.demangledName ORDER BY count(*) DESC LIMIT 1").fetchone()
        conn.close()
        a, b = Path(tmp) / "a.sqlite", Path(tmp) / "b.sqlite"
        started = time.perf_counter()
        write_export(a, args.kernels)
        write_export(b, args.kernels, slower_name_id=slower_id)
        print(f"wrote two exports in {time.perf_counter() - started:.1f} s")
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            result = api.diff(a, b)
            times.append(time.perf_counter() - started)
        launches = sum(row["a_count"] for row in result.kernels)
        called = {row["kernel"]: row["status"] for row in result.kernels if row["status"] != "same"}
        slower = next(row for row in result.kernels if row["kernel"] == slower_name)
        print(f"{launches:,} kernels per side, {len(result.kernels)} kernel names, {len(result.ranges)} range names")
        print(f"not same: {called} (expected: none); {slower_name}: {slower['change_pct']:+.1f}%, "
              f"{slower['floor']}, {'undecided' if slower['undecided'] else 'decided'} (expected: about +5%, undecided)")
        print(f"api.diff: median {statistics.median(times):.2f} s (min {min(times):.2f}, max {max(times):.2f}) "
              f"over {args.runs} runs")


if __name__ == "__main__":
    main()
