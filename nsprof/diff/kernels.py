"""The kernel rows of a diff: each side's launches paired by kernel (nsprof.diff.matching), compared
within one run a side or across runs, called (nsprof.diff.judge), and with the ncu counters and
rules that moved (nsprof.diff.why)."""

from __future__ import annotations

from typing import cast

import pandas as pd

from nsprof.diff.compiled import differences, is_compiled_program
from nsprof.diff.judge import Judge
from nsprof.diff.matching import match_kernels
from nsprof.diff.mix import as_runs, mix_moved
from nsprof.diff.rows import ordered, records
from nsprof.diff.sides import Side
from nsprof.diff.statistics import compare_runs, compare_samples
from nsprof.diff.types import KernelRow
from nsprof.diff.why import add_why, kernel_counters


def kernel_rows(a: Side, b: Side, instances: dict, rules: dict, judge: Judge) -> list[KernelRow]:
    """The kernel rows of two captures (`instances`: sides.side_instances of each; `rules`: why.capture_rules
    of each), largest changes first."""
    launches = {side: instances[side]["launches"] for side in ("a", "b")}
    matches = match_kernels(launches["a"], launches["b"])
    keyed = _keyed_launches(launches, matches)
    stats = ordered(judge.called(_compared_launches(keyed, instances, judge), "kernels"))
    stats[["a_total_ns", "b_total_ns"]] = stats[["a_total_ns", "b_total_ns"]].fillna(0)
    a_names = matches[(matches["side"] == "a")].set_index("key")["name"]
    matched_by = matches.drop_duplicates("key", keep="last").set_index("key")["matched_by"]
    counters = {side: kernel_counters(capture.analyzed().kernels) for side, capture in (("a", a), ("b", b))}
    rows = []
    for record, (key, row) in zip(records(stats, "kernel"), stats.iterrows()):
        a_name = a_names.get(key)
        record["matched_by"] = matched_by.get(key)
        if a_name is not None and a_name != key:
            record["a_kernel"] = a_name
        record["a_total_ns"], record["b_total_ns"] = float(row["a_total_ns"]), float(row["b_total_ns"])
        sides = {"a": a_name, "b": key if row["b_count"] else None}
        add_why(record, counters, rules, sides, sides)
        rows.append(record)
    return cast(list[KernelRow], rows)  # records() builds them from the called frame's columns


def _keyed_launches(launches: dict, matches: pd.DataFrame) -> dict:
    """Each side's launches (key, value_ns, run, config, operator), keyed by the kernel they were matched to."""
    keyed = {}
    for side in ("a", "b"):
        key_of = dict(zip(*matches[matches["side"] == side][["name", "key"]].to_numpy().T)) if len(matches) else {}
        keyed[side] = pd.DataFrame({"key": launches[side]["name"].map(key_of), "value_ns": launches[side]["value_ns"],
                                    "run": launches[side]["run"], "config": launches[side].get("config", ""),
                                    "operator": launches[side].get("operator")})
    return keyed


def _compared_launches(keyed: dict, instances: dict, judge: Judge) -> pd.DataFrame:
    """The sides' launches compared per kernel, with `unstable` and the `compiled` reasons (nsprof.diff.compiled)."""
    compare = compare_launch_runs if judge.across_runs else compare_launch_samples
    compared = compare(keyed["a"], keyed["b"])
    compiled = all(is_compiled_program(instances[side]["ranges"]["key"], instances[side]["source"]) for side in "ab")
    reasons = differences(keyed["a"], keyed["b"], compiled)
    compared["compiled"] = compared.index.map(reasons)
    return compared


def compare_launch_samples(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """compare_samples of one run a side's kernel launches (key, value_ns, config): a kernel is also
    unstable where its mix of configurations in other proportions moves its median (mix.mix_moved)."""
    compared = compare_samples(a, b)
    compared["unstable"] = compared.index.isin(mix_moved(as_runs(a, b)))
    return compared


def compare_launch_runs(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """compare_runs of two sides' kernel launches (key, run, value_ns, config). A kernel is unstable
    where some run of a side lacks it, launched it with another set of configurations (an
    autotuner that kept another), or in proportions that move its median (mix.mix_moved); not for
    its count alone: a harness that times for a budget repeats the same work as often as it chose."""
    compared = compare_runs(a, b, count_must_hold=False)
    # proportions that move a run's median within a side, or between the sides (where they share the configurations)
    mixed = mix_moved(a).union(mix_moved(b)).union(mix_moved(as_runs(a, b)))
    reconfigured = pd.concat([_config_changed(a), _config_changed(b)]).groupby(level=0).any()
    reconfigured = reconfigured.reindex(compared.index, fill_value=False).astype(bool) | compared.index.isin(mixed)
    compared["unstable"] |= reconfigured & (compared["a_count"] > 0) & (compared["b_count"] > 0)
    return compared


def _config_changed(keyed: pd.DataFrame) -> pd.Series:
    """Per key: whether the runs of one side launched it with different sets of configurations
    (an autotuner that kept another one): True where they did."""
    if "config" not in keyed or keyed.empty:
        return pd.Series(dtype=bool)
    per_run = keyed.groupby(["key", "run"])["config"].agg(lambda configs: frozenset(configs))
    return per_run.groupby(level="key").nunique() > 1
