"""Scale benchmark (CPU only): `nsprof diff` of two synthetic nsys exports of about 1,000,000
kernels each, built from a real export's schema and rows.

    python benchmarks/diff_scale.py [--kernels 1000000] [--runs 3]

Each export is a copy of tests/data/timeline/nsys-12000-kernels.sqlite (nsys 2025.3.1 on an H200:
its full schema, strings, GPU and NVTX tables) whose kernels, CUDA API calls and NVTX ranges are
repeated, shifted in time and correlation id, until it holds --kernels kernels. In B one kernel
name runs 5% longer: the benchmark checks that diff calls it slower and nothing else. It times
api.diff (loading both exports, attribution, statistics), the whole of what the command computes.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SOURCE = ROOT / "tests/data/timeline/nsys-12000-kernels.sqlite"
TILED = {  # table -> (time columns shifted, id columns renumbered)
    "CUPTI_ACTIVITY_KIND_KERNEL": (("start", "end"), ("correlationId",)),
    "CUPTI_ACTIVITY_KIND_RUNTIME": (("start", "end"), ("correlationId",)),
    "NVTX_EVENTS": (("start", "end"), ()),
}


def write_export(path: Path, kernels: int, slower_name_id: int | None) -> None:
    shutil.copyfile(SOURCE, path)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("PRAGMA synchronous=OFF")
    base = conn.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    repeats = -(-kernels // base)
    span = conn.execute("SELECT max(end) - min(start) + 1000 FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
    ids = conn.execute("SELECT max(correlationId) + 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
    for table, (times, id_columns) in TILED.items():
        columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
        rows = conn.execute(f"SELECT * FROM {table}").fetchall()
        conn.execute(f"DELETE FROM {table}")
        where = {name: columns.index(name) for name in (*times, *id_columns)}
        name_at = columns.index("demangledName") if table == "CUPTI_ACTIVITY_KIND_KERNEL" else None

        def tiled():
            for k in range(repeats):
                for row in rows:
                    row = list(row)
                    for name in times:
                        if row[where[name]] is not None:
                            row[where[name]] += k * span
                    for name in id_columns:
                        if row[where[name]] is not None:
                            row[where[name]] += k * ids
                    if name_at is not None and row[name_at] == slower_name_id:
                        row[where["end"]] += (row[where["end"]] - row[where["start"]]) // 20  # 5% longer
                    yield row
        conn.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(columns))})", tiled())
    conn.commit()
    conn.close()


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
        write_export(a, args.kernels, None)
        write_export(b, args.kernels, slower_id)
        print(f"wrote two exports in {time.perf_counter() - started:.1f} s")
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            result = api.diff(a, b)
            times.append(time.perf_counter() - started)
        launches = sum(row["a_count"] for row in result.kernels)
        called = {row["kernel"]: row["status"] for row in result.kernels if row["status"] != "same"}
        print(f"{launches:,} kernels per side, {len(result.kernels)} kernel names, {len(result.ranges)} range names")
        print(f"not same: {called} (expected: {slower_name!r} slower)")
        print(f"api.diff: median {statistics.median(times):.2f} s (min {min(times):.2f}, max {max(times):.2f}) "
              f"over {args.runs} runs")


if __name__ == "__main__":
    main()
