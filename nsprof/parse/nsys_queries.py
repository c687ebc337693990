"""Queries of an nsys export's SQLite database (nsprof.parse.nsys_sqlite): opened read-only, each
failure a ParseError naming the file, and an event table's integer columns read fast."""

from __future__ import annotations

import os
import sqlite3
import threading
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from nsprof.errors import MissingPathError, ParseError
from nsprof.parse.nsys_schema import TABLE_COLUMNS_SQL, IntColumns
from nsprof.paths import missing_reason

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
SQLITE_MAX_PATH = 512  # SQLITE_MAX_PATHNAME: SQLite opens no longer path
RE_EXPORT = "Export the report again: nsys export --type sqlite --force-overwrite true REPORT.nsys-rep"


@contextmanager
def open_readonly(path: Path) -> Iterator[sqlite3.Connection]:
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


def fetch(conn: sqlite3.Connection, path: Path, sql: str) -> list[tuple]:
    """A query's rows."""
    return _execute(conn, path, sql)[1]


def query_frame(conn: sqlite3.Connection, path: Path, sql: str) -> pd.DataFrame:
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


def table_columns(conn: sqlite3.Connection, path: Path, table: str) -> set[str]:
    """The names of a table's columns."""
    return {name for (name,) in fetch(conn, path, TABLE_COLUMNS_SQL.format(table=table))}


def scan_int_columns(conn: sqlite3.Connection, path: Path, spec: IntColumns) -> pd.DataFrame:
    """The integer columns `spec` names, read a chunk of rows at a time in SCAN_THREADS threads (NULL as <NA>)."""
    present = table_columns(conn, path, spec.table)
    missing = [source for name, source in spec.columns.items() if source not in present and name not in spec.optional]
    if missing:
        raise ParseError(f"{path}: table {spec.table} has no column {', '.join(missing)}",
                         "Re-export the report with a current nsys (nsys export --type sqlite)")
    aggregates = ", ".join(
        ("group_concat(-1)" if source not in present else f"group_concat(ifnull([{source}], -1))")
        if name in spec.nullable else f"group_concat([{source}])"
        for name, source in spec.columns.items()
    )
    ((first, last),) = fetch(conn, path, ROWIDS_SQL.format(table=spec.table))
    ((rows,),) = fetch(conn, path, f"SELECT count(*) FROM {spec.table}")
    # A connection per thread (sqlite3 connections stay in theirs), by thread id. Not a threading.local: on
    # CPython 3.11, freeing one takes the interpreter's thread-state lock while holding the GIL. A CI run of
    # tests/test_many_captures.py hung that way: a Dask worker's profiler thread, freeing frames it had
    # sampled, held the GIL in that lock's wait while every other thread waited for the GIL.
    opened: dict[int, sqlite3.Connection] = {}
    opening = threading.Lock()

    def connection() -> sqlite3.Connection:
        with opening:
            if threading.get_ident() not in opened:
                opened[threading.get_ident()] = _connect(path)
            return opened[threading.get_ident()]

    def read_chunk(chunk: tuple[int, int]) -> list[np.ndarray]:
        start, stop = chunk
        sql = COLUMN_SCAN_SQL.format(aggregates=aggregates, table=spec.table, first=start, last=stop)
        (row,) = fetch(connection(), path, sql)
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
        for opened_conn in opened.values():
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
        starts = [start for (start,) in fetch(conn, path, CHUNK_STARTS_SQL.format(table=table, chunk=SCAN_CHUNK_ROWS))]
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
