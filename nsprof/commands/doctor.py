"""`nsprof doctor`: what profiling needs, checked (api.doctor)."""

from __future__ import annotations

import json

import typer

from nsprof import api
from nsprof.console import stdout


def doctor(
    as_json: bool = typer.Option(False, "--json", help="Print the checks as a JSON list."),
    nsys: str | None = typer.Option(None, "--nsys", metavar="PATH", help="The nsys executable. Default: "
                                                                         "$NSPROF_NSYS, then PATH."),
    ncu: str | None = typer.Option(None, "--ncu", metavar="PATH", help="The ncu executable. Default: $NSPROF_NCU, then PATH."),
) -> None:
    """Check what profiling needs: CuPy, GPU, driver, nvtx, nsys, ncu and counter access.

    The counter check profiles one tiny kernel under ncu.

    Exit code 0 when every check is ok, 1 otherwise (something is missing or could not be checked).
    """
    checks = api.doctor(nsys, ncu)
    if as_json:
        typer.echo(json.dumps(checks, indent=2))
    else:
        from nsprof.render.document import Block, Bullets, Table
        from nsprof.render.document_writers import to_terminal

        # the fixes under the table, whole, rather than a fourth column a narrow terminal would drop
        columns = (("check", "check", ""), ("status", "status", ""), ("found", "detail", ""))
        blocks: list[Block] = [Table("nsprof doctor", columns, checks)]
        fixes = [f"{c['check']}: {c['fix']}" for c in checks if c.get("fix")]
        if fixes:
            blocks.append(Bullets(fixes))
        to_terminal(blocks, stdout())
    if any(c["status"] != "ok" for c in checks):
        raise typer.Exit(1)
