"""`nsprof analyze DIR` and `nsprof report` on a directory of captures (one per rank, or per run):
the per-capture table, the kernel summary merged across captures, stragglers, the JSON document
and the per-rank chart (render layer)."""

from __future__ import annotations

import json

from nsprof.analyze.captures import NCCL, NO_COMM
from nsprof.analyze.captures_types import CapturesDocument
from nsprof.render.document import Block, Image, Paragraph, Table
from nsprof.render.document_writers import json_ready
from nsprof.render.table_names import telling_names
from nsprof.render.terminal_table import fit_columns, fit_named, left_out

KERNEL_ROWS = 10
STRAGGLER_ROWS = 10
CHART_FILE = "captures.png"


def _ms(ns) -> str:
    return format(ns / 1e6, ",.2f")


def captures_json(result) -> str:
    """The JSON document: captures, kernels (merged), step_range and stragglers, every row, and the
    captures that could not be read ("file: why")."""
    def records(frame) -> list:
        return [json_ready(row) for row in frame.to_dict("records")]

    document: CapturesDocument = {"captures": records(result.captures), "kernels": records(result.kernels),
                                  "step_range": result.step_range, "stragglers": records(result.stragglers),
                                  "scheduler": result.scheduler, "failed": list(result.failed)}
    return json.dumps(document, indent=2)


def captures_blocks(result, width: int, chart: bytes | None = None) -> list[Block]:
    """The three tables (and the chart, for a report) as document blocks, `width` columns wide."""
    blocks: list[Block] = [_captures_table(result, width)]
    if chart is not None:
        blocks.append(Image(CHART_FILE, "time per rank: kernels, copies, communication, idle", chart))
    blocks += [_kernels_table(result, width), *_stragglers_blocks(result, width)]
    return blocks


def _label(row) -> str:
    return f"rank {row['rank']}" if row.get("rank") is not None and row["rank"] == row["rank"] else row["file"]


def _captures_table(result, width: int) -> Table:
    captures = result.captures
    columns = [("capture", "capture", ""), ("busy %", "gpu_busy_pct", ".1f"), ("kernel ms", "kernel_ns", _ms),
               ("copy ms", "copy_ns", _ms), ("comm ms", "comm_ns", _ms), ("overlap %", "comm_overlap_pct", ".0f"),
               ("idle ms", "idle_ns", _ms), ("top kernel", "top", "")]

    def rows_for(name_width: int) -> list[dict]:
        names = captures["top_kernel"].fillna("").tolist()
        told = iter(telling_names([name for name in names if name], name_width))  # a capture with no kernel: no label
        tops = [next(told) if name else None for name in names]
        return [{**row, "capture": _label(row), "top": f"{top} {row['top_kernel_pct']:.0f}%" if top else None}
                for row, top in zip(captures.to_dict("records"), tops)]

    shown, rows = fit_named(columns, rows_for, (28, 20, 14), width, ("copy_ns", "comm_overlap_pct", "idle_ns"))
    sources = set(captures["comm_source"])
    comm = ("NCCL kernels" if sources == {NCCL} else "NVTX ranges named like collectives (CPU time)"
            if NCCL not in sources and sources != {NO_COMM} else "none found" if sources == {NO_COMM}
            else "NCCL kernels or, where a capture has none, NVTX collective ranges")
    caption = (f"each capture's numbers as `nsprof analyze FILE` gives them; comm: {comm}; overlap: the share of comm "
               f"time with compute kernels running; ran on {result.scheduler}")
    return Table(f"{len(captures)} captures", shown, rows, caption, left_out=left_out(columns, shown, rows))


def _kernels_table(result, width: int) -> Table:
    kernels = result.kernels.head(KERNEL_ROWS)
    columns = [("kernel", "kernel", ""), ("ranks", "captures", ",d"), ("count", "count", ",d"),
               ("total ms", "total_ns", _ms), ("% time", "pct", ".1f"), ("min ms", "min_ns", _ms),
               ("median ms", "median_ns", _ms), ("max ms", "max_ns", _ms)]

    def rows_for(name_width: int) -> list[dict]:
        return [{**row, "kernel": name} for row, name in zip(kernels.to_dict("records"),
                                                             telling_names(kernels["kernel"], name_width))]

    shown, rows = fit_named(columns, rows_for, (30, 22, 16), width, ("count", "pct"))
    more = f"; {len(result.kernels) - KERNEL_ROWS} more kernels" if len(result.kernels) > KERNEL_ROWS else ""
    caption = ("total over all captures; min, median, max: one capture's total, over the captures that ran it"
               f"{more} and full names in --json")
    return Table("Kernels across captures", shown, rows, caption, left_out=left_out(columns, shown, rows))


def _stragglers_blocks(result, width: int) -> list[Block]:
    if result.step_range is None:
        return [Paragraph("Stragglers: no NVTX step range common to every capture (a range whose name contains "
                          "'step', at least twice in each) and no loop found alike in each, so steps cannot be "
                          "compared across ranks.")]
    late = result.stragglers.sort_values("late_by_ns", ascending=False, kind="stable").head(STRAGGLER_ROWS)
    rows = [{**row, "capture": _label(row)} for row in late.to_dict("records")]
    columns = [("step", "step", ",d"), ("last", "capture", ""), ("compute ms", "compute_ns", _ms),
               ("late by ms", "late_by_ns", _ms), ("others waited ms", "others_wait_ns", _ms), ("step ms", "step_ns", _ms)]
    shown = fit_columns(columns, rows, width, ("step_ns", "compute_ns"))
    counts = result.stragglers.groupby(result.stragglers.apply(_label, axis=1)).size().sort_values(ascending=False)
    summary = ", ".join(f"{label} {count}" for label, count in counts.items())
    caption = (f"the n-th {result.step_range!r} range of every capture is step n; last: the capture whose compute "
               f"(step less its time in collectives) was longest; late by: its compute less the others' median; "
               f"others waited: their median time in collectives; the {STRAGGLER_ROWS} steps late by most shown, most "
               f"first, every step in --json; steps each capture was last: {summary}")
    return [Table(f"Stragglers per {result.step_range!r} step", shown, rows, caption, left_out=left_out(columns, shown, rows))]


def rank_chart(result) -> bytes:
    """A PNG: per capture, a horizontal bar of kernel, copy and communication time and GPU idle time (ms)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from nsprof.render.figure_file import figure_bytes

    captures = result.captures
    labels = [_label(row) for row in captures.to_dict("records")]
    parts = (("kernel_ns", "kernels", "#4c72b0"), ("copy_ns", "copies", "#dd8452"), ("comm_ns", "communication", "#55a868"),
             ("idle_ns", "GPU idle", "#c7c7c7"))
    figure, axis = plt.subplots(figsize=(8.5, 0.35 * len(labels) + 1.4))
    left = [0.0] * len(labels)
    for key, name, color in parts:
        values = (captures[key] / 1e6).tolist()
        axis.barh(labels, values, left=left, label=name, color=color)
        left = [a + b for a, b in zip(left, values)]
    axis.invert_yaxis()
    axis.set_xlabel("ms (communication may overlap the others)")
    axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")  # beside the bars, never over them
    late = result.stragglers
    if len(late):
        # the straggler is the capture whose lateness adds up most, not the one last most often: on
        # near-even steps "last" is decided by microseconds
        worst = late.groupby("file")["late_by_ns"].sum().idxmax()
        own = late[late["file"] == worst]
        steps = ", ".join(str(step) for step in own.nlargest(3, "late_by_ns")["step"].sort_values())
        name = labels[captures["file"].tolist().index(worst)] if worst in captures["file"].tolist() else worst
        axis.set_title(f"per capture; the others waited most for {name}: late by {own['late_by_ns'].sum() / 1e6:,.0f} ms "
                       f"in all (most on steps {steps})", fontsize="small")
    figure.tight_layout()
    return figure_bytes(figure)
