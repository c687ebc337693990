"""`nsprof pipeline`: a matrix product from host memory back to host memory, as fast as the bus allows."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from nsprof import api
from nsprof.console import progress_line, stdout
from nsprof.render.format import percent, speedup

WARM_COLUMNS = (("stage", "stage", ""), ("variant", "variant", ""), ("status", "status", ""),
                ("median\nms", "median_ms", ".3f"), ("spread", "spread_pct", percent), ("x\nfloor", "x_floor", ".2f"),
                ("H2D\nms", "h2d_ms", ".3f"), ("kernel\nms", "kernel_ms", ".3f"), ("D2H\nms", "d2h_ms", ".3f"),
                ("overlap\nms", "overlap_ms", ".3f"), ("idle\nms", "idle_ms", ".3f"),
                ("x CPU\nBLAS", "x_cpu_blas", speedup))
COLD_COLUMNS = (("stage", "stage", ""), ("status", "status", ""), ("wall ms", "wall_ms", ",.1f"),
                ("context s", "context_s", ".3f"), ("allocation s", "allocation_s", ".3f"),
                ("module load s", "module_load_s", ".3f"), ("first flow s", "first_flow_s", ".3f"))


def pipeline(
    stage: list[str] | None = typer.Option(None, "--stage", "-s", help="Stage(s) doing the product, e.g. v10,v9. Default: "
                                                                       "the fastest that verifies at this size, and cuBLAS."),
    size: str = typer.Option("1024", "--size", help="N for N^3, or MxNxK."),
    op: str = typer.Option("sgemm", "--op", help="A matrix-product ladder: sgemm or hgemm."),
    chunks: int = typer.Option(4, "--chunks", min=1,
                               help="Row blocks of A and C streamed in the streams, graph and watched variants."),
    repeat: int | None = typer.Option(None, "--repeat", min=1, help="Timed flows per variant. Default: "
                                                                    "enough to fill 0.25 s (10 to 500)."),
    warmup: int | None = typer.Option(None, "--warmup", min=0, help="Untimed flows first. Default: at least 0.1 s of them."),
    cold: bool = typer.Option(True, "--cold/--no-cold", help="Also time the first flow in a fresh process."),
    capture: bool = typer.Option(True, "--nsys/--no-nsys", help="Capture the same flows under nsys "
                                                                "for the breakdown (needs nsys)."),
    out: Path = typer.Option(Path("profiles"), "--out", help="Where the nsys capture's profile directory is created."),
    nsys: str | None = typer.Option(None, "--nsys-path", metavar="PATH", help="The nsys executable. Default: "
                                                                              "$NSPROF_NSYS, then PATH."),
    json_: bool = typer.Option(False, "--json", help="Print the results as JSON instead of tables."),
) -> None:
    """Multiply two matrices from host memory back to host memory, verified, in variants that each teach one
    thing: pageable memory, pinned memory, row blocks streamed so copies overlap the product, the same as one
    CUDA graph, A sent whole while a kernel watches its row blocks land (watched), and the cold first call in a
    fresh process.

    Each warm variant's end-to-end median (CUDA events around the whole flow) is put against the bus floor (the
    bytes in and out at the pinned bandwidths `nsprof ceilings` measured), with the breakdown of an nsys capture
    of the same flows: time in H2D copies, kernels, D2H copies, their overlap, and GPU idle."""
    with progress_line(disable=json_) as progress:
        result = api.pipeline(op, stage, size, chunks=chunks, repeat=repeat, warmup=warmup, cold=cold, capture=capture,
                              out=out, nsys=nsys, progress=progress)
    if json_:
        typer.echo(json.dumps(result, indent=2, default=str))
        return
    from nsprof.render.document_writers import to_terminal

    to_terminal(pipeline_blocks(result, size), stdout(), spaced=False)
    failed = [r for r in result["records"] if r["status"] == "failed"]
    if failed:
        raise typer.Exit(1)


def pipeline_blocks(result: dict, size: str) -> list:
    """The warm variants' table, a line per record with a message, and the cold runs' table, as
    document blocks (nsprof.render.document)."""
    from nsprof.render.document import Block, Paragraph, Table

    warm = [r for r in result["records"] if r["variant"] != "cold"]
    shown = [{**r, "status": "n/a" if r["status"] == "not available" else r["status"]} for r in warm]
    blocks: list[Block] = [Table(f"The whole flow of {warm[0]['size'] if warm else size} on {result['gpu']}: host to device, "
                                 "product, device to host", WARM_COLUMNS, shown, _caption(result))]
    blocks += [Paragraph(f"{r['stage']} {r['variant']}: {r['status']}: {r['message']}")
               for r in result["records"] if r.get("message")]
    cold_rows = [r for r in result["records"] if r["variant"] == "cold"]
    if cold_rows:
        blocks.append(Table("Cold: the first flow in a fresh process (wall clock, pageable memory)", COLD_COLUMNS, cold_rows,
                            "after Python has imported nsprof; the breakdown is of that one call"))
    return blocks


def _caption(result: dict) -> str:
    floor = result["floor"] or {}
    if floor.get("floor_ms"):
        text = (f"floor: {floor['floor_ms']:.3f} ms with both directions overlapped, {floor['sequential_floor_ms']:.3f} ms "
                f"one after the other (pinned {floor['h2d_gbyte_per_s']:.1f} GB/s in, {floor['d2h_gbyte_per_s']:.1f} GB/s out; "
                f"{floor['source']})")
    else:
        text = f"no floor: {floor.get('source', 'no bandwidth measured')}"
    versus = result.get("cpu") or {}
    if versus.get("median_ms"):
        text += (f"; x CPU BLAS: {versus['stage']} (the CPU's BLAS on the same product in host memory, "
                 f"{versus['median_ms']:.3f} ms on {versus['cpu']}) over the whole flow, copies included")
    elif versus:
        text += f"; {versus['stage']}: {versus['message']}"
    return f"{text}; median: CUDA events around the whole flow; breakdown: {result['breakdown']}"
