"""Measured ceilings on disk: ceilings-<gpu>.json as `nsprof ceilings` saves it, by default in
nsprof's data directory (nsprof.paths.data_dir), never relative to the current directory: the
ceilings belong to the GPU, and a report must not change with where it is run from.

A capture copies the document for its GPU into the profile's manifest (manifest_copy), so that the
profile keeps the ceilings it was measured under wherever it is analyzed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nsprof.errors import ParseError
from nsprof.output import write_atomically
from nsprof.paths import data_dir, gpu_slug, missing_reason, special_file_reason
from nsprof.printable import printable_json

MEASURE_AGAIN = "Measure them again with `nsprof ceilings`"


def ceilings_file_name(gpu_name: str) -> str:
    return f"ceilings-{gpu_slug(gpu_name)}.json"


def saved_ceilings(gpu_name: str | None) -> tuple[dict, Path] | None:
    """The document `nsprof ceilings` saved in the data directory for this GPU, and its path; None
    when there is none. Raises ParseError for a file there that is not a ceilings document."""
    if not gpu_name:
        return None
    path = data_dir() / ceilings_file_name(gpu_name)
    return (read_ceilings_file(path), path) if path.is_file() else None


def named_ceilings(location: Path, gpu_name: str | None) -> tuple[dict, Path] | None:
    """What --ceilings names: a saved file, or a directory holding ceilings-<gpu>.json (None when
    it holds none for this GPU). Raises ParseError when `location` does not exist or the file is
    not a ceilings document."""
    location = Path(location)
    if location.is_file():
        return read_ceilings_file(location), location
    if not location.is_dir():
        reason = special_file_reason(location) or missing_reason(location)
        raise ParseError(f"{location}: " + ("no such ceilings file or directory" if reason.startswith("no such") else reason),
                         "Measure them with `nsprof ceilings`, or leave --ceilings out")
    path = location / ceilings_file_name(gpu_name) if gpu_name else None
    return (read_ceilings_file(path), path) if path is not None and path.is_file() else None


def read_ceilings_file(path: Path) -> dict:
    """One saved document; ParseError when it is unreadable or not a ceilings document."""
    try:
        document = json.loads(printable_json(Path(path).read_text(encoding="utf-8")))
    except RecursionError:
        raise ParseError(f"{path}: unreadable ceilings file (nested too deeply to read)", MEASURE_AGAIN) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ParseError(f"{path}: unreadable ceilings file ({err})", MEASURE_AGAIN) from None
    if not is_ceilings_document(document):
        raise ParseError(f"{path}: not a ceilings file (no \"ceilings\" object)", MEASURE_AGAIN)
    return document


def is_ceilings_document(document) -> bool:
    return isinstance(document, dict) and isinstance(document.get("ceilings"), dict)


def manifest_copy(gpu_name: str | None) -> dict | None:
    """What a capture on this GPU records under the manifest's "ceilings": the saved document with
    "copied_from" (its path) added; None when none is saved. A broken file is not copied, and not
    worth failing a capture for: the commands that read it later say what is wrong with it."""
    try:
        found = saved_ceilings(gpu_name)
    except ParseError:
        return None
    if found is None:
        return None
    document, path = found
    return {"copied_from": str(path), **document}


def save_ceilings(document: Mapping[str, Any], directory: Path | None = None) -> Path:
    """Write the document to DIRECTORY/ceilings-<gpu>.json (default: the data directory) in one
    step, and return the path.

    A measurement already there is kept, renamed ceilings-<gpu>-<its creation time>.json: the
    commands use the newest, and nothing measured earlier is lost.
    """
    directory = Path(directory) if directory is not None else data_dir()
    path = directory / ceilings_file_name(document["device"]["device"])
    if path.exists():
        directory.joinpath(_archived_name(path)).write_bytes(path.read_bytes())
    return write_atomically(path, (json.dumps(document, indent=2) + "\n").encode())


def _archived_name(path: Path) -> str:
    try:
        created = json.loads(path.read_text(encoding="utf-8")).get("created", "")
    except (OSError, ValueError, AttributeError):
        created = ""
    stamp = "".join(c for c in str(created)[:19] if c.isalnum()) or "previous"
    candidate, n = path.with_name(f"{path.stem}-{stamp}.json"), 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.stem}-{stamp}-{n}.json")
    return candidate.name
