"""`nsprof stages`: the stages of a ladder, from the registry."""

from __future__ import annotations

import json

import typer

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
    from nsprof.render.document import Table
    from nsprof.render.document_writers import to_terminal

    columns = tuple((heading, heading, "") for heading in ("stage", "title", "kernel file", "ragged", "precision", "changes"))
    rows = [{"stage": s.stage, "title": s.title, "kernel file": s.kernel_file or "(cuBLAS via CuPy)", "ragged": s.ragged,
             "precision": s.precision.name, "changes": s.changes} for s in ladder]
    precisions = get_op(op).precisions.values()
    caption = "Passes when the relative error against float64 is at most: " + "; ".join(
        f"{p.name} ({p.description}) {p.rule}" for p in precisions)
    to_terminal([Table(f"{op} ladder: {description}", columns, rows, caption)], stdout())
