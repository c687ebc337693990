"""Writing results so that a failure never leaves half a file: write beside, then move into place."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path: str | Path, data: bytes) -> Path:
    """`data` into `path` in one step (a reader sees the old file or the new one, never a part)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    finally:
        Path(temporary).unlink(missing_ok=True)
    return path
