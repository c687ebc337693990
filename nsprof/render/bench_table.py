"""The bench table: `nsprof bench`'s records as a rich table, with the caption that says what its
rates are. What the op declares says it (nsprof.op_model.Op: headline, min_bytes_rule, library), so
a new ladder's table needs no change here."""

from __future__ import annotations

from rich.console import JustifyMethod
from rich.table import Table
from rich.text import Text

from nsprof.registry import get_op
from nsprof.render import format as fmt
from nsprof.render.terminal_table import cell


def results_table(records: list[dict], env: dict, dram_ceiling=None, width: int = 160) -> Table:
    """The records as a table `width` columns wide: numbers are never cut (their columns are as wide
    as their widest cell); below 120 columns the title and the tile are left out (`nsprof stages`
    and --json have them). `dram_ceiling`: the Ceiling that % DRAM is of (nsprof.launch.bench.add_pct_dram)."""
    wide = width >= 120
    table = Table(title=f"{env['device']} (CC {env['compute_capability']}, {env['sm_count']} SMs), "
                        f"CuPy {env['cupy']}, CUDA {env['runtime_cuda']}",
                  title_justify="left", pad_edge=wide, collapse_padding=not wide)
    op = get_op(records[0]["op"]) if records else None
    by_bytes = op is not None and op.headline == "bytes"
    gbytes = lambda tbytes: fmt.bytes_per_s(tbytes * 1e12, unit=False)  # noqa: E731 (one unit for bandwidth: GB/s)
    tflops = lambda value: fmt.flops_per_s(value * 1e12, unit=False)  # noqa: E731
    rates = [("tbytes_per_s", "GB/s", gbytes), ("pct_dram", "% DRAM", ".0f"), ("tflops", "TFLOP/s", tflops)] \
        if by_bytes else [("tflops", "TFLOP/s", tflops)]
    library = op.library if op else "cuBLAS"
    left: JustifyMethod = "left"
    right: JustifyMethod = "right"
    columns = [("stage", left), *([("title", left)] if wide else []), ("size", left), *([("tile", left)] if wide else []),
               ("status", left), ("median ms", right), ("spread", right),
               *((label, right) for _, label, _ in rates), (f"% {library}", right), ("rel. error", right)]
    rows = []
    for r in records:
        status = {"ok": "ok", "failed": "[red]FAILED[/]", "error": "[red]ERROR[/]"}.get(r["status"], r["status"])
        rows.append([
            r["stage"] + ("" if wide or not r.get("baseline_only") else " (baseline)"),
            *([r["title"] + (" (baseline)" if r.get("baseline_only") else "")] if wide else []), r["size"],
            *([cell(r["tile"], "")] if wide else []), status, cell(r["median_ms"], ".4f"),
            cell(r.get("spread_pct"), fmt.percent),
            *(cell(r.get(key), spec) for key, _, spec in rates), cell(r["pct_cublas"], ".0f"), cell(r["rel_error"], ".1e"),
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
    if by_bytes and op is not None:
        notes.append(f"GB/s: {op.min_bytes_rule} bytes over the median time; % DRAM: of {_dram_source(dram_ceiling)}")
    table.caption = "; ".join(notes) or None
    return table


def _dram_source(ceiling) -> str:
    if ceiling is None or ceiling.dram_tbyte_per_s is None:
        return "no known ceiling"
    return f"{fmt.bytes_per_s(ceiling.dram_tbyte_per_s * 1e12)} ({ceiling.source_of('dram_tbyte_per_s')})"


def baseline_note(records: list[dict]) -> str | None:
    """'% cuBLAS: of v9 (cuBLAS) for fp32 stages, of v9t (cuBLAS TF32) for tf32 stages', when the
    records compare with more than one baseline (each precision with its own)."""
    pairs = dict.fromkeys((r["precision"], r["baseline"]) for r in records if r.get("baseline"))
    if len({baseline for _, baseline in pairs}) < 2:
        return None
    titles = {(r["op"], r["stage"]): r["title"] for r in records}
    op = records[0]["op"]
    return f"% {get_op(op).library}: " + ", ".join(
        f"of {baseline} ({titles.get((op, baseline), baseline)}) for {precision} stages" for precision, baseline in pairs)
