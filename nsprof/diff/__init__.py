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
Own durations (CPU time, and ranges that launched no GPU work) are `not called` (judge.not_called).
With fewer than MIN_SAMPLES launches on a side there is no interval and nothing is significant.

Here diff_captures puts the parts together: the sides and their instances (sides), how rows are
called (judge) and recorded (rows), the kernel, range and stage rows (kernels, ranges, stages), two
bench records (bench_records), the totals (totals), the warnings (caveats) and the result (result).
"""

from __future__ import annotations

from nsprof.diff.bench_records import bench_diff
from nsprof.diff.caveats import (
    capture_warnings,
    compiling_warnings,
    count_warnings,
    noise_gpu_warnings,
    runs_warnings,
    timing_source_warnings,
)
from nsprof.diff.host import host_rows
from nsprof.diff.judge import (
    ADDED,
    DEFAULT_MIN_CHANGE_PCT,
    FASTER,
    FEW_RUNS,
    NOT_CALLED,
    REMOVED,
    SAME,
    SLOWER,
    UNSTABLE,
    Judge,
    call_rows,
    floors_apply,
)
from nsprof.diff.kernels import compare_launch_runs, compare_launch_samples, kernel_rows
from nsprof.diff.loop import loop_change
from nsprof.diff.noise import NoiseFloor, default_noise
from nsprof.diff.ranges import capture_range_rows
from nsprof.diff.result import DiffResult
from nsprof.diff.sides import UNNAMED_GPU, Side, machines_apart, run_frames, side_instances
from nsprof.diff.stages import capture_stage_rows
from nsprof.diff.statistics import MIN_SAMPLES
from nsprof.diff.totals import contributors, totals
from nsprof.diff.types import LoopChange
from nsprof.diff.why import capture_rules
from nsprof.errors import UsageError


def diff_captures(a: Side, b: Side, min_change_pct: float = DEFAULT_MIN_CHANGE_PCT,
                  stage_pair: tuple[str, str] | None = None, attribution: str = "thread",
                  noise: NoiseFloor | None = None) -> DiffResult:
    """The diff of two captures (module docstring); both profiles or both bench records. With
    `stage_pair` (X, Y), stage X of A against stage Y of B (the same capture may be both). `noise`:
    the floors of a one-run diff (default: nsprof's own, noise.default_noise)."""
    if (a.bench is None) != (b.bench is None):
        raise UsageError(f"{a.name} and {b.name} are not the same kind of capture (a bench record and a profile)",
                         "compare two profiles, or two `nsprof bench` records")
    runs = {"a": a.run_count(), "b": b.run_count()}
    judge = _judge(a, b, runs, min_change_pct, stage_pair, noise)
    if a.bench is not None and b.bench is not None:
        return bench_diff(a, b, judge, stage_pair, runs)
    instances = {side: side_instances(capture, attribution) for side, capture in (("a", a), ("b", b))}
    analyses = {"a": a.analyzed(), "b": b.analyzed()}
    rules = {side: capture_rules(analyses[side]) for side in ("a", "b")}
    stages = capture_stage_rows(analyses, instances, rules, judge, stage_pair)
    warnings = capture_warnings(a, b) + runs_warnings(judge, runs) + noise_gpu_warnings(judge.noise, a, b)
    if stage_pair:
        sources = {side: "nsys" if len(instances[side]["stages"]) else "none" for side in ("a", "b")}
        return DiffResult(a.name, b.name, [], [], stages, [], [], warnings, judge.method, min_change_pct, stage_pair,
                          sources, runs, judge.noise, apart=judge.apart)
    kernels = kernel_rows(a, b, instances, rules, judge)
    ranges, unlinked = capture_range_rows(a, b, instances, judge)
    sources = {side: instances[side]["source"] for side in ("a", "b")}
    warnings += unlinked + count_warnings(kernels) + compiling_warnings(instances) + timing_source_warnings(sources)
    host = host_rows(*([run.analyzed().host for run in (capture, *capture.runs)] for capture in (a, b)))
    loop = _loop_change(a, b, min_change_pct)
    return DiffResult(a.name, b.name, kernels, ranges, stages, totals(a, b), contributors(kernels), warnings,
                      judge.method, min_change_pct, None, sources, runs, judge.noise, host, judge.apart, loop)


def _judge(a: Side, b: Side, runs: dict, min_change_pct: float, stage_pair: tuple[str, str] | None,
           noise: NoiseFloor | None) -> Judge:
    """How this diff calls its rows: across runs where a side has several; with `noise` floors (or
    nsprof's own) where floors_apply, never between two stages of one run."""
    across_runs = max(runs.values()) > 1
    # two stages of one capture ran in the same run: no variation between runs to allow for
    one_run = stage_pair is not None and a.name == b.name and not across_runs
    apart = machines_apart(a, b)
    floors = None if one_run or not floors_apply(runs["a"], runs["b"], apart) else noise or default_noise()
    return Judge(min_change_pct, across_runs, floors, apart)


def _loop_change(a: Side, b: Side, min_change_pct: float) -> LoopChange | None:
    """The change in the time an iteration of the program's loop takes (nsprof.diff.loop), over each side's runs."""
    loops = {side: [(run.analyzed().loop, run.analyzed().phases) for run in (capture, *capture.runs)]
             for side, capture in (("a", a), ("b", b))}
    return loop_change(loops["a"], loops["b"], min_change_pct)


__all__ = [
    "ADDED",
    "DEFAULT_MIN_CHANGE_PCT",
    "FASTER",
    "FEW_RUNS",
    "MIN_SAMPLES",
    "NOT_CALLED",
    "REMOVED",
    "SAME",
    "SLOWER",
    "UNNAMED_GPU",
    "UNSTABLE",
    "DiffResult",
    "Side",
    "call_rows",
    "compare_launch_runs",
    "compare_launch_samples",
    "diff_captures",
    "floors_apply",
    "run_frames",
]
