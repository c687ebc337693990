"""Where in a program some CUDA calls were made: per thread (by its name) and the innermost NVTX
range open on that thread (pure functions over an nsys export)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from nsprof.analyze.host_types import CallPlace
from nsprof.parse.model import GpuTimeline, linux_tid

WHERE_ROWS = 5


def call_places(export: GpuTimeline, calls: pd.DataFrame) -> list[CallPlace]:
    """Where in the program some calls were made: per thread (its name) and innermost NVTX range
    open on that thread (push/pop ranges), their count and host time, most time first."""
    names = dict(zip(export.threads["global_tid"], export.threads["name"])) if len(export.threads) else {}
    ranges = export.nvtx[(export.nvtx["kind"] == "push_pop") & export.nvtx["end_ns"].notna()]
    places = []
    for tid, mine in calls.groupby("global_tid", sort=False):
        times = mine["start_ns"].to_numpy(np.int64)
        own = ranges[ranges["global_tid"] == tid].sort_values("start_ns", kind="stable")
        starts, ends = own["start_ns"].to_numpy(np.int64), own["end_ns"].to_numpy(np.int64)
        # only the ranges open at some call: a program's 100k ranges are not walked for its few waits
        ordered = np.sort(times)
        holding = np.searchsorted(ordered, ends, side="left") > np.searchsorted(ordered, starts, side="left")
        innermost = _innermost(starts[holding], ends[holding], times)
        labels = own["range"].to_numpy(dtype=object)[holding]
        thread = names.get(tid) or (f"thread {linux_tid(int(tid))}" if tid >= 0 else "an unnamed thread")
        places.append(pd.DataFrame({"thread": thread,
                                    "range": [labels[i] if i >= 0 else None for i in innermost],
                                    "duration_ns": mine["duration_ns"].to_numpy()}))
    if not places:
        return []
    found = pd.concat(places).groupby(["thread", "range"], dropna=False, sort=False)["duration_ns"].agg(["count", "sum"])
    found = found.sort_values("sum", ascending=False).head(WHERE_ROWS)
    return [{"thread": thread, "range": None if pd.isna(name) else name, "count": int(row["count"]),
             "host_ns": int(row["sum"])} for (thread, name), row in found.iterrows()]


def _innermost(starts: np.ndarray, ends: np.ndarray, times: np.ndarray) -> list[int]:
    """For each time, the index of the innermost range (one thread's push/pop ranges, by start: they
    nest) open at it, or -1: the latest-starting one that contains it, found through each range's parent."""
    parent = np.full(len(starts), -1)
    stack: list[int] = []
    for i, start in enumerate(starts):
        while stack and ends[stack[-1]] <= start:
            stack.pop()
        parent[i] = stack[-1] if stack else -1
        stack.append(i)
    found: list[int] = []
    for at, time in zip(np.searchsorted(starts, times, side="right") - 1, times):
        while at >= 0 and ends[at] <= time:
            at = parent[at]
        found.append(int(at))
    return found
