"""A program's capture in phases around its loop (nsprof.analyze.iterations): start-up (from the
first CUDA call or GPU operation to the steady state's first iteration: context and module loading,
allocation, compilation and autotuning, each kernel's first launches, the loop's warm-up
iterations), the loop (its steady iterations), and the tail (after the loop's last iteration).
Pure functions over one nsys export.

Each phase says how busy the GPU was; start-up and the tail say where the host's time went too (the
loop's is the host side's to weigh: nsprof.analyze.host_side), from the CUDA calls the capture holds
(nsprof.analyze.host_calls's kinds, summed over the loop's process's calls; calls on several threads
at once are each counted): module loading, allocation, waiting for the GPU, copies and launches.
The rest of the phase, outside CUDA calls, is told apart by the CPU samples of the process's most
sampled thread there, where the capture holds samples (nsys's defaults take them): each sample's
activity (nsprof.analyze.host_activity.sample_activities: Python, compiling, library set-up,
numerical work, the profiler, other code; importing modules wherever the chain holds Python's import
machinery or the dynamic loader, whatever its leaf) counts one sampling interval (the thread's
median spacing of samples), the samples in CUDA calls left out (the calls are timed above); what the
thread's samples do not cover of that rest is time it was not running (waiting on a lock, I/O,
worker processes such as a compiler's). Without samples the rest is one part, `outside CUDA calls`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from nsprof.analyze.gpu_events import gpu_events, merged_intervals
from nsprof.analyze.host_activity import (
    COMPILING,
    CUDA_CALLS,
    IMPORTING,
    INTERPRETER,
    LIBRARY,
    NUMERICAL,
    PROFILER,
    importing,
    sample_activities,
)
from nsprof.analyze.host_activity import OTHER as OTHER_CODE
from nsprof.analyze.host_calls import ALLOCATION, COPY, KINDS, LAUNCH, LOADING, OTHER, WAIT, call_kinds
from nsprof.analyze.iterations import Loop
from nsprof.analyze.loop_types import PhaseJson
from nsprof.parse.model import GpuTimeline, id_values, linux_pid

STARTUP, LOOP, TAIL = "start-up", "loop", "tail"
OUTSIDE = "outside CUDA calls"
NOT_RUNNING = "not running (waiting, I/O)"
SAMPLED_PARTS = {IMPORTING: IMPORTING, INTERPRETER: "Python", COMPILING: "compiling", LIBRARY: "library set-up",
                 NUMERICAL: "numerical work on the host", PROFILER: "the profiler", OTHER_CODE: "other host code"}
MIN_PHASE_SAMPLES = 10  # fewer samples of a phase tell its host time apart no better than one part
PART_NAMES = {LAUNCH: "launch calls", WAIT: "waits for the GPU", COPY: "copy calls", LOADING: "module loading",
              ALLOCATION: "allocation", OTHER: "other CUDA calls"}  # each kind of call (host_calls.KINDS), as a part


@dataclass(frozen=True)
class Phase:
    """A stretch of the capture (STARTUP, LOOP or TAIL) on its clock, how busy the GPU was in it, and
    the host's time in it (`parts`: nanoseconds in CUDA calls by kind, largest first, then OUTSIDE)."""

    name: str
    start_ns: int
    end_ns: int
    gpu_busy_ns: int
    operations: int  # GPU operations that started in it
    parts: tuple[tuple[str, int], ...] = ()

    @property
    def span_ns(self) -> int:
        return self.end_ns - self.start_ns

    def to_json(self) -> PhaseJson:
        return {"name": self.name, "start_ns": self.start_ns, "end_ns": self.end_ns, "span_ns": self.span_ns,
                "gpu_busy_ns": self.gpu_busy_ns, "operations": self.operations,
                "parts": [{"part": part, "host_ns": ns} for part, ns in self.parts]}


def phases(export: GpuTimeline, loop: Loop | None) -> tuple[Phase, ...]:
    """Start-up, loop and tail of one program's export (module docstring); () without a loop."""
    if loop is None or loop.iterations is None or loop.iterations.count < 2:
        return ()
    events = gpu_events([export], ("start_ns", "end_ns"))
    runtime = export.runtime
    firsts = [int(frame["start_ns"].min()) for frame in (events, runtime) if len(frame)]
    lasts = [int(frame["end_ns"].max()) for frame in (events, runtime) if len(frame)]
    if not firsts:
        return ()
    iterations = loop.iterations
    begin, steady, loop_end = min(firsts), int(iterations.starts_ns[iterations.steady_from]), iterations.end_ns
    end = max(max(lasts), loop_end)
    start, stop = events["start_ns"].to_numpy(np.int64), events["end_ns"].to_numpy(np.int64)
    busy = merged_intervals(start, stop)  # by start already: no sort
    stretches = ((STARTUP, begin, steady), (LOOP, steady, loop_end), (TAIL, loop_end, end))
    # the host's calls of start-up and the tail (the loop's are the host side's to weigh)
    calls = _Calls.of(export, loop.pid, [(low, high) for name, low, high in stretches if name != LOOP])
    return tuple(Phase(name, low, high, _busy_in(busy, low, high), int(np.searchsorted(start, high) -
                                                                        np.searchsorted(start, low)),
                       _sampled(export, loop.pid, low, high, calls.parts(low, high)) if name != LOOP else ())
                 for name, low, high in stretches if high > low)


def _sampled(export: GpuTimeline, pid: int | None, low: int, high: int,
             parts: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    """`parts` with their last, OUTSIDE, told apart by the samples of `pid`'s most sampled thread in
    [low, high) (module docstring); as they are without MIN_PHASE_SAMPLES of them."""
    samples = export.samples
    if samples.empty or export.frames.empty or pid is None:
        return parts
    times, threads = samples["start_ns"].to_numpy(np.int64), samples["global_tid"].to_numpy(np.int64)
    ours = (times >= low) & (times < high) & (linux_pid(threads) == pid)
    if ours.sum() < MIN_PHASE_SAMPLES:
        return parts
    values, counts = np.unique(threads[ours], return_counts=True)
    thread = int(values[np.argmax(counts)])
    interval = float(np.median(np.diff(np.sort(times[threads == thread]))))
    ids = samples["sample_id"].to_numpy(np.int64)[ours & (threads == thread)]
    activity, _ = sample_activities(export.frames, ids)
    activity[importing(export.frames, ids) & (activity != CUDA_CALLS)] = IMPORTING
    named, counted = np.unique(activity[activity != CUDA_CALLS].astype(str), return_counts=True)
    outside = parts[-1][1]
    running = counted * interval
    if running.sum() > outside:  # sampling's granularity: never more than the rest it tells apart
        running *= outside / running.sum()
    told = sorted(((SAMPLED_PARTS[name], int(ns)) for name, ns in zip(named, running) if ns > 0),
                  key=lambda part: -part[1])
    rest = outside - sum(ns for _, ns in told)
    return (*parts[:-1], *told, *(((NOT_RUNNING, rest),) if rest > 0 else ()))


def _busy_in(busy: tuple[np.ndarray, np.ndarray], low: int, high: int) -> int:
    """How long the disjoint intervals `busy` cover of [low, high)."""
    starts, ends = busy
    inside = slice(int(np.searchsorted(ends, low, side="right")), int(np.searchsorted(starts, high)))
    return int(np.maximum(0, np.minimum(ends[inside], high) - np.maximum(starts[inside], low)).sum())


@dataclass(frozen=True)
class _Calls:
    """One process's CUDA calls by start: start, end and kind (an index into KINDS)."""

    start: np.ndarray
    end: np.ndarray
    kind: np.ndarray

    @classmethod
    def of(cls, export: GpuTimeline, pid: int | None, stretches: list[tuple[int, int]]) -> _Calls:
        """The calls of process `pid` (every process's where None) that began in `stretches`."""
        runtime = export.runtime
        start = runtime["start_ns"].to_numpy(np.int64)
        if (start[1:] >= start[:-1]).all():  # by start, as nsys writes them: slices
            rows = np.concatenate([np.arange(*np.searchsorted(start, [low, high])) for low, high in stretches])
        else:
            rows = np.flatnonzero(np.logical_or.reduce([(start >= low) & (start < high) for low, high in stretches]))
        calls = runtime.iloc[rows]
        mine = slice(None) if pid is None else linux_pid(id_values(calls["global_tid"])) == pid
        start = calls["start_ns"].to_numpy(np.int64)[mine]
        order = np.argsort(start, kind="stable")
        kind = call_kinds(pd.Categorical(calls["api"]))[mine]
        return cls(start[order], calls["end_ns"].to_numpy(np.int64)[mine][order], kind[order])

    def parts(self, low: int, high: int) -> tuple[tuple[str, int], ...]:
        """The host's time in [low, high) by kind of the calls that began there, largest first, then
        the rest of the stretch (OUTSIDE)."""
        inside = slice(*np.searchsorted(self.start, [low, high]))
        held = np.minimum(self.end[inside], high) - self.start[inside]
        by_kind = np.bincount(self.kind[inside], weights=held, minlength=len(KINDS))
        parts = sorted(((PART_NAMES[KINDS[kind]], int(ns)) for kind, ns in enumerate(by_kind) if ns > 0),
                       key=lambda part: -part[1])
        return (*parts, (OUTSIDE, max(0, high - low - sum(ns for _, ns in parts))))
