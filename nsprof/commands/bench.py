"""`nsprof bench`: verify, then time, a ladder's stages (api.bench), as a table or --json."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from nsprof import api
from nsprof.console import progress_line, stderr, stdout
from nsprof.ladder.op_names import OP_NAMES


def bench(
    stage: list[str] | None = typer.Option(None, "--stage", "-s", help="Stage(s): v6, several (v1,v6 or "
                                                                       "repeated), or all. Default: all."),
    size: list[str] | None = typer.Option(None, "--size", help="N for every dimension, or all of them (MxNxK for "
                                                               "a GEMM); several as 1024,4096. Default: 4096."),
    op: str = typer.Option("sgemm", "--op", help=f"Which ladder: {', '.join(OP_NAMES)}."),
    repeat: int | None = typer.Option(None, "--repeat", min=1, help="Timed launches per stage and size. "
                                                                    "Default: enough for ~0.25 s (10..500)."),
    warmup: int | None = typer.Option(None, "--warmup", min=0, help="Untimed launches before timing. Default: at least 3 "
                                                                    "and 0.1 s of them (an idle GPU's clocks ramp up first)."),
    tile: str | None = typer.Option(None, "--tile", help="Force the block tile (e.g. 64x128) of the stages that "
                                                         "offer several (v8, v10, h4-h6); others keep theirs."),
    baseline: bool = typer.Option(
        True, "--baseline/--no-baseline",
        help="Also time the baselines of the chosen stages' precisions (cuBLAS: "
             "v9 for fp32, v9t for TF32, h7) for the '% cuBLAS' column."),
    paired: bool = typer.Option(
        True, "--paired/--no-paired",
        help="Measure '% cuBLAS' with each stage's launches alternating with the fastest library's, so that a "
             "clock moving under the power limit moves both alike (one clock: a kernel's own power draw does not "
             "show); --no-paired divides the medians timed apart, each at the clock its own draw allows."),
    cold_inputs: bool = typer.Option(
        True, "--cold-inputs/--warm-inputs",
        help="Time each launch on the next of several copies of its buffers, so that none finds its inputs in L2 "
             "(as a program does weights it last read a layer ago); --warm-inputs times every launch on one set, "
             "which stays in L2 where it fits."),
    back_to_back: bool = typer.Option(
        False, "--back-to-back",
        help="Also time each stage and the library it is paired with back to back: chains of launches with no "
             "events between, the two in turn (the '% cuBLAS back to back' column). An event between two launches "
             "keeps the second from starting early, so a kernel that overlaps the one before it shows only here."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON instead of a table."),
    out: Path = typer.Option(Path("profiles"), "--out", help="Directory for the results file bench-<op>-<time>.json."),
    save: bool = typer.Option(True, "--save/--no-save", help="Write the results file."),
    save_as: Path | None = typer.Option(
        None, "--save-as",
        help="Write the results to this file instead of --out/bench-<op>-<time>.json (replacing it if nsprof wrote it)."),
    force: bool = typer.Option(False, "--force", help="Let --save-as replace a file that nsprof did not "
                                                      "write, or that was edited since (kept by default)."),
    runs: int = typer.Option(
        1, "--runs", metavar="N",
        help="Repeat the whole bench in N fresh processes; each stage keeps every run's median (run_medians_ms), "
             "and `nsprof diff` of two such records measures the variation between runs."),
    tuned: Path | None = typer.Option(
        None, "--tuned", help="Reuse the Triton configurations this bench results file kept instead of tuning "
                              "again (nsprof profile's ncu pass reuses its nsys pass's)."),
) -> None:
    """Verify each stage against a float64 reference, then time it with CUDA events.

    A stage whose relative error exceeds its tolerance (`nsprof stages --op OP` states each
    precision's: 1e-5 for fp32 SGEMM, 5e-3 for TF32, 2^-11 + 4 sqrt(K) 2^-24 for HGEMM) is reported
    FAILED, is not timed, and makes the exit code 1. A stage this GPU cannot run (h6 and v11
    need sm_90a) is reported "not available" with the reason. % cuBLAS compares each stage with
    the library in its own precision (TF32 stages with v9t), tuned over cuBLAS's and cuBLASLt's
    algorithms, or with PyTorch's same product where that was faster, with the two launched in turn
    (each launch between its own CUDA events): timed apart, two kernels meet different clocks on a GPU
    at its power limit.

    The CPU stages (v0, v0b, v0blas; s0, s0b, s0blas) run on the host and need no GPU: timed on the
    wall clock, skipped with an estimate where a size would take over 20 s, and every stage gets
    its speed-up over the CPU's serial loop and BLAS.
    """
    with progress_line() as progress:
        run = api.bench(stage, size, op, repeat=repeat, warmup=warmup, baseline=baseline, tile=tile,
                        out=out if save else None, save_as=save_as if save else None, force=force, tuned=tuned,
                        progress=progress, runs=runs, paired=paired,
                        cold_inputs=cold_inputs, back_to_back=back_to_back)
    if as_json:
        typer.echo(json.dumps(run.document, indent=2))
    else:
        from nsprof.render.bench_table import results_table

        console = stdout()
        console.print(results_table(run.records, run.document["env"], run.dram_ceiling, console.width))
    for path in run.written:
        stderr().print(f"results written to {path}")
    if run.failed:
        raise typer.Exit(1)
