"""`nsprof analyze PATH`: tables (or --json) of what a profile directory or file holds."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from nsprof import api
from nsprof.commands.options import CEILINGS_HELP
from nsprof.console import stdout


class Attribution(str, Enum):
    thread = "thread"  # nsprof.analyze.nvtx_attribution.THREAD
    process = "process"


def analyze(
    path: Path = typer.Argument(..., help="A profile directory, or one file: nsys .nsys-rep or .sqlite, "
                                          "ncu .ncu-rep or .csv (raw or details page)."),
    json_: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
    ceilings: Optional[Path] = typer.Option(None, "--ceilings", metavar="PATH", help=CEILINGS_HELP),
    attribution: Attribution = typer.Option(
        Attribution.thread, "--attribution", case_sensitive=False,
        help="Whose CUDA calls an NVTX range counts. thread: the thread that pushed it (NVTX's rule, as nsys "
             "stats). process: any thread of its process while it was open (PyTorch's backward pass "
             "runs on its own thread)."),
    launches: bool = typer.Option(False, "--launches", help="ncu's kernels table: one row per launch, not one per "
                                                            "kernel and launch configuration (--json has both)."),
) -> None:
    """Summarize a profile as tables (or --json): where the GPU time went and what bounds each kernel.

    First, where the time goes and what to fix first: nsys's time per kernel and launch configuration
    joined with ncu's findings, ranked by the time a fix could save (a ladder's stages come before it,
    and nsprof's own harness kernels stay out of it).

    From nsys: kernels and transfers by total time (as nsys stats), GPU utilization and idle gaps,
    GPU work per NVTX range. From ncu: each kernel's throughput, occupancy and bound, ncu's advice,
    and FLOP/s, bandwidth and bank conflicts where the capture counted them, one row per kernel and
    launch configuration (medians over its launches) or, with --launches, per launch. One row per
    measured stage when a directory holds both."""
    from nsprof.render.analysis_tables import analysis_json, print_analysis

    analysis = api.analyze(path, ceilings, attribution.value)
    is_directory = Path(path).is_dir()
    if json_:
        typer.echo(analysis_json(analysis, is_directory))
        return
    print_analysis(analysis, is_directory, stdout(), launches)
