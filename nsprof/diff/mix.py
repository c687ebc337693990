"""A kernel's mix of launch configurations: whether the shares of its configurations (grid and
block), rather than its speed, move its median.

One kernel name launched in several configurations (an autotuner's trials, one elementwise kernel
at several tensor sizes) has one median over all of them. Where two runs launched the same
configurations in other proportions, that median can jump from one configuration's time to
another's: Triton's do_bench repeats each autotuning trial as often as its estimate allows, and two
unchanged runs of a Triton benchmark read `matmul_kernel` at 12.5 us and at 24.9 us.

`mix_moved` reweights each run's launches to the proportions of all the runs together (each launch
weighted by its configuration's share overall over its share in its run: direct standardization)
and finds the kernels whose weighted median differs from the plain one by MIX_TOLERANCE_PCT or more.
Their medians compare different mixes of work, so a diff calls them `unstable`. A kernel of one
configuration is never among them, however often it ran: a harness that times for a budget
launches the same work a run-dependent number of times. Configurations that differ between runs
are another matter (a change of configuration, or, within one side's runs, an autotuner that kept
another): not judged here.
"""

from __future__ import annotations

import pandas as pd

MIX_TOLERANCE_PCT = 0.5  # a quarter of the smallest change a diff calls by default (2%)


def as_runs(*sides: pd.DataFrame) -> pd.DataFrame:
    """The launches of several sides as one frame of runs: each side's `run` numbers follow the
    previous side's (a side with no `run` column is one run), so that mix_moved pools them."""
    frames, after = [], 0
    for side in sides:
        runs = side["run"].to_numpy() if "run" in side else 0
        frames.append(side.assign(run=runs + after))
        after += int(side["run"].max()) + 1 if "run" in side and len(side) else 1
    return pd.concat(frames, ignore_index=True)


def mix_moved(launches: pd.DataFrame) -> pd.Index:
    """The keys whose median moves with its mix of configurations (module docstring). `launches`:
    (key, value_ns, config, run), one row per launch (as_runs: several sides' runs together); a
    launch of no configuration ("", a graph's) keeps its kernel out of the test."""
    frame = launches[["key", "value_ns", "config", "run"]]
    unknown = frame.loc[frame["config"].isna() | (frame["config"] == ""), "key"]
    frame = frame[~frame["key"].isin(unknown)]
    # long kernel names and labels grouped many times: group their codes
    codes, names = pd.factorize(frame["key"])
    frame = frame.assign(key=codes, config=pd.factorize(frame["config"])[0])
    overall = frame.groupby("key", sort=False)["config"].nunique()
    frame = frame[frame["key"].isin(overall[overall >= 2].index)]
    # every run that launched the kernel launched all of its configurations: the same set
    per_run = frame.groupby(["key", "run"], sort=False)["config"].nunique()
    partial = per_run[per_run.to_numpy() < overall.reindex(per_run.index.get_level_values("key")).to_numpy()]
    frame = frame[~frame["key"].isin(partial.index.get_level_values("key"))]
    if frame.empty:
        return pd.Index([], dtype=object)
    in_run = frame.groupby(["key", "run", "config"], sort=False)["value_ns"].transform("size") \
        / frame.groupby(["key", "run"], sort=False)["value_ns"].transform("size")
    pooled = frame.groupby(["key", "config"], sort=False)["value_ns"].transform("size") \
        / frame.groupby("key", sort=False)["value_ns"].transform("size")
    frame = frame.assign(weight=pooled / in_run).sort_values(["key", "run", "value_ns"], kind="stable")
    standardized = _lower_medians(frame, frame["weight"])
    plain = _lower_medians(frame, pd.Series(1.0, index=frame.index))
    moved = (100 * (standardized / plain - 1)).abs() >= MIX_TOLERANCE_PCT
    return pd.Index(names[moved[moved].index.get_level_values("key").unique()])


def _lower_medians(frame: pd.DataFrame, weight: pd.Series) -> pd.Series:
    """Per (key, run) of `frame` (sorted by key, run, value_ns): the first value at which the
    cumulative weight reaches half the group's (the lower median, for weights of 1)."""
    groups = [frame["key"], frame["run"]]
    cumulative = weight.groupby(groups, sort=False).cumsum()
    half = weight.groupby(groups, sort=False).transform("sum") / 2
    reached = frame.loc[(cumulative >= half - 1e-9).to_numpy()]
    return reached.groupby(["key", "run"], sort=False)["value_ns"].first()
