"""Bar chart of a bench run: TFLOP/s per stage at each size, with cuBLAS as reference lines (one per
precision: FP32 dashed, TF32 dotted).

CPU stages (a record with `on_cpu`: timed on the wall clock) are hatched; when the bars span more
than LOG_SPAN (the CPU's serial loop beside the GPU's fastest stage, a factor of 10^5), the axis is
logarithmic so that every bar shows. A GPU bar whose record has `speedup_vs_cpu_blas` (the work's
column, nsprof.ladder.cpu_speedups: the figure the report's table and bench show) is labelled with it."""

from __future__ import annotations

import math
from typing import TypeGuard

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from nsprof.errors import NsprofError
from nsprof.ladder.cpu_speedups import BLAS_KEY
from nsprof.ladder.registry import baseline_stage, get_stage, is_baseline_stage
from nsprof.render.format import problem_size, speedup
from nsprof.sizes import spread_sizes

STAGE_INCHES = 1.1
LOG_SPAN = 100  # bars spanning more than this factor get a log axis: a 0.0005 TFLOP/s bar is invisible beside 50
CPU_HATCH = "////"
MAX_SIZES = 8  # bars per stage: past this many sizes the chart draws this many, spread over them


def ladder_chart(records: list[dict], title: str, value: str = "tflops", ylabel: str = "TFLOP/s (median)") -> Figure:
    """One group of bars per stage, one bar per size, of each record's `value` (TFLOP/s, or a
    bandwidth for a ladder judged by bytes); lines mark the baselines (cuBLAS) per size: the first
    baseline in the records dashed, a second (cuBLAS TF32) dotted. CPU stages (`on_cpu`) hatched,
    on a log axis when the bars span more than LOG_SPAN; GPU bars labelled with their
    `speedup_vs_cpu_blas` where the records have it."""
    ok = [r for r in records if r["status"] == "ok"]
    sizes = list(dict.fromkeys(r["size"] for r in ok))
    if len(sizes) > MAX_SIZES:  # thousands of sizes (CPU stage records): a bar each would fill no chart
        drawn = spread_sizes(sizes, MAX_SIZES)
        title += f"\n{len(drawn)} of {len(sizes):,} sizes drawn, spread from {drawn[0]} to {drawn[-1]}"
        sizes, ok = drawn, [r for r in ok if r["size"] in drawn]
    stages = list(dict.fromkeys(r["stage"] for r in ok))
    on_cpu = {r["stage"] for r in ok if r.get("on_cpu")}
    heights = [r[value] for r in ok if _positive(r.get(value))]
    log = bool(heights) and max(heights) > LOG_SPAN * min(heights)
    # 1.1 in a stage keeps 12-character title lines apart ("tensor cores" beside "wgmma + TMA" ran
    # into each other at 0.95); tests/test_report.py measures their boxes
    fig, ax = plt.subplots(figsize=(max(10, STAGE_INCHES * len(stages)), 4.8), dpi=110)
    libraries = list(dict.fromkeys(r["stage"] for r in ok if is_baseline_stage(r["op"], r["stage"])))[:2]
    styles = dict(zip(libraries, ("--", ":")))
    width = 0.8 / len(sizes)
    colors = plt.get_cmap("viridis")([0.15 + 0.7 * i / max(1, len(sizes) - 1) for i in range(len(sizes))])
    labelled = False
    for i, size in enumerate(sizes):
        by_stage = {r["stage"]: r[value] for r in ok if r["size"] == size}
        xs = [s + (i - (len(sizes) - 1) / 2) * width for s in range(len(stages))]
        bars = ax.bar(xs, [by_stage.get(s, 0) for s in stages], width, label=problem_size(size), color=colors[i])
        for bar, stage in zip(bars.patches, stages):
            if stage in on_cpu:
                bar.set(facecolor="white", edgecolor=colors[i], hatch=CPU_HATCH, linewidth=0.8)
        labelled |= _speedup_labels(ax, [r for r in ok if r["size"] == size], stages, xs, value, vertical=len(sizes) > 1)
        for library, style in styles.items():
            if by_stage.get(library):  # across the stages compared with it only: v10 (TF32) is not FP32 cuBLAS's
                compared = [at for at, stage in enumerate(stages) if _baseline_of(ok, stage) == library]
                ax.hlines(by_stage[library], min(compared) - 0.45, max(compared) + 0.45, color=colors[i],
                          linestyle=style, linewidth=0.9, alpha=0.8)
    titles = {r["stage"]: r["title"] for r in ok}
    ax.set_xticks(range(len(stages)), [f"{s}\n{_wrap(titles[s])}" for s in stages], fontsize=8)
    ax.set_ylabel(ylabel + (" (log scale)" if log else ""))
    if log:
        _log_axis(ax, min(heights), max(heights))
    ax.set_title(title, fontsize=11)
    lines = ", ".join(f"{'dashed' if style == '--' else 'dotted'}: {library}" for library, style in styles.items())
    legend_title = f"size ({lines or 'no cuBLAS'})"
    if on_cpu or labelled:
        notes = ["hatched: CPU stages,\ntimed on the wall clock"] if on_cpu else []
        notes += ["over GPU bars: x CPU BLAS\n(its time over theirs)"] if labelled else []
        handles = [Patch(color=colors[i], label=problem_size(size)) for i, size in enumerate(sizes)]
        handles += [Patch(facecolor="white", edgecolor="#555555", hatch=CPU_HATCH, label="CPU stage")] if on_cpu else []
        # beside the axes: the notes are long, and over the bars they would hide the tallest and its label
        ax.legend(handles=handles, title="\n".join([legend_title, *notes]), fontsize=8, title_fontsize=8, loc="upper left",
                  bbox_to_anchor=(1.01, 1.0), alignment="left", borderaxespad=0.0)
    else:
        ax.legend(title=legend_title, fontsize=8, title_fontsize=8, loc="upper left")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    fig.tight_layout()
    return fig


def _speedup_labels(ax: Axes, records: list[dict], stages: list[str], xs: list[float], value: str, vertical: bool) -> bool:
    """Over each GPU bar, its record's speed-up over the CPU BLAS as the tables print it; whether any was drawn."""
    drawn = False
    for record in records:
        times = record.get(BLAS_KEY)
        if record.get("on_cpu") or not _positive(times) or not _positive(record.get(value)):
            continue
        ax.annotate(speedup(times), xy=(xs[stages.index(record["stage"])], record[value]), xytext=(0, 2),
                    textcoords="offset points", ha="center", va="bottom", fontsize=7, color="#333333",
                    rotation=90 if vertical else 0, gid=f"speedup:{record['stage']}:{record['size']}")
        drawn = True
    return drawn


def _log_axis(ax: Axes, low: float, high: float) -> None:
    """A log y-axis over the bars, with plain numbers (0.001, 1, 100) and room above for the labels."""
    ax.set_yscale("log")
    ax.set_ylim(low / 2, high * 6)
    ax.yaxis.set_major_locator(LogLocator(base=10))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda tick, _: f"{tick:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _positive(number) -> TypeGuard[float]:
    return isinstance(number, (int, float)) and not isinstance(number, bool) and math.isfinite(number) and number > 0


def _baseline_of(records: list[dict], stage: str) -> str | None:
    """The library stage `stage` is compared with (nsprof.ladder.registry.baseline_stage), by its precision."""
    op = next(r["op"] for r in records if r["stage"] == stage)
    try:
        return baseline_stage(op, get_stage(op, stage).precision.name).stage
    except NsprofError:  # an op or stage this nsprof does not know, or a precision without a baseline
        return None


def _wrap(text: str, width: int = 12) -> str:
    """Wrap a stage title under its bars, breaking at spaces and after hyphens."""
    pieces = text.replace("-", "- ").split()
    lines, line = [], ""
    for piece in pieces:
        joiner = "" if line.endswith("-") or not line else " "
        if line and len(line) + len(joiner) + len(piece) > width:
            lines.append(line)
            line = piece
        else:
            line = f"{line}{joiner}{piece}"
    return "\n".join([*lines, line])
