"""Verification against the float64 reference and timing with CUDA events."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from nsprof.launch.gpu import require_cupy
from nsprof.ranges import NVTX_DOMAIN

TARGET_S = 0.25  # timed launches per stage and size fill about this long by default
WARMUP_S = 0.1  # untimed launches fill at least this long by default: an idle GPU's clocks ramp up first
MAX_WARMUP = 20_000


def nvtx_range(name: str | None):
    """A push/pop range in the nsprof domain, or nothing when nvtx is absent or not wanted."""
    if name is None:
        return contextlib.nullcontext()
    try:
        import nvtx
    except ImportError:
        return contextlib.nullcontext()
    return nvtx.annotate(message=name, domain=NVTX_DOMAIN)


def verify(launcher, problem, range_name: str | None = None) -> float:
    """Poison the output with NaN, run the launcher's preparatory step if it has one (SGEMV's
    transpose, on the current inputs), launch once, and return the relative Frobenius error."""
    cp = require_cupy()
    problem.poison_output()
    if launcher.prepare:
        launcher.prepare()
    with nvtx_range(range_name):
        launcher.run()
    cp.cuda.Device().synchronize()
    return problem.relative_error()


@dataclass
class Timing:
    times_ms: list[float]
    warmup: int

    @property
    def median_ms(self) -> float:
        return float(np.median(self.times_ms))

    def summary(self) -> dict:
        t = np.asarray(self.times_ms)
        q1, med, q3 = np.percentile(t, [25, 50, 75])
        return {
            "median_ms": float(med),
            "q1_ms": float(q1),
            "q3_ms": float(q3),
            "min_ms": float(t.min()),
            "max_ms": float(t.max()),
            "spread_pct": float(100 * (q3 - q1) / med) if med > 0 else 0.0,
            "runs": int(t.size),
            "warmup": self.warmup,
        }


def _event_times(launch, count: int, range_name: str | None) -> list[float]:
    cp = require_cupy()
    starts = [cp.cuda.Event() for _ in range(count)]
    ends = [cp.cuda.Event() for _ in range(count)]
    for start, end in zip(starts, ends):
        with nvtx_range(range_name):
            start.record()
            launch()
            end.record()
    ends[-1].synchronize()
    return [cp.cuda.get_elapsed_time(s, e) for s, e in zip(starts, ends)]


def _warm_up(launch) -> list[float]:
    """At least 3 launches and WARMUP_S of them (at most MAX_WARMUP): microsecond kernels timed
    right after an idle spell otherwise run at the low clocks the GPU idled at."""
    times: list[float] = []
    while len(times) < MAX_WARMUP and (len(times) < 3 or sum(times) < WARMUP_S * 1e3):
        times += _event_times(launch, min(max(3, len(times)), MAX_WARMUP - len(times)), None)
    return times


def time_launches(launch, repeat: int | None = None, warmup: int | None = None,
                  range_name: str | None = None) -> Timing:
    """Warm up (outside any range; by default at least 3 launches and WARMUP_S), then time each
    launch with its own pair of CUDA events.

    With no `repeat`, run enough launches to fill about TARGET_S (10 to 500 launches),
    using the warm-up launches to estimate the time of one.
    """
    warm_times = _warm_up(launch) if warmup is None else _event_times(launch, warmup, None) if warmup > 0 else []
    if repeat is None:
        per_launch_s = max(float(np.median(warm_times)) / 1e3, 1e-6) if warm_times else 1e-3
        repeat = int(min(500, max(10, TARGET_S / per_launch_s)))
    return Timing(_event_times(launch, repeat, range_name), len(warm_times))


def paired_medians(ours, theirs, pairs: int | None = None) -> tuple[float, float]:
    """Median ms of `ours` and of `theirs` launched alternately (ABAB), each launch between its own
    CUDA events, after a warm-up of both. A GPU at its power limit moves its clock within a run; timed
    one after the other, two kernels meet different clocks (h6 against torch.mm at 4096^3 moved from
    0.88 to 1.01 between rounds on an H100), while launched in turn they meet the same ones (0.994 to
    0.999; benchmarks/records/2026-11-26-h100-paired-library/h100-paired-library.md). With no `pairs`, as
    many as fill about TARGET_S."""
    def both() -> None:
        ours()
        theirs()

    warm = _warm_up(both)
    if pairs is None:
        per_pair_s = max(float(np.median(warm)) / 1e3, 1e-6)
        pairs = int(min(500, max(10, TARGET_S / per_pair_s)))
    turns = [ours, theirs] * pairs
    cp = require_cupy()
    events = [(cp.cuda.Event(), cp.cuda.Event()) for _ in turns]
    for launch, (start, end) in zip(turns, events):
        start.record()
        launch()
        end.record()
    events[-1][1].synchronize()
    times = np.array([cp.cuda.get_elapsed_time(start, end) for start, end in events])
    return float(np.median(times[0::2])), float(np.median(times[1::2]))
