"""Writing results so that a failure never leaves half a file, and a re-run replaces only what
nsprof itself wrote.

The rule (README, "Where results go"): in a directory nsprof writes into, a file it wrote there
and that is unchanged since is replaced by the next run; any other file in the way (the user's
own, or one edited since) is kept and named in the error, unless `force`. A run also never
replaces files that another run wrote after this one began (`check_outputs`): of two runs racing
into one directory, the later fails instead of silently replacing the earlier."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from dataclasses import dataclass
from pathlib import Path

from nsprof.errors import NsprofError, UsageError
from nsprof.output.ledger import LEDGER, ledger_text, read_ledger, regular_file_digest, why_kept
from nsprof.output.staging import clean_stale, locked, new_staging, remove_staging


def give_default_mode(path: str | Path) -> None:
    """The permissions a plain open() would have given (mkstemp makes files private to their owner)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


@dataclass(frozen=True)
class Outputs:
    """What was at each output path when a run began (checked again when it writes)."""
    seen: dict[Path, tuple | None]


def _seen(path: Path) -> tuple | None:
    try:
        stat = path.lstat()
    except FileNotFoundError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def check_outputs(paths: list[Path], force: bool = False) -> Outputs:
    """Fail now, before the work, when a file in the way of `paths` may not be replaced (see the
    module docstring); what is there is remembered for `write_outputs` to check again."""
    paths = [Path(p) for p in paths]
    if not force:
        _refuse_kept({p: why_kept(p, regular_file_digest(p), read_ledger(p.parent)) for p in paths})
    return Outputs({p.absolute(): _seen(p) for p in paths})


def write_set(directory: str | Path, files: dict[str, bytes], force: bool = False,
              since: Outputs | None = None) -> list[Path]:
    """Files that belong together (a figure and its table) into `directory`: all of them, or none
    (see write_outputs)."""
    return write_outputs({Path(directory) / name: data for name, data in files.items()}, force, since)


def write_outputs(files: dict[Path, bytes], force: bool = False, since: Outputs | None = None) -> list[Path]:
    """Write `files` (path -> bytes). Each directory's files are staged beside them, then moved
    into place while the directory is locked against other nsprof writers, so a failure leaves the
    earlier set whole and two writers never mix their sets. A file in the way that nsprof may not
    replace stops the whole write (a UsageError naming it) unless `force`; so do files that changed
    since `since` (check_outputs), written by another run meanwhile."""
    by_directory: dict[Path, dict[str, bytes]] = {}
    for path, data in files.items():
        by_directory.setdefault(Path(path).parent, {})[Path(path).name] = data
    for directory in by_directory:
        directory.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        for directory in sorted(by_directory, key=lambda d: str(d.resolve())):  # one order: no deadlock
            stack.enter_context(locked(directory))
        found = {}
        for directory, named in by_directory.items():
            clean_stale(directory, list(named))
            found[directory] = {name: regular_file_digest(directory / name) for name in named}
        if not force:
            _refuse_kept({directory / name: why_kept(directory / name, digest, read_ledger(directory))
                          for directory, digests in found.items() for name, digest in digests.items()})
            _refuse_raced(since, [directory / name for directory, named in by_directory.items() for name in named])
        for directory, named in by_directory.items():
            _replace(directory, named, found[directory])
    return [Path(path) for path in files]


def _replace(directory: Path, files: dict[str, bytes], found: dict[str, str | None]) -> None:
    """Stage `files` and the ledger, then move them into place (the caller holds the lock)."""
    ledger = read_ledger(directory)
    staging = new_staging(directory)
    try:
        for name, data in files.items():
            (staging / name).write_bytes(data)
        with _uninterrupted():  # a set is all or none: a Ctrl-C between two moves waits for the last
            # the ledger first accepts both the old and the new bytes, so that a kill between the moves
            # leaves every file there nsprof's; then the new bytes alone
            _move_ledger(staging, directory, ledger_text(ledger, directory, files, found))
            for name in files:
                os.replace(staging / name, directory / name)
            _move_ledger(staging, directory, ledger_text(ledger, directory, files))
    finally:
        remove_staging(staging)


@contextlib.contextmanager
def _uninterrupted():
    """Hold SIGINT and SIGTERM until the block ends, then deliver them to the handlers it found.
    Only the main thread can set handlers; elsewhere the signal interrupts the main thread, not
    the block."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    found = {sig: signal.signal(sig, lambda number, frame: held.append(number))
             for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in found.items():  # None: a handler set outside Python, which cannot be put back
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        for number in held:
            signal.raise_signal(number)


def _move_ledger(staging: Path, directory: Path, text: bytes) -> None:
    (staging / LEDGER).write_bytes(text)
    os.replace(staging / LEDGER, directory / LEDGER)


def _refuse_kept(reasons: dict[Path, str | None]) -> None:
    kept = {path: why for path, why in reasons.items() if why}
    if kept:
        them = "it" if len(kept) == 1 else "them"
        raise UsageError(_kept(kept), f"pass force=True to replace {them}, or choose another output path",
                         cli_fix=f"pass --force to replace {them}, or choose another output path")


def _refuse_raced(since: Outputs | None, paths: list[Path]) -> None:
    if since is None:
        return
    changed = [path for path in paths if path.absolute() in since.seen and _seen(path) != since.seen[path.absolute()]]
    if changed:
        raise NsprofError(_kept({path: "" for path in changed}) + " (written by another nsprof run while this one ran)",
                          "run again to replace them, or choose another output path")


def _kept(reasons: dict[Path, str]) -> str:
    """"DIR: kept a.png (why), b.csv (why)", or whole paths when they are in several directories."""
    directories = {path.parent for path in reasons}
    where = f"{next(iter(directories))}: " if len(directories) == 1 else ""
    return where + "kept " + ", ".join(f"{path.name if where else path}{f' ({why})' if why else ''}"
                                       for path, why in reasons.items())


def write_atomically(path: str | Path, data: bytes) -> Path:
    """`data` into `path` in one step (a reader sees the old file or the new one, never a part),
    whatever was there: for files whose owner decides what to keep (a manifest, a measurement)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_stale(path.parent)
    staging = new_staging(path.parent)
    try:
        (staging / path.name).write_bytes(data)  # open()'s default permissions, unlike mkstemp's
        os.replace(staging / path.name, path)
    finally:
        remove_staging(staging)
    return path
