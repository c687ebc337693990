"""The chart of `nsprof diff`: each kernel's (or stage's) change in median time with its interval."""

from __future__ import annotations

from matplotlib.figure import Figure

from nsprof.render.diff_tables import NAME_WIDTH, row_label, telling_labels

MAX_ROWS = 25
COLORS = {"faster": "#2a7d3f", "slower": "#b8322a", "same": "#777777"}


def diff_chart(rows: list[dict], label: str, title: str) -> Figure:
    """Horizontal bars: change % per row (largest first, at most MAX_ROWS), the interval as an
    error bar; rows without a change (added, removed) are left out, and rows with too few launches
    for an interval are hatched. The axis spans the changes, not the widest interval: a whisker
    past it ends in an arrow at the edge."""
    shown = [row for row in rows if row["change_pct"] is not None][:MAX_ROWS][::-1]
    figure = Figure(figsize=(7.5, 0.32 * len(shown) + 1.6), layout="constrained")
    axes = figure.add_subplot()
    # named as the tables name them: told apart among every row, at the tables' widest
    labels = telling_labels([row_label(row) for row in rows], NAME_WIDTH, kernels=label == "kernel")
    names = [labels[row_label(row)] for row in shown]
    values = [row["change_pct"] for row in shown]
    limit = max([10.0] + [1.5 * abs(value) + 2 for value in values])
    bars = axes.barh(range(len(shown)), values, color=[COLORS.get(row["status"], "#777777") for row in shown])
    for at, (row, bar) in enumerate(zip(shown, bars)):
        if row["ci_low_pct"] is None:
            bar.set_hatch("///")
            bar.set_alpha(0.5)
            continue
        low, high = max(row["ci_low_pct"], -limit), min(row["ci_high_pct"], limit)
        axes.plot([low, high], [at, at], color="black", linewidth=1)
        for end, clipped, marker in ((low, low > row["ci_low_pct"], "<"), (high, high < row["ci_high_pct"], ">")):
            axes.plot([end], [at], color="black", marker=marker if clipped else "|", markersize=5)
    axes.set_xlim(-limit, limit)
    axes.set_yticks(range(len(shown)), names, fontsize=7)
    axes.axvline(0, color="black", linewidth=0.8)
    axes.set_xlabel("change in median time, B vs A (%), with its 95% interval\n"
                    "hatched: fewer than 3 launches on a side, no interval; an arrow: the interval goes on", fontsize=8)
    axes.set_title(title, fontsize=9, wrap=True)
    return figure
