"""Read what a profile holds: a profile directory (manifest.json beside nsys `*.sqlite` exports and
ncu `*.csv` files), or one such file on its own.

`tool_outputs` is the one place that decides which files in a directory are tool output: every
search for profiles (nsprof.parse.sources, and so the report commands and `nsprof explain`) goes
through it, so a CSV that ncu did not write (a bench table, a roofline.csv) is passed over.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from nsprof.errors import ParseError
from nsprof.parse.ncu_csv import NcuReport, is_ncu_csv, load_ncu_csv
from nsprof.parse.nsys_sqlite import NsysExport, load_nsys

MANIFEST = "manifest.json"  # nsprof.capture.manifest, which writes it, names it too (capture does not import parse)


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


def tool_outputs(directory: Path) -> tuple[list[Path], list[Path]]:
    """The nsys .sqlite exports and the ncu CSV files directly in `directory`, each list sorted.
    A .csv counts only when ncu wrote it (nsprof.parse.ncu_csv.is_ncu_csv reads its start)."""
    exports = sorted(file for file in directory.glob("*.sqlite") if file.is_file())
    tables = sorted(file for file in directory.glob("*.csv") if file.is_file() and is_ncu_csv(file))
    return exports, tables


def _directory(path: Path) -> Profile:
    exports, tables = tool_outputs(path)
    if not exports and not tables:
        others = sorted(file.name for file in path.glob("*.csv"))
        passed_over = f"; {', '.join(others)} {'is' if len(others) == 1 else 'are'} not ncu output" if others else ""
        raise ParseError(f"{path}: nothing to analyze (no nsys .sqlite or ncu .csv file in this directory{passed_over})",
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
