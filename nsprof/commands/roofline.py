"""`nsprof roofline [OUT]`: roofline.png, .svg and .csv of profiled stages or of any ncu capture."""

from __future__ import annotations

from pathlib import Path

import typer

from nsprof import api
from nsprof.commands.options import ALL_HELP, CEILINGS_HELP, FROM_HELP
from nsprof.commands.output_argument import output_and_inputs


def roofline(
    out: Path = typer.Argument(
        Path("reports"), metavar="OUT",
        help="Directory to write roofline.png, roofline.svg and roofline.csv "
             "into. A profile given here is read as --from instead."),
    from_: list[Path] | None = typer.Option(None, "--from", metavar="PATH", help=FROM_HELP),
    all_: bool = typer.Option(False, "--all", help=ALL_HELP),
    ceilings: Path | None = typer.Option(None, "--ceilings", metavar="PATH", help=CEILINGS_HELP),
    force: bool = typer.Option(False, "--force", help="Also replace files in the way that nsprof did not write, or that "
                                                      "were edited since (its own earlier files are replaced anyway)."),
) -> None:
    """Draw the roofline of profiled stages, or of every kernel in an ncu capture (.ncu-rep or .csv).

    One point per stage and memory level (DRAM, and L2 and L1 when their bytes were collected)
    under the GPU's roofs, with each ladder's path from its first stage to its last; and a CSV
    with each point's bound (memory or compute) and % of the roof above it."""
    out, from_ = output_and_inputs(out, from_)
    ladder = api.load_ladder(from_, all_, ceilings)
    if ladder.chosen:
        typer.echo(f"read {ladder.chosen}")
    for path in api.write_roofline(ladder, out, force):
        typer.echo(f"wrote {path}")
    for line in api.unplaced_lines(ladder):
        typer.echo(line, err=True)
