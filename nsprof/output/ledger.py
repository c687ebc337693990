"""What nsprof wrote into an output directory, so that a re-run knows which files are its own.

`.nsprof-written.json` in the directory lists each file nsprof wrote there with the SHA-256 of
its bytes. A file listed there whose bytes still match is nsprof's to replace; any other file
(the user's own, or one edited since) is kept. An unreadable ledger lists nothing: everything is
kept, the safe side."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

LEDGER = ".nsprof-written.json"
_CHUNK = 1 << 20


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_digest(path: Path) -> str | None:
    """The SHA-256 of the file at `path`, read in chunks (a Chrome trace can be 100 MB); None if absent."""
    try:
        with open(path, "rb") as file:
            hasher = hashlib.sha256()
            while chunk := file.read(_CHUNK):
                hasher.update(chunk)
            return hasher.hexdigest()
    except FileNotFoundError:
        return None


def read_ledger(directory: Path) -> dict[str, dict]:
    """name -> {"sha256", "written", maybe "replaces"} of what nsprof wrote in `directory`."""
    try:
        document = json.loads((directory / LEDGER).read_text(encoding="utf-8"))
        files = document["files"]
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return {}
    return {name: entry for name, entry in files.items() if isinstance(entry, dict)} if isinstance(files, dict) else {}


def why_kept(path: Path, found: str | None, ledger: dict[str, dict]) -> str | None:
    """Why the file at `path` (its SHA-256 `found`, None when no file) may not be replaced without
    force, or None when it may: absent, or written by nsprof and unchanged since."""
    if found is None:
        return "not a file nsprof wrote" if path.exists() or path.is_symlink() else None
    entry = ledger.get(path.name)
    if entry is None:
        return "not written by nsprof"
    # "replaces": the file an interrupted write was about to replace, still nsprof's (see ledger_text)
    if found not in (entry.get("sha256"), entry.get("replaces")):
        return "changed since nsprof wrote it"
    return None


def regular_file_digest(path: Path) -> str | None:
    """The digest of a plain file at `path`; None for nothing there, a directory or a symbolic link
    (never followed: a link is not a file nsprof wrote)."""
    return file_digest(path) if path.is_file() and not path.is_symlink() else None


def ledger_text(ledger: dict[str, dict], directory: Path, written: dict[str, bytes],
                replaced: dict[str, str | None] | None = None) -> bytes:
    """The ledger after `written` (name -> bytes) went in, entries of files no longer there dropped.
    Given `replaced` (name -> digest of the file there now), written before the files are moved into
    place: each entry also accepts the file it replaces, so that a write killed between the moves
    leaves every file nsprof's."""
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    files = {name: {k: v for k, v in entry.items() if k != "replaces"} for name, entry in ledger.items()
             if name not in written and (directory / name).is_file()}
    for name, data in written.items():
        files[name] = {"sha256": digest(data), "written": now}
        if replaced and replaced.get(name):
            files[name]["replaces"] = replaced[name]
    document = {"about": "files nsprof wrote here; a re-run replaces them while they are unchanged",
                "files": dict(sorted(files.items()))}
    return (json.dumps(document, indent=1) + "\n").encode()
