"""Rich consoles shared by the commands: tables on stdout, progress and errors on stderr."""

from __future__ import annotations

import os

from rich.console import Console

PIPE_WIDTH = 160


def stdout() -> Console:
    # Off a terminal (pipes, CliRunner) tables are PIPE_WIDTH wide, unless COLUMNS says otherwise.
    console = Console()
    if console.is_terminal:
        return console
    columns = os.environ.get("COLUMNS", "")
    return Console(width=int(columns) if columns.isdigit() and int(columns) > 0 else PIPE_WIDTH)


def stderr() -> Console:
    return Console(stderr=True)
