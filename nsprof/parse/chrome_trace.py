"""What the Chrome-format trace readers share (torch.profiler's, nsprof.parse.kineto, and
jax.profiler's, nsprof.parse.jax_trace): opening a file gzipped or not and sniffing its start,
microseconds to exact nanoseconds, the model's column order and the columns asked for, a table with
no rows."""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pandas as pd

from nsprof.parse.model import TIMELINE_COLUMNS
from nsprof.paths import special_file_reason
from nsprof.printable import printable

SNIFF_BYTES = 64 * 1024  # the traces' metadata (a few KiB) comes before their events
GZIP_MAGIC = b"\x1f\x8b"


@contextmanager
def opened(path: Path, guarded: bool = False) -> Iterator[BinaryIO]:
    """The file's bytes, gunzipped where it is gzip (by its first bytes, not its name); `guarded`:
    read through a NestingGuard (what a streaming parser reads)."""
    with open(path, "rb") as raw:
        magic = raw.read(2)
        raw.seek(0)
        if magic == GZIP_MAGIC:
            with gzip.GzipFile(fileobj=raw) as unpacked:
                yield NestingGuard(unpacked) if guarded else unpacked  # type: ignore[misc, arg-type]  # reads as a binary file
        else:
            yield NestingGuard(raw) if guarded else raw  # type: ignore[misc]


READ_BYTES = 1 << 20  # what a streaming parser reads at a time: few reads, each checked by NestingGuard at once
def trace_events(path: Path) -> Iterator[dict]:
    """The trace's events (its "traceEvents" list's JSON objects, anything else passed over),
    streamed by ijson (its C backend; imported on first use) through a NestingGuard."""
    import ijson

    with opened(path, guarded=True) as stream:
        for event in ijson.items(stream, "traceEvents.item", use_float=True, buf_size=READ_BYTES):
            if isinstance(event, dict):
                yield event


MAX_NESTING = 64  # a trace's JSON nests 4 or 5 deep; ijson's cost grows with the square of the depth


class NestingGuard:
    """A binary stream that raises ValueError once the JSON read through it nests deeper than
    MAX_NESTING: 400 KB nested 200,000 deep made ijson hold every level's path, 24 GB in 2 minutes.
    Depth is counted chunk by chunk with numpy: brackets outside strings, a quote escaped by an odd
    run of backslashes not ending one; the state (depth, inside a string, trailing backslashes)
    carries from chunk to chunk."""

    def __init__(self, stream: BinaryIO):  # (a GzipFile reads as one)
        self._stream = stream
        self._depth = 0
        self._inside = 0  # 1 inside a string
        self._backslashes = 0  # at the end of the last chunk

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        if data:
            self._check(data)
        return data

    def _check(self, data: bytes) -> None:
        chunk = np.frombuffer(data, dtype=np.uint8)
        quote = chunk == QUOTE
        if BACKSLASH in data or self._backslashes:  # a quote after an odd run of backslashes is escaped
            quote &= _backslash_runs(chunk, self._backslashes) % 2 == 0
            self._backslashes = len(data) - len(data.rstrip(b"\\")) + (self._backslashes if not data.strip(b"\\") else 0)
        quotes = np.cumsum(quote, dtype=np.int32)
        outside = (quotes - quote + self._inside) % 2 == 0  # no string open before the byte
        depth = np.cumsum(_STEP[chunk] * outside, dtype=np.int32) + self._depth
        if depth.max() > MAX_NESTING:
            raise ValueError(f"JSON nested more than {MAX_NESTING} deep")
        self._depth = int(depth[-1])
        self._inside = int(quotes[-1] + self._inside) % 2


QUOTE, BACKSLASH = ord('"'), b"\\"
_STEP = np.zeros(256, dtype=np.int8)  # an opening bracket deepens, a closing one returns
_STEP[[ord("["), ord("{")]] = 1
_STEP[[ord("]"), ord("}")]] = -1


def _backslash_runs(chunk: np.ndarray, carried: int) -> np.ndarray:
    """For each byte, how many backslashes run just before it (`carried`: those ending the chunk before)."""
    positions = np.arange(len(chunk), dtype=np.int64)
    last_other = np.maximum.accumulate(np.where(chunk == BACKSLASH[0], -1, positions))  # the last non-backslash, at or before
    runs = np.empty(len(chunk), dtype=np.int64)
    runs[0] = carried
    runs[1:] = positions[1:] - 1 - last_other[:-1] + np.where(last_other[:-1] < 0, carried, 0)
    return runs


def trace_head(path: Path) -> bytes | None:
    """The first SNIFF_BYTES of a Chrome trace's JSON (unpacked), or None where the file is none:
    not a regular file, unreadable, or not a JSON object that names "traceEvents" there."""
    if special_file_reason(Path(path)) or not Path(path).is_file():
        return None
    try:
        with opened(Path(path)) as stream:
            head = stream.read(SNIFF_BYTES)
    except (OSError, EOFError):
        return None
    return head if head.lstrip().startswith(b"{") and b'"traceEvents"' in head else None


def reason(err: BaseException) -> str:
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    return printable(text)[:200]


def nanoseconds(microseconds: np.ndarray) -> np.ndarray:
    """A trace's microsecond timestamps (three decimals) as exact integer nanoseconds: the whole
    microseconds and the fraction converted apart (5e12 us times 1000 is past float64's exact
    integers)."""
    whole = np.floor(microseconds)
    return whole.astype(np.int64) * 1000 + np.rint((microseconds - whole) * 1000).astype(np.int64)


def ordered(table: str, frame: pd.DataFrame) -> pd.DataFrame:
    """The model's columns of `table` that the frame has, in the model's order."""
    return frame[[column for column in TIMELINE_COLUMNS[table] if column in frame.columns]].reset_index(drop=True)


def timed(ts: list, dur: list, correlation: pd.api.extensions.ExtensionArray) -> pd.DataFrame:
    """A table's start, end and duration in exact nanoseconds from a trace's microsecond `ts` and
    `dur`, beside its correlation ids."""
    start = nanoseconds(np.asarray(ts, dtype=np.float64))
    duration = np.rint(np.asarray(dur, dtype=np.float64) * 1000).astype(np.int64)
    return pd.DataFrame({"start_ns": start, "end_ns": start + duration, "duration_ns": duration,
                         "correlation_id": correlation})


def chosen_columns(tables: dict[str, pd.DataFrame],
                   columns: Mapping[str, Iterable[str]] | None) -> dict[str, pd.DataFrame]:
    """The tables with only the columns asked for (nsprof.parse.readers.Columns: per table; a table
    not named keeps all)."""
    wanted = dict(columns or {})
    return {name: frame[[c for c in frame.columns if c in set(wanted[name])]] if name in wanted else frame
            for name, frame in tables.items()}


MAX_TIME_US = 4e15  # about 2096 from the epoch: later, nanoseconds pass int64
MAX_DURATION_US = 1e11  # 28 hours: no traced event lasts longer, and a sum of many stays exact
MAX_ID = 2**31 - 1  # devices, streams, grid and block sizes, registers: 32-bit in CUDA
MAX_BYTES = 2**53  # exact in a float64


@lru_cache(maxsize=1 << 16)
def shown(value) -> str:
    """A name from the trace as nsprof shows it (nsprof.printable: control characters spelled out),
    worked out once per distinct name: a trace repeats a few thousand names millions of times."""
    return printable(str(value))


def number(value) -> bool:
    """Whether a JSON value is a number (a bool is not)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def timed_event(start, duration) -> bool:
    """Whether an event's `ts` and `dur` are numbers a trace can hold: a time within MAX_TIME_US of
    the epoch, a duration from 0 to MAX_DURATION_US."""
    return (number(start) and number(duration) and abs(start) < MAX_TIME_US  # NaN fails both comparisons
            and 0 <= duration < MAX_DURATION_US)


def whole(value, limit: int, low: int = 0) -> bool:
    """Whether a JSON value is a whole number from `low` to `limit` (MAX_ID, MAX_BYTES)."""
    return number(value) and low <= value <= limit and float(value).is_integer()


def empty(table: str) -> pd.DataFrame:
    """`table` with no rows, each column of the type the model declares (an object column would make
    every frame it is concatenated with one of objects)."""
    return pd.DataFrame({name: pd.Series(dtype=object if column.type == "text" else column.type)
                         for name, column in TIMELINE_COLUMNS[table].items()})
