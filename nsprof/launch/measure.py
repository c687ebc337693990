"""Verification against the float64 reference and timing with CUDA events."""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from nsprof.launch import UNHELD, timing_method
from nsprof.launch.gpu import require_cupy
from nsprof.launch.rotation import active_rotation
from nsprof.ranges import NVTX_DOMAIN

TARGET_S = 0.25  # timed launches per stage and size fill about this long by default
WARMUP_S = 0.1  # untimed launches fill at least this long by default: an idle GPU's clocks ramp up first
MAX_WARMUP = 20_000

# The host queued ahead of the GPU (_timed): launches go in chunks, each behind a hold of the GPU long enough for
# the host to queue the whole chunk first (the host's time for the last chunk, HOLD_MARGIN times over), until a
# chunk shows the GPU slower than the host; from there the rest go in one run behind a hold of a few launches.
CHUNK = 32  # launches a hold covers: their commands (events around each) stay well inside the launch queue
FIRST_HOLD_S = 2e-3
HOLD_MARGIN = 1.5
MAX_HOLD_S = 0.05
RETRIES = 2  # a chunk the GPU reached first is timed again, held longer, at most this often
HOLD_SOURCE = r'''extern "C" __global__ void nsprof_hold(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}'''


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


@functools.cache
def _hold_kernel():
    return require_cupy().RawKernel(HOLD_SOURCE, "nsprof_hold")


def hold_gpu(seconds: float) -> None:
    """Queue a kernel that keeps the GPU busy for `seconds` (one thread reading the global timer): what is
    queued after it waits, so the host can get ahead."""
    _hold_kernel()((1,), (1,), (np.uint64(int(seconds * 1e9)),))


def held_for(hold_s: float):
    """Hold the GPU for `hold_s` (hold_gpu) and return an event recorded behind the hold: while it is not done, the
    GPU has not reached what the host queued after it. None (and no hold) where `hold_s` is 0."""
    if hold_s <= 0:
        return None
    hold_gpu(hold_s)
    held = require_cupy().cuda.Event(disable_timing=True)
    held.record()
    return held


def _queue(launches: Sequence[Callable[[], object]], range_name: str | None,
           hold_s: float) -> tuple[list[float], float, bool]:
    """Hold the GPU for `hold_s` (one thread reading the global timer), queue each launch between its own CUDA
    events, and wait for them: their times (ms), the host's seconds to queue them, and whether the host had
    queued them all before the hold ended (so no interval holds the GPU waiting for the host)."""
    cp = require_cupy()
    held = held_for(hold_s)
    events = [(cp.cuda.Event(), cp.cuda.Event()) for _ in launches]
    rotation = active_rotation()  # cold inputs: each launch on the next set of buffers (nsprof.launch.rotation)
    began = time.perf_counter()
    try:
        for launch, (start, end) in zip(launches, events):
            if rotation:
                rotation.step()
            with nvtx_range(range_name):
                start.record()
                launch()
                end.record()
    finally:
        if rotation:
            rotation.restore()
    host_s = time.perf_counter() - began
    ahead = held is not None and not held.done
    events[-1][1].synchronize()
    return [cp.cuda.get_elapsed_time(s, e) for s, e in events], host_s, ahead


def _timed(launches: Sequence[Callable[[], object]], range_name: str | None) -> list[float]:
    """Each launch's time (ms) between its own CUDA events, the host kept ahead of the GPU.

    An event pair times what the GPU did between them: where the host takes longer to queue a launch (Python,
    a library's call) than the GPU takes to run it, the GPU catches up, runs the start event at once and then
    waits for the kernel, so the interval holds the host's time too (at 128 x 4096 x 4096, a 14 us HGEMM, 30 us
    of it: benchmarks/records/2026-11-30-h200-hgemm-group-rows). So the launches go in chunks of CHUNK, each
    behind a hold of the GPU that outlasts the host's queuing of the chunk, and a chunk whose hold ended first
    is timed again behind a longer one (RETRIES times at most: a launch that waits for the GPU itself outlasts
    any hold). Once a chunk shows the GPU slower than the host, or no hold helped, the rest go in one run:
    the host then stays ahead of a GPU it never lets idle, as an HGEMM at its power limit would run. With
    NSPROF_HOLD=0 (nsprof profile's workload: a profiler must see the launches asked for and no holds between
    them) the launches go in one run, unheld."""
    if timing_method() == UNHELD:
        return _queue(launches, range_name, 0.0)[0]
    times: list[float] = []
    hold_s, done, alone, tries = FIRST_HOLD_S, 0, False, 0
    while done < len(launches):
        chunk = launches[done:] if alone else launches[done:done + CHUNK]
        chunk_times, host_s, ahead = _queue(chunk, range_name, hold_s)
        if not (ahead or alone) and tries < RETRIES:
            tries += 1
            hold_s = min(MAX_HOLD_S, 2 * hold_s + host_s)  # the GPU caught up: again, held longer
            continue
        times += chunk_times
        done += len(chunk)
        per_launch_host_s = host_s / len(chunk)
        # A chunk the host could not get ahead of, held longer too, waits on the GPU itself (a launch that
        # synchronizes: no hold helps it), so the rest go in one run, as do those of a GPU slower than the host.
        alone = alone or not ahead or float(np.median(chunk_times)) / 1e3 >= HOLD_MARGIN * per_launch_host_s
        hold_s = 4 * per_launch_host_s if alone else min(MAX_HOLD_S, HOLD_MARGIN * per_launch_host_s * CHUNK)
        tries = 0
    return times


def _event_times(launch, count: int, range_name: str | None, held: bool = True) -> list[float]:
    """`count` launches timed as _timed does, or (`held` False: warm-ups, which only need the GPU busy for a
    while) queued in one run with no hold."""
    return _timed([launch] * count, range_name) if held else _queue([launch] * count, range_name, 0.0)[0]


def warm_up(launch) -> list[float]:
    """At least 3 launches and WARMUP_S of them (at most MAX_WARMUP): microsecond kernels timed
    right after an idle spell otherwise run at the low clocks the GPU idled at."""
    times: list[float] = []
    while len(times) < MAX_WARMUP and (len(times) < 3 or sum(times) < WARMUP_S * 1e3):
        times += _event_times(launch, min(max(3, len(times)), MAX_WARMUP - len(times)), None, held=False)
    return times


def time_launches(launch, repeat: int | None = None, warmup: int | None = None,
                  range_name: str | None = None) -> Timing:
    """Warm up (outside any range; by default at least 3 launches and WARMUP_S), then time each
    launch with its own pair of CUDA events, the host kept ahead of the GPU (_timed).

    With no `repeat`, run enough launches to fill about TARGET_S (10 to 500 launches),
    using the warm-up launches to estimate the time of one.
    """
    warm_times = (warm_up(launch) if warmup is None else _event_times(launch, warmup, None, held=False)
                  if warmup > 0 else [])
    if repeat is None:
        per_launch_s = max(float(np.median(warm_times)) / 1e3, 1e-6) if warm_times else 1e-3
        repeat = int(min(500, max(10, TARGET_S / per_launch_s)))
    return Timing(_event_times(launch, repeat, range_name), len(warm_times))


def in_turn_medians(launches: Sequence[Callable[[], object]], rounds: int | None = None) -> list[float]:
    """Median ms of each of `launches`, launched in turn (ABC ABC ...), each launch between its own CUDA events
    (the host kept ahead of the GPU: _timed), after a warm-up of them all. A GPU at its power limit moves its
    clock within a run; timed one after the other, two kernels meet different clocks (h6 against torch.mm at
    4096^3 moved from 0.88 to 1.01 between rounds on an H100), while launched in turn they meet the same ones
    (0.994 to 0.999; benchmarks/records/2026-11-26-h100-paired-library/h100-paired-library.md). With no
    `rounds`, as many as fill about TARGET_S."""
    def each_in_turn() -> None:
        for launch in launches:
            launch()

    warm = warm_up(each_in_turn)
    if rounds is None:
        per_round_s = max(float(np.median(warm)) / 1e3, 1e-6)
        rounds = int(min(500, max(10, TARGET_S / per_round_s)))
    times = np.array(_timed(list(launches) * rounds, None))
    return [float(np.median(times[i::len(launches)])) for i in range(len(launches))]


def paired_medians(ours, theirs, pairs: int | None = None) -> tuple[float, float]:
    """Median ms of `ours` and of `theirs` launched alternately (ABAB: in_turn_medians), `pairs` of them."""
    ours_ms, theirs_ms = in_turn_medians([ours, theirs], pairs)
    return ours_ms, theirs_ms
