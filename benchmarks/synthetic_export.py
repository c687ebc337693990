"""Synthetic nsys exports of any size, built from a real export's schema and rows (for the scale
benchmarks: diff_scale.py, analyze_scale.py, analyze_many_scale.py).

    write_export(path, kernels=1_000_000, memcpys=100_000, ranges=100_000)

The export is a copy of tests/data/timeline/nsys-12000-kernels.sqlite (nsys 2025.3.1 on an H200:
its full schema, strings, GPU table; 30 NVTX ranges `step N` of 400 CuPy kernels each). Its
kernels, CUDA API calls and NVTX ranges are repeated, shifted in time and correlation id, until it
holds `kernels` kernels. Everything is done by SQLite (INSERT ... SELECT over a counter), so a
10M-kernel export takes seconds, not a Python loop over rows.

- `memcpys`: host-to-device copies in CUPTI_ACTIVITY_KIND_MEMCPY (schema and one template row from
  tests/data/diff-pairs/train-a.sqlite, the same nsys version), spread evenly over the capture, each
  launched by its own cudaMemcpyAsync call on the thread that launches the kernels.
- `ranges`: NVTX ranges in all; beyond the tiled `step N` ranges, `phase` ranges nested evenly in them.
- `slower_name_id`: kernels of this StringIds id run 5% longer (diff_scale's changed side).
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests/data/timeline/nsys-12000-kernels.sqlite"
COPIES_SOURCE = ROOT / "tests/data/diff-pairs/train-a.sqlite"  # the memcpy table's schema and a template row
COPY_BYTES = 4 << 20
COPY_NS = 2_000
PHASE = "phase"


def write_export(path: Path, kernels: int, memcpys: int = 0, ranges: int | None = None,
                 slower_name_id: int | None = None) -> None:
    """Write the export described in the module docstring at `path` (replacing it)."""
    shutil.copyfile(SOURCE, path)
    conn = sqlite3.connect(path)
    conn.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-200000;")
    base = conn.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    repeats = -(-kernels // base)
    first, span = conn.execute("SELECT min(start), max(end) - min(start) + 1000 FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
    ids = conn.execute("SELECT max(correlationId) + 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
    longer = "" if slower_name_id is None else \
        f" + CASE WHEN demangledName = {int(slower_name_id)} THEN (end - start) / 20 ELSE 0 END"
    _tile(conn, "CUPTI_ACTIVITY_KIND_KERNEL", repeats, span, ids, kernels, {"end": f"end + k * {span}{longer}"})
    _tile(conn, "CUPTI_ACTIVITY_KIND_RUNTIME", repeats, span, ids, None, {})
    _tile(conn, "NVTX_EVENTS", repeats, span, ids, None, {})
    if ranges is not None:
        _phases(conn, ranges)
    if memcpys:
        _copies(conn, memcpys, first, repeats * span, repeats * ids)
    conn.commit()
    conn.close()


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def _tile(conn: sqlite3.Connection, table: str, repeats: int, span: int, ids: int, limit: int | None,
          overrides: dict[str, str]) -> None:
    """Replace `table` by `repeats` copies of its rows, copy k shifted by k * span in time and by
    k * ids in correlation id (the first `limit` rows in time order)."""
    columns = _columns(conn, table)
    shifted = {"start": f"start + k * {span}", "end": f"end + k * {span}"}
    if "correlationId" in columns:
        shifted["correlationId"] = f"correlationId + k * {ids}"
    shifted |= overrides
    select = ", ".join(shifted.get(column, f"[{column}]") for column in columns)
    conn.execute(f"CREATE TEMP TABLE base AS SELECT * FROM {table}")
    conn.execute(f"DELETE FROM {table}")
    conn.execute(f"""INSERT INTO {table}
        WITH RECURSIVE copies(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM copies WHERE k + 1 < {repeats})
        SELECT {select} FROM copies, base ORDER BY k, start {'' if limit is None else f'LIMIT {int(limit)}'}""")
    conn.execute("DROP TABLE base")


def _phases(conn: sqlite3.Connection, ranges: int) -> None:
    """Nest `phase` ranges evenly in the tiled ranges until there are `ranges` in all."""
    steps = conn.execute("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59").fetchone()[0]
    extra = ranges - conn.execute("SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60)").fetchone()[0]
    if extra <= 0 or steps == 0:
        return
    per_step = -(-extra // steps)
    columns = _columns(conn, "NVTX_EVENTS")
    values = {"start": f"start + j * (end - start) / {per_step}", "end": f"start + (j + 1) * (end - start) / {per_step} - 1",
              "text": f"'{PHASE}'", "textId": "NULL"}
    select = ", ".join(values.get(column, f"[{column}]") for column in columns)
    conn.execute(f"""INSERT INTO NVTX_EVENTS
        WITH RECURSIVE parts(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM parts WHERE j + 1 < {per_step})
        SELECT {select} FROM (SELECT * FROM NVTX_EVENTS WHERE eventType = 59), parts LIMIT {int(extra)}""")


def _copies(conn: sqlite3.Connection, memcpys: int, first: int, span: int, first_id: int) -> None:
    """`memcpys` host-to-device copies spread over [first, first + span), each with its
    cudaMemcpyAsync call on the kernel-launching thread, correlation ids from `first_id` on."""
    conn.execute("ATTACH DATABASE ? AS real", (f"{COPIES_SOURCE.resolve().as_uri()}?mode=ro",))
    (schema,) = conn.execute("SELECT sql FROM real.sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_MEMCPY'").fetchone()
    conn.execute(schema)
    columns = _columns(conn, "CUPTI_ACTIVITY_KIND_MEMCPY")
    device, context, stream, pid, thread = conn.execute(
        "SELECT k.deviceId, k.contextId, k.streamId, k.globalPid, r.globalTid FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r USING (correlationId) LIMIT 1").fetchone()
    gap = span // memcpys
    copy = {"start": f"{first} + i * {gap} + 500", "end": f"{first} + i * {gap} + 500 + {COPY_NS}",
            "deviceId": str(device), "contextId": str(context), "streamId": str(stream),
            "correlationId": f"{first_id} + i", "globalPid": str(pid), "bytes": str(COPY_BYTES)}
    select = ", ".join(copy.get(column, f"t.[{column}]") for column in columns)
    counter = f"WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < {int(memcpys)})"
    conn.execute(f"""INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY {counter}
        SELECT {select} FROM n, (SELECT * FROM real.CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 LIMIT 1) AS t""")
    name = "cudaMemcpyAsync_v3020"
    row = conn.execute("SELECT id FROM StringIds WHERE value = ?", (name,)).fetchone()
    name_id = row[0] if row else conn.execute("SELECT max(id) + 1 FROM StringIds").fetchone()[0]
    if not row:
        conn.execute("INSERT INTO StringIds VALUES (?, ?)", (name_id, name))
    runtime = _columns(conn, "CUPTI_ACTIVITY_KIND_RUNTIME")
    call = {"start": f"{first} + i * {gap}", "end": f"{first} + i * {gap} + 400", "globalTid": str(thread),
            "correlationId": f"{first_id} + i", "nameId": str(name_id)}
    select = ", ".join(call.get(column, f"t.[{column}]") for column in runtime)
    conn.execute(f"""INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME {counter}
        SELECT {select} FROM n, (SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 1) AS t""")
    conn.commit()
    conn.execute("DETACH DATABASE real")
