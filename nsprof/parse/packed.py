"""Captures kept xz-packed (`nsys.sqlite.xz`, `report.ncu-rep.xz`): read as the file inside them.

A SQLite export packs 5-10x, so repositories and archives keep them packed (nsprof's own test data
does). A packed file is unpacked once into nsprof's data directory (`unpacked/`, named by the
packed file's path, size and time, so an edited file is unpacked anew) and read from there: the
profile it lies in is never written to, as a capture is evidence. The copies stay until removed
(deleting the `unpacked/` folder is safe: they are made again when read).
"""

from __future__ import annotations

import hashlib
import lzma
import os
import shutil
from pathlib import Path

from nsprof.errors import ParseError
from nsprof.paths import data_dir

PACKED_SUFFIX = ".xz"
CACHE = "unpacked"


def is_packed(path: Path) -> bool:
    return Path(path).suffix.lower() == PACKED_SUFFIX


def packed_beside(path: Path) -> Path:
    """Where `path` would lie packed: nsys.sqlite.xz beside nsys.sqlite."""
    path = Path(path)
    return path.with_name(path.name + PACKED_SUFFIX)


def inner_name(path: Path) -> Path:
    """The name of the file inside a packed one: nsys.sqlite for nsys.sqlite.xz."""
    return Path(path).with_suffix("")


def unpacked_copy(path: Path) -> Path:
    """The unpacked copy of `path` in the cache, made on first use (a temporary file renamed into
    place, so a reader never sees half of one); ParseError when it is no xz file."""
    path = Path(path)
    status = path.stat()
    key = hashlib.sha256(f"{path.resolve()}|{status.st_size}|{status.st_mtime_ns}".encode()).hexdigest()[:20]
    target = data_dir() / CACHE / f"{key}-{inner_name(path).name}"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.part")
    try:
        with lzma.open(path) as packed, open(partial, "wb") as out:
            shutil.copyfileobj(packed, out, 1 << 20)
        os.replace(partial, target)
    except (lzma.LZMAError, EOFError) as err:
        raise ParseError(f"{path}: not a whole xz file ({err})", "pack it again, or pass the unpacked file") from None
    finally:
        partial.unlink(missing_ok=True)
    return target
