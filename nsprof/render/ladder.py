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
    ok, sizes, title = _drawn_records(records, title)
    stages = list(dict.fromkeys(r["stage"] for r in ok))
    on_cpu = {r["stage"] for r in ok if r.get("on_cpu")}
    # 1.1 in a stage keeps 12-character title lines apart ("tensor cores" beside "wgmma + TMA" ran
    # into each other at 0.95); tests/test_report.py measures their boxes
    fig, ax = plt.subplots(figsize=(max(10, STAGE_INCHES * len(stages)), 4.8), dpi=110)
    styles = _baseline_styles(ok)
    width = 0.8 / len(sizes)
    colors = plt.get_cmap("viridis")([0.15 + 0.7 * i / max(1, len(sizes) - 1) for i in range(len(sizes))])
    labelled = False
    for i, size in enumerate(sizes):
        at_size = [r for r in ok if r["size"] == size]
        by_stage = {r["stage"]: r[value] for r in at_size}
        xs = [s + (i - (len(sizes) - 1) / 2) * width for s in range(len(stages))]
        _bars(ax, [by_stage.get(s, 0) for s in stages], xs, width, colors[i], problem_size(size),
              [stage in on_cpu for stage in stages])
        labelled |= _speedup_labels(ax, at_size, stages, xs, value, vertical=len(sizes) > 1)
        _baseline_lines(ax, ok, stages, by_stage, styles, colors[i])
    titles = {r["stage"]: r["title"] for r in ok}
    ax.set_xticks(range(len(stages)), [f"{s}\n{_wrap(titles[s])}" for s in stages], fontsize=8)
    _value_axis(ax, [r[value] for r in ok if _positive(r.get(value))], ylabel)
    ax.set_title(title, fontsize=11)
    _legend(ax, [problem_size(size) for size in sizes], colors, styles, bool(on_cpu), labelled)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    fig.tight_layout()
    return fig


def _drawn_records(records: list[dict], title: str) -> tuple[list[dict], list, str]:
    """The ok records at the sizes drawn, their sizes and the title: past MAX_SIZES sizes (thousands
    of CPU stage records: a bar each would fill no chart), MAX_SIZES spread over them, the title saying so."""
    ok = [r for r in records if r["status"] == "ok"]
    sizes = list(dict.fromkeys(r["size"] for r in ok))
    if len(sizes) > MAX_SIZES:
        drawn = spread_sizes(sizes, MAX_SIZES)
        title += f"\n{len(drawn)} of {len(sizes):,} sizes drawn, spread from {drawn[0]} to {drawn[-1]}"
        sizes, ok = drawn, [r for r in ok if r["size"] in drawn]
    return ok, sizes, title


def _baseline_styles(records: list[dict]) -> dict[str, str]:
    """The line style of each baseline (library) stage in the records: the first dashed, a second dotted."""
    libraries = list(dict.fromkeys(r["stage"] for r in records if is_baseline_stage(r["op"], r["stage"])))[:2]
    return dict(zip(libraries, ("--", ":")))


def _value_axis(ax: Axes, heights: list[float], ylabel: str) -> None:
    """The y-axis's label, and a log scale where the bars' `heights` span more than LOG_SPAN."""
    log = bool(heights) and max(heights) > LOG_SPAN * min(heights)
    ax.set_ylabel(ylabel + (" (log scale)" if log else ""))
    if log:
        _log_axis(ax, min(heights), max(heights))


def _bars(ax: Axes, heights: list[float], xs: list[float], width: float, color, label: str, hatched: list[bool]) -> None:
    """One size's bars, one a stage; those of CPU stages (`hatched`) white and hatched in the size's color."""
    bars = ax.bar(xs, heights, width, label=label, color=color)
    for bar, cpu in zip(bars.patches, hatched):
        if cpu:
            bar.set(facecolor="white", edgecolor=color, hatch=CPU_HATCH, linewidth=0.8)


def _baseline_lines(ax: Axes, records: list[dict], stages: list[str], by_stage: dict, styles: dict, color) -> None:
    """At one size, each baseline's value as a line across the stages compared with it only: v10
    (TF32) is not FP32 cuBLAS's."""
    for library, style in styles.items():
        if by_stage.get(library):
            compared = [at for at, stage in enumerate(stages) if _baseline_of(records, stage) == library]
            ax.hlines(by_stage[library], min(compared) - 0.45, max(compared) + 0.45, color=color,
                      linestyle=style, linewidth=0.9, alpha=0.8)


def _legend(ax: Axes, sizes: list[str], colors, styles: dict, on_cpu: bool, labelled: bool) -> None:
    """The sizes, titled with which line is which baseline; with CPU stages or speed-up labels,
    beside the axes with notes that say what hatching and labels mean."""
    lines = ", ".join(f"{'dashed' if style == '--' else 'dotted'}: {library}" for library, style in styles.items())
    legend_title = f"size ({lines or 'no cuBLAS'})"
    if not (on_cpu or labelled):
        ax.legend(title=legend_title, fontsize=8, title_fontsize=8, loc="upper left")
        return
    notes = ["hatched: CPU stages,\ntimed on the wall clock"] if on_cpu else []
    notes += ["over GPU bars: x CPU BLAS\n(its time over theirs)"] if labelled else []
    handles = [Patch(color=colors[i], label=size) for i, size in enumerate(sizes)]
    handles += [Patch(facecolor="white", edgecolor="#555555", hatch=CPU_HATCH, label="CPU stage")] if on_cpu else []
    # beside the axes: the notes are long, and over the bars they would hide the tallest and its label
    ax.legend(handles=handles, title="\n".join([legend_title, *notes]), fontsize=8, title_fontsize=8, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), alignment="left", borderaxespad=0.0)


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
