"""`nsprof noise RUNS --out FILE`: the noise floors of the user's own unchanged program, measured from
its runs and written as the record `nsprof diff --noise FILE` reads."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from nsprof import api
from nsprof.commands.analyze import Attribution
from nsprof.console import stdout


def noise(
    runs: list[Path] = typer.Argument(..., metavar="RUNS...",
                                      help="Runs of one unchanged program: profiles taken with --runs, directories of "
                                           "its nsys captures, or single captures (each one run)."),
    out: Path = typer.Option(..., "--out", metavar="FILE.json", help="Where to write the noise record."),
    attribution: Attribution = typer.Option(Attribution.thread, "--attribution", case_sensitive=False,
                                            help="Whose CUDA calls an NVTX range counts (as in nsprof analyze)."),
    json_: bool = typer.Option(False, "--json", help="Print the record as JSON instead of a table."),
    db: Path | None = typer.Option(None, "--db", metavar="PATH",
                                   help="Also keep the record in this history database as its GPU's (replacing that "
                                        "GPU's earlier one): nsprof diff --noise PATH then reads the record of the "
                                        "diff's GPU."),
    force: bool = typer.Option(False, "--force", help="Also replace a file in the way that nsprof did not write, or that "
                                                      "was edited since (its own earlier record is replaced anyway)."),
) -> None:
    """Measure how far your unchanged program moves between runs, per category of work, and write it as the noise
    record `nsprof diff --noise FILE` reads: with one run a side, a diff then calls a change only beyond your floors
    instead of nsprof's own (measured on a corpus of eight programs,
    benchmarks/records/2026-11-28-h200-noise-corpus/noise_corpus.md).

    Categories are duration classes of a row's median: 10-100 us and over 100 us. A floor is 1.5 times the
    largest change among the kernels and NVTX ranges that one run a side would call significant, between any two
    of the runs, over those run at least 3 times with the same count in both. Work under 10 us, copies under 100
    us, pageable copies and waiting kernels (XLA's DelayKernel, NCCL) are never called from one run a side.
    Runs minutes or days apart give the floors that CI comparisons on one machine meet; across two GPUs a diff
    does not call work of 10-100 us or copies at all."""
    from nsprof.diff.noise import FLOOR_MARGIN, NEVER_CALLED
    from nsprof.render.document import Paragraph, Table
    from nsprof.render.document_writers import to_terminal

    record = api.measure_noise_record(runs, out, attribution.value, force, db)
    if json_:
        typer.echo(json.dumps(record, indent=2))
        return
    rows = [{"category": name, "floor": pct} for name, pct in record["floor_pct"].items()]
    to_terminal([Table("Noise floors", (("category", "category", ""), ("floor %", "floor", ".2f")), rows),
                 Paragraph(f"floor: {FLOOR_MARGIN:g}x the largest change between two of the {record['runs']} runs of the "
                           f"unchanged program on {record['gpu']} that one run a side would call significant; "
                           f"nsprof diff --noise {record['written'][0]} calls a change with one run a side only "
                           f"beyond it (never: {', '.join(NEVER_CALLED)})")], stdout(), spaced=False)
    for written in record["written"]:
        typer.echo(f"wrote {written}")
