"""How a diff calls its rows: the statuses, the noise floors that apply, and the rule that turns a
change and its interval into `faster`, `slower`, `same`, `added`, `removed` or `unstable`
(nsprof.diff's module docstring says when each applies)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from nsprof.diff.compiled import COMPILED
from nsprof.diff.noise import HOST_PACED, NoiseFloor, category
from nsprof.diff.statistics import METHOD, RUNS_METHOD, compare_runs, compare_samples, discoveries

FASTER, SLOWER, SAME, ADDED, REMOVED, UNSTABLE = "faster", "slower", "same", "added", "removed", "unstable"
NOT_CALLED = "not called"  # a CPU-side duration: shown with its interval, never called (not_called)
FEW_RUNS = 5  # with fewer runs on a side, the noise floors apply across runs too (floors_apply)
DEFAULT_MIN_CHANGE_PCT = 2.0


@dataclass(frozen=True)
class Judge:
    """How a diff compares and calls its rows: across runs when a side has several, else within
    one run a side; beyond the noise floor of each row's category wherever the variation between
    runs, or between the sides' machines, is unmeasured (`noise`; nsprof.diff's module docstring)."""

    min_change_pct: float
    across_runs: bool
    noise: NoiseFloor | None
    apart: bool = False  # the sides ran on different GPUs: what a machine moves is not called (noise.MACHINE_PACED)

    def compare(self, a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
        return compare_runs(a, b) if self.across_runs else compare_samples(a, b)

    def called(self, stats: pd.DataFrame, kinds: str | pd.Series) -> pd.DataFrame:
        """`stats` with status and significant. `kinds`: the rows' kind of work (noise.KINDS or
        PAGEABLE), for their category. Only runs tell instability: one run a side, a count that
        differs between the sides may be a longer capture as well (a warning says so)."""
        unstable = stats["unstable"].astype(bool) if "unstable" in stats else pd.Series(False, index=stats.index)
        kinds = pd.Series(kinds, index=stats.index) if isinstance(kinds, str) else kinds.reindex(stats.index)
        kinds = kinds.fillna("ranges")
        categories = category(kinds, stats[["a_median_ns", "b_median_ns"]].max(axis=1))
        # across runs, significance allows for the table's many rows (statistics.discoveries)
        significant = discoveries(stats["p_value"]) if self.across_runs and "p_value" in stats else None
        if self.noise is None:  # the runs' own variation decides; no floor, but what only waits is never called
            host_paced = pd.Series(np.where(categories.isin(HOST_PACED), np.inf, self.min_change_pct), index=stats.index)
            return with_status(stats, host_paced, unstable, significant).assign(
                floor_pct=np.nan, floor=categories.where(categories.isin(HOST_PACED)), undecided=False)
        # the floor of each row's category (inf: work too short, or a category unmeasured)
        floor = pd.Series([self.noise.of(name, kind, self.apart) for name, kind in zip(categories, kinds)],
                          index=stats.index)
        threshold = np.maximum(floor, self.min_change_pct)
        called = with_status(stats, threshold, unstable, significant)
        # the rows the floor kept from a call, significant and past --min-change: only runs (of one machine) decide those
        undecided = (called["status"] == SAME) & called["significant"] & (stats["change_pct"].abs() >= self.min_change_pct)
        return called.assign(floor_pct=threshold, floor=categories, undecided=undecided)

    @property
    def method(self) -> str:
        return RUNS_METHOD if self.across_runs else METHOD


def call_rows(stats: pd.DataFrame, kinds: str | pd.Series, min_change_pct: float = DEFAULT_MIN_CHANGE_PCT,
              noise: NoiseFloor | None = None, across_runs: bool | None = None, apart: bool = False) -> pd.DataFrame:
    """Rows of compare_samples or compare_runs (`across_runs`, by default where no `noise` is
    given) with the status, significance and floor a diff gives them; `noise`: the floors that
    apply (one run a side, few runs, or runs of two machines); `apart`: the sides ran on different
    GPUs. How the noise corpus (benchmarks/noise_corpus.py) judges its pairs as `nsprof diff` would."""
    return Judge(min_change_pct, noise is None if across_runs is None else across_runs, noise, apart).called(stats, kinds)


def floors_apply(runs_a: int, runs_b: int, apart: bool) -> bool:
    """Whether a change must also pass the noise floor of its category: one run a side (the variation
    between runs unmeasured), fewer than FEW_RUNS on a side (too few run medians to tell a change
    from processes that cluster: three runs against three unchanged called 2-5% changes in 7 of 580
    splits of one day's runs, none with the floors; benchmarks/records/2026-11-28-h200-noise-corpus),
    or runs of two machines (`apart`: no variation between machines measured)."""
    return min(runs_a, runs_b) < FEW_RUNS or apart


def with_status(stats: pd.DataFrame, threshold: float | pd.Series, unstable: pd.Series,
                significant: pd.Series | None = None) -> pd.DataFrame:
    """Status and significant per row: a change must be significant (its interval excludes 0, or
    `significant` says so: statistics.discoveries) and reach `threshold` percent (per row, or one
    for all); `unstable` rows, and those a `compiled` reason marks (nsprof.diff.compiled), are
    never called."""
    change, low, high = stats["change_pct"], stats["ci_low_pct"], stats["ci_high_pct"]
    testable = stats["testable"].astype(bool)
    # significant: however small the change (a status needs min_change_pct too)
    significant = testable & ((low > 0) | (high < 0)) if significant is None else testable & significant
    compiled = stats["compiled"].notna() if "compiled" in stats else pd.Series(False, index=stats.index)
    status = np.select(
        [compiled, stats["a_count"] == 0, stats["b_count"] == 0, unstable,
         significant & (change >= threshold), significant & (change <= -threshold)],
        [COMPILED, ADDED, REMOVED, UNSTABLE, SLOWER, FASTER], SAME)
    return stats.assign(status=status, significant=significant)


def not_called(stats: pd.DataFrame) -> pd.DataFrame:
    """Own durations (CPU time) keep their change and interval but are never called faster or
    slower: CPU time drifts between runs far more than the interval, taken within one run, says
    (the same training step run twice, unchanged, read +12% [+8%, +19%])."""
    called = stats["status"].isin([FASTER, SLOWER, SAME])
    return stats.assign(status=stats["status"].where(~called, NOT_CALLED))
