"""Rich consoles shared by the commands: tables on stdout, progress and errors on stderr."""

from __future__ import annotations

from rich.console import Console


def stdout() -> Console:
    # Off a terminal (pipes, CliRunner) keep tables wide enough not to wrap every cell.
    console = Console()
    return console if console.is_terminal else Console(width=160)


def stderr() -> Console:
    return Console(stderr=True)
