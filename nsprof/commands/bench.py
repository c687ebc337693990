from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from nsprof.console import stderr, stdout
from nsprof.op_names import OP_NAMES


def bench(
    stage: Optional[List[str]] = typer.Option(None, "--stage", "-s", help="Stage(s): v6, several (v1,v6 or repeated), or all. Default: all."),
    size: Optional[List[str]] = typer.Option(None, "--size", help="N for every dimension, or all of them (MxNxK for a GEMM); several as 1024,4096. Default: 4096."),
    op: str = typer.Option("sgemm", "--op", help=f"Which ladder: {', '.join(OP_NAMES)}."),
    repeat: Optional[int] = typer.Option(None, "--repeat", min=1, help="Timed launches per stage and size. Default: enough for ~0.25 s (10..500)."),
    warmup: Optional[int] = typer.Option(None, "--warmup", min=0, help="Untimed launches before timing. Default: at least 3 and 0.1 s of them (an idle GPU's clocks ramp up first)."),
    tile: Optional[str] = typer.Option(None, "--tile", help="Force the block tile (e.g. 64x128) of the stages that offer several (v8, v10, h4-h6); others keep theirs."),
    baseline: bool = typer.Option(True, "--baseline/--no-baseline", help="Also time the baselines of the chosen stages' precisions (cuBLAS: v9 for fp32, v9t for TF32, h7) for the '% cuBLAS' column."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON instead of a table."),
    out: Path = typer.Option(Path("profiles"), "--out", help="Directory for the results file bench-<op>-<time>.json."),
    save: bool = typer.Option(True, "--save/--no-save", help="Write the results file."),
    save_as: Optional[Path] = typer.Option(None, "--save-as", help="Write the results to this file instead of --out/bench-<op>-<time>.json (replacing it if nsprof wrote it)."),
    force: bool = typer.Option(False, "--force", help="Let --save-as replace a file that nsprof did not write, or that was edited since (kept by default)."),
) -> None:
    """Verify each stage against a float64 reference, then time it with CUDA events.

    A stage whose relative error exceeds its tolerance (`nsprof stages --op OP` states each
    precision's: 1e-5 for fp32 SGEMM, 5e-3 for TF32, 2^-11 + 4 sqrt(K) 2^-24 for HGEMM) is reported
    FAILED, is not timed, and makes the exit code 1. A stage this GPU cannot run (h6 and v11
    need sm_90a) is reported "not available" with the reason. % cuBLAS compares each stage with
    cuBLAS in its own precision (TF32 stages with cuBLAS TF32, v9t).
    """
    from nsprof.launch.bench import check_output, check_tile, results_document, run_bench, save_results
    from nsprof.launch.gpu import device_info
    from nsprof.registry import get_op, select_stages
    from nsprof.sizes import parse_sizes

    stages = select_stages(op, stage)
    sizes = parse_sizes(size, get_op(op).dims)
    check_tile(stages, tile)
    since = check_output(out, save_as, force) if save else None
    env = device_info()  # fails early, in one line, without a GPU or CuPy
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=stderr(), transient=True) as bar:
        task = bar.add_task("starting", total=None)
        records = run_bench(op, stages, sizes, repeat=repeat, warmup=warmup, baseline=baseline,
                            tile=tile, progress=lambda msg: bar.update(task, description=msg))
    dram_source = add_pct_dram(records, env["device"]) if get_op(op).headline == "bytes" else None
    doc = results_document(records, env)
    if as_json:
        typer.echo(json.dumps(doc, indent=2))
    else:
        console = stdout()
        console.print(results_table(records, env, dram_source, console.width))
    if save:
        path = save_results(doc, out, save_as, force, since)
        stderr().print(f"results written to {path}")
    if any(r["status"] in ("failed", "error") for r in records):
        raise typer.Exit(1)


def _fmt(value, spec) -> str:
    """A cell: `spec` a format spec or a function (nsprof.render.terminal_table.cell)."""
    from nsprof.render.terminal_table import cell

    return cell(value, spec)


def results_table(records: list[dict], env: dict, dram_source: str | None = None, width: int = 160) -> Table:
    """The records as a table `width` columns wide: numbers are never cut (their columns are as wide
    as their widest cell); below 120 columns the title and the tile are left out (`nsprof stages`
    and --json have them)."""
    wide = width >= 120
    table = Table(title=f"{env['device']} (CC {env['compute_capability']}, {env['sm_count']} SMs), CuPy {env['cupy']}, CUDA {env['runtime_cuda']}",
                  title_justify="left", pad_edge=wide, collapse_padding=not wide)
    from nsprof.registry import get_op

    by_bytes = bool(records) and get_op(records[0]["op"]).headline == "bytes"
    from nsprof.render import format as fmt

    gbytes = lambda tbytes: fmt.bytes_per_s(tbytes * 1e12, unit=False)  # noqa: E731 (one unit for bandwidth: GB/s)
    tflops = lambda value: fmt.flops_per_s(value * 1e12, unit=False)  # noqa: E731
    rates = [("tbytes_per_s", "GB/s", gbytes), ("pct_dram", "% DRAM", ".0f"), ("tflops", "TFLOP/s", tflops)] \
        if by_bytes else [("tflops", "TFLOP/s", tflops)]
    columns = [("stage", "left"), *([("title", "left")] if wide else []), ("size", "left"), *([("tile", "left")] if wide else []),
               ("status", "left"), ("median ms", "right"), ("spread", "right"),
               *((label, "right") for _, label, _ in rates), ("% cuBLAS", "right"), ("rel. error", "right")]
    rows = []
    for r in records:
        status = {"ok": "ok", "failed": "[red]FAILED[/]", "error": "[red]ERROR[/]"}.get(r["status"], r["status"])
        rows.append([
            r["stage"] + ("" if wide or not r.get("baseline_only") else " (baseline)"),
            *([r["title"] + (" (baseline)" if r.get("baseline_only") else "")] if wide else []), r["size"],
            *([_fmt(r["tile"], "")] if wide else []), status, _fmt(r["median_ms"], ".4f"),
            _fmt(r.get("spread_pct"), fmt.percent),
            *(_fmt(r.get(key), spec) for key, _, spec in rates), _fmt(r["pct_cublas"], ".0f"), _fmt(r["rel_error"], ".1e"),
        ])
    for i, (col, justify) in enumerate(columns):
        folds = col in ("title", "tile")
        widest = max((Text.from_markup(row[i]).cell_len for row in rows), default=0)
        table.add_column(col, justify=justify, overflow="fold" if folds else "ellipsis",
                         min_width=None if folds else max(widest, *(len(word) for word in col.split())))
    for row in rows:
        table.add_row(*row)
    notes = [f"{r['stage']} {r['size']}: {r['message']}" for r in records if r["status"] != "ok"]  # "not available" says why
    notes += [f"{r['stage']} {r['size']}: {r['prepare']} {r['prepare_ms']:.4f} ms, timed apart"
              for r in records if r.get("prepare_ms") is not None]
    notes += [f"{r['stage']} {r['size']}: includes {name} {ms:.4f} ms"
              for r in records if r.get("steps_ms") for name, ms in r["steps_ms"].items()]
    if baselines := baseline_note(records):
        notes.append(baselines)
    if by_bytes:
        notes.append("GB/s: 4(MK + M + K) bytes over the median time; % DRAM: of " + (dram_source or "no known ceiling"))
    table.caption = "; ".join(notes) or None
    return table


def baseline_note(records: list[dict]) -> str | None:
    """'% cuBLAS: of v9 (cuBLAS) for fp32 stages, of v9t (cuBLAS TF32) for tf32 stages', when the
    records compare with more than one baseline (each precision with its own)."""
    pairs = dict.fromkeys((r["precision"], r["baseline"]) for r in records if r.get("baseline"))
    if len({baseline for _, baseline in pairs}) < 2:
        return None
    titles = {(r["op"], r["stage"]): r["title"] for r in records}
    op = records[0]["op"]
    return "% cuBLAS: " + ", ".join(f"of {baseline} ({titles.get((op, baseline), baseline)}) for {precision} stages"
                                    for precision, baseline in pairs)


def add_pct_dram(records: list[dict], device: str) -> str | None:
    """% of this GPU's DRAM ceiling (measured where `nsprof ceilings` saved it, else the datasheet)
    for every timed record; returns the ceiling as the table names it."""
    from nsprof.ceilings.resolve import resolve_ceiling

    ceiling = resolve_ceiling(device)
    if ceiling is None or ceiling.dram_tbyte_per_s is None:
        return None
    for r in records:
        if r.get("tbytes_per_s") is not None:
            r["pct_dram"] = 100 * r["tbytes_per_s"] / ceiling.dram_tbyte_per_s
    from nsprof.render.format import bytes_per_s

    return f"{bytes_per_s(ceiling.dram_tbyte_per_s * 1e12)} ({ceiling.source_of('dram_tbyte_per_s')})"
