"""A program's capture in phases around its loop (nsprof.analyze.iterations): start-up (from the
first CUDA call or GPU operation to the steady state's first iteration: context and module loading,
allocation, compilation and autotuning, each kernel's first launches, the loop's warm-up
iterations), the loop (its steady iterations), and the tail (after the loop's last iteration).
Pure functions over one nsys export.

Each phase says how busy the GPU was; start-up and the tail say where the host's time went too (the
loop's is the host side's to weigh: nsprof.analyze.host_side), from the CUDA calls the capture holds
(nsprof.analyze.host_calls's kinds, summed over the loop's process's calls; calls on several threads
at once are each counted): module loading, allocation, waiting for the GPU, copies and launches;
the rest of the phase (`outside CUDA calls`) is the host's own work, which the CUDA trace cannot
tell apart (Python, compilation, library set-up, data preparation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from nsprof.analyze.gpu_events import gpu_events, merged_intervals
from nsprof.analyze.host_calls import ALLOCATION, COPY, KINDS, LAUNCH, LOADING, OTHER, WAIT, call_kinds
from nsprof.analyze.iterations import Loop
from nsprof.parse.model import GpuTimeline, id_values, linux_pid

STARTUP, LOOP, TAIL = "start-up", "loop", "tail"
OUTSIDE = "outside CUDA calls"
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

    def to_json(self) -> dict:
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
                       calls.parts(low, high) if name != LOOP else ())
                 for name, low, high in stretches if high > low)


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
