"""`nsprof analyze PATH`: tables (or --json) of what a profile directory or file holds."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from nsprof import api
from nsprof.commands.options import CEILINGS_HELP
from nsprof.console import error_line, stdout


class Attribution(str, Enum):
    thread = "thread"  # nsprof.analyze.nvtx_attribution.THREAD
    process = "process"


def analyze(
    path: Path = typer.Argument(..., help="A profile directory, or one file: nsys .nsys-rep or .sqlite, "
                                          "ncu .ncu-rep or .csv (raw or details page)."),
    json_: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
    ceilings: Path | None = typer.Option(None, "--ceilings", metavar="PATH", help=CEILINGS_HELP),
    attribution: Attribution = typer.Option(
        Attribution.thread, "--attribution", case_sensitive=False,
        help="Whose CUDA calls an NVTX range counts. thread: the thread that pushed it (NVTX's rule, as nsys "
             "stats). process: any thread of its process while it was open (PyTorch's backward pass "
             "runs on its own thread)."),
    launches: bool = typer.Option(False, "--launches", help="ncu's kernels table: one row per launch, not one per "
                                                            "kernel and launch configuration (--json has both)."),
    scheduler: str | None = typer.Option(None, "--scheduler", metavar="ADDRESS",
                                            help="A directory of captures: run on this Dask scheduler (tcp://host:8786, "
                                                 "or a scheduler file) instead of a local cluster."),
    workers: int | None = typer.Option(None, "--workers", min=1,
                                          help="A directory of captures: local cluster processes (default: one per core)."),
    worker_memory: str = typer.Option("4GiB", "--worker-memory", metavar="SIZE",
                                      help="A directory of captures: memory limit of each local worker."),
    step_range: str | None = typer.Option(None, "--step-range", metavar="NAME",
                                             help="A directory of captures: the NVTX range that is one training step "
                                                  "(default: the longest range named like 'step' on every capture)."),
) -> None:
    """Summarize a profile as tables (or --json): why the GPU waits, where its time went and what bounds each kernel.

    A program's capture opens with a verdict over its steady state (GPU-bound, host-bound, synchronization-bound,
    transfer-bound, or dominated by start-up), the figures and the rule that decide it, and one ranking of what to
    fix, host and GPU together, each saving bounded by what it can gain (nsprof explain gpu-idle tells why).

    Then where the time goes and what to fix first among the kernels: nsys's time per kernel and launch
    configuration joined with ncu's findings, ranked by the time a fix could save, never more than the kernel's
    distance to its roof (a ladder's stages come before it, and nsprof's own harness kernels stay out of it).

    From nsys: kernels and transfers by total time (as nsys stats), GPU utilization and idle gaps,
    GPU work per NVTX range. From ncu: each kernel's throughput, occupancy and bound, ncu's advice,
    and FLOP/s, bandwidth and bank conflicts where the capture counted them, one row per kernel and
    launch configuration (medians over its launches) or, with --launches, per launch. One row per
    measured stage when a directory holds both.

    A directory of several nsys captures (one per rank, e.g. rank0.sqlite, rank1.sqlite, or a
    sweep's runs) is one job: each capture is analyzed as a Dask task (a local cluster, or
    --scheduler), then one row per capture (GPU busy, kernel, copy and communication time, their
    overlap, idle time, top kernel), the kernel summary across captures (min, median, max per
    rank), and stragglers: per training step, the rank that finished its compute last."""
    from nsprof.render.analysis_tables import analysis_json, print_analysis

    if api.is_many_captures(path):
        from nsprof.render.captures import captures_blocks, captures_json
        from nsprof.render.document_writers import to_terminal

        result = api.analyze_many(path, scheduler, workers, worker_memory, step_range, progress=True)
        if json_:
            typer.echo(captures_json(result))
        else:
            to_terminal(captures_blocks(result, stdout().width), stdout(), spaced=False)
        if result.failed:  # the readable captures are above; the rest are named, and the exit says so
            total = len(result.failed) + len(result.captures)
            error_line(f"{len(result.failed)} of the {total} captures could not be read: "
                       f"{'; '.join(result.failed)}. Re-export them (nsys export --type sqlite), or move them out "
                       f"of {path}")
            raise typer.Exit(1)
        return

    analysis = api.analyze(path, ceilings, attribution.value)
    is_directory = Path(path).is_dir()
    if json_:
        typer.echo(analysis_json(analysis, is_directory))
        return
    print_analysis(analysis, is_directory, stdout(), launches)
