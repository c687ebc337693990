"""`nsprof diff A B`: did the change make it faster, how sure is that, and why (pure functions over
parsed and analyzed captures; nsprof.api.diff reads them).

- `kernels`: per kernel (paired by nsprof.diff.matching), its launches and median time on
  each side from every launch's duration (nsys's where the capture has nsys, else ncu's), the
  change and its interval (nsprof.diff.statistics), its status, and for ncu captures the
  counters that moved and the rules that appeared or went away (nsprof.diff.why).
- `ranges`: per NVTX range family (nsprof.analyze.families: names that differ only in per-instance
  ids, such as XLA's, are one row; not the ladder's stage ranges), over its instances: GPU time
  (the kernels, graphs and copies its calls launched, nsprof.analyze.nvtx_attribution), and the
  range's own duration as `duration`.
- `stages`: per ladder stage range, over its instances, the same; or the stages of two `nsprof
  bench` records; or one stage against another (`stage_pair`, v5 -> v6: the teaching answer).
- `totals`: GPU busy time, kernel time, copy time and idle time of each capture, and the kernels
  that account for most of the change in kernel time (`contributors`, each with its share of the
  summed absolute changes).
- `host`: the host side of a program's captures (nsprof.diff.host): each side's verdict, GPU
  busy, idle time by cause, launches and waits, per iteration.
- `loop`: the time an iteration of the program's loop takes on each side, with its interval, and
  each side's start-up (nsprof.diff.loop), where both sides have a loop.

A side is one capture, or several runs of one program (`nsprof profile --runs N`, a directory of
captures, `nsprof bench --runs N` records): with runs, each change is measured against the
variation between runs (statistics.compare_runs); with one run a side, that variation is
unmeasured, and a change is called only beyond the noise floor of its category of work (noise).

A status is `faster` or `slower` only when the interval excludes zero and the change is at least
`min_change_pct` (and, one run a side, the floor); `added` and `removed` are kernels (ranges,
stages) one side lacks; `unstable` ranges and stages run a different number of times between the
runs of a side, and kernels launched with other configurations between them, or in proportions of
their configurations that move their median (nsprof.diff.mix; one run a side too): their
medians compare different work; `compiled differently` kernels are those a compiler or its autotuner
chose otherwise in the two runs (nsprof.diff.compiled; each row says what differed in `compiled`),
never called either; else `same`. A jax.profiler trace's launches that no op of an executed XLA
module made (XLA's autotuning while it compiled) are left out of the kernels; a warning counts them.
Own durations (CPU time, and ranges that launched no GPU work) are `not called` (_not_called).
With fewer than MIN_SAMPLES launches on a side there is no interval and nothing is significant.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from nsprof.analyze.capture_analysis import CaptureAnalysis
from nsprof.analyze.families import family_column
from nsprof.diff.compiled import COMPILED, compile_work, differences, is_compiled_program
from nsprof.diff.host import host_rows
from nsprof.diff.loop import LoopChange, loop_change
from nsprof.diff.matching import match_kernels
from nsprof.diff.mix import as_runs, mix_moved
from nsprof.diff.noise import HOST_PACED, NoiseFloor, category, default_noise, range_kind
from nsprof.diff.statistics import (
    METHOD,
    MIN_SAMPLES,
    RUNS_METHOD,
    SUMMARY_METHOD,
    compare_runs,
    compare_samples,
    compare_summaries,
    discoveries,
)
from nsprof.diff.why import kernel_counters, kernel_rules, moved, rule_changes, stage_counters
from nsprof.errors import UsageError
from nsprof.ladder_analysis.capture import stages_of
from nsprof.ladder_analysis.work import work_key
from nsprof.ranges import parse_stage_range

FASTER, SLOWER, SAME, ADDED, REMOVED, UNSTABLE = "faster", "slower", "same", "added", "removed", "unstable"
APART_WARNING = ("A and B ran on different GPUs (no UUID in common): no run measures the variation between machines, "
                 "so a change is called only beyond the noise floor of its category, and not at all in work of 10-100 "
                 "us or copies (a machine moved unchanged 10-100 us kernels by 14%; a copy's speed is its host's bus); "
                 "capture both sides on one machine to decide them")
FEW_RUNS = 5  # with fewer runs on a side, the noise floors apply across runs too (floors_apply)
UNNAMED_GPU = "an unnamed GPU"  # a capture's GPU where it names none
NOT_CALLED = "not called"  # a CPU-side duration: shown with its interval, never called (_not_called)
DEFAULT_MIN_CHANGE_PCT = 2.0
TOP_CONTRIBUTORS = 5
ROW_FIELDS = ("a_count", "b_count", "a_median_ns", "b_median_ns", "change_pct", "ci_low_pct", "ci_high_pct",
              "status", "testable", "significant", "floor_pct", "floor", "undecided")
RUN_FIELDS = ("a_runs", "b_runs")  # rows of a diff across runs: how many runs of each side ran it


@dataclass(frozen=True)
class Capture:
    """One side of a diff: a capture's analysis (with the parts diff compares
    kept: its DIFF_PARTS), or an `nsprof bench` record."""

    name: str
    analysis: CaptureAnalysis | None = None
    bench: dict | None = None  # {"env", "results", ...} as `nsprof bench --save-as` writes it
    runs: tuple[Capture, ...] = ()  # the program's further runs, each a capture of its own (not bench records)

    def run_count(self) -> int:
        """How many runs the side holds: a bench record's runs, else this capture and its further runs."""
        if self.bench is not None:
            return int(self.bench.get("runs") or 1)
        return 1 + len(self.runs)

    def analyzed(self) -> CaptureAnalysis:
        """The capture's analysis (diff_captures reads it only when neither side is a bench record)."""
        if self.analysis is None:
            raise TypeError(f"{self.name} is a bench record, not a profile")
        return self.analysis

    def gpus(self) -> list[str]:
        """The GPUs this capture and its further runs ran on, by name (UNNAMED_GPU where a run names
        none), sorted: more than one, and the runs pool machines of different kinds."""
        return sorted({run.analyzed().gpu or UNNAMED_GPU for run in (self, *self.runs)})


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
    time_source: dict = field(default_factory=dict)  # side -> "nsys" (or the timeline's tool), "ncu" or "bench"
    runs: dict = field(default_factory=dict)  # side -> how many runs it holds
    noise: NoiseFloor | None = None  # the floors a one-run diff called changes beyond
    host: dict | None = None  # nsprof.diff.host.host_rows: the host side of two programs' captures
    apart: bool = False  # the sides ran on different GPUs: work of 10-100 us and copies were not called (noise.MACHINE_PACED)
    loop: LoopChange | None = None  # nsprof.diff.loop: the time an iteration takes, where both sides have a loop

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


@dataclass(frozen=True)
class _Judge:
    """How a diff compares and calls its rows: across runs when a side has several, else within
    one run a side; beyond the noise floor of each row's category wherever the variation between
    runs, or between the sides' machines, is unmeasured (`noise`; module docstring)."""

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
            return _with_status(stats, host_paced, unstable, significant).assign(
                floor_pct=np.nan, floor=categories.where(categories.isin(HOST_PACED)), undecided=False)
        # the floor of each row's category (inf: work too short, or a category unmeasured)
        floor = pd.Series([self.noise.of(name, kind, self.apart) for name, kind in zip(categories, kinds)],
                          index=stats.index)
        threshold = np.maximum(floor, self.min_change_pct)
        called = _with_status(stats, threshold, unstable, significant)
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
    return _Judge(min_change_pct, noise is None if across_runs is None else across_runs, noise, apart).called(stats, kinds)


def floors_apply(runs_a: int, runs_b: int, apart: bool) -> bool:
    """Whether a change must also pass the noise floor of its category: one run a side (the variation
    between runs unmeasured), fewer than FEW_RUNS on a side (too few run medians to tell a change
    from processes that cluster: three runs against three unchanged called 2-5% changes in 7 of 580
    splits of one day's runs, none with the floors; benchmarks/records/2026-11-28-h200-noise-corpus),
    or runs of two machines (`apart`: no variation between machines measured)."""
    return min(runs_a, runs_b) < FEW_RUNS or apart


def machines_apart(a: Capture, b: Capture) -> bool:
    """Whether the two sides ran on no GPU in common (by UUID; False where a capture does not say):
    then neither side's runs measure the variation between the machines."""
    ids = [{gpu for run in (side, *side.runs) if run.analysis is not None for gpu in run.analysis.gpu_ids}
           for side in (a, b)]
    return bool(ids[0]) and bool(ids[1]) and not ids[0] & ids[1]


def diff_captures(a: Capture, b: Capture, min_change_pct: float = DEFAULT_MIN_CHANGE_PCT,
                  stage_pair: tuple[str, str] | None = None, attribution: str = "thread",
                  noise: NoiseFloor | None = None) -> DiffResult:
    """The diff of two captures (module docstring); both profiles or both bench records. With
    `stage_pair` (X, Y), stage X of A against stage Y of B (the same capture may be both). `noise`:
    the floors of a one-run diff (default: nsprof's own, noise.default_noise)."""
    if (a.bench is None) != (b.bench is None):
        raise UsageError(f"{a.name} and {b.name} are not the same kind of capture (a bench record and a profile)",
                         "compare two profiles, or two `nsprof bench` records")
    runs = {"a": a.run_count(), "b": b.run_count()}
    across_runs = max(runs.values()) > 1
    # two stages of one capture ran in the same run: no variation between runs to allow for
    one_run = stage_pair is not None and a.name == b.name and not across_runs
    apart = machines_apart(a, b)
    floors = None if one_run or not floors_apply(runs["a"], runs["b"], apart) else noise or default_noise()
    judge = _Judge(min_change_pct, across_runs, floors, apart)
    if a.bench is not None and b.bench is not None:
        return _bench_diff(a, b, judge, stage_pair, runs, apart)
    instances = {side: _side_instances(capture, attribution) for side, capture in (("a", a), ("b", b))}
    stage_a, stage_b = (_rekeyed(instances["a"]["stages"], stage_pair[0], stage_pair),
                        _rekeyed(instances["b"]["stages"], stage_pair[1], stage_pair)) if stage_pair else \
        (instances["a"]["stages"], instances["b"]["stages"])
    analyses = {"a": a.analyzed(), "b": b.analyzed()}
    counters = {side: stage_counters(stages_of(analyses[side])) for side in ("a", "b")}
    if stage_pair:
        counters = {"a": _rekeyed_index(counters["a"], stage_pair[0], stage_pair),
                    "b": _rekeyed_index(counters["b"], stage_pair[1], stage_pair)}
    main_kernels = {side: _main_kernels(stages_of(analyses[side]), stage_pair[index] if stage_pair else None, stage_pair)
                    for index, side in enumerate(("a", "b"))}
    rules = {side: _rules_of(analyses[side]) for side in ("a", "b")}
    stages = _stage_rows(judge.called(judge.compare(*_values(stage_a, stage_b, "gpu_time_ns")), "ranges"),
                         counters, rules, judge, stage_pair, main_kernels,
                         judge.compare(*_values(stage_a, stage_b, "duration_ns")))
    warnings = _warnings(a, b) + _runs_warnings(judge, runs, apart) + _noise_gpu_warnings(judge.noise, a, b)
    if stage_pair:
        sources = {side: "nsys" if len(instances[side]["stages"]) else "none" for side in ("a", "b")}
        return DiffResult(a.name, b.name, [], [], stages, [], [], warnings, judge.method, min_change_pct, stage_pair,
                          sources, runs, judge.noise, apart=judge.apart)
    kernels = _kernel_rows(a, b, instances, rules, judge)
    unlinked = [side.upper() for side, capture in (("a", a), ("b", b)) if not _links_work_to_calls(capture)]
    # a side whose GPU work no range can own (no CUDA calls to link it through) would read "-100% faster"
    range_a, range_b = (instances[side]["ranges"] for side in ("a", "b"))
    if unlinked:
        range_a, range_b = range_a.assign(gpu_time_ns=0.0), range_b.assign(gpu_time_ns=0.0)
    ranges = _range_rows(range_a, range_b, judge)
    if unlinked and ranges:
        warnings.append(f"{' and '.join(unlinked)} link{'s' if len(unlinked) == 1 else ''} the GPU's work to no CUDA "
                        "call (no runtime table, or correlation ids missing): no range's GPU time can be measured, so "
                        "ranges are compared by their own durations (not called); capture with nsys -t cuda "
                        "(nsprof profile does)")
    warnings += _count_warnings(kernels) + _compiling_warnings(instances)
    sources = {side: instances[side]["source"] for side in ("a", "b")}
    if sources["a"] != sources["b"] and "ncu" in sources.values():  # two timelines' tools: _warnings says so
        warnings.append(f"A's kernel times are {sources['a']}'s and B's {sources['b']}'s (ncu replays each launch "
                        "with cold caches): the kernel changes compare different clocks")
    host = host_rows(*([run.analyzed().host for run in (capture, *capture.runs)] for capture in (a, b)))
    loops = {side: [(run.analyzed().loop, run.analyzed().phases) for run in (capture, *capture.runs)]
             for side, capture in (("a", a), ("b", b))}
    loop = loop_change(loops["a"], loops["b"], min_change_pct)
    return DiffResult(a.name, b.name, kernels, ranges, stages, _totals(a, b), _contributors(kernels), warnings,
                      judge.method, min_change_pct, None, sources, runs, judge.noise, host, judge.apart, loop)


def _bench_diff(a: Capture, b: Capture, judge: _Judge, stage_pair: tuple[str, str] | None, runs: dict,
                apart: bool) -> DiffResult:
    """Two `nsprof bench` records: by their runs' medians where both kept them (bench --runs),
    else by each record's median, quartiles and launch count."""
    assert a.bench is not None and b.bench is not None
    with_runs = all(any(r.get("run_medians_ms") for r in bench["results"]) for bench in (a.bench, b.bench))
    frames = [_bench_runs_frame(a.bench), _bench_runs_frame(b.bench)] if with_runs else \
        [_bench_frame(a.bench), _bench_frame(b.bench)]
    if stage_pair:
        frames = [_rekeyed(frame, stage, stage_pair) for frame, stage in zip(frames, stage_pair)]
    common = set(frames[0]["key"]) & set(frames[1]["key"])
    only = [len(set(frame["key"]) - common) for frame in frames]
    skipped = [f"{n} stage and size record{'s' if n > 1 else ''} only in {side}, not compared"
               for n, side in zip(only, "AB") if n]
    frames = [frame[frame["key"].isin(common)] for frame in frames]
    stats = compare_runs(*frames) if with_runs else compare_summaries(*frames)
    stages = _stage_rows(judge.called(stats, "kernels"), {}, {}, judge, stage_pair, {})
    warnings = _bench_warnings(a.bench, b.bench) + skipped + _runs_warnings(judge, runs, apart)
    return DiffResult(a.name, b.name, [], [], stages, [], [], warnings, RUNS_METHOD if with_runs else SUMMARY_METHOD,
                      judge.min_change_pct, stage_pair, {"a": "bench", "b": "bench"}, runs, judge.noise, apart=judge.apart)


def _noise_gpu_warnings(noise: NoiseFloor | None, a: Capture, b: Capture) -> list[str]:
    """A noise record measured on another kind of GPU than the sides': its floors may not hold."""
    if noise is None or noise.gpu is None:
        return []
    others = sorted(set(a.gpus() + b.gpus()) - {noise.gpu, UNNAMED_GPU})
    return [f"the noise record's floors were measured on an {noise.gpu}, and the sides ran on {' and '.join(others)}: "
            "another kind of GPU moves unchanged work by other amounts; measure floors there (nsprof noise RUNS "
            "--out FILE)"] if others else []


def _runs_warnings(judge: _Judge, runs: dict, apart: bool) -> list[str]:
    """What the runs can and cannot tell, as the diff's warnings (floors_apply says why floors apply)."""
    if judge.across_runs:
        alone = [side.upper() for side, count in runs.items() if count == 1]
        found = [f"{alone[0]} is one run: it borrows the other side's variation between runs"] if alone else []
        if judge.noise is not None and min(runs.values()) < FEW_RUNS:
            found.append(f"fewer than {FEW_RUNS} runs on a side: too few to tell a change from runs that cluster, so a "
                         f"change is also called only beyond the noise floor of its category; capture {FEW_RUNS} runs a "
                         f"side (nsprof profile --runs {FEW_RUNS}) to decide the rest")
        if judge.noise is not None and apart:
            found.append(APART_WARNING)
        return found
    if judge.noise is None:  # two stages of one run
        return []
    return ["one run a side: the variation between runs is unmeasured, so a change is called only beyond the noise "
            "floor of its category (the note under the tables); capture several runs (nsprof profile --runs 5) to measure it",
            *([APART_WARNING] if apart else [])]


def run_frames(capture: Capture, attribution: str = "thread") -> list[dict[str, pd.DataFrame]]:
    """Per run of `capture`, its kernels' launch times (and launch configurations) and its copy
    and other ranges' GPU times (stages among the ranges), as (key, value_ns) frames:
    noise.measure_noise's input."""
    frames = []
    for run in (capture, *capture.runs):
        found = _instances(run, attribution)
        ranges = pd.concat([found["ranges"], found["stages"]], ignore_index=True) \
            .rename(columns={"gpu_time_ns": "value_ns"})
        copies = ranges["kind"] != "ranges"
        launches = found["launches"]
        frames.append({"kernels": pd.DataFrame({"key": launches["name"], "value_ns": launches["value_ns"],
                                                "config": launches.get("config", ""), "kind": "kernels"}),
                       "copies": ranges[copies][["key", "value_ns", "kind"]],
                       "ranges": ranges[~copies][["key", "value_ns", "kind"]]})
    return frames


def _side_instances(capture: Capture, attribution: str) -> dict:
    """_instances of every run of a side, each frame numbering its run in `run` (0 the first)."""
    per_run = [_instances(run, attribution) for run in (capture, *capture.runs)]
    side = {"source": per_run[0]["source"], "compiling": sum(found["compiling"] for found in per_run)}
    for part in ("launches", "ranges", "stages"):
        side[part] = pd.concat([found[part].assign(run=number) for number, found in enumerate(per_run)], ignore_index=True)
    return side


def _instances(capture: Capture, attribution: str) -> dict:
    """Per-launch kernel times ("launches": name, start_ns, value_ns, and "source"),
    and per-instance range and stage figures ("ranges", "stages": key, gpu_time_ns, duration_ns)."""
    analysis = capture.analyzed()
    if analysis.launch_times is not None and analysis.range_instances is not None:
        launches, source, attributed = analysis.launch_times, analysis.timeline_tool, analysis.range_instances
        # gpu_time_ns is kernel_ns + copy_ns already (nvtx_attribution; the diff once added copy_ns again)
        none = pd.Series(0.0, index=attributed.index)
        copies, pageable = (attributed.get(column, none) for column in ("copy_ns", "pageable_ns"))
        gpu_time = attributed["gpu_time_ns"]
        # ranges pair by family (nsprof.analyze.families): XLA's ids differ between runs of one program
        instances = pd.DataFrame({"key": family_column(attributed["range"]), "gpu_time_ns": gpu_time,
                                  "duration_ns": attributed["duration_ns"].astype("float64"),
                                  "kind": range_kind(copies, gpu_time, pageable)})
        stage_keys = {key for key in pd.unique(instances["key"]) if parse_stage_range(key) is not None}
        is_stage = instances["key"].isin(stage_keys).to_numpy()
        ranges, stages = instances[~is_stage], instances[is_stage]
        compiling = compile_work(launches, source, ranges["key"])
        launches = launches[~compiling]
    elif analysis.kernels is not None:
        kernels = analysis.kernels
        launches = pd.DataFrame({"name": kernels["kernel"].astype(str),
                                 "start_ns": np.arange(len(kernels)), "value_ns": kernels["duration_ns"]}).dropna()
        source = "ncu"
        keys = pd.Series([work_key(nvtx, kernel) for nvtx, kernel in zip(kernels["nvtx"], kernels["kernel"])])
        on_stage = keys.map(lambda key: parse_stage_range(key) is not None).to_numpy(dtype=bool)
        # ncu runs each launch alone, so a stage's GPU time per launch is that launch's duration
        stages = pd.DataFrame({"key": keys[on_stage].to_numpy(), "gpu_time_ns": kernels["duration_ns"].to_numpy()[on_stage],
                               "duration_ns": np.nan, "kind": "ranges"})
        ranges = pd.DataFrame(columns=["key", "gpu_time_ns", "duration_ns", "kind"])
        compiling = pd.Series(False)
    else:
        raise UsageError(f"{capture.name}: no kernel launches to compare", "pass an nsys or ncu capture")
    return {"launches": launches, "source": source, "ranges": ranges, "stages": stages,
            "compiling": int(compiling.sum())}


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


def _values(a: pd.DataFrame, b: pd.DataFrame, column: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(key, run, value_ns) of each side's `column`, rows without a value dropped."""
    return tuple(frame[["key", "run", column]].rename(columns={column: "value_ns"}).dropna() for frame in (a, b))


def _with_status(stats: pd.DataFrame, threshold: float | pd.Series, unstable: pd.Series,
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


def _not_called(stats: pd.DataFrame) -> pd.DataFrame:
    """Own durations (CPU time) keep their change and interval but are never called faster or
    slower: CPU time drifts between runs far more than the interval, taken within one run, says
    (the same training step run twice, unchanged, read +12% [+8%, +19%])."""
    called = stats["status"].isin([FASTER, SLOWER, SAME])
    return stats.assign(status=stats["status"].where(~called, NOT_CALLED))


def _ordered(rows: pd.DataFrame) -> pd.DataFrame:
    """Largest changes first: significant ones, then added and removed (by time), then the rest
    (unstable ones among them)."""
    rank = rows["status"].map({FASTER: 0, SLOWER: 0, ADDED: 1, REMOVED: 1}).fillna(2)
    rank = rank.where(~(rows["status"] == NOT_CALLED) | ~rows["significant"].astype(bool), 0)
    size = rows["change_pct"].abs().fillna(-1).where(rank != 1, rows[["a_total_ns", "b_total_ns"]].max(axis=1))
    return rows.assign(_rank=rank, _size=-size).sort_values(["_rank", "_size"], kind="stable").drop(columns=["_rank", "_size"])


def _records(stats: pd.DataFrame, label: str) -> list[dict]:
    rows = []
    for key, row in stats.iterrows():
        record = {label: key}
        for column in ROW_FIELDS + RUN_FIELDS:
            if column in row:  # runs: compared across runs (statistics.compare_runs)
                record[column] = _plain(row[column])
        if isinstance(row.get("compiled"), str):
            record["compiled"] = row["compiled"]
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


def _kernel_rows(a: Capture, b: Capture, instances: dict, rules: dict, judge: _Judge) -> list[dict]:
    launches = {side: instances[side]["launches"] for side in ("a", "b")}
    matches = match_kernels(launches["a"], launches["b"])
    keyed = {}
    for side in ("a", "b"):
        key_of = dict(zip(*matches[matches["side"] == side][["name", "key"]].to_numpy().T)) if len(matches) else {}
        keyed[side] = pd.DataFrame({"key": launches[side]["name"].map(key_of), "value_ns": launches[side]["value_ns"],
                                    "run": launches[side]["run"], "config": launches[side].get("config", ""),
                                    "operator": launches[side].get("operator")})
    if judge.across_runs:
        compared = compare_launch_runs(keyed["a"], keyed["b"])
    else:  # one run a side: a mix of configurations in other proportions is unstable too
        compared = compare_samples(keyed["a"], keyed["b"])
        compared["unstable"] = compared.index.isin(mix_moved(as_runs(keyed["a"], keyed["b"])))
    compiled = all(is_compiled_program(instances[side]["ranges"]["key"], instances[side]["source"]) for side in "ab")
    reasons = differences(keyed["a"], keyed["b"], compiled)
    compared["compiled"] = compared.index.map(reasons)
    stats = _ordered(judge.called(compared, "kernels"))
    stats[["a_total_ns", "b_total_ns"]] = stats[["a_total_ns", "b_total_ns"]].fillna(0)
    a_names = matches[(matches["side"] == "a")].set_index("key")["name"]
    matched_by = matches.drop_duplicates("key", keep="last").set_index("key")["matched_by"]
    counters = {side: kernel_counters(capture.analyzed().kernels) for side, capture in (("a", a), ("b", b))}
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


def _range_rows(a: pd.DataFrame, b: pd.DataFrame, judge: _Judge) -> list[dict]:
    kinds = pd.concat([a, b]).drop_duplicates("key").set_index("key")["kind"]  # copies or ranges, A's first
    gpu = judge.called(judge.compare(*_values(a, b, "gpu_time_ns")), kinds)
    own = _not_called(judge.called(judge.compare(*_values(a, b, "duration_ns")), kinds))
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


def _stage_rows(stats: pd.DataFrame, counters: dict, rules: dict, judge: _Judge,
                stage_pair: tuple[str, str] | None, main_kernels: dict, durations: pd.DataFrame | None = None) -> list[dict]:
    """Stage rows from `stats` already called (judge.called); `durations`, the stages' own
    durations, not yet."""
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
            own = _not_called(judge.called(durations.loc[[key]], "ranges"))
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


def _rules_of(analysis: CaptureAnalysis) -> dict | None:
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


def _bench_runs_frame(bench: dict) -> pd.DataFrame:
    """(key, run, value_ns): each run's median of each stage of a `bench --runs` record."""
    rows = [(f"nsprof:{r['op']}/{r['stage']}/{r['size']}", run, median * 1e6)
            for r in bench["results"] if r.get("status") == "ok"
            for run, median in enumerate(r.get("run_medians_ms") or [])]
    return pd.DataFrame(rows, columns=["key", "run", "value_ns"]).drop_duplicates(["key", "run"], keep="last")


def _totals(a: Capture, b: Capture) -> list[dict]:
    """GPU busy, kernel, copy and idle time of each side: a run's, the mean of its runs' where it has several."""
    sides = [_mean_totals([_capture_totals(run) for run in (capture, *capture.runs)]) for capture in (a, b)]
    rows = []
    for quantity in ("gpu_busy_ns", "kernel_ns", "copy_ns", "idle_ns"):
        before, after = sides[0].get(quantity), sides[1].get(quantity)
        change = 100 * (after / before - 1) if before and after is not None else None
        rows.append({"quantity": quantity, "a_ns": before, "b_ns": after, "change_pct": change})
    return rows


def _mean_totals(runs: list[dict]) -> dict:
    return {quantity: float(np.mean([run[quantity] for run in runs])) for quantity in runs[0]
            if all(quantity in run for run in runs)}


def _capture_totals(capture: Capture) -> dict:
    analysis = capture.analyzed()
    if analysis.gpu_totals is None:
        kernels = analysis.kernels
        return {"kernel_ns": float(kernels["duration_ns"].sum())} if kernels is not None else {}
    busy = sum(device["busy_ns"] for device in analysis.gpu_utilization or [])
    span = sum(device["span_ns"] for device in analysis.gpu_utilization or [])
    return {"gpu_busy_ns": float(busy), "idle_ns": float(span - busy), **analysis.gpu_totals}


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
    def per_run(row: dict, side: str) -> float:  # across runs, counts are summed over the side's runs
        return row[f"{side}_count"] / row.get(f"{side}_runs", 1)

    matched = [row for row in kernels if row["a_count"] and row["b_count"]]
    different = [row for row in matched if per_run(row, "a") != per_run(row, "b")]
    if not different:
        return []
    first = max(different, key=lambda row: row["a_total_ns"] + row["b_total_ns"])
    from nsprof.kernel_names import short_kernel_name

    counts = f"{per_run(first, 'a'):g} vs {per_run(first, 'b'):g}{' a run' if 'a_runs' in first else ''}"
    return [f"{len(different)} of {len(matched)} kernels ran a different number of times "
            f"({short_kernel_name(first['kernel'])}: {counts}): totals compare different amounts of work; the medians do not"]


LINKED_SHARE = 0.5  # of a side's kernels linked to their launch calls: fewer, and no range's GPU time can be told


def _links_work_to_calls(capture: Capture) -> bool:
    """Whether a side's capture links most of its GPU work to the CUDA calls that launched it (what
    gives a range its GPU time; the host side's `undecided` below it). An ncu-only side has no
    ranges to judge."""
    share = capture.analyzed().linked_share
    return share is None or share >= LINKED_SHARE


def _compiling_warnings(instances: dict) -> list[str]:
    counts = {side: instances[side]["compiling"] for side in ("a", "b")}
    if not any(counts.values()):
        return []
    return [f"left out of the kernels: {counts['a']:,} launches in A and {counts['b']:,} in B that no op of a module "
            "the program executed made (XLA's autotuning while it compiled: not the program's work)"]


def _warnings(a: Capture, b: Capture) -> list[str]:
    warnings = []
    a_analysis, b_analysis = a.analyzed(), b.analyzed()
    if a_analysis.gpu != b_analysis.gpu:
        warnings.append(f"different GPUs: A ran on {a_analysis.gpu or UNNAMED_GPU}, B on {b_analysis.gpu or UNNAMED_GPU}")
    versions = [list(analysis.nsys_versions) for analysis in (a_analysis, b_analysis)]
    if a_analysis.timeline_tool != b_analysis.timeline_tool:
        warnings.append(f"two tools: A traced by {a_analysis.timeline_tool}, B by {b_analysis.timeline_tool}; kernels pair "
                        "by name as both demangle it, and each tool's overhead is in its own times")
    elif all(versions) and versions[0] != versions[1]:
        warnings.append(f"different nsys versions: A {', '.join(versions[0])}, B {', '.join(versions[1])}")
    warnings += _software_warnings(*(analysis.manifest or {} for analysis in (a_analysis, b_analysis)))
    return warnings + [line for side, capture in (("A", a), ("B", b)) for line in _mixed_runs(side, capture)]


def _mixed_runs(side: str, capture: Capture) -> list[str]:
    """Where the runs of one side ran on different GPUs or were captured by different nsys versions:
    they are pooled as one program's runs, so their variation includes the machines' or the tools'."""
    if not capture.runs:
        return []
    found = []
    if len(gpus := capture.gpus()) > 1:
        found.append(f"{side}'s runs ran on {len(gpus)} kinds of GPU ({', '.join(gpus)}) and are pooled: their variation "
                     "includes the GPUs'; compare runs of one GPU")
    versions = sorted({version for run in (capture, *capture.runs) for version in run.analyzed().nsys_versions})
    if len(versions) > 1:
        found.append(f"{side}'s runs were captured by {len(versions)} nsys versions ({', '.join(versions)}) and are pooled")
    return found


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


__all__ = ["ADDED", "FASTER", "MIN_SAMPLES", "NOT_CALLED", "REMOVED", "SAME", "SLOWER", "UNSTABLE", "Capture", "DiffResult",
           "diff_captures", "run_frames"]
