"""Back-to-back timing: a stage's launches in a chain, as a program runs kernels one after another, against the
library's (`nsprof bench --back-to-back`).

nsprof.launch.measure times each launch between its own CUDA events. An event between two kernels keeps the second
from starting before the first has finished, so what a kernel launched to overlap the one before it (a
programmatic dependent launch, as h6 is) hides, the gap between kernels and its blocks' set-up, never shows
there. Here a chain of launches goes behind one hold of the GPU (the host queues it all first), with an event
before the first and after the last only: the span over the launches is the time of one launch back to back. The
stage's chain and the library's run in turn, round after round, so that a clock that moves over a run moves both;
within a chain each kernel runs at the clock its own power draw allows, as in `--no-paired`
(benchmarks/records/2026-11-30-h200-hgemm-dependent-launch).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from nsprof.launch import UNHELD, timing_method
from nsprof.launch.gpu import require_cupy
from nsprof.launch.measure import FIRST_HOLD_S, HOLD_MARGIN, MAX_HOLD_S, held_for, warm_up
from nsprof.launch.rotation import active_rotation

CHAIN_S = 2e-3  # a chain lasts at least about this long: its two events and its first launch's start weigh little
MIN_CHAIN, MAX_CHAIN = 32, 512  # launches a chain (no events between: well inside the launch queue)
ROUNDS = 7  # chains of each, in turn


def chain_length(launch_ms: float) -> int:
    """Launches in a chain of kernels of `launch_ms` each: CHAIN_S of them, MIN_CHAIN to MAX_CHAIN."""
    return min(MAX_CHAIN, max(MIN_CHAIN, math.ceil(CHAIN_S * 1e3 / max(launch_ms, 1e-6))))


def time_chain(launch: Callable[[], object], count: int, hold_s: float) -> tuple[float, float, bool]:
    """Hold the GPU for `hold_s`, then queue `count` launches between one event before the first and one after the
    last, each on the next set of buffers where inputs rotate: the span (ms), the host's seconds to queue them, and
    whether the host had queued them all before the hold ended."""
    cp = require_cupy()
    held = held_for(hold_s)
    first, last = cp.cuda.Event(), cp.cuda.Event()
    rotation = active_rotation()
    began = time.perf_counter()
    first.record()
    try:
        for _ in range(count):
            if rotation:
                rotation.step()
            launch()
    finally:
        if rotation:
            rotation.restore()
    last.record()
    host_s = time.perf_counter() - began
    ahead = held is not None and not held.done
    last.synchronize()
    return cp.cuda.get_elapsed_time(first, last), host_s, ahead


def chained_medians(ours: Callable[[], object], theirs: Callable[[], object],
                    rounds: int = ROUNDS) -> tuple[float, float]:
    """Median ms a launch of `ours` and of `theirs` back to back: after a warm-up of both, a chain of each in turn
    for `rounds` rounds, each chain behind a hold the host outruns (HOLD_MARGIN times its last chain's queuing; a
    chain the GPU reached first is timed again behind a longer hold, once). Unheld where timing is (NSPROF_HOLD=0)."""
    warm = warm_up(lambda: (ours(), theirs()))
    count = chain_length(float(np.median(warm)) / 2)
    held = timing_method() != UNHELD
    hold_s = FIRST_HOLD_S if held else 0.0
    spans: tuple[list[float], list[float]] = ([], [])
    for _ in range(rounds):
        for times, launch in zip(spans, (ours, theirs)):
            span, host_s, ahead = time_chain(launch, count, hold_s)
            if held and not ahead:  # the GPU caught up with the host: again, held longer
                hold_s = min(MAX_HOLD_S, 2 * hold_s + host_s)
                span, host_s, _ = time_chain(launch, count, hold_s)
            times.append(span / count)
            if held:
                hold_s = min(MAX_HOLD_S, HOLD_MARGIN * host_s)
    return float(np.median(spans[0])), float(np.median(spans[1]))
