"""`nsprof diff A B`: did the change make it faster, how sure is that, and why."""

from __future__ import annotations

from pathlib import Path

import typer

from nsprof import api
from nsprof.commands.analyze import Attribution
from nsprof.console import error_line, stdout
from nsprof.errors import NOTHING_COMPARED_EXIT_CODE, UsageError


def diff(
    a: Path = typer.Argument(..., metavar="A", help="The baseline: a profile directory (with its runs when taken with "
                                                    "--runs), a directory of nsys captures of one program (its runs), "
                                                    "an nsys .nsys-rep or .sqlite, an ncu .ncu-rep or .csv, or an "
                                                    "`nsprof bench` record (.json)."),
    b: Path | None = typer.Argument(None, metavar="[B]", help="The new version, of the same kind as "
                                                              "A. Default with --stages: A itself."),
    stages: str | None = typer.Option(
        None, "--stages", metavar="X,Y",
        help="Compare ladder stage X (of A) with stage Y (of B, or of A again): nsprof diff PROFILE --stages v5,v6."),
    min_change: float = typer.Option(
        2.0, "--min-change", metavar="PCT", min=0,
        help="The smallest change in median time called faster or slower, in percent (its interval must exclude 0 as well)."),
    fail_if_slower: float | None = typer.Option(
        None, "--fail-if-slower", metavar="PCT", min=0,
        help="Exit 1 when a kernel, range or stage is significantly slower "
             "by more than PCT percent, naming each on one line (for CI)."),
    json_: bool = typer.Option(False, "--json", help="Print one JSON object (kernels, ranges, "
                                                     "stages, totals) instead of tables."),
    markdown: bool = typer.Option(False, "--markdown", help="Print the diff as Markdown instead of tables."),
    out: Path | None = typer.Option(None, "--out", metavar="DIR", help="Also write DIR/diff.md, DIR/index.html "
                                                                       "and the chart DIR/diff-chart.png."),
    force: bool = typer.Option(False, "--force", help="Also replace files in the way that nsprof did not write, or that "
                                                      "were edited since (its own earlier files are replaced anyway)."),
    noise: Path | None = typer.Option(
        None, "--noise", metavar="PATH",
        help="With one run a side: call a change only beyond the floors measured on PATH, runs of your unchanged "
             "program (a profile taken with --runs, or a directory of its captures), a noise record (nsprof noise), "
             "or a history database holding one for the diff's GPU (nsprof noise --db), instead of nsprof's own "
             "(8 programs on H200s: docs/diff.md names the record)."),
    attribution: Attribution = typer.Option(
        Attribution.thread, "--attribution", case_sensitive=False,
        help="Whose CUDA calls an NVTX range counts (as `nsprof analyze --attribution`)."),
) -> None:
    """Compare two captures: per kernel, NVTX range and ladder stage, the change in median time
    with a 95% interval, whether it is faster, slower or the same, and why: the ncu counters that
    moved with it and the ncu rules that appeared or went away.

    With several runs on a side (profile --runs, bench --runs, a directory of captures), each run's
    median is one observation and the interval is Welch's t on their logarithms: the variation
    between runs is measured, and Benjamini-Hochberg over each table keeps a diff of hundreds of
    kernels from calling some by chance. With one run a side, the interval comes from that run's
    launches (a percentile bootstrap of the ratio of medians), and a change is called only beyond
    the noise floor of its category (its duration class: 10-100 us, over 100 us): how far
    unchanged programs moved between runs (--noise). Work under 10 us, pageable copies and
    waiting kernels are never called from one run a side.

    NVTX ranges are judged by their GPU time; their own duration (CPU time, which drifts between
    runs) is shown but never called. Totals of GPU busy, kernel, copy and idle time, and the
    kernels that account for most of the change."""
    from nsprof.render.diff_tables import diff_blocks, diff_json
    from nsprof.render.document import REPORT_WIDTH
    from nsprof.render.document_writers import to_markdown, to_terminal

    if json_ and markdown:
        raise UsageError("--json and --markdown exclude each other", "choose one output format")
    pair = _stage_pair(stages) if stages else None
    result = api.diff(a, b, pair, min_change, attribution.value, noise)
    if out is not None:
        for path in api.write_diff(result, out, force):
            typer.echo(f"wrote {path}", err=True)
    if json_:
        typer.echo(diff_json(result))
    elif markdown:
        typer.echo(to_markdown(diff_blocks(result, REPORT_WIDTH)), nl=False)
    else:
        console = stdout()
        to_terminal(diff_blocks(result, console.width), console)
    if fail_if_slower is not None:
        if not result.compared():
            error_line(f"{result.a} and {result.b} share no kernel, range or stage, so --fail-if-slower "
                       "compared nothing. Compare two captures of the same program or ladder")
            raise typer.Exit(NOTHING_COMPARED_EXIT_CODE)
        slower = result.slower_than(fail_if_slower)
        for line in slower:
            typer.echo(f"slower by more than {fail_if_slower:g}%: {line}", err=True)
        if slower:
            raise typer.Exit(1)


def _stage_pair(text: str) -> tuple[str, str]:
    parts = [part.strip() for part in text.replace(":", ",").split(",")]
    if len(parts) != 2 or not all(parts):
        raise UsageError(f"--stages {text!r} is not two stages", "write it as X,Y, e.g. --stages v5,v6")
    return parts[0], parts[1]
