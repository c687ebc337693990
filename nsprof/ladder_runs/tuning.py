"""Choosing among ways to run one stage: a Triton stage's configurations, the library stages'
cuBLAS and cuBLASLt algorithms. Each candidate is built and launched once (compiled, planned:
never timed), verified against the float64 reference with a poisoned output (one that fails is
out, as one that cannot be built or launched here), then timed by the CUDA events every stage is
timed with (TUNE_WARMUP, TUNE_REPEAT). Every launch of a trial is in an NVTX range
tune/<op>/<stage>/<size>/<candidate> of its own, so that a capture counts the trials as harness work
(nsprof.analyze.harness.NSPROF_TUNING). The trials run one after the other, so at a GPU's power limit each
meets another clock: those within FINALIST_MARGIN of the fastest are timed again in turn (ABC ABC ...: one
clock for all, nsprof.launch.measure.in_turn_medians) and the fastest of that round is kept. The stage is then
verified on fresh inputs and timed like any other: a trial is never timed as the stage.

Why the second round: at 4096^3 on H200s the trials kept cuBLASLt's algorithm 3 in some runs and algorithm 0 or
cublasGemmEx in others, within 2% of each other; paired with h6, algorithm 3 was 2.5-3 points the faster
(benchmarks/records/2026-12-02-h200-hgemm-library-finalists), so a bench's "fastest library" depended on the
order of its trials. Timed in turn, algorithm 3 was 1.6-3.2% ahead of algorithms 0 and 1 in every run (three cards).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from nsprof.errors import KernelBuildError
from nsprof.ladder.op_model import Stage
from nsprof.ladder_runs.bench_types import CompiledFacts, StageDetails, Tuning, TuningTrial
from nsprof.launch.gpu import require_cupy
from nsprof.launch.measure import in_turn_medians, nvtx_range, time_launches
from nsprof.ranges import tune_range_name

TUNE_WARMUP = 5
TUNE_REPEAT = 20
# Trials this close to the fastest are timed again, in turn. One after the other, a trial's median moved by up to 13%
# from run to run (cublasGemmEx at 8192^3, tried first: 1436-1622 us; in turn 1712-1757; the record), so the
# margin is wide: it leaves out only the candidates far behind.
FINALIST_MARGIN = 0.25
MAX_FINALISTS = 8
FINALS = "finalists"  # the in-turn round's NVTX range: tune/<op>/<stage>/<size>/finalists
RULE = (f"of the candidates that verified, those whose median of {TUNE_REPEAT} launches after {TUNE_WARMUP} warm-up "
        f"was within {FINALIST_MARGIN:.0%} of the fastest (at most {MAX_FINALISTS}) timed again in turn, and the "
        "fastest median of that round kept; timed before the stage and never as it")


class TuningFailed(KernelBuildError):
    """No candidate built and verified: the stage is recorded as an error."""


@dataclass(frozen=True)
class Candidate:
    label: str  # how records and ranges name it: a Triton configuration, "cuBLASLt algo 3"
    build: Callable[[], Callable[[], object]]  # its launch; may raise where it cannot run here


@dataclass(frozen=True)
class Tuned:
    label: str  # the kept candidate's
    launch: Callable[[], object]
    first: object  # what its first (untimed) launch returned: what Triton compiled
    autotune: Tuning  # a record's details["autotune"]

    def launcher(self, compiled: CompiledFacts | None = None) -> TunedLauncher:
        """The kept candidate as a stage's launcher, its record's details the tuning and what Triton compiled."""
        launch = self.launch

        def run() -> None:
            launch()

        details: StageDetails = {"autotune": self.autotune}
        if compiled is not None:
            details["compiled"] = compiled
        return TunedLauncher(run, self.label, details, steps=dict(getattr(launch, "steps", {})))


@dataclass
class TunedLauncher:
    """nsprof.ladder.op_model.Launcher for the kept candidate, with the tuning in `details`."""

    run: Callable[[], None]
    tile_label: str
    details: StageDetails
    split_k: None = None
    padded_shape: None = None
    prepare: None = None
    prepare_name: None = None
    steps: dict = field(default_factory=dict)


def pinned(candidates: list[Candidate], label: str | None) -> list[Candidate]:
    """Only the candidate named `label` (one an earlier run kept: `nsprof bench --tuned`), where
    there is one; else every candidate."""
    chosen = [candidate for candidate in candidates if candidate.label == label]
    return chosen or candidates


def tune(stage: Stage, problem, candidates: list[Candidate]) -> Tuned:
    """Try every candidate on `problem` (module docstring) and keep the fastest that verified."""
    size = tuple(getattr(problem, dim) for dim in ("m", "n", "k") if hasattr(problem, dim))
    trials: list[TuningTrial] = []
    kept: dict[str, tuple[Callable, object]] = {}
    for candidate in candidates:
        trial, result = _trial(stage, problem, candidate, size)
        trials.append(trial)
        if result is not None:
            kept[candidate.label] = result
    if not kept:
        reasons = "; ".join(f"{trial['config']}: {trial['message']}" for trial in trials)
        raise TuningFailed(f"{stage.key}: no candidate built and verified ({reasons})",
                           "see the candidates in the record's details (nsprof bench --json)")
    best = _in_turn_fastest(finalists(trials), kept, tune_range_name(stage.op, stage.stage, size, FINALS))
    launch, first = kept[best["config"]]
    return Tuned(best["config"], launch, first, {"kept": best["config"], "trials": trials, "rule": RULE})


def finalists(trials: list[TuningTrial]) -> list[TuningTrial]:
    """The verified trials whose median is within FINALIST_MARGIN of the fastest, fastest first, at most
    MAX_FINALISTS."""
    ranked = sorted((trial for trial in trials if trial["status"] == "ok"), key=_median)
    limit = _median(ranked[0]) * (1 + FINALIST_MARGIN)
    return [trial for trial in ranked if _median(trial) <= limit][:MAX_FINALISTS]


def _median(trial: TuningTrial) -> float:
    """A verified trial's median (a trial that is not ok has none, and is never ranked)."""
    assert trial["median_ms"] is not None, trial
    return trial["median_ms"]


def _in_turn_fastest(final: list[TuningTrial], kept: dict[str, tuple[Callable, object]], range_name: str) -> TuningTrial:
    """The finalist with the fastest median timed in turn with the others (each trial gains its `in_turn_ms`);
    a lone finalist without another round."""
    if len(final) == 1:
        return final[0]
    with nvtx_range(range_name):
        medians = in_turn_medians([kept[trial["config"]][0] for trial in final])
    for trial, median in zip(final, medians):
        trial["in_turn_ms"] = median
    return min(final, key=lambda trial: trial["in_turn_ms"])


def _trial(stage: Stage, problem, candidate: Candidate, size) -> tuple[TuningTrial, tuple[Callable, object] | None]:
    """One candidate built, verified and timed: the trial's record, and its launch with what its
    first launch returned (None for a candidate that failed: the record says why)."""
    cp = require_cupy()
    trial: TuningTrial = {"config": candidate.label, "status": "ok", "message": None, "median_ms": None, "rel_error": None}
    with nvtx_range(tune_range_name(stage.op, stage.stage, size, candidate.label)):  # every launch of the trial
        try:
            launch = candidate.build()
            first = launch()  # compiles or plans: never timed
            problem.poison_output()
            launch()
            cp.cuda.Device().synchronize()
        except Exception as err:  # a candidate that cannot be built or launched here (too much shared memory)
            return {**trial, "status": "error", "message": first_line(err)}, None
        error = problem.relative_error()
        trial["rel_error"] = error
        if not error <= stage.tolerance(size):
            return {**trial, "status": "failed",
                    "message": f"relative error {error:.3g} exceeds {stage.tolerance(size):.3g}"}, None
        timing = time_launches(launch, repeat=TUNE_REPEAT, warmup=TUNE_WARMUP)
    return {**trial, "median_ms": timing.median_ms}, (launch, first)


def first_line(err: Exception) -> str:
    text = str(err).strip() or type(err).__name__
    return f"{type(err).__name__}: {text.splitlines()[0][:200]}"
