"""`nsprof diff A B`: did the change make it faster, how sure is that, and why (pure functions over
parsed and analyzed captures; nsprof.api.diff reads them).

- `kernels`: per kernel (paired by nsprof.analyze.diff.matching), its launches and median time on
  each side from every launch's duration (nsys's where the capture has nsys, else ncu's), the
  change and its interval (nsprof.analyze.diff.statistics), its status, and for ncu captures the
  counters that moved and the rules that appeared or went away (nsprof.analyze.diff.why).
- `ranges`: per NVTX range family (nsprof.analyze.families: names that differ only in per-instance
  ids, such as XLA's, are one row; not the ladder's stage ranges), over its instances: GPU time
  (the kernels and graphs its calls launched, nsprof.analyze.nvtx_attribution; copies too where
  attribution counts their time as `copy_ns`), and the range's own duration as `duration`.
- `stages`: per ladder stage range, over its instances, the same; or the stages of two `nsprof
  bench` records; or one stage against another (`stage_pair`, v5 -> v6: the teaching answer).
- `totals`: GPU busy time, kernel time, copy time and idle time of each capture, and the kernels
  that account for most of the change in kernel time (`contributors`, each with its share of the
  summed absolute changes).

A status is `faster` or `slower` only when the interval excludes zero and the change is at least
`min_change_pct`; `added` and `removed` are kernels (ranges, stages) one side lacks; else `same`.
Own durations (CPU time, and ranges that launched no GPU work) are `not called` (_not_called).
With fewer than MIN_SAMPLES launches on a side there is no interval and nothing is significant.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from nsprof.analyze.diff.matching import match_kernels
from nsprof.analyze.diff.statistics import METHOD, MIN_SAMPLES, SUMMARY_METHOD, compare_samples, compare_summaries
from nsprof.analyze.diff.why import kernel_counters, kernel_rules, moved, rule_changes, stage_counters
from nsprof.analyze.families import family_column
from nsprof.analyze.ladder import work_key
from nsprof.analyze.nvtx_attribution import attribute_work
from nsprof.analyze.report import ProfileAnalysis
from nsprof.errors import UsageError
from nsprof.parse.profile import Profile
from nsprof.ranges import parse_stage_range

FASTER, SLOWER, SAME, ADDED, REMOVED = "faster", "slower", "same", "added", "removed"
NOT_CALLED = "not called"  # a CPU-side duration: shown with its interval, never called (_not_called)
DEFAULT_MIN_CHANGE_PCT = 2.0
TOP_CONTRIBUTORS = 5
ROW_FIELDS = ("a_count", "b_count", "a_median_ns", "b_median_ns", "change_pct", "ci_low_pct", "ci_high_pct",
              "status", "testable", "significant")


@dataclass(frozen=True)
class Capture:
    """One side of a diff: a profile and its analysis, or an `nsprof bench` record."""

    name: str
    profile: Profile | None = None
    analysis: ProfileAnalysis | None = None
    bench: dict | None = None  # {"env", "results", ...} as `nsprof bench --save-as` writes it
    attributed: pd.DataFrame | None = None  # nvtx_attribution.attribute_work of every export, once

    def profiled(self) -> tuple[Profile, ProfileAnalysis]:
        """The profile and its analysis (diff_captures reads them only when neither side is a bench record)."""
        if self.profile is None or self.analysis is None:
            raise TypeError(f"{self.name} is a bench record, not a profile")
        return self.profile, self.analysis


def profile_capture(name: str, profile: Profile, attribution: str = "thread") -> Capture:
    """A profile with the parts of its analysis a diff reads (those of nsprof.analyze.report, each
    computed once: attribution is the costly part at a million kernels), no ceilings needed."""
    from nsprof.analyze.capture_facts import distinct_launches, gpu_name
    from nsprof.analyze.gpu_utilization import gpu_utilization
    from nsprof.analyze.ladder import work_records
    from nsprof.analyze.launch_findings import launch_findings, rule_results
    from nsprof.analyze.metrics import kernel_metrics
    from nsprof.analyze.nvtx_attribution import summarize_ranges

    attributed = pd.concat([attribute_work(export, attribution) for export in profile.nsys], ignore_index=True) \
        if profile.nsys else None
    ranges = summarize_ranges(attributed) if attributed is not None else None
    launches = distinct_launches(profile.ncu) if profile.ncu else None
    kernels = pd.concat([kernel_metrics(launches), launch_findings(launches)], axis=1) if launches is not None else None
    work = work_records(launches, ranges)
    stages = work[work["stage"].notna()].reset_index(drop=True) if "stage" in work else work
    analysis = ProfileAnalysis(ranges, kernels, stages, gpu_name(profile.nsys, profile.ncu, profile.manifest), None,
                               rules=rule_results(profile.ncu) if profile.ncu else None,
                               gpu_utilization=gpu_utilization(profile.nsys) if profile.nsys else None,
                               attribution=attribution, launches=launches)
    return Capture(name, profile, analysis, attributed=attributed)


@dataclass(frozen=True)
class DiffResult:
    a: str
    b: str
    kernels: list[dict]
    ranges: list[dict]
    stages: list[dict]
    totals: list[dict]
    contributors: list[dict]
    warnings: list[str]
    method: str
    min_change_pct: float
    stage_pair: tuple[str, str] | None = None
    time_source: dict = field(default_factory=dict)  # side -> "nsys", "ncu" or "bench"

    def compared(self) -> int:
        """How many kernels, ranges and stages both sides have (what a change could be measured on)."""
        return sum(row["status"] not in (ADDED, REMOVED) for rows in (self.kernels, self.ranges, self.stages)
                   for row in rows)

    def slower_than(self, pct: float) -> list[str]:
        """One line per kernel, range or stage significantly slower by more than `pct` percent."""
        return [f"{section[:-1]} {row[label]}: {row['change_pct']:+.1f}% "
                f"[{row['ci_low_pct']:+.1f}%, {row['ci_high_pct']:+.1f}%]"
                for section, label, rows in (("kernels", "kernel", self.kernels), ("ranges", "range", self.ranges),
                                             ("stages", "stage", self.stages))
                for row in rows if row["significant"] and row["change_pct"] > pct]


def diff_captures(a: Capture, b: Capture, min_change_pct: float = DEFAULT_MIN_CHANGE_PCT,
                  stage_pair: tuple[str, str] | None = None, attribution: str = "thread") -> DiffResult:
    """The diff of two captures (module docstring); both profiles or both bench records. With
    `stage_pair` (X, Y), stage X of A against stage Y of B (the same capture may be both)."""
    if (a.bench is None) != (b.bench is None):
        raise UsageError(f"{a.name} and {b.name} are not the same kind of capture (a bench record and a profile)",
                         "compare two profiles, or two `nsprof bench` records")
    if a.bench is not None and b.bench is not None:
        frames = [_bench_frame(a.bench), _bench_frame(b.bench)]
        if stage_pair:
            frames = [_rekeyed(frame, stage, stage_pair) for frame, stage in zip(frames, stage_pair)]
        common = set(frames[0]["key"]) & set(frames[1]["key"])
        only = [len(set(frame["key"]) - common) for frame in frames]
        skipped = [f"{n} stage and size record{'s' if n > 1 else ''} only in {side}, not compared"
                   for n, side in zip(only, "AB") if n]
        frames = [frame[frame["key"].isin(common)] for frame in frames]
        stages = _stage_rows(compare_summaries(*frames), {}, {}, min_change_pct, stage_pair, {})
        return DiffResult(a.name, b.name, [], [], stages, [], [], _bench_warnings(a.bench, b.bench) + skipped, SUMMARY_METHOD,
                          min_change_pct, stage_pair, {"a": "bench", "b": "bench"})
    instances = {side: _instances(capture, attribution) for side, capture in (("a", a), ("b", b))}
    stage_a, stage_b = (_rekeyed(instances["a"]["stages"], stage_pair[0], stage_pair),
                        _rekeyed(instances["b"]["stages"], stage_pair[1], stage_pair)) if stage_pair else \
        (instances["a"]["stages"], instances["b"]["stages"])
    analyses = {"a": a.profiled()[1], "b": b.profiled()[1]}
    counters = {side: stage_counters(analyses[side].stages) for side in ("a", "b")}
    if stage_pair:
        counters = {"a": _rekeyed_index(counters["a"], stage_pair[0], stage_pair),
                    "b": _rekeyed_index(counters["b"], stage_pair[1], stage_pair)}
    main_kernels = {side: _main_kernels(analyses[side].stages, stage_pair[index] if stage_pair else None, stage_pair)
                    for index, side in enumerate(("a", "b"))}
    rules = {side: _rules_of(analyses[side]) for side in ("a", "b")}
    stages = _stage_rows(compare_samples(*_values(stage_a, stage_b, "gpu_time_ns")), counters, rules, min_change_pct,
                         stage_pair, main_kernels, compare_samples(*_values(stage_a, stage_b, "duration_ns")))
    warnings = _warnings(a, b)
    if stage_pair:
        sources = {side: "nsys" if len(instances[side]["stages"]) else "none" for side in ("a", "b")}
        return DiffResult(a.name, b.name, [], [], stages, [], [], warnings, METHOD, min_change_pct, stage_pair, sources)
    kernels = _kernel_rows(a, b, instances, rules, min_change_pct)
    ranges = _range_rows(instances["a"]["ranges"], instances["b"]["ranges"], min_change_pct)
    warnings += _count_warnings(kernels)
    sources = {side: instances[side]["source"] for side in ("a", "b")}
    if sources["a"] != sources["b"]:
        warnings.append(f"A's kernel times are {sources['a']}'s and B's {sources['b']}'s (ncu replays each launch "
                        "with cold caches): the kernel changes compare different clocks")
    return DiffResult(a.name, b.name, kernels, ranges, stages, _totals(a, b), _contributors(kernels), warnings,
                      METHOD, min_change_pct, None, sources)


def _instances(capture: Capture, attribution: str) -> dict:
    """Per-launch kernel times ("launches": name, start_ns, value_ns, and "source"),
    and per-instance range and stage figures ("ranges", "stages": key, gpu_time_ns, duration_ns)."""
    profile, analysis = capture.profiled()
    if profile.nsys:
        frames = []
        for export in profile.nsys:
            frames.append(pd.DataFrame({"name": export.kernels["kernel"].astype(str),
                                        "start_ns": export.kernels["start_ns"], "value_ns": export.kernels["duration_ns"]}))
            frames.append(pd.DataFrame({"name": export.graphs["name"].astype(str),
                                        "start_ns": export.graphs["start_ns"], "value_ns": export.graphs["duration_ns"]}))
        launches, source = pd.concat(frames, ignore_index=True), "nsys"
        attributed = capture.attributed if capture.attributed is not None else \
            pd.concat([attribute_work(export, attribution) for export in profile.nsys], ignore_index=True)
        gpu_time = attributed["gpu_time_ns"] + attributed.get("copy_ns", 0)
        # ranges pair by family (nsprof.analyze.families): XLA's ids differ between runs of one program
        instances = pd.DataFrame({"key": family_column(attributed["range"]), "gpu_time_ns": gpu_time,
                                  "duration_ns": attributed["duration_ns"].astype("float64")})
        stage_keys = {key for key in pd.unique(instances["key"]) if parse_stage_range(key) is not None}
        is_stage = instances["key"].isin(stage_keys).to_numpy()
        ranges, stages = instances[~is_stage], instances[is_stage]
    elif analysis.kernels is not None:
        kernels = analysis.kernels
        launches = pd.DataFrame({"name": kernels["kernel"].astype(str),
                                 "start_ns": np.arange(len(kernels)), "value_ns": kernels["duration_ns"]}).dropna()
        source = "ncu"
        keys = pd.Series([work_key(nvtx, kernel) for nvtx, kernel in zip(kernels["nvtx"], kernels["kernel"])])
        on_stage = keys.map(lambda key: parse_stage_range(key) is not None).to_numpy(dtype=bool)
        # ncu runs each launch alone, so a stage's GPU time per launch is that launch's duration
        stages = pd.DataFrame({"key": keys[on_stage].to_numpy(), "gpu_time_ns": kernels["duration_ns"].to_numpy()[on_stage],
                               "duration_ns": np.nan})
        ranges = pd.DataFrame(columns=["key", "gpu_time_ns", "duration_ns"])
    else:
        raise UsageError(f"{capture.name}: no kernel launches to compare", "pass an nsys or ncu capture")
    return {"launches": launches, "source": source, "ranges": ranges, "stages": stages}


def _values(a: pd.DataFrame, b: pd.DataFrame, column: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    return tuple(frame[["key", column]].rename(columns={column: "value_ns"}).dropna() for frame in (a, b))


def _with_status(stats: pd.DataFrame, min_change_pct: float) -> pd.DataFrame:
    change, low, high = stats["change_pct"], stats["ci_low_pct"], stats["ci_high_pct"]
    testable = stats["testable"].astype(bool)
    status = np.select(
        [stats["a_count"] == 0, stats["b_count"] == 0,
         testable & (low > 0) & (change >= min_change_pct), testable & (high < 0) & (change <= -min_change_pct)],
        [ADDED, REMOVED, SLOWER, FASTER], SAME)
    # significant: the interval excludes zero, however small the change (a status needs min_change_pct too)
    return stats.assign(status=status, significant=testable & ((low > 0) | (high < 0)))


def _not_called(stats: pd.DataFrame) -> pd.DataFrame:
    """Own durations (CPU time) keep their change and interval but are never called faster or
    slower: CPU time drifts between runs far more than the interval, taken within one run, says
    (the same training step run twice, unchanged, read +12% [+8%, +19%])."""
    called = stats["status"].isin([FASTER, SLOWER, SAME])
    return stats.assign(status=stats["status"].where(~called, NOT_CALLED))


def _ordered(rows: pd.DataFrame) -> pd.DataFrame:
    """Largest changes first: significant ones, then added and removed (by time), then the rest."""
    rank = rows["status"].map({FASTER: 0, SLOWER: 0, ADDED: 1, REMOVED: 1}).fillna(2)
    rank = rank.where(~(rows["status"] == NOT_CALLED) | ~rows["significant"].astype(bool), 0)
    size = rows["change_pct"].abs().fillna(-1).where(rank != 1, rows[["a_total_ns", "b_total_ns"]].max(axis=1))
    return rows.assign(_rank=rank, _size=-size).sort_values(["_rank", "_size"], kind="stable").drop(columns=["_rank", "_size"])


def _records(stats: pd.DataFrame, label: str) -> list[dict]:
    rows = []
    for key, row in stats.iterrows():
        record = {label: key}
        for column in ROW_FIELDS:
            value = row[column]
            record[column] = _plain(value)
        rows.append(record)
    return rows


def _plain(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return None if not np.isfinite(value) else float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def _kernel_rows(a: Capture, b: Capture, instances: dict, rules: dict, min_change_pct: float) -> list[dict]:
    launches = {side: instances[side]["launches"] for side in ("a", "b")}
    matches = match_kernels(launches["a"], launches["b"])
    keyed = {}
    for side in ("a", "b"):
        key_of = dict(zip(*matches[matches["side"] == side][["name", "key"]].to_numpy().T)) if len(matches) else {}
        keyed[side] = pd.DataFrame({"key": launches[side]["name"].map(key_of), "value_ns": launches[side]["value_ns"]})
    stats = _ordered(_with_status(compare_samples(keyed["a"], keyed["b"]), min_change_pct))
    stats[["a_total_ns", "b_total_ns"]] = stats[["a_total_ns", "b_total_ns"]].fillna(0)
    a_names = matches[(matches["side"] == "a")].set_index("key")["name"]
    matched_by = matches.drop_duplicates("key", keep="last").set_index("key")["matched_by"]
    counters = {side: kernel_counters(capture.profiled()[1].kernels) for side, capture in (("a", a), ("b", b))}
    rows = []
    for record, (key, row) in zip(_records(stats, "kernel"), stats.iterrows()):
        a_name = a_names.get(key)
        record["matched_by"] = matched_by.get(key)
        if a_name is not None and a_name != key:
            record["a_kernel"] = a_name
        record["a_total_ns"], record["b_total_ns"] = float(row["a_total_ns"]), float(row["b_total_ns"])
        sides = {"a": a_name, "b": key if row["b_count"] else None}
        metrics = moved(*(_row(counters[side], sides[side]) for side in ("a", "b")))
        if metrics:
            record["metrics"] = metrics
        record.update(rule_changes(*(None if rules[side] is None or sides[side] is None
                                     else rules[side].get(sides[side], set()) for side in ("a", "b"))))
        rows.append(record)
    return rows


def _range_rows(a: pd.DataFrame, b: pd.DataFrame, min_change_pct: float) -> list[dict]:
    gpu = _with_status(compare_samples(*_values(a, b, "gpu_time_ns")), min_change_pct)
    own = _not_called(_with_status(compare_samples(*_values(a, b, "duration_ns")), min_change_pct))
    # A range that launched no GPU work is compared by its own duration.
    no_work = (gpu["a_median_ns"].fillna(0) == 0) & (gpu["b_median_ns"].fillna(0) == 0)
    basis = pd.Series(np.where(no_work, "duration", "gpu_time"), index=gpu.index)
    main = gpu.where(~no_work, own.reindex(gpu.index), axis=0)
    main = _ordered(main.assign(a_count=gpu["a_count"], b_count=gpu["b_count"]))
    rows = []
    for record in _records(main, "range"):
        key = record["range"]
        record["basis"] = basis[key]
        record["duration"] = {column: _plain(own.at[key, column]) for column in ROW_FIELDS if column in own}
        rows.append(record)
    return rows


def _stage_rows(stats: pd.DataFrame, counters: dict, rules: dict, min_change_pct: float,
                stage_pair: tuple[str, str] | None, main_kernels: dict, durations: pd.DataFrame | None = None) -> list[dict]:
    stats = _with_status(stats, min_change_pct)
    stats = stats.loc[sorted(stats.index, key=_stage_order)]
    rows = []
    for record in _records(stats, "stage"):
        key = record["stage"]
        parsed = parse_stage_range(key) or {}
        record.update({"op": parsed.get("op"), "size": parsed.get("size"), "label": _stage_label(parsed, stage_pair)})
        metrics = moved(*(_row(counters.get(side), key) for side in ("a", "b")))
        if metrics:
            record["metrics"] = metrics
        kernels = [main_kernels.get(side, {}).get(key) for side in ("a", "b")]
        record.update(rule_changes(*(None if rules.get(side) is None or kernel is None else rules[side].get(kernel, set())
                                     for side, kernel in zip(("a", "b"), kernels))))
        if durations is not None and key in durations.index and durations.at[key, "a_count"] and durations.at[key, "b_count"]:
            own = _not_called(_with_status(durations.loc[[key]], min_change_pct))
            record["duration"] = {column: _plain(value) for column, value in own.iloc[0].items() if column in ROW_FIELDS}
        rows.append(record)
    return rows


def _stage_label(parsed: dict, stage_pair: tuple[str, str] | None) -> str:
    """The stage part of a row's name: v5, or v5 -> v6 for a stage pair."""
    return f"{stage_pair[0]} -> {stage_pair[1]}" if stage_pair else parsed.get("stage", "?")


def _stage_order(key: str) -> tuple:
    parsed = parse_stage_range(key)
    if not parsed:
        return (1, key)
    from nsprof.sizes import parse_label

    digits = "".join(ch for ch in parsed["stage"] if ch.isdigit())
    return (0, parsed["op"], int(np.prod(parse_label(parsed["size"]))), int(digits or 0), key)


def _pair_key(key: str, stage_pair: tuple[str, str]) -> str:
    """A stage range re-keyed so that stage X of A and stage Y of B compare in one row."""
    parsed = parse_stage_range(key)
    assert parsed is not None  # _rekeyed keeps only stage ranges
    return f"nsprof:{parsed['op']}/{stage_pair[0]}->{stage_pair[1]}/{parsed['size']}"


def _rekeyed(frame: pd.DataFrame, stage: str, stage_pair: tuple[str, str]) -> pd.DataFrame:
    keep = [(parse_stage_range(key) or {}).get("stage") == stage for key in frame["key"]]
    chosen = frame[np.array(keep, dtype=bool)] if len(frame) else frame
    if chosen.empty:
        raise UsageError(f"no stage {stage} in the capture", "name stages the capture ran (see `nsprof analyze`)")
    return chosen.assign(key=[_pair_key(key, stage_pair) for key in chosen["key"]])


def _rekeyed_index(counters: pd.DataFrame, stage: str, stage_pair: tuple[str, str]) -> pd.DataFrame:
    keep = [(parse_stage_range(str(key)) or {}).get("stage") == stage for key in counters.index]
    chosen = counters[np.array(keep, dtype=bool)]
    return chosen.set_axis([_pair_key(key, stage_pair) for key in chosen.index])


def _main_kernels(stages: pd.DataFrame, stage: str | None, stage_pair) -> dict:
    """Stage key (re-keyed for a stage pair) -> the stage's main kernel (its rules are the stage's)."""
    if stages is None or stages.empty or "kernel" not in stages:
        return {}
    pairs = zip(stages["key"], stages["kernel"])
    if stage_pair:
        return {_pair_key(key, stage_pair): kernel for key, kernel in pairs
                if (parse_stage_range(key) or {}).get("stage") == stage}
    return dict(pairs)


def _rules_of(analysis: ProfileAnalysis) -> dict | None:
    return kernel_rules(analysis.rules) if analysis.rules is not None and len(analysis.rules) else None


def _row(frame: pd.DataFrame | None, key) -> pd.Series | None:
    return None if frame is None or key is None or key not in frame.index else frame.loc[key]


def _bench_frame(bench: dict) -> pd.DataFrame:
    rows = [r for r in bench["results"] if r.get("status") == "ok" and r.get("median_ms") is not None]
    frame = pd.DataFrame({
        "key": [f"nsprof:{r['op']}/{r['stage']}/{r['size']}" for r in rows],
        "median_ns": [r["median_ms"] * 1e6 for r in rows],
        "q1_ns": [(r.get("q1_ms") or np.nan) * 1e6 for r in rows],
        "q3_ns": [(r.get("q3_ms") or np.nan) * 1e6 for r in rows],
        "runs": [r.get("runs") or 0 for r in rows]})
    return frame.drop_duplicates("key", keep="last")


def _totals(a: Capture, b: Capture) -> list[dict]:
    sides = [_capture_totals(capture) for capture in (a, b)]
    rows = []
    for quantity in ("gpu_busy_ns", "kernel_ns", "copy_ns", "idle_ns"):
        before, after = sides[0].get(quantity), sides[1].get(quantity)
        change = 100 * (after / before - 1) if before and after is not None else None
        rows.append({"quantity": quantity, "a_ns": before, "b_ns": after, "change_pct": change})
    return rows


def _capture_totals(capture: Capture) -> dict:
    profile, analysis = capture.profiled()
    if not profile.nsys:
        kernels = analysis.kernels
        return {"kernel_ns": float(kernels["duration_ns"].sum())} if kernels is not None else {}
    busy = sum(device["busy_ns"] for device in analysis.gpu_utilization or [])
    span = sum(device["span_ns"] for device in analysis.gpu_utilization or [])
    return {
        "gpu_busy_ns": float(busy), "idle_ns": float(span - busy),
        "kernel_ns": float(sum(e.kernels["duration_ns"].sum() + e.graphs["duration_ns"].sum() for e in profile.nsys)),
        "copy_ns": float(sum(e.memcpys["duration_ns"].sum() + e.memsets["duration_ns"].sum() for e in profile.nsys)),
    }


def _contributors(kernels: list[dict]) -> list[dict]:
    """The kernels whose total time changed most, each with its share of all the movement (the sum
    of every kernel's absolute change): a net change can be small while kernels moved a lot both
    ways (fused kernels added, their eager parts removed), and a share of the net would pass 100%."""
    deltas = [(row["kernel"], row["b_total_ns"] - row["a_total_ns"]) for row in kernels]
    moved_ns = sum(abs(delta) for _, delta in deltas)
    ranked = sorted(deltas, key=lambda item: -abs(item[1]))[:TOP_CONTRIBUTORS]
    return [{"kernel": name, "delta_ns": delta, "share_pct": 100 * abs(delta) / moved_ns}
            for name, delta in ranked if delta]


def _count_warnings(kernels: list[dict]) -> list[str]:
    matched = [row for row in kernels if row["a_count"] and row["b_count"]]
    different = [row for row in matched if row["a_count"] != row["b_count"]]
    if not different:
        return []
    first = max(different, key=lambda row: row["a_total_ns"] + row["b_total_ns"])
    from nsprof.analyze.ladder import short_kernel_name

    return [f"{len(different)} of {len(matched)} kernels ran a different number of times "
            f"({short_kernel_name(first['kernel'])}: {first['a_count']} vs {first['b_count']}): "
            "totals compare different amounts of work; the medians do not"]


def _warnings(a: Capture, b: Capture) -> list[str]:
    warnings = []
    (a_profile, a_analysis), (b_profile, b_analysis) = a.profiled(), b.profiled()
    if a_analysis.gpu != b_analysis.gpu:
        warnings.append(f"different GPUs: A ran on {a_analysis.gpu or 'an unnamed GPU'}, "
                        f"B on {b_analysis.gpu or 'an unnamed GPU'}")
    versions = [sorted({e.nsys_version for e in p.nsys if e.nsys_version}) for p in (a_profile, b_profile)]
    if all(versions) and versions[0] != versions[1]:
        warnings.append(f"different nsys versions: A {', '.join(versions[0])}, B {', '.join(versions[1])}")
    warnings += _software_warnings(*(p.manifest or {} for p in (a_profile, b_profile)))
    return warnings


def _bench_warnings(a: dict, b: dict) -> list[str]:
    """What differs between the environments two bench records ran in."""
    envs = [bench.get("env") or {} for bench in (a, b)]
    warnings = []
    if envs[0].get("device") != envs[1].get("device"):
        warnings.append(f"different GPUs: A ran on {envs[0].get('device')}, B on {envs[1].get('device')}")
    for key in ("driver", "runtime_cuda", "cupy"):
        if envs[0].get(key) and envs[1].get(key) and envs[0][key] != envs[1][key]:
            warnings.append(f"different {key}: A {envs[0][key]}, B {envs[1][key]}")
    return warnings


def _software_warnings(a: dict, b: dict) -> list[str]:
    """Driver, CUDA and tool versions that two manifests both name and that differ."""
    def versions(manifest: dict) -> dict:
        found = {key: value for key, value in (manifest.get("software") or {}).items() if key in ("driver", "runtime_cuda")}
        found |= {f"{tool} version": (info or {}).get("version") for tool, info in (manifest.get("tools") or {}).items()
                  if tool != "nsys"}  # nsys's version comes from the exports themselves
        return {key: value for key, value in found.items() if value}

    ours, theirs = versions(a), versions(b)
    return [f"different {key}: A {ours[key]}, B {theirs[key]}" for key in ours if key in theirs and ours[key] != theirs[key]]


__all__ = ["ADDED", "FASTER", "MIN_SAMPLES", "NOT_CALLED", "REMOVED", "SAME", "SLOWER", "Capture", "DiffResult", "diff_captures",
           "profile_capture"]
