"""Timeline benchmark (CPU only): draw `nsprof timeline` of a synthetic nsys export with many
kernels and NVTX ranges, timing each phase.

    python benchmarks/timeline_scale.py [--kernels 100000] [--ranges 5000 20000 40000] [--runs 3]

The export is built from a real one, tests/data/timeline/nsys-12000-kernels.sqlite (nsys 2025.3.1
on an H200): its schema is copied table by table and its small tables (strings, GPU, enums,
processes) row by row; the kernels, their cudaLaunchKernel calls and the NVTX ranges are generated
from one real row of each table, changing only times, streams, correlation ids and names. Kernels:
one launch per microsecond from one thread, round-robin over 4 streams, 2-6 us each, names from a
family sharing a long template prefix. Ranges: push/pop, two deep on the launching thread; each
outer `step N` holds 4 inner `nsprof:sgemm/vK/1024x1024x1024` ranges, tiling the launches.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nsprof.parse.nsys_sqlite import load_nsys  # noqa: E402

REAL = ROOT / "tests" / "data" / "timeline" / "nsys-12000-kernels.sqlite"
GENERATED = ("CUPTI_ACTIVITY_KIND_", "NVTX_EVENTS")  # tables whose real rows are left out (prefixes)
LAUNCH_GAP_NS = 1_000
INNER_PER_OUTER = 4
KERNEL_NAMES = [f"void at::native::vectorized_elementwise_kernel<(int)4, at::native::{functor}<float>, "
                f"std::array<char *, (unsigned long)3>>(int, T2, T3)"
                for functor in ("AddFunctor", "MulFunctor", "CUDAFunctor_add", "sigmoid_kernel_cuda", "gelu_kernel_cuda")]


def write_export(path: Path, kernels: int, ranges: int) -> None:
    """The real export's schema and small tables, with generated kernels, launches and ranges."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("ATTACH DATABASE ? AS real", (f"file:{REAL}?mode=ro",))
    tables = [name for (name,) in conn.execute("SELECT name FROM real.sqlite_master WHERE type = 'table'")]
    for (sql,) in conn.execute("SELECT sql FROM real.sqlite_master WHERE type = 'table'").fetchall():
        conn.execute(sql)
    for table in tables:
        if not table.startswith(GENERATED):
            conn.execute(f"INSERT INTO main.{table} SELECT * FROM real.{table}")
    first_id = conn.execute("SELECT max(id) FROM StringIds").fetchone()[0] + 1
    names = dict(enumerate(KERNEL_NAMES, start=first_id))
    conn.executemany("INSERT INTO StringIds VALUES (?, ?)", names.items())

    launch = 1_000_000_000 + np.arange(kernels, dtype=np.int64) * LAUNCH_GAP_NS
    correlation = 1_000_000 + np.arange(kernels, dtype=np.int64)
    duration = np.random.default_rng(0).integers(2_000, 6_000, kernels)
    stream = 13 + np.arange(kernels) % 4  # the real capture's four streams
    name = np.array(list(names))[np.arange(kernels) % len(names)]
    start = launch + 8_000
    _insert_like(conn, "CUPTI_ACTIVITY_KIND_KERNEL", {
        "start": start, "end": start + duration, "streamId": stream, "correlationId": correlation,
        "demangledName": name, "shortName": name})
    _insert_like(conn, "CUPTI_ACTIVITY_KIND_RUNTIME", {
        "start": launch, "end": launch + 600, "correlationId": correlation},
        where="correlationId IN (SELECT correlationId FROM real.CUPTI_ACTIVITY_KIND_KERNEL)")
    outers = ranges // (1 + INNER_PER_OUTER)
    step = kernels * LAUNCH_GAP_NS // outers
    outer_start = launch[0] + np.arange(outers, dtype=np.int64) * step
    inner_start = (outer_start[:, None] + np.arange(INNER_PER_OUTER) * (step // INNER_PER_OUTER)).ravel()
    texts = [f"step {i}" for i in range(outers)] + [f"nsprof:sgemm/v{1 + i % 10}/1024x1024x1024" for i in range(len(inner_start))]
    _insert_like(conn, "NVTX_EVENTS", {
        "start": np.r_[outer_start, inner_start],
        "end": np.r_[outer_start + step - 1, inner_start + step // INNER_PER_OUTER - 1], "text": texts, "textId": None})
    conn.commit()
    conn.close()


def _insert_like(conn: sqlite3.Connection, table: str, values: dict, where: str = "1") -> None:
    """Rows copied from the real table's first row (matching `where`), with `values` set."""
    columns = [row[1] for row in conn.execute(f"PRAGMA main.table_info({table})")]
    template = conn.execute(f"SELECT * FROM real.{table} WHERE {where} LIMIT 1").fetchone()
    rows = len(next(value for value in values.values() if value is not None))
    data = [values[column] if column in values else [template[i]] * rows for i, column in enumerate(columns)]
    data = [[None] * rows if column is None else (column.tolist() if isinstance(column, np.ndarray) else column)
            for column in data]
    conn.executemany(f"INSERT INTO main.{table} VALUES ({', '.join('?' * len(columns))})", zip(*data))


def measure(path: Path, out: Path) -> dict[str, float]:
    """Seconds to load the export, to draw it and to write the PNG (api.write_timeline, whole capture)."""
    import matplotlib.pyplot as plt

    import nsprof.api
    from nsprof.render import timeline

    phases = {}
    started = time.perf_counter()
    load_nsys(path)
    phases["load"] = time.perf_counter() - started
    drawn = timeline.timeline_figure
    saved = plt.Figure.savefig

    def timed_figure(*args, **kwargs):
        begun = time.perf_counter()
        try:
            return drawn(*args, **kwargs)
        finally:
            phases["draw"] = time.perf_counter() - begun

    def timed_save(self, *args, **kwargs):
        begun = time.perf_counter()
        try:
            return saved(self, *args, **kwargs)
        finally:
            phases["png"] = time.perf_counter() - begun

    timeline.timeline_figure, plt.Figure.savefig = timed_figure, timed_save
    try:
        started = time.perf_counter()
        nsprof.api.write_timeline(path, out, window="all", force=True)
        phases["total"] = time.perf_counter() - started
    finally:
        timeline.timeline_figure, plt.Figure.savefig = drawn, saved
    return phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=100_000)
    parser.add_argument("--ranges", type=int, nargs="+", default=[5_000, 20_000, 40_000])
    parser.add_argument("--runs", type=int, default=3, help="timed runs per export; the median is shown")
    parser.add_argument("--keep", type=Path, help="a directory to keep the PNGs in")
    args = parser.parse_args()
    print("kernels  ranges  load s  draw s  png s  write_timeline s (median of runs; whole capture)")
    with tempfile.TemporaryDirectory() as tmp:
        for ranges in args.ranges:
            # apart from the charts: nsprof never writes into a capture
            path = Path(tmp) / "exports" / f"synthetic-{ranges}.sqlite"
            path.parent.mkdir(exist_ok=True)
            write_export(path, args.kernels, ranges)
            export = load_nsys(path)
            out = (args.keep or Path(tmp)) / f"timeline-{args.kernels}-{ranges}.png"
            runs = [measure(path, out) for _ in range(args.runs)]
            median = {key: sorted(run[key] for run in runs)[len(runs) // 2] for key in runs[0]}
            print(f"{len(export.kernels):7,} {len(export.nvtx):7,}  {median['load']:6.2f}  {median['draw']:6.2f}"
                  f"  {median['png']:5.2f}  {median['total']:6.2f}")


if __name__ == "__main__":
    main()
