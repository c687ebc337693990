from __future__ import annotations

import json

import typer
from rich.markup import escape
from rich.table import Table

from nsprof.console import stdout


def stages(
    op: str = typer.Option("sgemm", "--op", help="Which ladder to list."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list instead of a table."),
) -> None:
    """List the stages of a kernel ladder: what each changes, and how it handles ragged sizes."""
    from nsprof.registry import get_op, stages_for

    ladder = stages_for(op)
    description = get_op(op).description
    if as_json:
        typer.echo(json.dumps([s.to_json() for s in ladder], indent=2))
        return
    table = Table(title=f"{op} ladder: {description}", title_justify="left")
    for col in ("stage", "title", "kernel file", "ragged", "precision", "changes"):
        table.add_column(col, overflow="fold")
    for s in ladder:
        table.add_row(s.stage, s.title, s.kernel_file or "(cuBLAS via CuPy)", s.ragged, s.precision.name, escape(s.changes))
    precisions = get_op(op).precisions.values()
    table.caption = "Passes when the relative error against float64 is at most: " + "; ".join(
        f"{p.name} ({p.description}) {p.rule}" for p in precisions)
    stdout().print(table)
