"""Write small nsys-like SQLite exports for tests: the tables and columns nsprof reads, in nsys's
names, with rows given as plain tuples. Absent tables stay absent, as in newer nsys exports."""

from __future__ import annotations

import sqlite3
from pathlib import Path

THREAD_BITS = 1 << 24


def global_tid(pid: int, tid: int, vm: int = 1) -> int:
    """nsys serialized thread id: (vm * 2**24 + pid) * 2**24 + tid."""
    return ((vm << 24) + pid) * THREAD_BITS + tid


def global_pid(pid: int, vm: int = 1) -> int:
    return global_tid(pid, 0, vm)


TABLES = {
    "StringIds": ("id INTEGER PRIMARY KEY", "value TEXT NOT NULL"),
    "CUPTI_ACTIVITY_KIND_KERNEL": (
        "start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid", "demangledName",
        "shortName", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ", "registersPerThread",
        "staticSharedMemory", "dynamicSharedMemory"),
    "CUPTI_ACTIVITY_KIND_MEMCPY": ("start", "end", "deviceId", "contextId", "streamId", "correlationId",
                                   "globalPid", "bytes", "copyKind", "srcKind", "dstKind"),
    "CUPTI_ACTIVITY_KIND_MEMSET": ("start", "end", "deviceId", "contextId", "streamId", "correlationId",
                                   "globalPid", "value", "bytes"),
    "CUPTI_ACTIVITY_KIND_RUNTIME": ("start", "end", "eventClass", "globalTid", "correlationId", "nameId",
                                    "returnValue"),
    "NVTX_EVENTS": ("start", "end", "eventType", "rangeId", "text", "globalTid", "textId", "domainId"),
}


def write_export(path: Path, strings: dict[int, str] | None = None, *, kernels=(), memcpys=(), memsets=(),
                 runtime=(), nvtx=(), absent=()) -> Path:
    """Rows are tuples in the column order of TABLES. Short-hand rows:

    kernels: (start, end, correlation_id, global_pid, name_id); memcpys: (start, end, correlation_id,
    global_pid, bytes, copy_kind); memsets: (start, end, correlation_id, global_pid, bytes);
    runtime: (start, end, global_tid, correlation_id, name_id); nvtx: (start, end, event_type,
    text, global_tid, text_id, domain_id).
    """
    conn = sqlite3.connect(path)
    for table, columns in TABLES.items():
        if table not in absent:
            conn.execute(f"CREATE TABLE {table} ({', '.join(columns)})")
    conn.executemany("INSERT INTO StringIds VALUES (?, ?)", (strings or {}).items())
    rows = {
        "CUPTI_ACTIVITY_KIND_KERNEL": [(s, e, 0, 1, 7, c, p, n, n, 1, 1, 1, 32, 1, 1, 32, 0, 0) for s, e, c, p, n in kernels],
        "CUPTI_ACTIVITY_KIND_MEMCPY": [(s, e, 0, 1, 7, c, p, b, k, 1, 2) for s, e, c, p, b, k in memcpys],  # pinned -> device
        "CUPTI_ACTIVITY_KIND_MEMSET": [(s, e, 0, 1, 7, c, p, 0, b) for s, e, c, p, b in memsets],
        "CUPTI_ACTIVITY_KIND_RUNTIME": [(s, e, 1, t, c, n, 0) for s, e, t, c, n in runtime],
        "NVTX_EVENTS": [(s, e, kind, None, text, t, text_id, d) for s, e, kind, text, t, text_id, d in nvtx],
    }
    for table, table_rows in rows.items():
        if table_rows:
            conn.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(TABLES[table]))})", table_rows)
    conn.commit()
    conn.close()
    return path
