"""How busy each GPU was in an nsys capture, and where it sat idle (pure functions).

A GPU is busy while any kernel, copy, memset or graph launch (traced at graph level) runs on it, on
any stream; overlapping work counts once. Per device:

- `busy_ns` (the union of that work), `span_ns` (first start to last end of it), `pct` (busy / span);
- `idle_gaps`: the IDLE_GAPS longest stretches between work, longest first, each with its
  `start_ns` (from the device's first work), `duration_ns`, and the work that ended before it
  (`after`) and began after it (`before`): what the GPU waited between.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from nsprof.analyze.gpu_events import gpu_events
from nsprof.parse.model import GpuTimeline

IDLE_GAPS = 5


def gpu_utilization(exports: list[GpuTimeline]) -> list[dict]:
    """One dict per device (keys in the module docstring), in device order."""
    work = gpu_events(exports, ("device_id", "name", "start_ns", "end_ns"))  # sorted by start, then end
    device = work["device_id"].to_numpy()
    devices = np.unique(device)
    if len(devices) == 1:  # the common case: no copy of a 10M-event table
        return [_device(int(devices[0]), work)]
    return [_device(int(device_id), work[device == device_id]) for device_id in devices]


def _device(device_id: int, events: pd.DataFrame) -> dict:
    """`events`: one device's gpu_events rows, by start, then end."""
    start, end = events["start_ns"].to_numpy(np.int64), events["end_ns"].to_numpy(np.int64)
    reach = np.maximum.accumulate(end)  # the latest end of any work begun so far
    gap_before, gap_ns, idle = _longest_gaps(start, reach)
    first, last = int(start[0]), int(reach[-1])
    busy = (last - first) - idle
    names = events["name"].array  # categorical: a name is looked up only for the gaps shown
    gaps = [{"start_ns": int(reach[i - 1]) - first, "duration_ns": int(ns),
             "after": str(names[_ended_last(end, reach, i - 1)]), "before": str(names[i])}
            for i, ns in zip(gap_before, gap_ns)]
    span = last - first
    return {"device_id": int(device_id), "busy_ns": busy, "span_ns": span,
            "pct": 100 * busy / span if span else 100.0, "idle_gaps": gaps}


GAP_CHUNK_ROWS = 1_000_000


def _longest_gaps(start: np.ndarray, reach: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """(where, how long) of the IDLE_GAPS longest gaps, longest first (the earlier of equal ones
    first), and all gaps' total. A gap opens before event i when it starts after everything before
    it has ended. A chunk of events at a time: millions of short gaps are not held at once."""
    where_parts: list[np.ndarray] = []
    length_parts: list[np.ndarray] = []
    idle = 0
    for first in range(1, len(start), GAP_CHUNK_ROWS):
        past = min(first + GAP_CHUNK_ROWS, len(start))
        gap = start[first:past] - reach[first - 1:past - 1]
        opened = np.flatnonzero(gap > 0)
        gap = gap[opened]
        idle += int(gap.sum())
        if len(gap) > IDLE_GAPS:  # this chunk's candidates: its longest, and every gap as long as its shortest one
            kept = gap >= np.partition(gap, len(gap) - IDLE_GAPS)[len(gap) - IDLE_GAPS]
            opened, gap = opened[kept], gap[kept]
        where_parts.append(opened + first)
        length_parts.append(gap)
    where = np.concatenate(where_parts) if where_parts else np.empty(0, dtype=np.int64)
    lengths = np.concatenate(length_parts) if length_parts else np.empty(0, dtype=np.int64)
    order = np.argsort(-lengths, kind="stable")[:IDLE_GAPS]
    return where[order], lengths[order], idle


def _ended_last(end: np.ndarray, reach: np.ndarray, i: int) -> int:
    """The last event among 0..i whose end is reach[i] (the work the GPU finished last by then)."""
    return int(np.flatnonzero(end[:i + 1] == reach[i])[-1])
