"""`nsprof report [OUT]`: a per-stage report (index.html and report.md) of profiled stages or of any nsys or ncu capture."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from nsprof import api
from nsprof.paths import gpu_slug

if TYPE_CHECKING:
    from nsprof.ladder_analysis.profiles import LadderAnalysis
from nsprof.commands.options import ALL_HELP, CEILINGS_HELP, FROM_HELP
from nsprof.commands.output_argument import output_and_inputs
from nsprof.errors import UsageError


def report(
    out: Path = typer.Argument(Path("reports"), metavar="OUT", help="Directory that receives the report's own directory. "
                                                                    "A profile given here is read as --from instead."),
    from_: list[Path] | None = typer.Option(None, "--from", metavar="PATH", help=FROM_HELP),
    all_: bool = typer.Option(False, "--all", help=ALL_HELP),
    ceilings: Path | None = typer.Option(None, "--ceilings", metavar="PATH", help=CEILINGS_HELP),
    force: bool = typer.Option(False, "--force", help="Also replace files in the way that nsprof did not write, or that "
                                                      "were edited since (its own earlier files are replaced anyway)."),
    name: str | None = typer.Option(None, "--name", help="The report's directory under OUT. Default: the "
                                                         "profile's name, or <gpu>-<op> for several profiles."),
) -> None:
    """Write a per-stage report: OUT/<name>/index.html (self-contained) and report.md.

    Every stage's time, TFLOP/s, % of cuBLAS, DRAM bandwidth, intensity, bank conflicts,
    occupancy, registers and shared memory; what each stage changed and what that moved; what
    bounds it on the roofline; and where an nsys capture's time went."""
    name = report_name(name) if name is not None else None
    out, from_ = output_and_inputs(out, from_)
    if from_ and len(from_) == 1 and api.is_many_captures(from_[0]):  # one row and one bar per capture
        result = api.analyze_many(from_[0], progress=True)
        for path in api.write_captures_report(result, out / (name or Path(from_[0]).resolve().name), force):
            typer.echo(f"wrote {path}")
        return
    ladder = api.load_ladder(from_, all_, ceilings)
    if ladder.chosen:
        typer.echo(f"read {ladder.chosen}")
    for path in api.write_report(ladder, out / (name or default_name(ladder)), force):
        typer.echo(f"wrote {path}")


def report_name(name: str) -> str:
    """--name checked to be one directory name, so that the report lands in OUT/<name>."""
    if not name.strip() or name in (".", "..") or "/" in name or "\\" in name:
        raise UsageError(f"--name {name!r} is not a directory name", "give one name, without '/' (the report goes under OUT)")
    return name


def default_name(ladder: LadderAnalysis) -> str:
    """The profile's name (a slug: nsprof.parse.sources.unique_names), or <gpu>-<op> for several."""
    if len(ladder.captures) == 1:
        return ladder.captures[0].name
    ops = "-".join(sorted(set(ladder.work["op"].dropna()))) or "kernels"
    return f"{gpu_slug(ladder.gpu) if ladder.gpu else 'unknown-gpu'}-{ops}"
