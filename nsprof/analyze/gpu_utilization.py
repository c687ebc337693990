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
from nsprof.parse.nsys_sqlite import NsysExport

IDLE_GAPS = 5


def gpu_utilization(exports: list[NsysExport]) -> list[dict]:
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
    # a gap opens before event i when it starts after everything before it has ended
    gap_before = np.flatnonzero(start[1:] > reach[:-1]) + 1
    gap_ns = start[gap_before] - reach[gap_before - 1]
    first, last = int(start[0]), int(reach[-1])
    busy = (last - first) - int(gap_ns.sum())
    names = events["name"].array  # categorical: a name is looked up only for the gaps shown
    order = np.argsort(-gap_ns, kind="stable")[:IDLE_GAPS]
    gaps = [{"start_ns": int(reach[i - 1]) - first, "duration_ns": int(gap_ns[k]),
             "after": str(names[_ended_last(end, reach, i - 1)]), "before": str(names[i])}
            for k, i in ((k, gap_before[k]) for k in order)]
    span = last - first
    return {"device_id": int(device_id), "busy_ns": busy, "span_ns": span,
            "pct": 100 * busy / span if span else 100.0, "idle_gaps": gaps}


def _ended_last(end: np.ndarray, reach: np.ndarray, i: int) -> int:
    """The last event among 0..i whose end is reach[i] (the work the GPU finished last by then)."""
    return int(np.flatnonzero(end[:i + 1] == reach[i])[-1])
