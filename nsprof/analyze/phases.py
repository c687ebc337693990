"""A program's capture in phases around its loop (nsprof.analyze.iterations): start-up (from the
first CUDA call or GPU operation to the steady state's first iteration: context and module loading,
allocation, compilation and autotuning, each kernel's first launches, the loop's warm-up
iterations), the loop (its steady iterations), and the tail (after the loop's last iteration).
Pure functions over one nsys export.

Each phase says how busy the GPU was and where the host's time went, from the CUDA calls the
capture holds (nsprof.analyze.host_calls's kinds, summed over the loop's process's calls; calls on
several threads at once are each counted): module loading, allocation, waiting for the GPU,
copies and launches; the rest of the phase (`outside CUDA calls`) is the host's own work, which
the CUDA trace cannot tell apart (Python, compilation, library set-up, data preparation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from nsprof.analyze.gpu_events import gpu_events, merged_intervals
from nsprof.analyze.host_calls import KINDS, OTHER, api_kind
from nsprof.analyze.iterations import Loop
from nsprof.parse.model import GpuTimeline, id_values, linux_pid

STARTUP, LOOP, TAIL = "start-up", "loop", "tail"
OUTSIDE = "outside CUDA calls"


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
    begin, steady, loop_end = min(firsts), iterations.starts_ns[iterations.steady_from], iterations.end_ns
    end = max(max(lasts), loop_end)
    calls = _calls(export, loop.pid)
    stretches = ((STARTUP, begin, steady), (LOOP, steady, loop_end), (TAIL, loop_end, end))
    return tuple(_phase(name, low, high, events, calls) for name, low, high in stretches if high > low)


def _calls(export: GpuTimeline, pid: int | None) -> pd.DataFrame:
    """The CUDA calls of process `pid` (all where None): start, end and kind, by start."""
    runtime = export.runtime
    if runtime.empty:
        return pd.DataFrame({"start": [], "end": [], "kind": []})
    api = pd.Categorical(runtime["api"])
    kinds = np.array([api_kind(str(name)) for name in api.categories] + [OTHER], dtype=object)[api.codes]
    mine = np.ones(len(runtime), dtype=bool) if pid is None else linux_pid(id_values(runtime["global_tid"])) == pid
    calls = pd.DataFrame({"start": runtime["start_ns"].to_numpy(np.int64)[mine],
                          "end": runtime["end_ns"].to_numpy(np.int64)[mine], "kind": kinds[mine]})
    return calls.sort_values("start", kind="stable")


def _phase(name: str, low: int, high: int, events: pd.DataFrame, calls: pd.DataFrame) -> Phase:
    start, end = events["start_ns"].to_numpy(np.int64), events["end_ns"].to_numpy(np.int64)
    busy_start, busy_end = merged_intervals(np.clip(start, low, high), np.clip(end, low, high))
    inside = calls[(calls["start"].to_numpy() >= low) & (calls["start"].to_numpy() < high)]
    held = (np.minimum(inside["end"].to_numpy(), high) - inside["start"].to_numpy())
    by_kind = pd.Series(held, index=inside["kind"].to_numpy()).groupby(level=0).sum()
    parts = [(str(kind), int(ns)) for kind, ns in by_kind.sort_values(ascending=False).items()
             if ns > 0 and kind in KINDS]
    in_calls = sum(ns for _, ns in parts)
    parts.append((OUTSIDE, max(0, high - low - in_calls)))
    return Phase(name, low, high, int((busy_end - busy_start).sum()),
                 int(((start >= low) & (start < high)).sum()), tuple(parts))
