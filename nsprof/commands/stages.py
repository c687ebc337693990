"""`nsprof stages`: the stages of a ladder, from the registry."""

from __future__ import annotations

import json

import typer

from nsprof import api
from nsprof.console import stdout


def stages(
    op: str = typer.Option("sgemm", "--op", help="Which ladder to list."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list instead of a table."),
) -> None:
    """List the stages of a kernel ladder: what each changes, and how it handles ragged sizes."""
    ladder = api.stages(op)
    if as_json:
        typer.echo(json.dumps([s.to_json() for s in ladder.stages], indent=2))
        return
    from nsprof.render.document_writers import to_terminal
    from nsprof.render.stages_table import stages_table

    console = stdout()
    to_terminal([stages_table(ladder, console.width)], console)
