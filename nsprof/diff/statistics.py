"""How sure a change in time is (pure numpy and pandas, vectorized over every group at once).

`compare_samples`: per group (a kernel name, a range, a stage), the per-launch times of A and B
become `a_count`, `b_count`, `a_median_ns`, `b_median_ns`, `a_total_ns`, `b_total_ns`,
`change_pct` (B's median over A's, minus 1, in percent) and its 95% interval `ci_low_pct`,
`ci_high_pct`, and a `status` (nsprof.diff.status).

The interval is a percentile bootstrap of the ratio of medians, each side resampled on its own
(RESAMPLES resamples, a fixed seed so that the output repeats). No launch is resampled: the m-th
smallest of n values drawn with replacement from a sorted sample x is x[ceil(n U) - 1], where U,
the m-th smallest of n uniforms, is Beta(m, n - m + 1); for an even n the next one is
U + (1 - U) Beta(1, n - m). So a resample's median is drawn exactly from its distribution, and
the cost is one sort of the launches plus RESAMPLES draws per group, whatever the launch count
(scipy.stats.bootstrap resamples the launches themselves: tests/test_diff.py checks that the two
agree on real captures).

`compare_runs` serves sides of several runs each (one program run again in fresh processes): the
variation between runs, often larger than within one (an unchanged torch.compile program ran 4%
slower in a second run), is then measured rather than assumed away. It is a two-stage analysis,
the summary-measures form of a random-effects model: each run's median per group is one
observation; the change is the ratio of the geometric means of those run medians, and its interval
and p-value Welch's t on their logarithms (RUNS_METHOD); `discoveries` then allows for the many
groups of one table (Benjamini-Hochberg). A side of one run borrows the other side's run-to-run
variance. A group whose launch count differs between the runs of a side is `unstable`: an
autotuner or a data-dependent loop ran other work, and its medians compare different things
(kernel launches are judged by their configurations instead: `count_must_hold`, and
nsprof.diff.mix).

`compare_summaries` serves `nsprof bench` records, which keep a median, quartiles and a run count
but no per-run times: its interval is the normal approximation of the log ratio, each median's
standard error taken as 1.2533 sigma / sqrt(runs) with sigma = IQR / 1.349 (a normal sample's).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

RESAMPLES = 4000
CONFIDENCE = 0.95
MIN_SAMPLES = 3  # below this on either side no change is called significant
# across runs, the expected share of a table's calls that are false (statistics.discoveries): 1%, so that about one
# unchanged diff in a hundred calls anything; at 5%, 3 of 40 no-change diffs of three runs a side called a kernel
FALSE_DISCOVERY_RATE = 0.01
SEED = 19
METHOD = (f"percentile bootstrap of the ratio of medians ({RESAMPLES:,} resamples, "
          f"{CONFIDENCE:.0%} interval)")
SUMMARY_METHOD = ("normal approximation from each record's median, quartiles and run count "
                  "(bench records keep no per-run times)")
RUNS_METHOD = (f"between runs: each run's median, compared by the ratio of their geometric means with a "
               f"{CONFIDENCE:.0%} Welch t interval on their logarithms (run-to-run variation included); significant "
               f"when Benjamini-Hochberg at {FALSE_DISCOVERY_RATE:.0%} over the table's rows finds it")
STAT_COLUMNS = ("a_count", "b_count", "a_median_ns", "b_median_ns", "a_total_ns", "b_total_ns",
                "change_pct", "ci_low_pct", "ci_high_pct", "testable")


def compare_samples(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """STAT_COLUMNS per `key`, from two frames of (key, value_ns), one row per launch or
    instance; indexed by key, every key of either side once (a side without it counts 0)."""
    keys = pd.Index(pd.unique(np.concatenate([a["key"].to_numpy(object), b["key"].to_numpy(object)])))
    rng = np.random.default_rng(SEED)
    sides = {}
    for side, frame in (("a", a), ("b", b)):
        codes = keys.get_indexer(frame["key"].to_numpy(object))
        values = frame["value_ns"].to_numpy(np.float64)
        order = np.lexsort((values, codes))
        sides[side] = _medians(codes[order], values[order], len(keys), rng)
    out = pd.DataFrame(index=keys)
    for side, (count, median, total, _draws) in sides.items():
        out[f"{side}_count"], out[f"{side}_median_ns"], out[f"{side}_total_ns"] = count, median, total
    with np.errstate(divide="ignore", invalid="ignore"):
        out["change_pct"] = 100 * (sides["b"][1] / sides["a"][1] - 1)
        ratios = sides["b"][3] / sides["a"][3]
    out["testable"] = (out["a_count"] >= MIN_SAMPLES) & (out["b_count"] >= MIN_SAMPLES) & np.isfinite(out["change_pct"])
    tail = 100 * (1 - CONFIDENCE) / 2
    low, high = np.full(len(keys), np.nan), np.full(len(keys), np.nan)
    testable = out["testable"].to_numpy()
    if testable.any():
        low[testable], high[testable] = 100 * (np.percentile(ratios[testable], [tail, 100 - tail], axis=1) - 1)
    out["ci_low_pct"], out["ci_high_pct"] = low, high
    return out[list(STAT_COLUMNS)]


def compare_runs(a: pd.DataFrame, b: pd.DataFrame, count_must_hold: bool = True) -> pd.DataFrame:
    """STAT_COLUMNS and `a_runs`, `b_runs` (how many runs ran the group), `unstable`, per `key`,
    from two frames of (key, run, value_ns), one row per launch or instance (module docstring).
    Counts are summed over the runs, medians are the geometric means of the run medians, totals
    the mean total of a run. Without `count_must_hold`, a count that differs between runs leaves
    a group stable."""
    from scipy.stats import t as student_t

    keys = pd.Index(pd.unique(np.concatenate([a["key"].to_numpy(object), b["key"].to_numpy(object)])))
    out = pd.DataFrame(index=keys)
    logs = {}
    for side, frame in (("a", a), ("b", b)):
        runs = max(frame["run"].nunique(), 1)
        per_run = frame.groupby(["key", "run"], sort=False)["value_ns"].agg(["count", "median", "sum"])
        by_key = per_run.groupby(level="key", sort=False)
        with np.errstate(divide="ignore"):
            log_median = np.log(per_run["median"].where(per_run["median"] > 0))
        logs[side] = log_median.groupby(level="key", sort=False).agg(["mean", "var", "count"]).reindex(keys)
        counts = by_key["count"].agg(["sum", "min", "max", "size"]).reindex(keys)
        out[f"{side}_count"] = counts["sum"].fillna(0).astype(int)
        out[f"{side}_runs"] = counts["size"].fillna(0).astype(int)
        out[f"{side}_median_ns"] = np.exp(logs[side]["mean"])
        out[f"{side}_total_ns"] = by_key["sum"].sum().reindex(keys) / runs
        # a group missing from some runs of a side, or launched a different number of times (other work)
        recounted = (counts["min"] != counts["max"]) & count_must_hold
        out[f"_{side}_unstable"] = (counts["size"] < runs) | recounted
    out["unstable"] = (out["a_count"] > 0) & (out["b_count"] > 0) & (out["_a_unstable"] | out["_b_unstable"])
    mean_a, mean_b = logs["a"]["mean"], logs["b"]["mean"]
    out["change_pct"] = 100 * np.expm1(mean_b - mean_a)
    n_a, n_b = logs["a"]["count"].fillna(0), logs["b"]["count"].fillna(0)
    var_a, var_b = logs["a"]["var"], logs["b"]["var"]
    # a side of one run has no variance of its own: it borrows the other side's
    var_a, var_b = var_a.where(n_a >= 2, var_b), var_b.where(n_b >= 2, var_a)
    part_a, part_b = var_a / n_a.where(n_a > 0), var_b / n_b.where(n_b > 0)
    se = np.sqrt(part_a + part_b)
    welch_df = (part_a + part_b) ** 2 / (part_a**2 / (n_a - 1) + part_b**2 / (n_b - 1))
    # run medians alike to the clock's step on both sides: no spread to weigh, the pooled degrees of freedom
    welch_df = welch_df.where(part_a + part_b > 0, n_a + n_b - 2)
    df = welch_df.where((n_a >= 2) & (n_b >= 2), np.maximum(n_a, n_b) - 1)
    out["testable"] = (n_a >= 1) & (n_b >= 1) & (n_a + n_b >= 3) & se.notna() & out["change_pct"].notna() \
        & ~out["unstable"]
    half = pd.Series(student_t.ppf(0.5 + CONFIDENCE / 2, df.where(df > 0)), index=keys) * se
    difference = mean_b - mean_a
    out["ci_low_pct"] = (100 * np.expm1(difference - half)).where(out["testable"])
    out["ci_high_pct"] = (100 * np.expm1(difference + half)).where(out["testable"])
    out["p_value"] = pd.Series(2 * student_t.sf(np.abs(difference / se), df.where(df > 0)), index=keys).where(out["testable"])
    return out[[*STAT_COLUMNS, "a_runs", "b_runs", "unstable", "p_value"]]


def discoveries(p_values: pd.Series) -> pd.Series:
    """Which rows of one table are significant once the table's many comparisons are allowed for:
    Benjamini-Hochberg at FALSE_DISCOVERY_RATE over the rows with a p-value (a diff of hundreds of
    kernels would otherwise call some by chance;
    benchmarks/records/2026-11-28-h200-noise-corpus/noise_corpus.md counts the calls)."""
    from scipy.stats import false_discovery_control

    tested = p_values.dropna()
    found = pd.Series(False, index=p_values.index)
    if len(tested):
        found[tested.index] = false_discovery_control(tested.to_numpy()) <= FALSE_DISCOVERY_RATE
    return found


def compare_summaries(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """STAT_COLUMNS per `key` from two frames of (key, median_ns, q1_ns, q3_ns, runs): one
    summary per key and side (compare_summaries' interval: module docstring)."""
    merged = a.merge(b, on="key", how="outer", suffixes=("_a", "_b")).set_index("key")
    out = pd.DataFrame(index=merged.index)
    for side in ("a", "b"):
        out[f"{side}_count"] = merged[f"runs_{side}"].fillna(0).astype(int)
        out[f"{side}_median_ns"] = merged[f"median_ns_{side}"]
        out[f"{side}_total_ns"] = merged[f"median_ns_{side}"] * merged[f"runs_{side}"]
    ratio = out["b_median_ns"] / out["a_median_ns"]
    out["change_pct"] = 100 * (ratio - 1)

    def relative_error(side: str) -> pd.Series:
        sigma = (merged[f"q3_ns_{side}"] - merged[f"q1_ns_{side}"]) / 1.349
        return 1.2533 * sigma / np.sqrt(merged[f"runs_{side}"]) / merged[f"median_ns_{side}"]

    spread = 1.959964 * np.sqrt(relative_error("a") ** 2 + relative_error("b") ** 2)
    out["testable"] = (out["a_count"] >= MIN_SAMPLES) & (out["b_count"] >= MIN_SAMPLES) & spread.notna() & ratio.notna()
    out["ci_low_pct"] = (100 * (ratio * np.exp(-spread) - 1)).where(out["testable"])
    out["ci_high_pct"] = (100 * (ratio * np.exp(spread) - 1)).where(out["testable"])
    return out[list(STAT_COLUMNS)]


def _medians(codes: np.ndarray, values: np.ndarray, groups: int, rng: np.random.Generator):
    """Per group of a sorted (codes, values): count, median, total, and RESAMPLES bootstrap
    medians (NaN rows where the group is empty)."""
    count = np.bincount(codes, minlength=groups)
    total = np.bincount(codes, weights=values, minlength=groups)
    start = np.concatenate([[0], np.cumsum(count)[:-1]])
    n = np.maximum(count, 1)
    m = (n + 1) // 2  # the lower median's rank, 1-based
    last = len(values) - 1
    even = (n % 2 == 0) & (count > 0)

    def at(starts: np.ndarray, rank: np.ndarray) -> np.ndarray:  # 1-based rank within each group -> value
        return values[np.clip(starts + rank - 1, 0, last)] if len(values) else np.full(rank.shape, np.nan)

    median = np.where(even, (at(start, m) + at(start, np.minimum(m + 1, n))) / 2, at(start, m))
    median = np.where(count > 0, median, np.nan)
    u = rng.beta(m[:, None], (n - m + 1)[:, None], size=(groups, RESAMPLES))
    draws = at(start[:, None], np.clip(np.ceil(n[:, None] * u), 1, n[:, None]).astype(np.int64))
    if even.any():  # the upper median: the next order statistic after the lower one
        u_next = u[even] + (1 - u[even]) * rng.beta(1, (n - m)[even][:, None], size=(int(even.sum()), RESAMPLES))
        rank = np.clip(np.ceil(n[even][:, None] * u_next), 1, n[even][:, None]).astype(np.int64)
        draws[even] = (draws[even] + at(start[even][:, None], rank)) / 2
    draws[count == 0] = np.nan
    return count, median, total, draws
