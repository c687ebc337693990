"""Writing results so that a failure never leaves half a file: write beside, then move into place."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def give_default_mode(path: str | Path) -> None:
    """The permissions a plain open() would have given (mkstemp makes files private to their owner)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def write_atomically(path: str | Path, data: bytes) -> Path:
    """`data` into `path` in one step (a reader sees the old file or the new one, never a part)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        give_default_mode(temporary)
        os.replace(temporary, path)
    finally:
        Path(temporary).unlink(missing_ok=True)
    return path


def write_set(directory: str | Path, files: dict[str, bytes], force: bool = False) -> list[Path]:
    """Files that belong together (a figure and its table) into `directory`: all of them, or none.
    They are written to a temporary directory beside it first, then moved into place, so a failure
    leaves the earlier set whole. Files already there are kept unless `force` (a UsageError says so)."""
    from nsprof.errors import UsageError

    directory = Path(directory)
    existing = [name for name in files if (directory / name).exists()]
    if existing and not force:
        raise UsageError(f"{directory}: {', '.join(existing)} already there",
                         "pass --force to replace them, or choose another output directory")
    directory.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".nsprof-", dir=directory))
    try:
        for name, data in files.items():
            (staging / name).write_bytes(data)
        for name in files:
            os.replace(staging / name, directory / name)
    finally:
        for leftover in staging.iterdir():
            leftover.unlink()
        staging.rmdir()
    return [directory / name for name in files]
