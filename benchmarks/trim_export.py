"""Trim a real Nsight Systems SQLite export into a test fixture: keep the tables nsprof reads and the
events that start before the end of the program's Nth NVTX range of a given name (a training
step), then VACUUM and xz it. StringIds keeps every string a kept row names (nsys writes every
string the process registered: a JAX program's 64,509 hold 9.6 MB of HLO text, 2,181 of them named).

    python3 benchmarks/trim_export.py full.sqlite tests/data/jax/jax-a.sqlite.xz --range step --keep 4

With --whole, every event is kept (the host side needs every CUDA call, synchronizations included):
only the tables nsprof does not read and the strings no kept row names are dropped, and the result
is written unpacked, for tests/packed_data.py --pack (TARGET may be SOURCE: a fixture slimmed in place).
"""

from __future__ import annotations

import argparse
import lzma
import shutil
import sqlite3
import tempfile
from pathlib import Path

KEPT = ("StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
        "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE", "NVTX_EVENTS", "TARGET_INFO_GPU",
        "TARGET_INFO_CUDA_DEVICE", "TARGET_INFO_SESSION_START_TIME", "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND",
        "ENUM_NSYS_EVENT_TYPE", "ThreadNames", "PROCESSES", "META_DATA_CAPTURE", "META_DATA_EXPORT", "EXPORT_META_DATA",
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "ENUM_CUPTI_SYNC_TYPE")
WORK = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
        "CUPTI_ACTIVITY_KIND_GRAPH_TRACE")
NAMING = ("demangledName", "shortName", "mangledName", "nameId", "textId", "jsonTextId")  # columns holding StringIds ids
TIMED = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
         "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE", "NVTX_EVENTS")


def trim(source: Path, target: Path, range_name: str, keep: int) -> dict:
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch) / "trimmed.sqlite"
        shutil.copyfile(source, work)
        conn = sqlite3.connect(work)
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        ends = [row[0] for row in conn.execute(
            "SELECT n.end FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
            "WHERE coalesce(n.text, s.value) = ? ORDER BY n.start", (range_name,))]
        if len(ends) < keep:
            raise SystemExit(f"{source}: {len(ends)} ranges named {range_name!r}, fewer than {keep}")
        cut = ends[keep - 1]
        for table in tables - set(KEPT):
            conn.execute(f"DROP TABLE {table}")
        for table in set(TIMED) & tables:
            conn.execute(f"DELETE FROM {table} WHERE start > ?", (cut,))
        # runtime calls that started no GPU work (event queries, synchronizations) are most of the
        # rows and only feed the timeline's API table: the fixture keeps the launches and copies
        launched = " UNION ".join(f"SELECT correlationId FROM {t} WHERE correlationId IS NOT NULL"
                                  for t in WORK if t in tables)
        conn.execute(f"DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId NOT IN ({launched})")
        drop_unnamed_strings(conn)
        counts = {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in sorted(set(TIMED) & tables)}
        conn.commit()
        conn.execute("VACUUM")
        conn.close()
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(work, "rb") as raw, lzma.open(target, "wb", preset=9) as packed:
            shutil.copyfileobj(raw, packed)
    return counts


def slim(source: Path, target: Path) -> dict:
    """`source` with only the KEPT tables, every row of them, and the strings they name, vacuumed
    into `target` (unpacked)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.resolve() != target.resolve():
        shutil.copyfile(source, target)
    conn = sqlite3.connect(target)
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    for table in tables - set(KEPT):
        conn.execute(f"DROP TABLE {table}")
    drop_unnamed_strings(conn)
    counts = {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in sorted(set(TIMED) & tables)}
    conn.commit()
    conn.execute("VACUUM")
    conn.close()
    return counts


def drop_unnamed_strings(conn: sqlite3.Connection) -> None:
    """Delete the StringIds rows that no NAMING column of another table refers to."""
    named = []
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name != 'StringIds'").fetchall():
        columns = {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')}
        # (NOT IN a list that holds a NULL is never true)
        named += [f'SELECT "{column}" FROM "{table}" WHERE "{column}" IS NOT NULL' for column in NAMING if column in columns]
    if named:
        conn.execute(f"DELETE FROM StringIds WHERE id NOT IN ({' UNION '.join(named)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("target", type=Path)
    parser.add_argument("--range", default="step")
    parser.add_argument("--keep", type=int, default=4, help="keep events up to the end of this many ranges")
    parser.add_argument("--whole", action="store_true", help="keep every event; drop only the tables nsprof does not read")
    args = parser.parse_args()
    counts = slim(args.source, args.target) if args.whole else trim(args.source, args.target, args.range, args.keep)
    print(counts, args.target.stat().st_size)


if __name__ == "__main__":
    main()
