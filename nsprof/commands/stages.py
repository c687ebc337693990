"""`nsprof stages`: the stages of a ladder, from the registry."""

from __future__ import annotations

import json
from pathlib import PurePosixPath

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
    from nsprof.render.terminal_table import table_width

    console = stdout()
    columns = tuple((heading, key, "") for heading, key in (("stage", "stage"), ("title", "title"), ("kernel file", "file"),
                                                             ("ragged", "ragged"), ("precision", "precision"), ("changes", "changes")))
    precisions = get_op(op).precisions.values()
    caption = "Passes when the relative error against float64 is at most: " + "; ".join(
        f"{p.name} ({p.description}) {p.rule}" for p in precisions)
    rows = [{"stage": s.stage, "title": s.title, "file": s.kernel_file or "(cuBLAS via CuPy)", "ragged": s.ragged,
             "precision": s.precision.name, "changes": s.changes} for s in ladder]
    folders = sorted({str(PurePosixPath(s.kernel_file).parent) for s in ladder if s.kernel_file})
    drop_order: tuple[str, ...] = ()
    if table_width(list(columns), rows) > console.width:  # the changes wrap: make room for them
        # a file name whole rather than its path split across lines: the folder goes to the caption
        rows = [{**row, "file": PurePosixPath(row["file"]).name if row["file"].startswith(tuple(folders)) else row["file"]}
                for row in rows]
        caption = f"Kernel files in {', '.join(f + '/' for f in folders)}. " + caption
        drop_order = NARROW_DROP_ORDER
    to_terminal([Table(f"{op} ladder: {description}", columns, rows, caption, drop_order, whole=("title",))], console)


# Where the changes must wrap, these columns are left out, in this order, while the changes would
# wrap narrower than terminal_table.PROSE_MIN (all in --json)
NARROW_DROP_ORDER = ("precision", "ragged", "title")
