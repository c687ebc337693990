"""Read what a profile holds: a profile directory (manifest.json beside nsys `*.sqlite` exports and
ncu `*.csv` files), or one such file on its own."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from nsprof.errors import ParseError
from nsprof.parse.ncu_csv import NcuReport, load_ncu_csv
from nsprof.parse.nsys_sqlite import NsysExport, load_nsys

MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Profile:
    path: Path
    is_directory: bool
    manifest: dict | None
    nsys: list[NsysExport]
    ncu: list[NcuReport]


def load_profile(path: str | Path) -> Profile:
    """Load a profile directory, an nsys .sqlite export or an ncu .csv. Every file must parse:
    a bad one is a ParseError naming it, as is a directory with nothing to analyze."""
    path = Path(path)
    if path.is_dir():
        return _directory(path)
    if not path.exists():
        raise ParseError(f"{path}: no such file or directory")
    if path.suffix.lower() == ".sqlite":
        return Profile(path, False, None, [load_nsys(path)], [])
    if path.suffix.lower() == ".csv":
        return Profile(path, False, None, [], [load_ncu_csv(path)])
    raise ParseError(f"{path}: not a profile",
                     "Give a profile directory, an nsys .sqlite export or an ncu .csv file")


def _directory(path: Path) -> Profile:
    exports = sorted(path.glob("*.sqlite"))
    tables = sorted(path.glob("*.csv"))
    if not exports and not tables:
        raise ParseError(f"{path}: nothing to analyze (no nsys .sqlite or ncu .csv file in this directory)",
                         "Export nsys reports with --export=sqlite and ncu results with --csv")
    return Profile(path, True, _manifest(path / MANIFEST),
                   [load_nsys(file) for file in exports], [load_ncu_csv(file) for file in tables])


def _manifest(path: Path) -> dict | None:
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ParseError(f"{path}: unreadable manifest ({err})") from None
    if not isinstance(manifest, dict):
        raise ParseError(f"{path}: the manifest is not a JSON object")
    return manifest
