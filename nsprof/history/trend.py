"""Trends and regressions in a history, under the statistics `nsprof diff` uses across runs.

`check`: the newest entry against a baseline of the BASELINE entries before it on the same GPU
and of the same kind (bench records with bench records, captures with captures). Each baseline
entry's median is one observation, the newest entry's runs are its own; the change is the ratio of
their geometric means with a Welch t interval on their logarithms (nsprof.diff.statistics.
compare_runs: a newest entry of one run borrows the baseline's variation). A stage, kernel or range
is slower when the interval lies above 0 and the change reaches the threshold; the host's figures
(CPU time and waits) are `not called`, as diff's own durations are.

`change_points`, the rule `history show` marks: entry i starts a new level when the up to WINDOW
entries before it and the up to WINDOW from it (2 or more each) differ by Welch's t-test on the
logarithms of their medians at p < CHANGE_P, by at least MIN_CHANGE_PCT; of change points closer
than WINDOW entries, the one with the smallest p is kept.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from typing_extensions import TypedDict  # pydantic reads it for docs/json (typing's, only from Python 3.12)

from nsprof.diff import NOT_CALLED
from nsprof.diff.statistics import compare_runs

BASELINE = 5
WINDOW = 5
CHANGE_P = 0.01
MIN_CHANGE_PCT = 2.0


def change_points(medians: list[float] | np.ndarray) -> list[int]:
    """Indices of the entries that start a new level (module docstring). Welch's t is computed only
    for the windows whose change reaches MIN_CHANGE_PCT, all at once (a history of 5,000 series of
    50 entries each is shown in seconds, not one scipy call per window)."""
    from scipy.stats import t as student_t

    # floored at 1 ns: a time that falls to 0 (a host-side idle cause removed) is a shift, not a log of zero
    logs = np.log(np.maximum(np.asarray(medians, dtype=float), 1.0))
    windows = [(i, logs[max(0, i - WINDOW):i], logs[i:i + WINDOW]) for i in range(2, len(logs) - 1)]
    windows = [(i, before, after) for i, before, after in windows
               if len(after) >= 2 and abs(100 * np.expm1(after.mean() - before.mean())) >= MIN_CHANGE_PCT]
    if not windows:
        return []
    index = np.array([i for i, _, _ in windows])
    n_a, n_b = (np.array([len(side) for side in sides], dtype=float)
                for sides in ([w[1] for w in windows], [w[2] for w in windows]))
    mean_a, mean_b = np.array([w[1].mean() for w in windows]), np.array([w[2].mean() for w in windows])
    part_a = np.array([w[1].var(ddof=1) for w in windows]) / n_a
    part_b = np.array([w[2].var(ddof=1) for w in windows]) / n_b
    spread = part_a + part_b
    with np.errstate(divide="ignore", invalid="ignore"):
        t_value = (mean_b - mean_a) / np.sqrt(spread)
        df = spread**2 / (part_a**2 / (n_a - 1) + part_b**2 / (n_b - 1))
        p = 2 * student_t.sf(np.abs(t_value), df)
    # medians identical within each side (a clock's step): no spread to weigh, and the change is real
    p = np.where(spread == 0, 0.0, p)
    found = [(int(i), float(value)) for i, value in zip(index, p) if value < CHANGE_P]
    kept: list[tuple[int, float]] = []
    for i, value in sorted(found, key=lambda item: item[1]):
        if all(abs(i - j) >= WINDOW for j, _ in kept):
            kept.append((i, value))
    return sorted(i for i, _ in kept)


class CheckRow(TypedDict):
    """One stage, kernel or range of the newest entry against its baseline: `nsprof history check
    --json`'s rows (statistics.compare_runs's columns, and the status)."""

    key: str  # its kind and name
    a_count: int
    b_count: int
    a_median_ns: float | None
    b_median_ns: float | None
    a_total_ns: float | None
    b_total_ns: float | None
    change_pct: float | None
    ci_low_pct: float | None
    ci_high_pct: float | None
    testable: bool
    a_runs: int
    b_runs: int
    unstable: bool
    p_value: float | None
    status: str  # slower, faster, same, unstable, or not called (the host's figures)


class CheckInfo(TypedDict):
    newest: int  # the entry checked
    baseline: list[int]  # the entries it was checked against
    gpu: str | None
    kind: str


class CheckDocument(CheckInfo):
    """`nsprof history check --json`."""

    rows: list[CheckRow]


def check(history: pd.DataFrame, fail_if_slower: float, baseline: int = BASELINE) -> tuple[pd.DataFrame, CheckInfo]:
    """The newest entry's measurements against its baseline (module docstring): per stage, kernel
    and range both hold, STAT_COLUMNS and `status` (slower, faster, same or unstable), and what
    was compared ({"newest", "baseline": entry ids, "gpu", "kind"})."""
    newest_id = int(history["entry"].max())
    newest = history[history["entry"] == newest_id]
    gpu, kind = newest["gpu"].iloc[0], newest["source_kind"].iloc[0]
    earlier = history[(history["entry"] < newest_id) & (history["source_kind"] == kind)
                      & (history["gpu"].fillna("") == (gpu or ""))]
    entries = sorted(earlier["entry"].unique())[-baseline:]
    before = earlier[earlier["entry"].isin(entries)]
    a = pd.DataFrame({"key": before["kind"] + " " + before["name"], "run": before["entry"], "value_ns": before["median_ns"]})
    b = pd.DataFrame([(f"{row.kind} {row.name}", run, value) for row in newest.itertuples()
                      for run, value in enumerate(row.run_medians_ns)], columns=["key", "run", "value_ns"])
    stats = compare_runs(a, b)
    stats = stats[(stats["a_count"] > 0) & (stats["b_count"] > 0)].copy()
    low, high, change = stats["ci_low_pct"], stats["ci_high_pct"], stats["change_pct"]
    threshold = max(fail_if_slower, 0.0)
    # each row by its own interval: Benjamini-Hochberg over thousands of families would need p < 5e-6
    # of a newest entry of one run against five, which a 10% regression under 1% noise never reaches
    stats["status"] = np.select([stats["unstable"], stats["testable"] & (low > 0) & (change > threshold),
                                 stats["testable"] & (high < 0) & (change < -MIN_CHANGE_PCT)],
                                ["unstable", "slower", "faster"], "same")
    # the host's figures are CPU time and waits, which drift between runs more than their intervals say
    # (host time between launches +41% between two unchanged runs): shown, never called, as diff's own durations
    host = stats.index.to_series().str.startswith("host ").to_numpy()
    stats.loc[host & stats["status"].isin(["slower", "faster", "same"]).to_numpy(), "status"] = NOT_CALLED
    return stats, {"newest": newest_id, "baseline": [int(e) for e in entries], "gpu": gpu, "kind": kind}
