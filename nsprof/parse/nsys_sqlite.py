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

import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from nsprof.errors import ParseError
from nsprof.parse.model import RECAPTURE, THREAD_IDS, TIMELINE_COLUMNS, GpuTimeline, linux_pid, linux_tid, lost_work
from nsprof.parse.nsys_host import host_tables
from nsprof.parse.nsys_queries import RE_EXPORT, fetch, open_readonly, query_frame, scan_int_columns, table_columns
from nsprof.parse.nsys_schema import (
    COLUMNS,
    DERIVED,
    EVENT_TABLES,
    GPU_COLUMNS,
    GPUS_SQL,
    GRAPH_COLUMNS,
    GRAPH_NAME,
    KERNEL_COLUMNS,
    MEMCPY_COLUMNS,
    MEMCPY_KINDS,
    MEMCPY_KINDS_SQL,
    MEMORY_KINDS,
    MEMORY_KINDS_SQL,
    MEMSET_COLUMNS,
    METADATA_TABLES,
    NVTX_DOMAIN_CREATE,
    NVTX_RANGE_KINDS,
    NVTX_SQL,
    PROCESSING_ERRORS_SQL,
    READ_TABLES,
    RUNTIME_COLUMNS,
    STRINGS_SQL,
    SYNC_COLUMNS,
    SYNC_TYPES,
    SYNC_TYPES_SQL,
    TABLES_SQL,
    THREADS_SQL,
    VERSION_SQL,
    VIEWS_SQL,
    IntColumns,
)
from nsprof.paths import special_file_reason
from nsprof.printable import printable
from nsprof.ranges import qualify

# Sizes and ids that CUDA keeps within 32 bits (device, stream, grid and block sizes, registers,
# shared memory): int32 columns, so that a 10M-kernel frame is 280 MB smaller.
SMALL_COLUMNS = frozenset({"device_id", "stream_id", "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z",
                           "registers_per_thread", "static_smem_bytes", "dynamic_smem_bytes"})
MAX_EVENT_NS = 7 * 24 * 3600 * 10**9  # a week: longer GPU work or API calls are damage, not data


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
    with open_readonly(path) as conn:
        tables = {name for (name,) in fetch(conn, path, TABLES_SQL)}
        views = sorted({name for (name,) in fetch(conn, path, VIEWS_SQL)} & READ_TABLES)
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
        host = host_tables(conn, path, tables, strings, query_frame, _names)
        timeline = GpuTimeline(
            path=path,
            tool_version=_nsys_version(conn, path, tables),
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


def _processing_errors(conn: sqlite3.Connection, path: Path, tables: set[str]) -> tuple[str, ...]:
    """What nsys reported failing while it processed the capture's events (DIAGNOSTIC_EVENT rows of
    a ProcessEventsError), one line each as often as it came: the exception's own words."""
    if "DIAGNOSTIC_EVENT" not in tables or "text" not in table_columns(conn, path, "DIAGNOSTIC_EVENT"):
        return ()
    return tuple(_error_words(str(text)) for (text,) in fetch(conn, path, PROCESSING_ERRORS_SQL))


def _error_words(text: str) -> str:
    """The line of an nsys processing error that says what failed (its message, else its exception)."""
    lines = [line.strip() for line in text.splitlines()]
    said = [line.split("] = ", 1)[1] for line in lines if "] = " in line] or \
        [line.split(": ", 1)[1] for line in lines if line.startswith("std::exception::what:")]
    return f"ProcessEventsError: {said[0]}" if said else "ProcessEventsError"


def _strings(conn: sqlite3.Connection, path: Path) -> pd.Series:
    """StringIds as id -> text. A row that is not text (a BLOB, a number) is a damaged export."""
    conn.text_factory = bytes  # decode here, so a BLOB or bad UTF-8 names its row instead of failing deep in pandas
    try:
        table = query_frame(conn, path, STRINGS_SQL).drop_duplicates("id")
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
    return {i: label for i, label in fetch(conn, path, sql) if type(i) is int and isinstance(label, str)}


def _memcpy_kinds(conn: sqlite3.Connection, path: Path, tables: set[str]) -> dict[int, str]:
    if "ENUM_CUDA_MEMCPY_OPER" not in tables:
        return MEMCPY_KINDS
    return {i: label for i, label in fetch(conn, path, MEMCPY_KINDS_SQL) if type(i) is int and isinstance(label, str)}


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
        frame = scan_int_columns(conn, path, spec)
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


def _nvtx_ranges(conn: sqlite3.Connection, path: Path, tables: set[str]) -> pd.DataFrame:
    columns = list(COLUMNS["nvtx"])
    if "NVTX_EVENTS" not in tables:
        return _typed_nvtx(pd.DataFrame(columns=columns))
    events = query_frame(conn, path, NVTX_SQL)
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
    named = query_frame(conn, path, THREADS_SQL)
    named = named[[type(tid) is int for tid in named["global_tid"]]].drop_duplicates("global_tid", keep="last")
    tids = named["global_tid"].to_numpy(dtype=np.int64)
    return pd.DataFrame({"global_tid": tids, "pid": linux_pid(tids), "tid": linux_tid(tids),
                         "name": [printable(name) if isinstance(name, str) else None for name in named["name"]]})


def _gpus(conn: sqlite3.Connection, path: Path, tables: set[str]) -> pd.DataFrame:
    if "TARGET_INFO_GPU" not in tables:
        return pd.DataFrame(columns=list(COLUMNS["gpus"]))
    present = table_columns(conn, path, "TARGET_INFO_GPU")
    columns = ", ".join(f"[{source}] AS {name}" if source in present else f"NULL AS {name}"
                        for name, source in GPU_COLUMNS.items())
    gpus = query_frame(conn, path, GPUS_SQL.format(columns=columns))
    gpus["name"] = [printable(name) if isinstance(name, str) else name for name in gpus["name"]]
    gpus["compute_capability"] = [None if major is None else f"{major}.{minor}"
                                  for major, minor in zip(gpus["compute_major"], gpus["compute_minor"])]
    return gpus[list(COLUMNS["gpus"])].infer_objects().sort_values("device_id", kind="stable").reset_index(drop=True)


def _nsys_version(conn: sqlite3.Connection, path: Path, tables: set[str]) -> str | None:
    for table in METADATA_TABLES:
        if table in tables:
            rows = fetch(conn, path, VERSION_SQL.format(table=table))
            return rows[0][0] if rows else None
    return None
