"""Where a write is prepared before it is moved into place, and who may write a directory now.

A staging folder is named `.nsprof-<pid>-<random>` after the process that made it, inside the
output directory (so that the final move is a rename on one file system), and holds a MARKER file:
a folder of the user's that happens to look alike (`.nsprof-2024-backup`) is never removed. A process killed
mid-write leaves its folder behind; the next write into that directory removes the folders of
processes no longer running, and any older than STALE_AFTER_S (a process id can be reused).

Writers of one directory take turns: each holds an exclusive lock on the directory itself
(flock, released by the kernel when its holder dies, so a killed writer never blocks the next)
from the check of what is there to the last move."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from nsprof.errors import NsprofError

try:
    import fcntl
except ImportError:  # not POSIX: writers are not serialized
    fcntl = None  # type: ignore[assignment]  # the usual optional-module idiom; every use checks for None

STALE_AFTER_S = 24 * 3600
LOCK_WAIT_S = 60.0
_OURS = re.compile(r"\.nsprof-(\d+)-[a-z0-9_]{8}")  # tempfile.mkdtemp's 8 random characters
MARKER = ".nsprof-staging"  # inside every staging folder: a user's own `.nsprof-2024-backup` holds none
_EARLIER = re.compile(r"\.nsprof-[a-z0-9_]{8}")  # staging of earlier nsprof versions, named without a pid


def new_staging(directory: Path) -> Path:
    staging = Path(tempfile.mkdtemp(prefix=f".nsprof-{os.getpid()}-", dir=directory))
    (staging / MARKER).touch()
    return staging


def remove_staging(staging: Path) -> None:
    shutil.rmtree(staging, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # another user's process (alive), or no such number
        return True
    return True


def clean_stale(directory: Path, names: Sequence[str] = ()) -> list[Path]:
    """Remove what killed writers left in `directory`: staging folders of dead processes or older
    than STALE_AFTER_S, and temporary files `.<name>-XXXXXXXX` of the `names` being written that
    earlier versions of nsprof left (by age alone). Returns what was removed."""
    removed: list[Path] = []
    old = time.time() - STALE_AFTER_S
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    earlier = [re.compile(re.escape(f".{name}-") + "[a-z0-9_]{8}") for name in names]
    for entry in entries:
        match = _OURS.fullmatch(entry.name)
        try:
            aged = entry.stat(follow_symlinks=False).st_mtime < old
        except OSError:
            continue
        if match:
            ours = entry.is_dir(follow_symlinks=False) and os.path.exists(os.path.join(entry.path, MARKER))
            stale = ours and int(match[1]) != os.getpid() and (aged or not _alive(int(match[1])))
        else:
            stale = aged and bool(_EARLIER.fullmatch(entry.name) or any(p.fullmatch(entry.name) for p in earlier))
        if stale:
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            removed.append(path)
    return removed


@contextlib.contextmanager
def locked(directory: Path, wait_s: float = LOCK_WAIT_S):
    """Hold `directory` against other nsprof writers; wait up to `wait_s` for one that holds it."""
    if fcntl is None:
        yield
        return
    handle = os.open(directory, os.O_RDONLY)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise NsprofError(f"{directory}: another nsprof process has been writing there for over "
                                      f"{wait_s:.0f} s", "try again when it has finished, or write elsewhere") from None
                time.sleep(0.05)
            except OSError:  # a file system without flock on directories (some network ones): unserialized
                break
        yield
    finally:
        os.close(handle)  # closing releases the lock
