"""What the report commands and `nsprof explain` read: profiles found under `--from` paths.

A `--from` path is opened through the front door (nsprof.parse.captures.open_captures): a profile
directory (it holds a manifest.json, nsys .nsys-rep or .sqlite files, ncu .ncu-rep or .csv files),
a directory holding profile directories at any depth (profiles/, whose examples/ sits one level
down), or one such file (another program's capture). Which files count as tool output is decided in
one place, nsprof.parse.profile.tool_outputs: a .csv that ncu did not write (a bench table, a
roofline.csv) is passed over when found by searching, and is a ParseError only when named outright.
Directories found by searching that hold no tool output (a capture that failed before writing any)
are passed over; a named one is an error, as for `nsprof analyze`.

Finding (`find_profiles`) reads no more than each profile's manifest and the start of its CSV
files; loading (`load_sources`) parses them.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from nsprof.errors import MissingPathError, ParseError
from nsprof.parse.profile import NCU_SUFFIXES, PROFILE_FILES, Capture, load_profile, tool_outputs
from nsprof.paths import PROFILES_DIR, missing_reason, special_file_reason
from nsprof.printable import printable_json
from nsprof.profile_layout import MANIFEST


@dataclass(frozen=True)
class FoundProfile:
    """A profile found by searching, not yet parsed."""

    path: Path  # as found: under the --from path it was found below
    name: str  # a slug (a file or directory name, never a path), unique among those found together
    started: dt.datetime  # the manifest's start time, else the files' modification time
    has_ncu: bool  # it holds ncu output (a named .csv or .ncu-rep file is taken for ncu output)
    op: str | None = None  # the op its manifest names (an nsprof profile); None for other exports
    stages: frozenset[str] = frozenset()  # the stages its manifest says it captured
    gpu: str | None = None  # the GPU its manifest names


@dataclass(frozen=True)
class Source:
    """One loaded profile, with the name and time reports show for it."""

    profile: Capture
    name: str  # FoundProfile.name: reports write OUT/<name>, so never a path
    started: dt.datetime  # the manifest's start time, else the files' modification time


def find_profiles(paths: list[Path]) -> list[FoundProfile]:
    """Every profile under `paths`, oldest first, without parsing them. Raises ParseError for a path
    that does not exist or holds no profile."""
    found: dict[Path, Path] = {}  # resolved -> as found
    for path in paths:
        for directory_or_file in _profile_paths(Path(path)):
            found.setdefault(directory_or_file.resolve(), directory_or_file)
    profiles = [_found(path, name) for path, name in zip(found.values(), unique_names(list(found)))]
    return sorted(profiles, key=lambda profile: profile.started)


def load_sources(paths: list[Path]) -> list[Source]:
    """Every profile under `paths`, oldest first. Raises ParseError for a path that does not exist,
    holds no profile, or holds a file that does not parse."""
    return loaded(find_profiles(paths))


def loaded(found: list[FoundProfile]) -> list[Source]:
    """The profiles found, each loaded (ParseError for a file that does not parse)."""
    return [Source(load_profile(profile.path), profile.name, profile.started) for profile in found]


def latest_profile(path: Path = PROFILES_DIR, with_ncu: bool = True, op: str | None = None,
                   stages: Collection[str] = (), holding: str | None = None) -> FoundProfile | None:
    """The profile under `path` that started last (with ncu output, unless `with_ncu` is False), found
    as `find_profiles` finds them; with `op`, the latest of that ladder, else the latest capture of
    another program (never of another ladder); with `stages`, the latest of those that captured the
    most of them, where one captured any; with `holding`, of the profile directories that hold that
    file. None when `path` does not exist or holds no such profile."""
    if not Path(path).exists():
        return None
    try:
        found = find_profiles([Path(path)])
    except ParseError:  # no profile at all below it
        return None
    candidates = [profile for profile in found if (profile.has_ncu or not with_ncu) and (op is None or profile.op in (None, op))
                  and (holding is None or (profile.path / holding).is_file())]
    own_ladder = [profile for profile in candidates if op is not None and profile.op == op]
    candidates = own_ladder or candidates  # another program's capture only where the ladder has none
    if stages:  # a newer capture of other stages, or of fewer of these, must not hide the one that measured most
        most = max(len(p.stages & set(stages)) for p in candidates) if candidates else 0
        candidates = [p for p in candidates if len(p.stages & set(stages)) == most] if most else candidates
    return candidates[-1] if candidates else None


EXAMPLES = "examples"  # profiles/examples: the committed captures, read when the user has none of their own


def default_ladder(path: Path = PROFILES_DIR) -> tuple[list[FoundProfile], str]:
    """What the report commands read when given no --from, and why, in words: one ladder on one GPU,
    so that one chart holds one set of roofs and labels that stay apart. Of the user's own profiles
    under `path`, the newest ladder profile's op and GPU (every profile of both); where the user has
    none, the committed examples' best-covered ladder (the op and GPU with the most profiles); where
    no profile names a ladder, the newest capture alone. ParseError where `path` holds no profile."""
    found = find_profiles([Path(path)])
    examples = (Path(path) / EXAMPLES).resolve()
    own = [profile for profile in found if profile.path.resolve().parent != examples]
    pool = own or found
    ladders = [profile for profile in pool if profile.op]
    if not ladders:
        return [pool[-1]], f"the newest capture under {path}/"
    groups: dict[tuple, list[FoundProfile]] = {}
    for profile in ladders:
        groups.setdefault((profile.op, profile.gpu), []).append(profile)
    key = (ladders[-1].op, ladders[-1].gpu) if own else max(groups, key=lambda k: (len(groups[k]), groups[k][-1].started))
    chosen = groups[key]
    whose = "the newest ladder profiled" if own else "the committed examples' best-covered ladder"
    return chosen, (f"{len(chosen)} profile{'s' if len(chosen) > 1 else ''} of the {key[0]} ladder on "
                    f"{key[1] or 'an unnamed GPU'} under {path}/ ({whose}; --from chooses others)")


def unique_names(paths: list[Path]) -> list[str]:
    """A slug per path, unique among them: the directory name or the file's stem, preceded by as
    many parent directory names as it takes to tell two apart (a/x and b/x: a-x and b-x), then
    numbered if that is not enough. Never a path: reports write OUT/<name>."""
    resolved = [Path(path).resolve() for path in paths]
    parts = [[_slug(path.name if path.is_dir() else path.stem)] + [_slug(p.name) for p in path.parents if p.name]
             for path in resolved]
    depth = [1] * len(paths)
    while True:
        names = ["-".join(reversed(p[:d])) for p, d in zip(parts, depth)]
        clashing = [i for i, name in enumerate(names) if names.count(name) > 1 and depth[i] < len(parts[i])]
        if not clashing:
            break
        for i in clashing:
            depth[i] += 1
    taken: set[str] = set()
    for i, name in enumerate(names):  # the same names all the way up (x.csv and x.sqlite side by side)
        number, candidate = 1, name
        while candidate in taken:
            number += 1
            candidate = f"{name}-{number}"
        taken.add(candidate)
        names[i] = candidate
    return names


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "profile"


def _profile_paths(path: Path) -> list[Path]:
    """The profiles a --from path names, found through the front door (nsprof.parse.captures): a
    tree's profiles, or the path itself (a profile directory, a directory of captures, a file)."""
    from nsprof.parse.captures import TREE, no_profile_below, open_captures

    hint = f"Pass a profile directory, a directory of them, or one file ({PROFILE_FILES}) with --from"
    if not path.exists():
        raise MissingPathError(f"{path}: {missing_reason(path)}", hint)
    if special := special_file_reason(path):
        raise ParseError(f"{path}: {special}", hint)
    captures = open_captures(path)
    if captures.kind == TREE and not captures.runs:
        raise no_profile_below(path)
    return list(captures.runs) if captures.kind == TREE else [path]


def _has_ncu(path: Path) -> bool:
    if path.is_file():
        return path.suffix.lower() in NCU_SUFFIXES
    return bool(tool_outputs(path)[1])


def _started(path: Path, manifest: dict) -> dt.datetime:
    """The manifest's "started", else the newest output file's modification time (no manifest, or a
    hand-edited one)."""
    try:
        started = dt.datetime.fromisoformat(manifest["started"])
        return started if started.tzinfo else started.replace(tzinfo=dt.timezone.utc)
    except (KeyError, TypeError, ValueError):
        pass
    files = [path] if path.is_file() else [file for outputs in tool_outputs(path) for file in outputs] or [path]
    newest = max(file.stat().st_mtime for file in files)
    return dt.datetime.fromtimestamp(newest, tz=dt.timezone.utc)


def _found(path: Path, name: str) -> FoundProfile:
    """A profile as found: its manifest read once, for its start time, op and stages."""
    manifest = _read_manifest(path)
    op, stages = manifest.get("op"), manifest.get("stages")
    captured = frozenset(s for s in stages if isinstance(s, str)) if isinstance(stages, list) else frozenset()
    device = manifest.get("device")
    gpu = device.get("name") if isinstance(device, dict) else None
    return FoundProfile(path, name, _started(path, manifest), _has_ncu(path), op if isinstance(op, str) else None,
                        captured, gpu if isinstance(gpu, str) else None)


def _read_manifest(path: Path) -> dict:
    """A profile directory's manifest, read once when profiles are searched; {} without one or when
    it does not parse (loading the profile reports a broken manifest)."""
    if not path.is_dir():
        return {}
    try:
        manifest = json.loads(printable_json((path / MANIFEST).read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return {}
    return manifest if isinstance(manifest, dict) else {}
