"""The history database: one SQLite file (`--db`, default HISTORY_FILE in nsprof's data directory).

- `entries`: one row per `history add`: when it was added and measured, the commit and branch,
  the GPU, driver, CUDA and tool versions it ran with, the file it came from and its kind
  ("bench", "bench on cold inputs" or "capture": nsprof.history.summary);
- `measurements`: per entry, one row per stage, kernel or range it measured: the median of its
  run medians, how many runs, and each run's median (JSON), so that a check can weigh runs;
- `noise`: one noise record per GPU (`nsprof noise RUNS --out FILE --db PATH`; nsprof.diff.
  noise), the last measured, which `nsprof diff --noise PATH` reads for the diff's GPU. Made when
  the first record is stored, so databases without one need no migration.

`PRAGMA user_version` holds SCHEMA_VERSION; a database of a newer nsprof is refused, not altered.
Each add is one transaction: a failure leaves the database as it was.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from typing_extensions import TypedDict  # pydantic reads it for docs/json (typing's, only from Python 3.12)

from nsprof.errors import ParseError, UsageError
from nsprof.paths import missing_reason, special_file_reason
from nsprof.printable import printable

HISTORY_FILE = "history.sqlite"
SCHEMA_VERSION = 1
ENTRY_FIELDS = ("added", "created", "commit_id", "branch", "gpu", "driver", "cuda", "tools", "source", "kind")
SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY, added TEXT NOT NULL, created TEXT, commit_id TEXT, branch TEXT, gpu TEXT,
    driver TEXT, cuda TEXT, tools TEXT, source TEXT NOT NULL, kind TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS measurements (
    entry INTEGER NOT NULL REFERENCES entries(id), kind TEXT NOT NULL, name TEXT NOT NULL,
    median_ns REAL NOT NULL, runs INTEGER NOT NULL, run_medians_ns TEXT NOT NULL,
    PRIMARY KEY (entry, kind, name));
"""
MEASUREMENTS_SQL = """
SELECT e.id AS entry, e.added, e.created, e.commit_id, e.branch, e.gpu, e.source, e.kind AS source_kind,
       m.kind, m.name, m.median_ns, m.runs, m.run_medians_ns
FROM measurements AS m JOIN entries AS e ON e.id = m.entry ORDER BY e.id
"""


class HistoryRow(TypedDict):
    """One measurement with its entry's fields (MEASUREMENTS_SQL): a row of `nsprof history show --json`."""

    entry: int
    added: str
    created: str | None
    commit_id: str | None
    branch: str | None
    gpu: str | None
    source: str
    source_kind: str  # what the entry was made from: a bench record, or a capture
    kind: str  # bench, stage, kernel, range or host
    name: str
    median_ns: float
    runs: int
    run_medians_ns: list[float]


@dataclass(frozen=True)
class Measurement:
    kind: str  # "bench" (a bench record's stage), "stage" (a capture's), "kernel" or "range"
    name: str
    run_medians_ns: tuple[float, ...]


@contextmanager
def opened(path: Path, create: bool = False) -> Iterator[sqlite3.Connection]:
    """The database at `path`, its schema checked (and made, with `create`)."""
    path = Path(path)
    if path.is_dir() or (special := special_file_reason(path)):  # never opened: a FIFO would wait forever
        what = "a directory" if path.is_dir() else special
        raise UsageError(f"{path}: {what}; a history database is an SQLite file", "give --db a file's path: --db history.sqlite")
    if path.is_symlink() and not path.exists():  # a link that loops or points nowhere: say which
        raise UsageError(f"{path}: {missing_reason(path)}", "give --db a file's path: --db history.sqlite")
    if not create and not path.is_file():
        raise UsageError(f"{path}: no history database", "add to it first: nsprof history add RECORD --db PATH")
    if create:
        blocking = next((parent for parent in path.parents if parent.exists() or parent.is_symlink()), None)
        if blocking is not None and not blocking.is_dir():  # mkdir would say only "File exists"
            raise UsageError(f"{path}: {blocking} is a file, not a directory, so no database can be made below it",
                             "give --db a path in a directory: --db history.sqlite")
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(path) if create else _read_only(path)
    except sqlite3.Error as err:
        raise ParseError(f"{path}: cannot open the history database ({err})", "check the path and its permissions") from None
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise ParseError(f"{path}: a history database of a newer nsprof (schema {version})", "upgrade nsprof")
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if version == 0 and tables and not _our_tables(conn, tables):  # never stamp another program's database
            raise ParseError(f"{path}: an SQLite database, but not nsprof's history", "give --db a path of its own")
        if create and version == 0:
            with conn:
                conn.executescript(SCHEMA)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        yield conn
    except sqlite3.DatabaseError as err:
        raise ParseError(f"{path}: not a readable history database ({err})", "give --db a path of its own") from None
    finally:
        conn.close()


def _read_only(path: Path) -> sqlite3.Connection:
    """`path` opened for reading only (show, check, diff --noise write nothing). A database in
    write-ahead-log mode needs a -shm file beside it, which SQLite cannot make in a directory this
    user may not write: then, with no un-checkpointed -wal beside it, the file alone is read as it
    is (immutable); with one, ParseError says what to do."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        conn.close()
    wal = path.with_name(path.name + "-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        raise ParseError(f"{path}: a database in write-ahead-log mode whose last writes are still in {wal.name}, in a "
                         "directory this user cannot write, so SQLite cannot read them",
                         f"copy {path.name} and {wal.name} into a writable directory and pass that copy to --db")
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)


def _our_tables(conn: sqlite3.Connection, tables: set[str]) -> bool:
    """Whether a database's `entries` and `measurements` tables are nsprof's (their columns, not
    only their names: another program may name its tables so)."""
    if not {"entries", "measurements"} <= tables:
        return False
    columns = {table: {row[1] for row in conn.execute(f"PRAGMA table_info({table})")} for table in ("entries", "measurements")}
    return {"id", *ENTRY_FIELDS} <= columns["entries"] and \
        {"entry", "kind", "name", "median_ns", "runs", "run_medians_ns"} <= columns["measurements"]


def add_entry(conn: sqlite3.Connection, entry: dict, measurements: list[Measurement]) -> int:
    """One entry and its measurements, in one transaction; returns the entry's id."""
    with conn:
        cursor = conn.execute(f"INSERT INTO entries ({', '.join(ENTRY_FIELDS)}) VALUES ({', '.join('?' * len(ENTRY_FIELDS))})",
                              [entry.get(field) for field in ENTRY_FIELDS])
        number = cursor.lastrowid
        assert number is not None  # an INSERT's row
        conn.executemany("INSERT INTO measurements VALUES (?, ?, ?, ?, ?, ?)",
                         [(number, m.kind, m.name, float(pd.Series(m.run_medians_ns).median()), len(m.run_medians_ns),
                           json.dumps(list(m.run_medians_ns))) for m in measurements])
    return number


def is_history(path: Path) -> bool:
    """Whether `path` is a history database (an SQLite file with nsprof's tables)."""
    from nsprof.parse.nsys_sqlite import sqlite_tables

    return {"entries", "measurements"} <= (sqlite_tables(path) or set())


NOISE_SCHEMA = "CREATE TABLE IF NOT EXISTS noise (gpu TEXT PRIMARY KEY, added TEXT NOT NULL, record TEXT NOT NULL)"


def store_noise(conn: sqlite3.Connection, record: Mapping[str, Any]) -> None:
    """The noise record of record["gpu"] (nsprof.api.measure_noise_record names one always), replacing
    that GPU's earlier one, in one transaction."""
    with conn:
        conn.execute(NOISE_SCHEMA)
        conn.execute("INSERT OR REPLACE INTO noise VALUES (?, ?, ?)", (record["gpu"], record["created"], json.dumps(record)))


def noise_records(conn: sqlite3.Connection) -> dict[str, dict]:
    """Per GPU, its noise record ({} where none was stored)."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'noise'").fetchone():
        return {}
    where = conn.execute("PRAGMA database_list").fetchone()[2] or "the history database"
    records = {}
    for gpu, text in conn.execute("SELECT gpu, record FROM noise ORDER BY gpu"):
        try:
            records[str(gpu)] = json.loads(text)
        except (TypeError, ValueError, RecursionError):  # cut short, or nested past what Python parses
            raise ParseError(f"{where}: {printable(str(gpu))[:60]}'s noise record is damaged (not one JSON object)",
                             f"record it again: nsprof noise RUNS... --out noise.json --db {where}") from None
    return records


def measurements(conn: sqlite3.Connection) -> pd.DataFrame:
    """Every measurement with its entry's fields, oldest entry first; run_medians_ns as lists, every
    row checked (a ParseError names the first damaged one) and its text printable as shown."""
    where = conn.execute("PRAGMA database_list").fetchone()[2] or "the history database"
    try:
        frame = pd.read_sql_query(MEASUREMENTS_SQL, conn)
    except (pd.errors.DatabaseError, sqlite3.DatabaseError) as err:  # pandas quotes its SQL: name the file instead
        raise ParseError(f"{where}: not a readable history database ({err.__cause__ or err})",
                         "start a new one, or add the entry again") from None
    runs = []
    for row in frame.itertuples():
        found = _run_medians(row.run_medians_ns)
        if found is None or not _positive(row.median_ns) or not min(found) <= row.median_ns <= max(found):
            raise ParseError(f"{where}: entry {row.entry}'s {printable(str(row.kind))} {printable(str(row.name))[:60]} is "
                             f"damaged (median {printable(str(row.median_ns))[:20]}, runs "
                             f"{printable(str(row.run_medians_ns))[:40]})",
                             "the database was changed outside nsprof: start a new one, or add the entry again")
        runs.append(found)
    frame["run_medians_ns"] = runs
    for column in ("commit_id", "branch", "gpu", "source", "kind", "name"):
        frame[column] = [value if value is None else printable(str(value)) for value in frame[column]]
    return frame


def _run_medians(text) -> list[float] | None:
    """A stored list of run medians, None where it is not a list of times (_positive)."""
    try:
        values = json.loads(text) if isinstance(text, str) else None
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(values, list) or not values or not all(_positive(value) for value in values):
        return None
    return [float(value) for value in values]


def _positive(value) -> bool:
    """A time that can be stored: finite and not negative (a host-side cause removed is 0 ns)."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value) and value >= 0
