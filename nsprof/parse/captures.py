"""The front door for captures: what is at a path, answered once. `open_captures(path)` gives a
CaptureSet, found by the first resolver in RESOLVERS that claims the path:

- a bench record (`nsprof bench` results, with `--runs` its runs' medians inside);
- a directory of several nsys captures and no manifest: the runs of one program, or one per rank;
- a profile directory (nsprof's manifest, or tool output), with `--runs`'s further runs;
- one file a reader claims (nsys, ncu, packed or not; a torch.profiler trace).

A CaptureSet says where the set is, which kind it is and its runs in order (the first is the capture
that is analyzed whole; the others are compared with it as more runs). It reads nothing but what it
needs to tell the kinds apart (a bench record is read when asked for); the commands read the captures
through it. A new kind of set (a directory of traces of one program) is one more resolver.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nsprof.errors import MissingPathError, ParseError
from nsprof.paths import missing_reason

BENCH, RANKS, PROFILE, FILE = "bench record", "directory of captures", "profile directory", "capture file"


@dataclass(frozen=True)
class CaptureSet:
    path: Path  # as the user gave it
    kind: str  # BENCH, RANKS, PROFILE or FILE
    runs: tuple[Path, ...]  # in run order: runs[0] is analyzed whole (a profile directory, a file); () for a bench record

    def bench_record(self) -> dict:
        """The bench record a BENCH set is, read and checked (ParseError for one that is not)."""
        from nsprof.parse.bench_record import load_bench_record

        return load_bench_record(self.path)

    @property
    def first(self) -> Path:
        return self.runs[0]

    @property
    def further(self) -> tuple[Path, ...]:
        """The runs after the first, compared with it as more runs of one program."""
        return self.runs[1:]


@dataclass(frozen=True)
class Resolver:
    kind: str
    claims: Callable[[Path], bool]
    opens: Callable[[Path], CaptureSet]


def capture_files(directory: Path) -> list[Path]:
    """The nsys captures directly in `directory` (an .nsys-rep beside its export counts once)."""
    from nsprof.parse.profile import beside_nsys, tool_outputs

    return beside_nsys(tool_outputs(directory)[0])[0]


def is_many(path: Path) -> bool:
    """A directory of several nsys captures and no manifest (one capture keeps `analyze`'s meaning)."""
    from nsprof.parse.profile import MANIFEST

    return path.is_dir() and not (path / MANIFEST).is_file() and len(capture_files(path)) > 1


def _ranks(path: Path) -> CaptureSet:
    return CaptureSet(path, RANKS, tuple(capture_files(path)))


def _profile(path: Path) -> CaptureSet:
    from nsprof.parse.profile import further_runs

    return CaptureSet(path, PROFILE, (path, *further_runs(path)))


def _is_bench(path: Path) -> bool:
    """A .json file that is no trace (torch.profiler writes JSON too)."""
    from nsprof.parse.bench_record import is_bench_record
    from nsprof.parse.kineto import is_trace

    return is_bench_record(path) and not is_trace(path)


RESOLVERS = (
    Resolver(BENCH, _is_bench, lambda path: CaptureSet(path, BENCH, ())),  # read when asked: bench_record()
    Resolver(RANKS, is_many, _ranks),
    Resolver(PROFILE, Path.is_dir, _profile),
    Resolver(FILE, lambda path: True, lambda path: CaptureSet(path, FILE, (path,))),  # its reader's error says what is wrong
)


def open_captures(path: str | Path) -> CaptureSet:
    """The CaptureSet at `path` (module docstring); MissingPathError where nothing is there, except
    a file kept packed beside it (X.xz), which its reader opens."""
    from nsprof.parse.packed import packed_beside

    path = Path(path)
    if not path.exists() and not packed_beside(path).is_file():
        raise MissingPathError(f"{path}: {missing_reason(path)}",
                               "Pass a profile directory (nsprof profile writes one), a directory of captures, "
                               "one nsys or ncu file, or an nsprof bench record")
    for resolver in RESOLVERS:
        if resolver.claims(path):
            return resolver.opens(path)
    raise ParseError(f"{path}: not a capture", "Pass a profile directory, a capture file or a bench record")
