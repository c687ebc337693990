"""What `nsprof history show` and `check` print (document blocks), and the trend chart."""

from __future__ import annotations

from functools import partial
from itertools import pairwise

import numpy as np
import pandas as pd

from nsprof.history.summary import KINDS
from nsprof.history.trend import BASELINE, CHANGE_P, MIN_CHANGE_PCT, WINDOW, CheckInfo, change_points
from nsprof.render import format as fmt
from nsprof.render.document import Block, Paragraph, Table
from nsprof.render.format import counted
from nsprof.render.table_names import telling_names

_CHANGE = partial(fmt.change, unit="")  # a signed percentage, never -0.0 (the header says %)
SERIES_NOUNS = {"bench": "bench stage", "stage": "captured stage", "host": "host figure"}  # a series of each kind (KINDS)
SHOWN_SERIES = 50  # rows of `history show` at most; --json holds every series
MAX_TICKS = 40  # commit labels under the trend chart at most (10,000 entries would draw 10,000)
NAME_WIDTH = 44  # a name column that leaves the figures room at 80 columns (JSON keeps whole names)
SERIES_COLUMNS = (("kind", "kind", ""), ("name", "label", ""), ("entries", "entries", ",d"),
                  ("first", "first_ns", fmt.duration_ns), ("newest", "last_ns", fmt.duration_ns),
                  ("change %", "change_pct", _CHANGE), ("level shifts", "shifts", ",d"))
ENTRY_COLUMNS = (("entry", "entry", "d"), ("commit", "commit", ""), ("branch", "branch", ""), ("added", "added", ""),
                 ("median", "median_ns", fmt.duration_ns), ("runs", "runs", "d"), ("spread %", "spread_pct", ".1f"),
                 ("change %", "change_pct", _CHANGE), ("level", "level", ""))
CHECK_COLUMNS = (("kind", "kind", ""), ("name", "label", ""), ("baseline", "a_median_ns", fmt.duration_ns),
                 ("newest", "b_median_ns", fmt.duration_ns), ("change %", "change_pct", _CHANGE),
                 ("95% CI", "interval", ""), ("status", "status", ""))
CHANGE_RULE = (f"level: a change point, where the up to {WINDOW} entries before and the up to {WINDOW} from it "
               f"differ by Welch's t on the logs of their medians at p < {CHANGE_P:g} and by {MIN_CHANGE_PCT:g}% or more")


def series_blocks(history: pd.DataFrame) -> list[Block]:
    """One row per stage, kernel and range in the history: its first and newest median and the
    level shifts found in between; a line saying so where it holds nothing yet."""
    if history.empty:
        return [Paragraph("History: no entries yet. Add one: nsprof history add RECORD (a bench record or a capture).")]
    rows = []
    for (kind, name), group in history.groupby(["kind", "name"], sort=True):
        medians = group["median_ns"].to_numpy()
        rows.append({"kind": kind, "name": name, "entries": len(group), "first_ns": medians[0], "last_ns": medians[-1],
                     "change_pct": newest_against_first(medians),
                     "shifts": len(change_points(medians))})
    kinds = pd.Series([row["kind"] for row in rows]).value_counts()
    held = ", ".join(counted(int(kinds[kind]), SERIES_NOUNS.get(kind, kind)) for kind in KINDS if kind in kinds)
    caption = f"change: newest against first; {CHANGE_RULE}; one series in full: --name NAME"
    if len(rows) > SHOWN_SERIES:  # those that moved first: level shifts, then the largest change
        rows = sorted(rows, key=lambda row: (-row["shifts"], -abs(row["change_pct"] or 0)))[:SHOWN_SERIES]
        caption += (f"; the {SHOWN_SERIES} series with the most level shifts, then the largest change, of "
                    f"{sum(kinds):,} (all of them: nsprof history show --json)")
    for row, label in zip(rows, telling_names([row["name"] for row in rows], NAME_WIDTH)):
        row["label"] = label
    return [Table(f"History: {counted(history['entry'].nunique(), 'entry', 'entries')}; {held}", SERIES_COLUMNS, rows,
                  caption=caption, drop_order=("first_ns", "shifts", "entries"))]


def entry_rows(series: pd.DataFrame) -> list[dict]:
    """Per entry of one series: its median, runs, spread, change from the entry before and whether
    it starts a new level."""
    points = set(change_points(series["median_ns"].to_numpy()))
    rows, previous = [], None
    for index, row in enumerate(series.itertuples()):
        runs = np.asarray(row.run_medians_ns, dtype=float)
        rows.append({"entry": row.entry, "commit": (row.commit_id or "")[:10] or None, "branch": row.branch,
                     "added": str(row.added)[:16].replace("T", " "), "median_ns": row.median_ns, "runs": row.runs,
                     "spread_pct": 100 * (runs.max() - runs.min()) / row.median_ns if len(runs) > 1 and row.median_ns
                     else None,
                     "change_pct": 100 * (row.median_ns / previous - 1) if previous else None,  # none from 0 ns
                     "level": "shift" if index in points else ""})
        previous = row.median_ns
    return rows


def entry_blocks(kind: str, name: str, series: pd.DataFrame) -> list[Block]:
    return [Table(f"{kind} {name}: {counted(len(series), 'entry', 'entries')}", ENTRY_COLUMNS, entry_rows(series),
                  caption=f"spread: of the entry's run medians; change: from the entry before; {CHANGE_RULE}",
                  drop_order=("branch", "added", "spread_pct", "runs"))]


def check_blocks(stats: pd.DataFrame, info: CheckInfo, threshold: float) -> list[Block]:
    rows = []
    for key, row in stats.iterrows():
        kind, name = str(key).split(" ", 1)
        interval = None if pd.isna(row["ci_low_pct"]) else f"[{fmt.signed(row['ci_low_pct'])}, {fmt.signed(row['ci_high_pct'])}]"
        rows.append({"kind": kind, "name": name, "a_median_ns": row["a_median_ns"], "b_median_ns": row["b_median_ns"],
                     "change_pct": row["change_pct"], "interval": interval, "status": row["status"]})
    rows.sort(key=lambda r: (r["status"] not in ("slower", "faster"), r["status"] == "not called", r["status"] != "slower",
                             -abs(r["change_pct"] or 0)))
    counts = {status: sum(r["status"] == status for r in rows) for status in ("slower", "faster", "unstable")}
    compared = len(rows)
    shown = rows[:SHOWN_SERIES]
    for row, label in zip(shown, telling_names([row["name"] for row in shown], NAME_WIDTH)):
        row["label"] = label
    baseline = ", ".join(str(e) for e in info["baseline"])
    against = f"entry {baseline}" if len(info["baseline"]) == 1 else f"entries {baseline}"
    caption = (f"slower: the 95% interval above 0 and the change over {threshold:g}%; the baseline's entries "
               f"(up to {BASELINE}) are one observation each, the newest entry's runs its own; host figures (CPU "
               "time and waits, which drift between runs) are shown and never called")
    if compared > len(shown):
        caption += f"; the {len(shown)} that moved most (all of them: nsprof history check --json)"
    return [Table(f"Entry {info['newest']} against {against} ({info['gpu']}, {info['kind']})", CHECK_COLUMNS, shown,
                  caption=caption, drop_order=("a_median_ns", "interval")),
            Paragraph(f"{counts['slower']} slower, {counts['faster']} faster, {counts['unstable']} unstable of "
                      f"{compared:,} compared.")]


def trend_png(kind: str, name: str, series: pd.DataFrame) -> bytes:
    from nsprof.render.figure_file import figure_bytes

    return figure_bytes(trend_figure(kind, name, series))


def trend_figure(kind: str, name: str, series: pd.DataFrame):
    """The series' medians entry by entry, each run's range as a bar, change points dashed, on an
    axis from 0 (so a bar's height reads as time), under a title that states the change."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    medians = series["median_ns"].to_numpy() / 1e3
    low = np.array([min(runs) for runs in series["run_medians_ns"]]) / 1e3
    high = np.array([max(runs) for runs in series["run_medians_ns"]]) / 1e3
    x = np.arange(len(series))
    figure, axes = plt.subplots(figsize=(8, 3.6))
    axes.errorbar(x, medians, yerr=[medians - low, high - medians], fmt="o-", color="#1f77b4", capsize=3,
                  label="median (bars: the runs' medians)")
    points = change_points(series["median_ns"].to_numpy())
    for number, point in enumerate(points):
        axes.axvline(point - 0.5, color="#d62728", linestyle="--", linewidth=1, label=None if number else "level shift")
    labels = [(c or "")[:7] or str(e) for c, e in zip(series["commit_id"], series["entry"])]
    every = max(1, -(-len(x) // MAX_TICKS))  # a label per entry up to MAX_TICKS, then every k-th
    axes.set_xticks(x[::every], labels[::every], rotation=45, fontsize=7)
    axes.set_ylabel("median time (µs)")
    axes.set_ylim(bottom=0, top=max(high.max(), medians.max()) * 1.15)
    summary = trend_summary(series["median_ns"].to_numpy(), points, series["entry"].tolist())
    axes.set_title(f"{kind} {name}"[:90] + "\n" + summary, fontsize=9)
    axes.legend(fontsize=7, loc="best")
    figure.tight_layout()
    return figure


def newest_against_first(medians: np.ndarray) -> float | None:
    """The series' change in percent, newest median against first (None from a first of 0 ns): the
    table's and the trend chart's one figure."""
    return 100 * (medians[-1] / medians[0] - 1) if medians[0] > 0 else None


def trend_summary(medians: np.ndarray, points: list[int], entries: list[int]) -> str:
    """What the trend chart shows, in words: the newest median against the first, and each level
    shift (at the entry that starts a level) as the change between the medians of the levels either
    side of it."""
    text = f"newest {fmt.duration_ns(medians[-1])} against first {fmt.duration_ns(medians[0])}: " + \
        fmt.change(newest_against_first(medians))
    bounds = [0, *points, len(medians)]
    levels = [float(np.median(medians[start:end])) for start, end in pairwise(bounds)]
    shifts = [f"at entry {entries[point]}, {fmt.change(100 * (after / before - 1))}"
              for point, (before, after) in zip(points, pairwise(levels)) if before > 0]
    return text + (f"; level shift{'s' if len(shifts) > 1 else ''} {', '.join(shifts)}" if shifts else "; no level shift")
