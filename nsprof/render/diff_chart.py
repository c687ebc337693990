"""The chart of `nsprof diff`: each kernel's (or stage's) change in median time with its interval."""

from __future__ import annotations

from matplotlib.figure import Figure

from nsprof.render.format import truncate

MAX_ROWS = 25
COLORS = {"faster": "#2a7d3f", "slower": "#b8322a", "same": "#777777"}


def diff_chart(rows: list[dict], label: str, title: str) -> Figure:
    """Horizontal bars: change % per row (largest first, at most MAX_ROWS), the interval as an
    error bar; rows without a change (added, removed) are left out."""
    shown = [row for row in rows if row["change_pct"] is not None][:MAX_ROWS]
    figure = Figure(figsize=(7.5, 0.32 * len(shown) + 1.4), layout="constrained")
    axes = figure.add_subplot()
    names = [truncate(str(row.get("label") or row[label]), 40) for row in shown][::-1]
    values = [row["change_pct"] for row in shown][::-1]
    low = [row["change_pct"] - row["ci_low_pct"] if row["ci_low_pct"] is not None else 0 for row in shown][::-1]
    high = [row["ci_high_pct"] - row["change_pct"] if row["ci_high_pct"] is not None else 0 for row in shown][::-1]
    colors = [COLORS.get(row["status"], "#777777") for row in shown][::-1]
    axes.barh(range(len(shown)), values, color=colors, xerr=[low, high], error_kw={"ecolor": "black", "capsize": 2})
    axes.set_yticks(range(len(shown)), names, fontsize=7)
    axes.axvline(0, color="black", linewidth=0.8)
    axes.set_xlabel("change in median time, B vs A (%), with its 95% interval")
    axes.set_title(title, fontsize=9)
    return figure
