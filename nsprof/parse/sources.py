"""What the report commands read: profiles found under `--from` paths, and measured ceilings.

A `--from` path may be a profile directory (it holds a manifest.json, nsys .sqlite exports or
ncu .csv files), a directory holding profile directories at any depth (profiles/, whose
examples/ sits one level down), or one nsys .sqlite or ncu .csv file (another program's
capture). Directories found by searching that hold no tool output (a capture that failed before
writing any) are passed over; a named one is an error, as for `nsprof analyze`.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

from nsprof.errors import ParseError
from nsprof.parse.profile import MANIFEST, Profile, load_profile

TOOL_OUTPUTS = ("*.sqlite", "*.csv")
CEILINGS_DIR = Path("profiles")  # where `nsprof ceilings` saves and the reports look by default


@dataclass(frozen=True)
class Source:
    """One loaded profile, with the name and time reports show for it."""

    profile: Profile
    name: str  # directory name or the file's stem; the path where two share a name
    started: dt.datetime  # the manifest's start time, else the files' modification time


def load_sources(paths: list[Path]) -> list[Source]:
    """Every profile under `paths`, oldest first. Raises ParseError for a path that does not exist,
    holds no profile, or holds a file that does not parse."""
    found: dict[Path, Path] = {}  # resolved -> as found
    for path in paths:
        for directory_or_file in _profile_paths(Path(path)):
            found.setdefault(directory_or_file.resolve(), directory_or_file)
    names = [path.name if path.is_dir() else path.stem for path in found.values()]
    sources = []
    for path, name in zip(found.values(), names):
        profile = load_profile(path)
        unique_name = name if names.count(name) == 1 else str(path)  # two profiles/*/x: say which x
        sources.append(Source(profile, unique_name, _started(profile, path)))
    return sorted(sources, key=lambda source: source.started)


def read_measured_ceilings(location: Path | None, file_name: str | None) -> dict | None:
    """The document `nsprof ceilings` saved: `location` is that file, or a directory holding
    `file_name` (ceilings-<gpu>.json); None means CEILINGS_DIR. Returns None when there is no
    such file; a file named outright must exist."""
    named = location is not None
    location = Path(location) if named else CEILINGS_DIR
    if not location.is_file():
        if named and not location.is_dir():
            raise ParseError(f"{location}: no such ceilings file or directory",
                             "Measure them with `nsprof ceilings`, or leave --ceilings out to use the datasheet")
        location = location / file_name if file_name else None
        if location is None or not location.is_file():
            return None
    try:
        document = json.loads(location.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ParseError(f"{location}: unreadable ceilings file ({err})", "Measure them again with `nsprof ceilings`") from None
    if not isinstance(document, dict) or not isinstance(document.get("ceilings"), dict):
        raise ParseError(f"{location}: not a ceilings file (no \"ceilings\" object)",
                         "Measure them again with `nsprof ceilings`")
    return document


def _profile_paths(path: Path) -> list[Path]:
    if not path.exists():
        raise ParseError(f"{path}: no such file or directory",
                         "Pass a profile directory, a directory of them, or an ncu .csv file with --from")
    if path.is_file() or _is_profile_directory(path):
        return [path]
    found = sorted(directory for directory in _directories_below(path) if _holds_tool_output(directory))
    if not found:
        raise ParseError(f"{path}: no profile here (no directory below it holds nsys .sqlite or ncu .csv files)",
                         "Capture one with `nsprof profile`, or pass a profile directory or an ncu .csv file with --from")
    return found


def _directories_below(path: Path) -> list[Path]:
    """Sub-directories at any depth, not descending into profile directories or hidden ones."""
    below = []
    for child in sorted(path.iterdir()):
        if not child.is_dir() or child.name.startswith("."):
            continue
        below.append(child)
        if not _is_profile_directory(child):
            below += _directories_below(child)
    return below


def _is_profile_directory(path: Path) -> bool:
    return path.is_dir() and ((path / MANIFEST).is_file() or _holds_tool_output(path))


def _holds_tool_output(path: Path) -> bool:
    return any(next(path.glob(pattern), None) is not None for pattern in TOOL_OUTPUTS)


def _started(profile: Profile, path: Path) -> dt.datetime:
    started = (profile.manifest or {}).get("started")
    if isinstance(started, str):
        try:
            moment = dt.datetime.fromisoformat(started)
            return moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)
        except ValueError:
            pass  # a hand-edited manifest: fall back to the files' time
    files = [path] if path.is_file() else [file for pattern in TOOL_OUTPUTS for file in path.glob(pattern)]
    newest = max(file.stat().st_mtime for file in files)
    return dt.datetime.fromtimestamp(newest, tz=dt.timezone.utc)
