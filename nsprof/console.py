"""Rich consoles shared by the commands: tables on stdout, progress and errors on stderr."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, cast

from rich.console import Console

from nsprof.printable import printable

if TYPE_CHECKING:
    from rich.progress import Progress

PIPE_WIDTH = 100
_SPACES_BEFORE_NEWLINE = re.compile(r" +\n")


class _Stdout(Console):
    def on_broken_pipe(self) -> None:
        """The reader went away (`nsprof analyze X | head -3`): end quietly with 0, as other tools
        do, where rich would exit 1 with nothing said. Python's advice: point stdout at devnull,
        so that the exit's own flush does not fail again."""
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(0)


def stdout() -> Console:
    # Off a terminal (pipes, files, CliRunner) output is PIPE_WIDTH wide unless COLUMNS says
    # otherwise, and lines carry no padding after their last character.
    console = _Stdout()
    if console.is_terminal:
        return console
    columns = os.environ.get("COLUMNS", "")
    # rich asks for an IO[str] but only writes, flushes and asks isatty and fileno: _Trimmed's methods
    trimmed = cast(IO[str], _Trimmed(sys.stdout))
    return _Stdout(file=trimmed, width=int(columns) if columns.isdigit() and int(columns) > 0 else PIPE_WIDTH)


def stderr() -> Console:
    return Console(stderr=True)


def error_line(message: str) -> None:
    """`error: MESSAGE` as one line on stderr: a newline or escape sequence in a name or path it
    quotes is spelled out (nsprof.printable), not obeyed."""
    sys.stderr.write(f"error: {printable(message)}\n")


def progress_bar(*columns, disable: bool = False) -> Progress:
    """A transient rich Progress on stderr, shown only on a terminal: elsewhere (a log, a pipe,
    CI) it would print nothing useful but the blank line rich leaves when it stops."""
    from rich.progress import Progress

    console = stderr()
    return Progress(*columns, console=console, transient=True, disable=disable or not console.is_terminal)


@contextmanager
def progress_line(disable: bool = False) -> Iterator[Callable[[str], None]]:
    """A transient spinner on stderr showing the latest message it is handed, with the time taken.
    It starts at the first message, so that input checked before the long work fails in one line
    (a spinner leaves a blank line behind)."""
    from rich.progress import SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn

    bar = progress_bar(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), disable=disable)
    tasks: list[TaskID] = []

    def update(message: str) -> None:
        if not tasks:
            bar.start()
            tasks.append(bar.add_task(message, total=None))
        bar.update(tasks[0], description=message)

    try:
        yield update
    finally:
        if tasks:
            bar.stop()


class _Trimmed:
    """A text file that drops the spaces rich pads lines with (titles and captions are padded to
    their table's width): spaces at the end of a write are held until the next shows whether a
    newline follows them."""

    def __init__(self, file) -> None:
        self._file, self._spaces = file, ""

    def write(self, text: str) -> int:
        text = _SPACES_BEFORE_NEWLINE.sub("\n", self._spaces + text)
        body = text.rstrip(" ")
        self._spaces = text[len(body):]
        self._file.write(body)
        return len(text)

    def flush(self) -> None:
        self._file.flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._file.fileno()
