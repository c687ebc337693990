"""Read what a profile holds: a profile directory (manifest.json beside nsys and ncu output), or one
such file on its own. Tool output is: nsys `.sqlite` exports and `.nsys-rep` reports (read through
their SQLite export, nsprof.parse.nsys_rep), ncu `.ncu-rep` reports (nsprof.parse.ncu_rep) and ncu
`.csv` pages.

`tool_outputs` is the one place that decides which files in a directory are tool output: every
search for profiles (nsprof.parse.sources, and so the report commands and `nsprof explain`) goes
through it, so a CSV that ncu did not write (a bench table, a roofline.csv) is passed over. A report
and its exports are one capture, read once: X.nsys-rep is passed over beside X.sqlite, and CSV pages
named after a report beside them (X.csv, X-raw.csv, X_details.csv) beside X.ncu-rep, which is read
instead, unless NVIDIA's ncu-report cannot be imported here: then the CSV pages serve.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from nsprof.errors import MissingPathError, ParseError
from nsprof.ladder_runs.bench_types import StageDetails
from nsprof.ncu_log import profiled_launches
from nsprof.parse import jax_trace
from nsprof.parse.documents import read_cpu_rung, read_manifest, read_pipeline_results, read_tuning
from nsprof.parse.model import CpuRung, GpuTimeline, LaunchCounters, timeline_problems
from nsprof.parse.ncu_rep import reader_available
from nsprof.parse.ncu_rep_file import REWRITE_HINT
from nsprof.parse.nsys_rep import sqlite_beside
from nsprof.parse.packed import inner_name, is_packed, packed_beside
from nsprof.parse.readers import COUNTERS, TIMELINE, formats_read, reader_for, suffixes
from nsprof.parse.triton_cache import load_triton_cache
from nsprof.paths import missing_reason, special_file_reason
from nsprof.profile_layout import (
    BENCH_RESULTS,
    CPU_CEILINGS,
    CPU_RESULTS,
    MANIFEST,
    PIPELINE_RESULTS,
    RUNS_DIR,
    TRITON_CACHE,
)


@dataclass(frozen=True, kw_only=True)
class Capture:
    """One capture as the readers fill it, its sources named by role, not by tool: its timelines
    (nsys exports, torch.profiler and jax.profiler traces), its counters (ncu's launches), the
    framework traces beside a timeline (torch.profiler's, read for the operators that launched each
    kernel), and the documents nsprof writes beside them. A profile directory's, one file's, or one
    made in memory (no path)."""

    path: Path | None = None
    is_directory: bool = False
    manifest: dict | None = None  # what ran (nsprof's manifest.json); None for a bare export
    timelines: list[GpuTimeline] = field(default_factory=list)
    counters: list[LaunchCounters] = field(default_factory=list)
    pipeline: dict | None = None  # pipeline.json: what `nsprof pipeline` measured, where it made this capture
    tuning: dict[tuple[str, str], StageDetails] | None = None  # bench-nsys.json's tuned stages (documents.read_tuning)
    triton: pd.DataFrame | None = None  # triton-cache/: the kernels the program's Triton compiled (triton_cache)
    cpu: CpuRung | None = None  # bench-cpu.json and ceilings-cpu.json: the CPU stages timed beside the capture
    # torch.profiler traces beside nsys output: read for their operators (nsprof.analyze.operators), not timed
    framework_traces: list[GpuTimeline] = field(default_factory=list)


def load_profile(path: str | Path, nsys_columns: Mapping[str, Iterable[str]] | None = None) -> Capture:
    """Load a profile directory or one nsys/ncu file (PROFILE_FILES). Every file must parse: a bad
    one is a ParseError naming it, as is a directory with nothing to analyze. `nsys_columns`: the
    nsys event columns to read (nsprof.parse.nsys_sqlite.load_nsys's `columns`; default all)."""
    path = Path(path)
    if path.is_dir():
        return _directory(path, nsys_columns)
    if not path.exists() and packed_beside(path).is_file():
        path = packed_beside(path)  # kept packed (nsprof.parse.packed)
    if not path.exists():
        raise MissingPathError(f"{path}: {missing_reason(path)}",
                         "Pass a profile directory (nsprof profile writes one) or one nsys or ncu file")
    if special := special_file_reason(path):
        raise ParseError(f"{path}: {special}", "Pass a profile directory or one nsys or ncu file")
    loaded = load_file(path, nsys_columns)
    if isinstance(loaded, GpuTimeline):
        return Capture(path=path, timelines=[loaded])
    return Capture(path=path, counters=[loaded])


NSYS_TOOL = "nsys"
TIMELINE_SUFFIXES = suffixes(TIMELINE)
NCU_SUFFIXES = suffixes(COUNTERS)
PROFILE_FILES = formats_read()


def load_file(path: Path, columns: Mapping[str, Iterable[str]] | None = None) -> GpuTimeline | LaunchCounters:
    """One file, by the reader its suffix names (nsprof.parse.readers); errors name the file."""
    reader = reader_for(path, sniff=False)
    if reader is None:
        raise ParseError(f"{path}: not a profile (nsprof reads {PROFILE_FILES})",
                         "Give a profile directory or one of those files")
    try:
        loaded = reader.load(Path(path), columns)
    except MemoryError:  # a page read whole (a 1.5 GB ncu CSV): one line, not a traceback
        size = Path(path).stat().st_size if Path(path).is_file() else 0
        raise ParseError(f"{path}: {size / 2**30:,.1f} GiB, more than this machine's memory holds ({reader.name})",
                         "profile fewer launches (ncu --launch-count, nsprof profile --top), or read it on a larger "
                         "machine") from None
    if isinstance(loaded, GpuTimeline) and (problems := timeline_problems(loaded)):
        raise ParseError(f"{path}: the {reader.name} reader gave a timeline outside the model ({'; '.join(problems[:3])})",
                         "Report it to nsprof's maintainers with the file")
    return loaded


def load_timeline(path: Path, columns: Mapping[str, Iterable[str]] | None = None) -> GpuTimeline:
    """One file of a format that holds a GPU timeline (an nsys export or report)."""
    loaded = load_file(path, columns)
    if not isinstance(loaded, GpuTimeline):
        raise ParseError(f"{path}: holds counters per launch, not a timeline of GPU work",
                         f"Give a timeline file ({', '.join(TIMELINE_SUFFIXES)})")
    return loaded


def _load_ncu_beside_log(path: Path) -> LaunchCounters:
    """An ncu file of a profile directory. A report cut at a block boundary reads as a whole one
    with fewer launches: ncu's log beside it (ncu.log for ncu.ncu-rep) says how many it profiled."""
    report = load_file(path)  # a report damaged otherwise is named by its reader first
    assert isinstance(report, LaunchCounters)  # tool_outputs found it by a counters reader
    log = path.with_suffix(".log")
    if path.suffix.lower() == ".ncu-rep" and log.is_file():
        with log.open(encoding="utf-8", errors="replace") as lines:  # universal newlines: ncu's \r too
            profiled = profiled_launches(lines)
        if len(report.kernels) < profiled:
            raise ParseError(f"{path}: cut short: it holds {len(report.kernels)} kernel launches, and {log.name} beside "
                             f"it says ncu profiled {profiled}", REWRITE_HINT)
    return report


def further_runs(path: Path) -> list[Path]:
    """The nsys exports of a profile's further runs (`nsprof profile --runs N`: runs/nsys-2 ..
    nsys-N), in run order; [] for anything else."""
    runs = path / RUNS_DIR if path.is_dir() else None
    if runs is not None and runs.is_symlink() and not runs.exists():  # a loop or a dangling link: say so, drop nothing silently
        raise ParseError(f"{runs}: {missing_reason(runs)}, so the profile's further runs cannot be read",
                         f"replace {RUNS_DIR}/ with the directory of runs nsprof profile --runs wrote, or remove it")
    if runs is None or not runs.is_dir() or runs.resolve() == path.resolve():  # a link back: no run counted twice
        return []
    return sorted(tool_outputs(runs)[0], key=lambda file: [int(part) if part.isdigit() else part
                                                           for part in re.split(r"(\d+)", file.stem)])


def is_profile(path: Path) -> bool:
    """A capture nsprof reads: an nsys or ncu file, or a directory holding a manifest or their output."""
    path = Path(path)
    if path.is_file():
        return reader_for(path) is not None  # by suffix, and where a suffix is shared (.csv, .json) by content
    return path.is_dir() and ((path / MANIFEST).is_file() or any(tool_outputs(path)))


def enclosing_profile(path: Path) -> Path | None:
    """The profile directory `path` is or lies in: `path` itself if it is a profile, or the nearest
    directory above it with a manifest (only nsprof's own captures count there: a home directory
    holding a stray .sqlite is no profile)."""
    path = Path(path).absolute()
    if is_profile(path) and path.is_dir():
        return path
    return nsprof_profile_around(path)


def nsprof_profile_around(path: Path) -> Path | None:
    """The nearest directory at or above `path` that holds nsprof's manifest (a profile nsprof wrote)."""
    path = Path(path).absolute()
    return next((folder for folder in (path, *path.parents) if (folder / MANIFEST).is_file()), None)


def tool_outputs(directory: Path) -> tuple[list[Path], list[Path]]:
    """The timeline files (nsys's .sqlite and .nsys-rep, torch.profiler's traces) and the ncu files
    (.ncu-rep, .csv) directly in `directory`, each list sorted, a report's exports left out (see the
    module docstring). A .csv counts only when ncu wrote it, a .json only when torch.profiler did
    (their readers read its start)."""
    claimed = [(file, reader_for(file)) for file in _files_in(directory)]
    exports = [file for file, reader in claimed if reader is not None and reader.makes == TIMELINE
               and not _report_with_export(file) and not _perfetto_with_trace(file)]
    return exports, _ncu_files([file for file, reader in claimed if reader is not None and reader.makes == COUNTERS])


def _files_in(directory: Path) -> list[Path]:
    """The files directly in `directory`, sorted, a packed one left out beside its unpacked copy."""
    files = sorted(file for file in directory.iterdir() if file.is_file())
    # a packed file (nsprof.parse.packed) stands in for its unpacked copy only where that is missing
    return [file for file in files if not (is_packed(file) and (directory / inner_name(file).name).is_file())]


def _ncu_files(counters: list[Path]) -> list[Path]:
    """ncu's files among `counters`, sorted: its reports, and the CSV pages not exported from one
    (those that are, in place of their report where ncu-report cannot be imported)."""
    reports = [file for file in counters if file.suffix.lower() == ".ncu-rep"]
    tables = [file for file in counters if file not in reports]
    if not reports:
        return tables
    exported = [table for table in tables if _exported_from(table, reports)]
    if exported and not reader_available():  # the pages stand in for their report
        reports = [report for report in reports if not any(_exported_from(table, [report]) for table in exported)]
        return sorted(reports + tables)
    return sorted(reports + [table for table in tables if table not in exported])


def _report_with_export(file: Path) -> bool:
    """An nsys report whose SQLite export lies beside it, packed or not: the export is read instead."""
    report = inner_name(file) if is_packed(file) else file
    if report.suffix.lower() != ".nsys-rep":
        return False
    export = sqlite_beside(report)
    return export.is_file() or packed_beside(export).is_file()


def _perfetto_with_trace(file: Path) -> bool:
    """jax.profiler's Perfetto trace beside its Chrome-format trace (the same events): the trace is read instead."""
    return file.name == jax_trace.PERFETTO_NAME and any(file.parent.glob("*.trace.json.gz"))


def _exported_from(table: Path, reports: list[Path]) -> bool:
    """Whether a CSV page is named after a report beside it (X.csv, X-raw.csv, X_details.csv)."""
    return any(table.stem == report.stem or table.stem.startswith((report.stem + "-", report.stem + "_"))
               for report in reports)


def missing_runs(path: Path, manifest: dict) -> list[str]:
    """The nsys exports of a profile taken with --runs N that are not there (nsys.sqlite and
    runs/nsys-K.sqlite, K = 2..N, where the manifest says nsys wrote them): a profile copied in part,
    or packed, whose runs would be compared as fewer than they were. A profile of one run may lose
    its nsys export (its ncu half is still read)."""
    runs, listed = manifest.get("runs"), manifest.get("outputs")
    if not (isinstance(runs, int) and not isinstance(runs, bool) and 1 < runs <= 10_000) \
            or not isinstance(listed, list) or "nsys.sqlite" not in listed:
        return []
    expected = ["nsys.sqlite", *(f"{RUNS_DIR}/nsys-{run}.sqlite" for run in range(2, runs + 1))]
    return [name for name in expected if not (path / name).is_file() and not packed_beside(path / name).is_file()]


def _directory(path: Path, nsys_columns: Mapping[str, Iterable[str]] | None = None) -> Capture:
    manifest = read_manifest(path / MANIFEST)
    if manifest is not None and (missing := missing_runs(path, manifest)):
        shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
        raise ParseError(f"{path}: {shown} missing, of the {manifest['runs']} runs its manifest says were captured",
                         "copy the whole profile directory")
    exports, tables = tool_outputs(path)
    if not exports and not tables:
        others = sorted(file.name for file in path.glob("*.csv"))
        passed_over = f"; {', '.join(others)} {'is' if len(others) == 1 else 'are'} not ncu output" if others else ""
        raise ParseError(f"{path}: nothing to analyze (no {PROFILE_FILES} file in this directory{passed_over})",
                         "Capture with `nsprof profile`, or put nsys or ncu output in it")
    timelines, traces = beside_nsys(exports)
    return Capture(path=path, is_directory=True, manifest=manifest,
                   timelines=[load_timeline(file, nsys_columns) for file in timelines],
                   counters=[_load_ncu_beside_log(file) for file in tables],
                   pipeline=read_pipeline_results(path / PIPELINE_RESULTS), tuning=read_tuning(path / BENCH_RESULTS),
                   triton=load_triton_cache(path / TRITON_CACHE) if (path / TRITON_CACHE).is_dir() else None,
                   cpu=read_cpu_rung(path / CPU_RESULTS, path / CPU_CEILINGS),
                   framework_traces=[load_timeline(file) for file in traces])


def beside_nsys(exports: list[Path]) -> tuple[list[Path], list[Path]]:
    """A directory's timeline files as (the timelines, the framework traces beside them): where nsys
    wrote some, a torch.profiler trace of the same program is read for its operators, not timed
    twice; without nsys, the traces are the timelines."""
    # the tools' suffixes differ (.sqlite, .nsys-rep; .json, .json.gz): the suffix says whose, no file read again
    traces = [file for file in exports if (reader := reader_for(file, sniff=False)) is not None and reader.tool != NSYS_TOOL]
    timelines = [file for file in exports if file not in traces]
    return (timelines, traces) if timelines else (traces, [])
