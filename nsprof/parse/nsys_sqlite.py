"""Read an Nsight Systems SQLite export (`nsys profile --export=sqlite`, `nsys export -t sqlite`)
into pandas DataFrames, one per kind of event.

The schema differs across nsys versions: newer exports leave out the tables of events that did not
occur (no NVTX_EVENTS at all), only newer ones carry ENUM_* tables, columns get added. So this
module lists `sqlite_master` before reading a table, selects columns by name, resolves every name
through `StringIds`, and gives an absent table as an empty DataFrame with the same columns.

Every column, with its type and unit, is declared by the model
(nsprof.parse.model.TIMELINE_COLUMNS). Timestamps are nanoseconds on the capture's
own clock. nsys serializes thread and process ids into `globalTid`/`globalPid`; the Linux ids are
`pid = globalTid / 0x1000000 % 0x1000000` and `tid = globalTid % 0x1000000` (nsys documentation).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import warnings
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from nsprof.errors import MissingPathError, ParseError
from nsprof.parse.model import RECAPTURE, THREAD_IDS, TIMELINE_COLUMNS, GpuTimeline, linux_pid, linux_tid, lost_work
from nsprof.parse.nsys_host import host_tables
from nsprof.paths import missing_reason, special_file_reason
from nsprof.printable import printable
from nsprof.ranges import qualify

# the model's tables and columns that nsys records: what this reader fills (a framework's operators it does not)
COLUMNS = {table: {name: column for name, column in columns.items() if not column.framework}
           for table, columns in TIMELINE_COLUMNS.items()}

# NVTX_EVENTS.eventType values (ENUM_NSYS_EVENT_TYPE in newer exports).
NVTX_PUSH_POP_RANGE = 59
NVTX_START_END_RANGE = 60
NVTX_DOMAIN_CREATE = 75
NVTX_RANGE_KINDS = {NVTX_PUSH_POP_RANGE: "push_pop", NVTX_START_END_RANGE: "start_end"}

# CUPTI memcpy kinds, for exports older than the ENUM_CUDA_MEMCPY_OPER table.
MEMCPY_KINDS = {
    0: "Unknown", 1: "Host-to-Device", 2: "Device-to-Host", 3: "Host-to-Array", 4: "Array-to-Host",
    5: "Array-to-Array", 6: "Array-to-Device", 7: "Device-to-Array", 8: "Device-to-Device",
    9: "Host-to-Host", 10: "Peer-to-Peer",
}

TABLES_SQL = "SELECT name FROM sqlite_master WHERE type = 'table'"
VIEWS_SQL = "SELECT name FROM sqlite_master WHERE type = 'view'"
TABLE_COLUMNS_SQL = "SELECT name FROM pragma_table_info('{table}')"
STRINGS_SQL = "SELECT id, value FROM StringIds"
MEMCPY_KINDS_SQL = "SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER"
NVTX_SQL = f"""
SELECT n.start AS start_ns, n."end" AS end_ns, n.eventType AS event_type,
       n.globalTid AS global_tid, n.domainId AS domain_id, COALESCE(n.text, s.value) AS name
FROM NVTX_EVENTS AS n LEFT JOIN StringIds AS s ON s.id = n.textId
WHERE n.eventType IN ({NVTX_PUSH_POP_RANGE}, {NVTX_START_END_RANGE}, {NVTX_DOMAIN_CREATE})
"""
GPUS_SQL = "SELECT {columns} FROM TARGET_INFO_GPU"
GPU_COLUMNS = {  # DataFrame column: TARGET_INFO_GPU column (informational: any may be missing)
    "device_id": "id", "name": "name", "chip": "chipName", "bus_location": "busLocation",
    "sm_count": "smCount", "clock_hz": "clockRate", "memory_bytes": "totalMemory",
    "memory_bandwidth_bytes_per_s": "memoryBandwidth", "l2_cache_bytes": "l2CacheSize",
    "compute_major": "computeMajor", "compute_minor": "computeMinor", "uuid": "uuid",
}
VERSION_SQL = "SELECT value FROM {table} WHERE name = 'EXPORT_PRODUCT_VERSION'"
METADATA_TABLES = ("META_DATA_EXPORT", "EXPORT_META_DATA")  # newer name first

# The large event tables are read column by column, one scan per chunk of rows:
#   SELECT count(*), group_concat(col1), group_concat(col2), ... FROM table WHERE rowid in a chunk
# sqlite3 makes one Python object per value (~0.2 us each), so a 1,000,000-row table read row by
# row takes seconds; one comma-joined string per column, parsed by numpy straight into the column's
# array, is several times faster, and a single scan feeds every aggregate the same rows in the same
# order. Chunks bound the text held at once (a 10M-row table's whole text would be gigabytes).
# min and max of the rowid in two queries: each alone is a seek in the table's b-tree, both in one a full scan
ROWIDS_SQL = "SELECT (SELECT min(rowid) FROM {table}), (SELECT max(rowid) FROM {table})"
COLUMN_SCAN_SQL = "SELECT count(*), {aggregates} FROM {table} WHERE rowid >= {first} AND rowid <= {last}"
# Where rowids are sparse (a damaged or edited export: one rowid of 2^63 - 1), chunks of SCAN_CHUNK_ROWS
# rows start at every SCAN_CHUNK_ROWS-th rowid, found in one pass, instead of one per range of rowids.
CHUNK_STARTS_SQL = ("SELECT rowid FROM (SELECT rowid, row_number() OVER (ORDER BY rowid) - 1 AS n FROM {table}) "
                    "WHERE n % {chunk} = 0 ORDER BY rowid")
SCAN_CHUNK_ROWS = 250_000
# SQLite runs a query without Python's lock, so chunks read on their own connections in two
# threads take about 60% of the time one thread takes on two cores.
SCAN_THREADS = 2
# Sizes and ids that CUDA keeps within 32 bits (device, stream, grid and block sizes, registers,
# shared memory): int32 columns, so that a 10M-kernel frame is 280 MB smaller.
SMALL_COLUMNS = frozenset({"device_id", "stream_id", "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z",
                           "registers_per_thread", "static_smem_bytes", "dynamic_smem_bytes"})
EVENT_TABLES = ("kernels", "memcpys", "memsets", "runtime", "graphs", "syncs")
# Derived columns and the table columns they are computed from (as DataFrame columns).
DERIVED = {"duration_ns": ("start_ns", "end_ns"), "pid": ("global_pid", "global_tid"), "tid": ("global_tid",),
           "name": ("graph_id",)}
SQLITE_MAX_PATH = 512  # SQLITE_MAX_PATHNAME: SQLite opens no longer path
MAX_EVENT_NS = 7 * 24 * 3600 * 10**9  # a week: longer GPU work or API calls are damage, not data
RE_EXPORT = "Export the report again: nsys export --type sqlite --force-overwrite true REPORT.nsys-rep"


@dataclass(frozen=True)
class IntColumns:
    """Integer columns to read from one table: DataFrame column -> table column."""

    table: str
    columns: dict[str, str]
    nullable: frozenset[str] = frozenset()  # may hold NULL (read as <NA>); others must not
    optional: frozenset[str] = frozenset()  # may be absent from the table (read as <NA>); must be nullable


KERNEL_COLUMNS = IntColumns(
    "CUPTI_ACTIVITY_KIND_KERNEL",
    {"start_ns": "start", "end_ns": "end", "device_id": "deviceId", "stream_id": "streamId",
     "correlation_id": "correlationId", "global_pid": "globalPid",
     "kernel": "demangledName", "short_name": "shortName", "mangled_name": "mangledName",
     "grid_x": "gridX", "grid_y": "gridY", "grid_z": "gridZ",
     "block_x": "blockX", "block_y": "blockY", "block_z": "blockZ",
     "registers_per_thread": "registersPerThread",
     "static_smem_bytes": "staticSharedMemory", "dynamic_smem_bytes": "dynamicSharedMemory"},
    frozenset({"correlation_id", "global_pid", "mangled_name"}),
    frozenset({"mangled_name"}),
)
MEMCPY_COLUMNS = IntColumns(
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    {"start_ns": "start", "end_ns": "end", "device_id": "deviceId", "stream_id": "streamId",
     "correlation_id": "correlationId", "global_pid": "globalPid", "bytes": "bytes",
     "copy_kind": "copyKind", "src_kind": "srcKind", "dst_kind": "dstKind"},
    frozenset({"correlation_id", "global_pid", "src_kind", "dst_kind"}),
)
# nsys's memory kinds, for exports older than the ENUM_CUDA_MEM_KIND table (the same numbers:
# 0 is pageable here, unlike CUPTI's own enumeration).
MEMORY_KINDS = {0: "Pageable", 1: "Pinned", 2: "Device", 3: "Array", 4: "Managed", 5: "Device Static",
                6: "Managed Static", 7: "Unknown"}
MEMORY_KINDS_SQL = "SELECT id, label FROM ENUM_CUDA_MEM_KIND"
MEMSET_COLUMNS = IntColumns(
    "CUPTI_ACTIVITY_KIND_MEMSET",
    {"start_ns": "start", "end_ns": "end", "device_id": "deviceId", "stream_id": "streamId",
     "correlation_id": "correlationId", "global_pid": "globalPid", "bytes": "bytes"},
    frozenset({"correlation_id", "global_pid"}),
)
GRAPH_COLUMNS = IntColumns(
    "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
    {"start_ns": "start", "end_ns": "end", "device_id": "deviceId", "stream_id": "streamId",
     "correlation_id": "correlationId", "global_pid": "globalPid", "graph_id": "graphId",
     "graph_exec_id": "graphExecId"},
    frozenset({"correlation_id", "global_pid"}),
)
GRAPH_NAME = "CUDA graph {}"
SYNC_COLUMNS = IntColumns(
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    {"start_ns": "start", "end_ns": "end", "device_id": "deviceId", "stream_id": "streamId",
     "correlation_id": "correlationId", "global_pid": "globalPid", "sync_type": "syncType"},
    frozenset({"device_id", "stream_id", "correlation_id", "global_pid", "sync_type"}),
)
# CUPTI's synchronization kinds, for exports older than the ENUM_CUPTI_SYNC_TYPE table.
SYNC_TYPES = {0: "Unknown", 1: "Event sync", 2: "Stream wait event", 3: "Stream sync", 4: "Context sync"}
SYNC_TYPES_SQL = "SELECT id, label FROM ENUM_CUPTI_SYNC_TYPE"
THREADS_SQL = """SELECT t.globalTid AS global_tid, s.value AS name FROM ThreadNames AS t
LEFT JOIN StringIds AS s ON s.id = t.nameId"""
RUNTIME_COLUMNS = IntColumns(
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    {"start_ns": "start", "end_ns": "end", "correlation_id": "correlationId",
     "global_tid": "globalTid", "api": "nameId"},
    frozenset({"correlation_id", "global_tid"}),
)

# Every table the parse reads: one of these that is a VIEW (a damaged or edited export) is refused.
READ_TABLES = frozenset({spec.table for spec in (KERNEL_COLUMNS, MEMCPY_COLUMNS, MEMSET_COLUMNS, GRAPH_COLUMNS,
                                                RUNTIME_COLUMNS, SYNC_COLUMNS)} |
                        {"StringIds", "NVTX_EVENTS", "TARGET_INFO_GPU", "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND",
                         "ENUM_CUPTI_SYNC_TYPE", "ThreadNames"})


def may_be_export(path: Path) -> bool:
    """Whether a .sqlite file found among captures is taken for an nsys export: any file but an SQLite
    database that holds tables and no StringIds (another tool's database, such as nsprof's history
    kept beside the captures). A damaged or empty file is taken, so that reading it says what is wrong."""
    tables = sqlite_tables(path)
    return not tables or "StringIds" in tables


def sqlite_tables(path: Path) -> set[str] | None:
    """The table names of the SQLite database at `path`, opened read-only; None for a file that is
    not one, or that cannot be read (a FIFO is never opened: it would wait for a writer forever)."""
    if special_file_reason(Path(path)):
        return None
    try:
        with open(path, "rb") as file:
            if file.read(16) != b"SQLite format 3\x00":
                return None
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            conn.close()
    except (OSError, sqlite3.Error):
        return None


def load_nsys(path: str | Path, columns: Mapping[str, Iterable[str]] | None = None) -> GpuTimeline:
    """Read kernels, memcpys, memsets, graph launches, CUDA API calls, synchronizations, NVTX ranges,
    thread names and GPUs from an nsys export.

    `columns` names, for any of the event tables (EVENT_TABLES: kernels, memcpys, memsets, runtime,
    graphs, syncs), the only columns of COLUMNS[table] to read; the tables it does not name are read
    whole. A 10M-kernel export's full kernels frame alone is over a gigabyte, and each column is a
    scan of the table, so an analysis reads what it uses.

    Raises ParseError (naming the file) for a missing, empty, truncated or non-SQLite file, for
    a SQLite file that is not an nsys export, and for a damaged one: names that are not text or
    point at no StringIds row, events that end before they start.
    """
    path = Path(path)
    with _open_readonly(path) as conn:
        tables = {name for (name,) in _fetch(conn, path, TABLES_SQL)}
        views = sorted({name for (name,) in _fetch(conn, path, VIEWS_SQL)} & READ_TABLES)
        if views:  # read as absent, a view would make an empty table of events without a word
            raise ParseError(f"{path}: {', '.join(views)} {'is a view' if len(views) == 1 else 'are views'}, not "
                             "the table nsys writes; the export is damaged", RE_EXPORT)
        if "StringIds" not in tables:
            raise ParseError(f"{path}: not an Nsight Systems export (no StringIds table)",
                             "Export the report with: nsys export --type sqlite REPORT.nsys-rep")
        wanted = _wanted_columns(columns)
        strings = _strings(conn, path)
        copy_kinds = _memcpy_kinds(conn, path, tables)
        kernels = _read_events(conn, path, tables, KERNEL_COLUMNS, wanted["kernels"])
        for column in ("kernel", "short_name", "mangled_name"):
            if column in kernels:
                kernels[column] = _names(kernels[column], strings, path, column.replace("_", " "))
        memcpys = _read_events(conn, path, tables, MEMCPY_COLUMNS, wanted["memcpys"])
        if "copy_kind" in memcpys:
            memcpys["copy_kind"] = _labels(memcpys["copy_kind"], copy_kinds)
        memory_kinds = _enum(conn, path, tables, "ENUM_CUDA_MEM_KIND", MEMORY_KINDS_SQL, MEMORY_KINDS)
        for column in ("src_kind", "dst_kind"):
            if column in memcpys:
                memcpys[column] = _labels(memcpys[column], memory_kinds)
        memsets = _read_events(conn, path, tables, MEMSET_COLUMNS, wanted["memsets"])
        graphs = _read_events(conn, path, tables, GRAPH_COLUMNS, wanted["graphs"])
        if "name" in wanted["graphs"]:
            graphs["name"] = pd.Series([GRAPH_NAME.format(graph_id) for graph_id in graphs["graph_id"]], dtype=object)
        runtime = _read_events(conn, path, tables, RUNTIME_COLUMNS, wanted["runtime"])
        if "api" in runtime:
            runtime["api"] = _names(runtime["api"], strings, path, "CUDA API name")
        syncs = _read_events(conn, path, tables, SYNC_COLUMNS, wanted["syncs"])
        if "sync_type" in syncs:
            syncs["sync_type"] = _labels(syncs["sync_type"],
                                         _enum(conn, path, tables, "ENUM_CUPTI_SYNC_TYPE", SYNC_TYPES_SQL, SYNC_TYPES))
        host = host_tables(conn, path, tables, strings, _frame, _names)
        timeline = GpuTimeline(
            path=path,
            nsys_version=_nsys_version(conn, path, tables),
            processing_errors=_processing_errors(conn, path, tables),
            **host,
            kernels=kernels[wanted["kernels"]],
            memcpys=memcpys[wanted["memcpys"]],
            memsets=memsets[wanted["memsets"]],
            runtime=runtime[wanted["runtime"]],
            nvtx=_nvtx_ranges(conn, path, tables),
            gpus=_gpus(conn, path, tables),
            graphs=graphs[wanted["graphs"]],
            syncs=syncs[wanted["syncs"]],
            threads=_threads(conn, path, tables),
        )
    if lost := lost_work(timeline):
        raise ParseError(f"{path}: {lost}", RECAPTURE)
    return timeline


PROCESSING_ERRORS_SQL = ("SELECT text FROM DIAGNOSTIC_EVENT WHERE severity >= 2 AND text LIKE '%ProcessEventsError%'")

def _processing_errors(conn: sqlite3.Connection, path: Path, tables: set[str]) -> tuple[str, ...]:
    """What nsys reported failing while it processed the capture's events (DIAGNOSTIC_EVENT rows of
    a ProcessEventsError), one line each as often as it came: the exception's own words."""
    if "DIAGNOSTIC_EVENT" not in tables or "text" not in _table_columns(conn, path, "DIAGNOSTIC_EVENT"):
        return ()
    return tuple(_error_words(str(text)) for (text,) in _fetch(conn, path, PROCESSING_ERRORS_SQL))


def _error_words(text: str) -> str:
    """The line of an nsys processing error that says what failed (its message, else its exception)."""
    lines = [line.strip() for line in text.splitlines()]
    said = [line.split("] = ", 1)[1] for line in lines if "] = " in line] or \
        [line.split(": ", 1)[1] for line in lines if line.startswith("std::exception::what:")]
    return f"ProcessEventsError: {said[0]}" if said else "ProcessEventsError"


@contextmanager
def _open_readonly(path: Path) -> Iterator[sqlite3.Connection]:
    """The export opened read-only (it is evidence: never modify it), closed afterwards."""
    if not path.is_file():
        raise MissingPathError(f"{path}: {missing_reason(path)}", "Pass an nsys SQLite export (nsys export --type sqlite)")
    if path.stat().st_size == 0:
        raise ParseError(f"{path}: empty file, not an nsys SQLite export")
    if not os.access(path, os.R_OK):
        raise ParseError(f"{path}: permission denied", "Check the file's permissions (it must be readable)")
    conn = _connect(path)
    try:
        yield conn
    finally:
        conn.close()


def _connect(path: Path) -> sqlite3.Connection:
    """Read-only, and immutable where no write-ahead log lies beside it: SQLite then writes nothing
    into the profile directory (a WAL-mode export otherwise gets -shm and -wal files, and fails in a
    read-only directory). A -wal file beside it may hold pages the export still needs: read it then."""
    resolved = path.resolve()
    immutable = "" if resolved.with_name(resolved.name + "-wal").exists() else "&immutable=1"
    try:  # a reader thread's connection is used in that thread only, and closed by the one that made the threads
        return sqlite3.connect(f"{resolved.as_uri()}?mode=ro{immutable}", uri=True, check_same_thread=False)
    except sqlite3.Error as err:
        if len(str(resolved)) > SQLITE_MAX_PATH:
            raise ParseError(f"{path}: cannot open as SQLite: its path is {len(str(resolved)):,} characters, longer than "
                             f"SQLite opens ({SQLITE_MAX_PATH})", "move or link the capture to a shorter path") from None
        raise ParseError(f"{path}: cannot open as SQLite ({err})") from None


def _fetch(conn: sqlite3.Connection, path: Path, sql: str) -> list[tuple]:
    return _execute(conn, path, sql)[1]


def _frame(conn: sqlite3.Connection, path: Path, sql: str) -> pd.DataFrame:
    """Query result with Python values as they came (object columns: NULLs never turn ints to float)."""
    columns, rows = _execute(conn, path, sql)
    return pd.DataFrame(rows, columns=columns, dtype=object)


def _execute(conn: sqlite3.Connection, path: Path, sql: str) -> tuple[list[str], list[tuple]]:
    """Run one query; any SQLite failure (not a database, truncated, malformed) is a ParseError."""
    try:
        cursor = conn.execute(sql)
        return [d[0] for d in cursor.description], cursor.fetchall()
    except (sqlite3.Error, UnicodeError) as err:  # a damaged schema can fail to decode as well
        raise ParseError(f"{path}: unreadable as an nsys SQLite export ({err})", RE_EXPORT) from None


def _strings(conn: sqlite3.Connection, path: Path) -> pd.Series:
    """StringIds as id -> text. A row that is not text (a BLOB, a number) is a damaged export."""
    conn.text_factory = bytes  # decode here, so a BLOB or bad UTF-8 names its row instead of failing deep in pandas
    try:
        table = _frame(conn, path, STRINGS_SQL).drop_duplicates("id")
    finally:
        conn.text_factory = str
    values = [_text(value) for value in table["value"]]
    damaged = next((i for i, text in enumerate(values) if text is None), None)
    if damaged is not None:
        value = table["value"].iloc[damaged]
        what = "bytes that are not UTF-8" if isinstance(value, bytes) else f"a {type(value).__name__}"
        raise ParseError(f"{path}: StringIds row {table['id'].iloc[damaged]} holds {what}, not text; "
                         "the export is damaged", RE_EXPORT)
    return pd.Series(np.array(values, dtype=object), index=table["id"].to_numpy())


def _text(value) -> str | None:
    """A StringIds value as printable text; None for anything else (NULL, a number, bytes that are
    not UTF-8)."""
    if not isinstance(value, bytes):
        return None
    try:
        return printable(value.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def _names(ids: pd.Series, strings: pd.Series, path: Path, column: str) -> pd.Categorical:
    """StringIds ids -> names, as a categorical (a million kernels share a few dozen names).
    Raises ParseError when an id has no StringIds row (an emptied or cut StringIds table).

    Each id is read as a slot of a small table (slot -> string code, -1 for none), and every step
    but two works on the table: a 10M-id column is read once to count its slots and once to take
    its final codes."""
    codes_of_strings, categories = pd.factorize(strings.to_numpy())  # StringIds may repeat a value
    raw = ids.to_numpy(dtype=np.int64, na_value=-1)
    string_ids = strings.index.to_numpy(dtype=np.int64)
    if len(string_ids) and string_ids.min() >= 0 and string_ids.max() <= 4 * len(string_ids) + (1 << 20):
        # ids dense from 0, as nsys numbers them: the slot is the id (the last slot: NULL ids and ids past the table)
        slots = np.full(int(string_ids.max()) + 2, -1, dtype=np.int64)
        slots[string_ids] = codes_of_strings
        inside = len(raw) == 0 or (raw.min() >= 0 and raw.max() < len(slots) - 1)
        index = raw if inside else np.where((raw >= 0) & (raw < len(slots) - 1), raw, len(slots) - 1)
    else:  # the slot is the id's StringIds row (the last slot: NULL and unknown ids)
        positions = strings.index.get_indexer(raw)
        slots = np.append(codes_of_strings, -1)
        index = np.where(positions >= 0, positions, len(strings))
    counts = np.bincount(index, minlength=len(slots))
    unresolved = int(counts[slots < 0].sum()) - int(ids.isna().sum())  # the last slot holds the NULL ids too
    if unresolved:
        raise ParseError(f"{path}: {unresolved} {column} ids have no row in StringIds "
                         f"({len(strings)} rows); the export is damaged", RE_EXPORT)
    # the categories in use, in their order (Categorical.remove_unused_categories hashes every code)
    used = np.zeros(len(categories), dtype=bool)
    used[slots[(counts > 0) & (slots >= 0)]] = True
    renumbered = np.where(used, np.cumsum(used) - 1, -1)
    final = np.full(len(slots), -1, dtype=np.int64)
    final[slots >= 0] = renumbered[slots[slots >= 0]]
    return pd.Categorical.from_codes(final[index], categories=categories[used])


def _labels(ids: pd.Series, labels: dict[int, str]) -> pd.Categorical:
    """Enum ids -> their labels, as a categorical (<NA> for NULL and unknown ids; ids that share a
    label, as a damaged ENUM table can have them, share its category)."""
    known = sorted(labels)
    names = list(dict.fromkeys(labels[i] for i in known))
    code_of = np.array([names.index(labels[i]) for i in known] + [-1], dtype=np.int64)  # the last: unknown ids
    codes = code_of[pd.Index(known).get_indexer(ids.to_numpy(dtype=np.int64, na_value=-1))]
    return pd.Categorical.from_codes(codes, categories=pd.Index(names, dtype=object)).remove_unused_categories()


def _enum(conn: sqlite3.Connection, path: Path, tables: set[str], table: str, sql: str,
          default: dict[int, str]) -> dict[int, str]:
    """An ENUM_* table's labels by id, or `default` for exports that do not carry it."""
    if table not in tables:
        return default
    return {i: label for i, label in _fetch(conn, path, sql) if type(i) is int and isinstance(label, str)}


def _memcpy_kinds(conn: sqlite3.Connection, path: Path, tables: set[str]) -> dict[int, str]:
    if "ENUM_CUDA_MEMCPY_OPER" not in tables:
        return MEMCPY_KINDS
    return {i: label for i, label in _fetch(conn, path, MEMCPY_KINDS_SQL) if type(i) is int and isinstance(label, str)}


def _wanted_columns(columns: Mapping[str, Iterable[str]] | None) -> dict[str, list[str]]:
    """Per event table, the DataFrame columns to give, in COLUMNS order: of those asked, the ones nsys
    records (a model column only a framework records, such as kernels.operator, is asked of every
    reader alike; nsys gives none of it); a name the model does not declare is an error."""
    columns = dict(columns or {})
    unknown = set(columns) - set(EVENT_TABLES)
    if unknown:
        raise ValueError(f"columns: no event table {', '.join(sorted(unknown))} (one of {EVENT_TABLES})")
    wanted = {}
    for table in EVENT_TABLES:
        names = set(columns.get(table, COLUMNS[table]))
        if names - set(TIMELINE_COLUMNS[table]):
            raise ValueError(f"columns: {table} has no column {', '.join(sorted(names - set(TIMELINE_COLUMNS[table])))}")
        wanted[table] = [name for name in COLUMNS[table] if name in names]
    return wanted


def _subset(spec: IntColumns, wanted: list[str]) -> IntColumns:
    """`spec` reduced to the table columns `wanted` needs (derived columns need their sources);
    start and end are always read: events that end before they start are a damaged export."""
    needed = {"start_ns", "end_ns", *wanted}
    needed |= {source for name in wanted for source in DERIVED.get(name, ())}
    return IntColumns(spec.table, {name: source for name, source in spec.columns.items() if name in needed},
                      spec.nullable & needed, spec.optional & needed)


def _read_events(conn: sqlite3.Connection, path: Path, tables: set[str], spec: IntColumns,
                 wanted: list[str]) -> pd.DataFrame:
    """Read integer columns of one event table (empty frame if the table is absent), plus
    duration_ns and the Linux pid/tid of the serialized ids; only the columns `wanted` needs."""
    spec = _subset(spec, wanted)
    if spec.table in tables:
        frame = _scan_int_columns(conn, path, spec)
    else:
        frame = pd.DataFrame({name: np.empty(0, dtype=np.int64) for name in spec.columns})
        for name in spec.nullable:
            frame[name] = frame[name].astype("Int64")
    backwards = int((frame["end_ns"].to_numpy() < frame["start_ns"].to_numpy()).sum())
    if backwards:
        raise ParseError(f"{path}: {backwards} of the {len(frame)} rows of {spec.table} end before they start; "
                         "the export is damaged", RE_EXPORT)
    # int64 ns sums of absurd times overflow (a "% time" of -4827.8): no GPU event outlasts a week
    endless = int(((frame["end_ns"].to_numpy() - frame["start_ns"].to_numpy()) > MAX_EVENT_NS).sum())
    if endless:
        raise ParseError(f"{path}: {endless} of the {len(frame)} rows of {spec.table} last longer than a week; "
                         "the export is damaged", RE_EXPORT)
    if "duration_ns" in wanted:
        frame["duration_ns"] = frame["end_ns"] - frame["start_ns"]
    if "pid" in wanted:
        serialized = "global_pid" if "global_pid" in frame else "global_tid"
        frame["pid"] = linux_pid(frame[serialized])
    if "tid" in wanted:
        frame["tid"] = linux_tid(frame["global_tid"])
    for name in SMALL_COLUMNS & set(frame.columns):  # int32 where every value fits: 4 bytes a row saved
        values = frame[name].to_numpy()
        if len(values) == 0 or (values.min() >= np.iinfo(np.int32).min and values.max() <= np.iinfo(np.int32).max):
            frame[name] = values.astype(np.int32)
    return frame


def _scan_int_columns(conn: sqlite3.Connection, path: Path, spec: IntColumns) -> pd.DataFrame:
    present = _table_columns(conn, path, spec.table)
    missing = [source for name, source in spec.columns.items() if source not in present and name not in spec.optional]
    if missing:
        raise ParseError(f"{path}: table {spec.table} has no column {', '.join(missing)}",
                         "Re-export the report with a current nsys (nsys export --type sqlite)")
    aggregates = ", ".join(
        ("group_concat(-1)" if source not in present else f"group_concat(ifnull([{source}], -1))")
        if name in spec.nullable else f"group_concat([{source}])"
        for name, source in spec.columns.items()
    )
    ((first, last),) = _fetch(conn, path, ROWIDS_SQL.format(table=spec.table))
    ((rows,),) = _fetch(conn, path, f"SELECT count(*) FROM {spec.table}")
    local = threading.local()

    def read_chunk(chunk: tuple[int, int]) -> list[np.ndarray]:
        if not hasattr(local, "conn"):  # a connection per thread (sqlite3 connections stay in theirs)
            local.conn = _connect(path)
            opened.append(local.conn)
        start, stop = chunk
        sql = COLUMN_SCAN_SQL.format(aggregates=aggregates, table=spec.table, first=start, last=stop)
        (row,) = _fetch(local.conn, path, sql)
        count, texts = row[0], row[1:]
        arrays = []
        for source, text in zip(spec.columns.values(), texts):
            values = _parse_ints(text)
            if values is None or len(values) != count:
                raise ParseError(f"{path}: column {spec.table}.{source} holds NULL or non-integer values")
            arrays.append(values)
        return arrays

    # Each chunk's arrays are copied into the whole columns as it arrives and then freed: the
    # table is held once, plus the chunks in flight.
    columns = [np.empty(rows, dtype=np.int64) for _ in spec.columns]
    filled = 0
    opened: list[sqlite3.Connection] = []
    try:
        with ThreadPoolExecutor(SCAN_THREADS) as pool:
            for arrays in pool.map(read_chunk, _chunks(conn, path, spec.table, first, last, rows)):
                count = len(arrays[0])
                if filled + count > rows:
                    raise ParseError(f"{path}: table {spec.table} changed while it was read")
                for column, values in zip(columns, arrays):
                    column[filled:filled + count] = values
                filled += count
    finally:
        for opened_conn in opened:
            opened_conn.close()
    if filled != rows:
        raise ParseError(f"{path}: table {spec.table} changed while it was read")
    frame = {}
    for name, values in zip(spec.columns, columns):
        if name in spec.nullable:
            values = pd.arrays.IntegerArray(values, values == -1)  # -1: the scan's NULL (ids are never negative)
        frame[name] = values
    return pd.DataFrame(frame, copy=False)  # keep one block per column: consolidating copies them all


def _chunks(conn: sqlite3.Connection, path: Path, table: str, first: int | None, last: int | None,
            rows: int) -> list[tuple[int, int]]:
    """(first rowid, last rowid) of each chunk of about SCAN_CHUNK_ROWS rows: ranges of rowids where
    they are dense (the exports nsys writes), chunks found by row number where they are not."""
    if not rows or first is None or last is None:
        return []
    if last - first < 2 * rows + SCAN_CHUNK_ROWS:
        starts = list(range(first, last + 1, SCAN_CHUNK_ROWS))
    else:
        starts = [start for (start,) in _fetch(conn, path, CHUNK_STARTS_SQL.format(table=table, chunk=SCAN_CHUNK_ROWS))]
    return list(zip(starts, [start - 1 for start in starts[1:]] + [last]))


def _parse_ints(text: str | None) -> np.ndarray | None:
    """Comma-separated integers -> int64 array; None when the text holds anything else."""
    if text is None:  # group_concat over no rows
        return np.empty(0, dtype=np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy warns (and stops early) on a malformed number
        try:
            return np.fromstring(text, dtype=np.int64, sep=",")
        except (ValueError, DeprecationWarning):
            return None


def _nvtx_ranges(conn: sqlite3.Connection, path: Path, tables: set[str]) -> pd.DataFrame:
    columns = list(COLUMNS["nvtx"])
    if "NVTX_EVENTS" not in tables:
        return _typed_nvtx(pd.DataFrame(columns=columns))
    events = _frame(conn, path, NVTX_SQL)
    if not all(name is None or isinstance(name, str) for name in events["name"]):
        raise ParseError(f"{path}: an NVTX range name is not text (a BLOB in NVTX_EVENTS or StringIds); "
                         "the export is damaged", RE_EXPORT)
    events["name"] = _printable_names(events["name"])
    for column in ("start_ns", "end_ns", "global_tid", "domain_id"):
        events[column] = _integers(events[column])
    events["process"] = events["global_tid"] // THREAD_IDS  # domain ids are per process
    created = events[events["event_type"] == NVTX_DOMAIN_CREATE]
    domain_names = dict(zip(zip(created["process"], created["domain_id"]), created["name"]))
    ranges = events[events["event_type"].isin(list(NVTX_RANGE_KINDS))].copy()
    ranges["kind"] = ranges["event_type"].map(NVTX_RANGE_KINDS)
    domains = [
        None if pd.isna(domain_id) or domain_id == 0 else domain_names.get((process, domain_id), f"domain {domain_id}")
        for process, domain_id in zip(ranges["process"], ranges["domain_id"])
    ]
    ranges["domain"] = pd.Series(domains, index=ranges.index, dtype=object)  # None, not NaN, for the default
    ranges["name"] = ranges["name"].fillna("")
    ranges["range"] = [qualify(domain, name) for domain, name in zip(domains, ranges["name"])]
    ranges["duration_ns"] = ranges["end_ns"] - ranges["start_ns"]
    backwards = int((ranges["duration_ns"] < 0).sum())  # <NA> (a range still open, a mark) is no end
    unstarted = int(ranges["start_ns"].isna().sum())  # but every range has a start
    for count, what in ((backwards, "end before they start"), (unstarted, "have no start time")):
        if count:
            raise ParseError(f"{path}: {count} of the {len(ranges)} NVTX ranges {what}; the export is damaged",
                             RE_EXPORT)
    ranges["pid"] = linux_pid(ranges["global_tid"])
    ranges["tid"] = linux_tid(ranges["global_tid"])
    return _typed_nvtx(ranges.sort_values("start_ns", kind="stable")[columns].reset_index(drop=True))


def _printable_names(names: pd.Series) -> pd.Series:
    """Names as nsprof.printable spells them, each distinct name once (a range repeats its name)."""
    codes, distinct = pd.factorize(names, use_na_sentinel=True)
    spelled = np.array([printable(name) for name in distinct] + [None], dtype=object)
    return pd.Series(spelled[codes], index=names.index)


def _integers(values: pd.Series) -> pd.Series:
    """SQLite values -> Int64, exactly (no detour through float for ns timestamps); NULL and
    anything that is not an integer (a damaged file) become <NA>."""
    return pd.Series(pd.array([v if type(v) is int else None for v in values], dtype="Int64"), index=values.index)


def _typed_nvtx(ranges: pd.DataFrame) -> pd.DataFrame:
    integers = ["start_ns", "end_ns", "duration_ns", "global_tid", "pid", "tid"]
    return ranges.astype({column: "Int64" for column in integers} | {"domain": object})


def _threads(conn: sqlite3.Connection, path: Path, tables: set[str]) -> pd.DataFrame:
    """ThreadNames as COLUMNS["threads"]: one row per named thread (the last name nsys saw)."""
    columns = list(COLUMNS["threads"])
    if "ThreadNames" not in tables:
        return pd.DataFrame({column: pd.Series(dtype="int64" if column != "name" else object) for column in columns})
    named = _frame(conn, path, THREADS_SQL)
    named = named[[type(tid) is int for tid in named["global_tid"]]].drop_duplicates("global_tid", keep="last")
    tids = named["global_tid"].to_numpy(dtype=np.int64)
    return pd.DataFrame({"global_tid": tids, "pid": linux_pid(tids), "tid": linux_tid(tids),
                         "name": [printable(name) if isinstance(name, str) else None for name in named["name"]]})


def _gpus(conn: sqlite3.Connection, path: Path, tables: set[str]) -> pd.DataFrame:
    if "TARGET_INFO_GPU" not in tables:
        return pd.DataFrame(columns=list(COLUMNS["gpus"]))
    present = _table_columns(conn, path, "TARGET_INFO_GPU")
    columns = ", ".join(f"[{source}] AS {name}" if source in present else f"NULL AS {name}"
                        for name, source in GPU_COLUMNS.items())
    gpus = _frame(conn, path, GPUS_SQL.format(columns=columns))
    gpus["name"] = [printable(name) if isinstance(name, str) else name for name in gpus["name"]]
    gpus["compute_capability"] = [None if major is None else f"{major}.{minor}"
                                  for major, minor in zip(gpus["compute_major"], gpus["compute_minor"])]
    return gpus[list(COLUMNS["gpus"])].infer_objects().sort_values("device_id", kind="stable").reset_index(drop=True)


def _table_columns(conn: sqlite3.Connection, path: Path, table: str) -> set[str]:
    return {name for (name,) in _fetch(conn, path, TABLE_COLUMNS_SQL.format(table=table))}


def _nsys_version(conn: sqlite3.Connection, path: Path, tables: set[str]) -> str | None:
    for table in METADATA_TABLES:
        if table in tables:
            rows = _fetch(conn, path, VERSION_SQL.format(table=table))
            return rows[0][0] if rows else None
    return None
