"""The formats nsprof reads, one Reader each: the files it claims (by suffix, and where a suffix
is shared, as `.csv` and `.json.gz` are, by a sniff of the file's start, also for a file the user
named), what it makes (nsprof.parse.model: a
GpuTimeline or LaunchCounters) and how it loads one, with only the timeline columns asked for.

Loading a profile, the search for profiles and the many-capture discovery all ask `reader_for`.
A new format (a new nsys schema, XPlane) is one more Reader in READERS.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from nsprof.errors import ParseError
from nsprof.parse import jax_trace
from nsprof.parse.kineto import SUFFIXES as KINETO_SUFFIXES
from nsprof.parse.kineto import TOOL as KINETO
from nsprof.parse.kineto import is_trace, load_kineto
from nsprof.parse.model import GpuTimeline, LaunchCounters
from nsprof.parse.ncu_csv import is_ncu_csv, load_ncu_csv
from nsprof.parse.ncu_rep import load_ncu_rep
from nsprof.parse.nsys_rep import sqlite_for
from nsprof.parse.nsys_sqlite import load_nsys, may_be_export
from nsprof.parse.packed import PACKED_SUFFIX, inner_name, is_packed, unpacked_copy

TIMELINE, COUNTERS = "timeline", "counters"  # what a reader makes: GpuTimeline, LaunchCounters
Columns = Mapping[str, Iterable[str]] | None  # the timeline columns to read (load_nsys's `columns`); None: all


@dataclass(frozen=True)
class Reader:
    name: str  # the format, in words: "nsys export"
    tool: str  # what wrote it, as messages name it: "nsys"
    makes: str  # TIMELINE or COUNTERS
    suffixes: tuple[str, ...]  # lower case, with the dot
    load: Callable[[Path, Columns], GpuTimeline | LaunchCounters]
    sniff: Callable[[Path], bool] | None = None  # whether a file with the suffix is this format


def _nsys_report(path: Path, columns: Columns = None) -> GpuTimeline:
    """An nsys report, read through its SQLite export; errors name the report the user gave."""
    sqlite = sqlite_for(path)
    try:
        return load_nsys(sqlite, columns)
    except ParseError as err:
        problem = err.problem.removeprefix(f"{sqlite}: ")
        raise ParseError(f"{path}: its SQLite export {sqlite.name}: {problem}",
                         f"Delete {sqlite.name} and run again: nsprof exports the report anew where nsys is installed") from None


READERS = (
    Reader("nsys report", "nsys", TIMELINE, (".nsys-rep",), _nsys_report),
    Reader("nsys export", "nsys", TIMELINE, (".sqlite",), load_nsys, sniff=may_be_export),
    Reader("ncu report", "ncu", COUNTERS, (".ncu-rep",), lambda path, columns: load_ncu_rep(path)),
    Reader("ncu CSV page", "ncu", COUNTERS, (".csv",), lambda path, columns: load_ncu_csv(path), sniff=is_ncu_csv),
    Reader("jax.profiler trace", jax_trace.TOOL, TIMELINE, jax_trace.SUFFIXES, jax_trace.load_jax_trace,
           sniff=jax_trace.is_trace),
    Reader("torch.profiler trace", KINETO, TIMELINE, KINETO_SUFFIXES, load_kineto, sniff=is_trace),
)


def reader_for(path: Path, sniff: bool = True) -> Reader | None:
    """The reader that claims `path`; without `sniff`, by its suffix alone (a file named by the user
    is handed to its format's reader, whose error then says what is wrong with it). A packed file
    (nsprof.parse.packed: nsys.sqlite.xz) goes to the reader of the name inside it."""
    if is_packed(Path(path)):
        inner = reader_for(inner_name(Path(path)), sniff=False)
        return None if inner is None else _packed(inner)
    name = Path(path).name.lower()
    claiming = [reader for reader in READERS if name.endswith(reader.suffixes)]
    if not sniff and len(claiming) < 2:
        return claiming[0] if claiming else None
    sniffed = next((reader for reader in claiming if reader.sniff is None or reader.sniff(Path(path))), None)
    if sniff or sniffed is not None:
        return sniffed
    # named by the user, its suffix shared and claimed by no sniff: the last of those sharing it
    # (torch.profiler's reader, after jax.profiler's) says what is wrong with it
    return claiming[-1]


def _packed(inner: Reader) -> Reader:
    """`inner`'s reader for a packed file: it reads the unpacked copy, its errors name the packed file."""
    def load(path: Path, columns: Columns = None) -> GpuTimeline | LaunchCounters:
        copy = unpacked_copy(path)
        try:
            return inner.load(copy, columns)
        except ParseError as err:
            raise ParseError(err.problem.replace(str(copy), str(path)), err.fix) from None

    return Reader(f"packed {inner.name}", inner.tool, inner.makes, tuple(s + PACKED_SUFFIX for s in inner.suffixes), load)


def suffixes(makes: str) -> tuple[str, ...]:
    """The suffixes of the formats that make a TIMELINE or COUNTERS."""
    return tuple(suffix for reader in READERS if reader.makes == makes for suffix in reader.suffixes)


def formats_read() -> str:
    """The files nsprof reads, in words for messages: 'nsys .nsys-rep or .sqlite, ncu .ncu-rep or .csv'."""
    tools = dict.fromkeys(reader.tool for reader in READERS)
    return ", ".join(f"{tool} " + " or ".join(suffix for reader in READERS if reader.tool == tool for suffix in reader.suffixes)
                     for tool in tools)
