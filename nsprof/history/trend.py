"""Trends and regressions in a history, under the statistics `nsprof diff` uses across runs.

`check`: the newest entry against a baseline of the BASELINE entries before it on the same GPU
and of the same kind (bench records with bench records, captures with captures). Each baseline
entry's median is one observation, the newest entry's runs are its own; the change is the ratio of
their geometric means with a Welch t interval on their logarithms (nsprof.analyze.diff.statistics.
compare_runs: a newest entry of one run borrows the baseline's variation). A stage, kernel or range
is slower when the interval lies above 0 and the change reaches the threshold.

`change_points`, the rule `history show` marks: entry i starts a new level when the up to WINDOW
entries before it and the up to WINDOW from it (2 or more each) differ by Welch's t-test on the
logarithms of their medians at p < CHANGE_P, by at least MIN_CHANGE_PCT; of change points closer
than WINDOW entries, the one with the smallest p is kept.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from nsprof.analyze.diff.statistics import compare_runs

BASELINE = 5
WINDOW = 5
CHANGE_P = 0.01
MIN_CHANGE_PCT = 2.0


def change_points(medians: list[float] | np.ndarray) -> list[int]:
    """Indices of the entries that start a new level (module docstring)."""
    from scipy.stats import ttest_ind

    # floored at 1 ns: a time that falls to 0 (a host-side idle cause removed) is a shift, not a log of zero
    logs = np.log(np.maximum(np.asarray(medians, dtype=float), 1.0))
    found: list[tuple[int, float]] = []
    for i in range(2, len(logs) - 1):
        before, after = logs[max(0, i - WINDOW):i], logs[i:i + WINDOW]
        if len(after) < 2:
            continue
        change = 100 * np.expm1(after.mean() - before.mean())
        with warnings.catch_warnings():  # identical medians: scipy warns of precision loss and answers NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            p = float(ttest_ind(before, after, equal_var=False).pvalue)
        if abs(change) >= MIN_CHANGE_PCT and (p < CHANGE_P or (np.isnan(p) and before.std() == after.std() == 0)):
            found.append((i, 0.0 if np.isnan(p) else p))
    kept: list[tuple[int, float]] = []
    for i, p in sorted(found, key=lambda item: item[1]):
        if all(abs(i - j) >= WINDOW for j, _ in kept):
            kept.append((i, p))
    return sorted(i for i, _ in kept)


def check(history: pd.DataFrame, fail_if_slower: float, baseline: int = BASELINE) -> tuple[pd.DataFrame, dict]:
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
    stats["status"] = np.select([stats["unstable"], stats["testable"] & (low > 0) & (change > threshold),
                                 stats["testable"] & (high < 0) & (change < -MIN_CHANGE_PCT)],
                                ["unstable", "slower", "faster"], "same")
    return stats, {"newest": newest_id, "baseline": [int(e) for e in entries], "gpu": gpu, "kind": kind}
