"""The front door for captures: what is at a path, answered once. `open_captures(path)` gives a
CaptureSet, found by the first resolver in RESOLVERS that claims the path:

- a bench record (`nsprof bench` results, with `--runs` its runs' medians inside);
- a directory of torch.profiler traces of one process, one per profiler cycle (TensorBoard's
  WORKER.MILLISECONDS.pt.trace.json): one capture, its cycles as runs;
- a directory of several nsys captures and no manifest: the runs of one program, or one per rank;
- a directory that is no capture itself (no manifest, no tool output of its own), holding profile
  directories at any depth: `profiles/`, what the report commands and `nsprof explain` search;
- a profile directory (nsprof's manifest, or tool output), with `--runs`'s further runs;
- one file a reader claims (nsys, ncu, packed or not; a torch.profiler trace).

A CaptureSet says where the set is, which kind it is and the captures in it: a profile's runs in
order (the first is the capture that is analyzed whole; the others are compared with it as more
runs), a directory's captures, or the profiles found below a tree. It reads nothing but what it
needs to tell the kinds apart (a bench record is read when asked for); the commands read the captures
through it. A new kind of set (a directory of traces of one program) is one more resolver.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nsprof.errors import MissingPathError, ParseError
from nsprof.paths import missing_reason
from nsprof.profile_layout import MANIFEST

BENCH, RANKS, PROFILE, FILE = "bench record", "directory of captures", "profile directory", "capture file"
CYCLES = "profiler cycles of one process"
# TensorBoard's torch.profiler handler names each cycle's trace WORKER.MILLISECONDS.pt.trace.json[.gz], WORKER
# being host_pid: a process profiled in several cycles (schedule(repeat=N)) leaves one file per cycle
_TENSORBOARD_TRACE = re.compile(r"^(?P<worker>.+)\.(?P<ms>\d+)\.pt\.trace\.json(\.gz)?$")
TREE = "directory of profiles"


@dataclass(frozen=True)
class CaptureSet:
    path: Path  # as the user gave it
    kind: str  # BENCH, CYCLES, RANKS, TREE, PROFILE or FILE
    # in run order, runs[0] analyzed whole (a profile directory, a file); a TREE's profiles, by path; () for a bench record
    runs: tuple[Path, ...]

    def bench_record(self) -> dict:
        """The bench record a BENCH set is, read and checked (ParseError for one that is not)."""
        from nsprof.parse.bench_record import load_bench_record

        return load_bench_record(self.path)

    @property
    def first(self) -> Path:
        """The capture analyzed whole; a ParseError for a bench record or a tree of profiles, which
        are no one capture."""
        if self.kind == BENCH:
            raise ParseError(f"{self.path}: not a profile: nsprof reads a .json file as a bench record, which holds "
                             "times but no capture", "compare two records with nsprof diff or keep one with nsprof "
                             "history add; pass a profile directory or an nsys or ncu file")
        if self.kind == TREE and not self.runs:
            raise no_profile_below(self.path)
        if self.kind == TREE:
            count = len(self.runs)
            raise ParseError(f"{self.path}: a directory of {count} profile{'s' if count > 1 else ''}, not one capture",
                             f"Pass one of them ({self.runs[-1]}, say), or read them all with "
                             f"`nsprof report --from {self.path}`")
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
    """A directory of several nsys captures and no manifest (one capture keeps `analyze`'s meaning),
    other than one process's profiler cycles (one capture with its cycles as runs)."""
    return path.is_dir() and not (path / MANIFEST).is_file() and len(capture_files(path)) > 1 and _cycles(path) is None


def _is_tree(path: Path) -> bool:
    """A directory that is no capture itself: no manifest and no tool output of its own."""
    from nsprof.parse.profile import tool_outputs

    return path.is_dir() and not (path / MANIFEST).is_file() and not any(tool_outputs(path))


def profiles_below(path: Path) -> list[Path]:
    """The profile directories at any depth below `path`, sorted, not descending into them or into
    hidden directories; one with a manifest and no tool output (a capture that failed before
    writing any) is passed over. A directory reached twice through symbolic links (`ln -s . a` makes
    a loop) is walked once; a stack, not recursion, walks a tree thousands of levels deep too."""
    from nsprof.parse.profile import tool_outputs

    def identity(directory: Path) -> tuple[int, int]:  # a directory by its inode: resolve() costs a stat per level
        status = directory.stat()
        return status.st_dev, status.st_ino

    visited = {identity(path)}
    found: list[Path] = []
    stack = [path]
    while stack:
        for child in sorted(stack.pop().iterdir()):
            if not child.is_dir() or child.name.startswith(".") or (seen := identity(child)) in visited:
                continue
            visited.add(seen)
            if any(tool_outputs(child)):
                found.append(child)
            elif not (child / MANIFEST).is_file():
                stack.append(child)
    return sorted(found)


def no_profile_below(path: Path) -> ParseError:
    """The error for a directory that is no capture and holds none below it."""
    from nsprof.parse.profile import PROFILE_FILES

    return ParseError(f"{path}: no profile here (no directory below it holds {PROFILE_FILES} files)",
                      "Capture one with `nsprof profile`, or pass a profile directory or one such file")


def _cycles(path: Path) -> list[Path] | None:
    """The traces of a directory of torch.profiler cycles of one process, in the order taken; None
    for any other directory (several workers are ranks, or processes of one program)."""
    files = capture_files(path) if path.is_dir() and not (path / MANIFEST).is_file() else []
    named = [_TENSORBOARD_TRACE.match(file.name) for file in files]
    if len(files) < 2 or not all(named) or len({match["worker"] for match in named if match}) != 1:
        return None
    return [file for _, file in sorted(zip((int(match["ms"]) for match in named if match), files))]


def _ranks(path: Path) -> CaptureSet:
    return CaptureSet(path, RANKS, tuple(capture_files(path)))


def _profile(path: Path) -> CaptureSet:
    from nsprof.parse.profile import further_runs

    return CaptureSet(path, PROFILE, (path, *further_runs(path)))


def _is_bench(path: Path) -> bool:
    """A .json file that is no trace (torch.profiler and jax.profiler write JSON too)."""
    from nsprof.parse import jax_trace, kineto
    from nsprof.parse.bench_record import is_bench_record

    return is_bench_record(path) and not kineto.is_trace(path) and not jax_trace.is_trace(path)


RESOLVERS = (
    Resolver(BENCH, _is_bench, lambda path: CaptureSet(path, BENCH, ())),  # read when asked: bench_record()
    # analyzed as one capture (the first cycle) with the others as its further runs, as `nsprof profile --runs` writes
    Resolver(CYCLES, lambda path: _cycles(path) is not None,
             lambda path: CaptureSet(path, CYCLES, tuple(_cycles(path) or ()))),
    Resolver(RANKS, is_many, _ranks),
    Resolver(TREE, _is_tree, lambda path: CaptureSet(path, TREE, tuple(profiles_below(path)))),
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
