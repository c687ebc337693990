"""A diff's tables as rows: each side's values to compare, the order rows are shown in, and a
called row as a plain record (the JSON's and the renderers')."""

from __future__ import annotations

import numpy as np
import pandas as pd

from nsprof.diff.judge import ADDED, FASTER, NOT_CALLED, REMOVED, SLOWER

ROW_FIELDS = ("a_count", "b_count", "a_median_ns", "b_median_ns", "change_pct", "ci_low_pct", "ci_high_pct",
              "status", "testable", "significant", "floor_pct", "floor", "undecided")
RUN_FIELDS = ("a_runs", "b_runs")  # rows of a diff across runs: how many runs of each side ran it


def values(a: pd.DataFrame, b: pd.DataFrame, column: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(key, run, value_ns) of each side's `column`, rows without a value dropped."""
    return tuple(frame[["key", "run", column]].rename(columns={column: "value_ns"}).dropna() for frame in (a, b))


def ordered(rows: pd.DataFrame) -> pd.DataFrame:
    """Largest changes first: significant ones, then added and removed (by time), then the rest
    (unstable ones among them)."""
    rank = rows["status"].map({FASTER: 0, SLOWER: 0, ADDED: 1, REMOVED: 1}).fillna(2)
    rank = rank.where(~(rows["status"] == NOT_CALLED) | ~rows["significant"].astype(bool), 0)
    size = rows["change_pct"].abs().fillna(-1).where(rank != 1, rows[["a_total_ns", "b_total_ns"]].max(axis=1))
    return rows.assign(_rank=rank, _size=-size).sort_values(["_rank", "_size"], kind="stable").drop(columns=["_rank", "_size"])


def records(stats: pd.DataFrame, label: str) -> list[dict]:
    """One plain record per row of `stats`, its key under `label` (kernel, range or stage)."""
    rows = []
    for key, row in stats.iterrows():
        record = {label: key}
        for column in ROW_FIELDS + RUN_FIELDS:
            if column in row:  # runs: compared across runs (statistics.compare_runs)
                record[column] = plain(row[column])
        if isinstance(row.get("compiled"), str):
            record["compiled"] = row["compiled"]
        rows.append(record)
    return rows


def plain(value):
    """A numpy scalar as Python's own (None for a value that is not finite)."""
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return None if not np.isfinite(value) else float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value
