"""Where the time of an nsys capture went (pure functions over an GpuTimeline).

The span runs from the first CUDA API call or GPU operation to the end of the last one. Over it:
the GPU's time in kernels, whole-graph launches, memcpys and memsets (each the union of its intervals,
so concurrent work counts once) and idle (the span minus the union of all GPU work: launch gaps, host work,
compilation, start-up); the largest idle gaps; the kernels that took the most GPU time; and the
CPU time spent inside CUDA API calls, per function.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nsprof.analyze.gpu_events import merged_intervals
from nsprof.parse.model import GpuTimeline

TOP = 8  # rows kept in the kernel and API tables; the rest are summed as "(other)"
OTHER = "(other)"
_API_VERSION = re.compile(r"_v\d+$")  # cudaMalloc_v3020 -> cudaMalloc


@dataclass(frozen=True)
class TimeBreakdown:
    span_ns: int
    gpu: pd.DataFrame  # activity (kernels, memcpys, memsets, idle), count, time_ns, pct_of_span
    gaps: pd.DataFrame  # the largest idle gaps: start_ns (from the span's start), duration_ns
    kernels: pd.DataFrame  # kernel, count, time_ns, pct_of_gpu_busy; the TOP longest, then (other)
    api: pd.DataFrame  # api, count, time_ns, pct_of_span: CPU time inside each CUDA API function


def time_breakdown(export: GpuTimeline, gaps: int = 3) -> TimeBreakdown | None:
    """The capture's time, or None when it recorded no CUDA activity at all. Graphs traced whole (nsys's
    default: one GPU operation a launch, its kernels not listed) are work of their own, shown where there are any."""
    work = {"kernels": export.kernels, "graphs": export.graphs, "memcpys": export.memcpys, "memsets": export.memsets}
    if not len(export.graphs):
        del work["graphs"]
    events = [frame for frame in (*work.values(), export.runtime) if len(frame)]
    if not events:
        return None
    start = min(int(frame["start_ns"].min()) for frame in events)
    end = max(int(frame["end_ns"].max()) for frame in events)
    span = max(end - start, 1)
    busy = _union(pd.concat([frame[["start_ns", "end_ns"]] for frame in work.values()], ignore_index=True))
    gpu = pd.DataFrame([
        *({"activity": name, "count": len(frame), "time_ns": _union(frame[["start_ns", "end_ns"]]).sum()}
          for name, frame in work.items()),
        {"activity": "idle", "count": None, "time_ns": span - busy.sum()},
    ])
    gpu["pct_of_span"] = 100 * gpu["time_ns"] / span
    busy_ns = max(int(busy.sum()), 1)
    kernels = _top(export.kernels.assign(name=export.kernels["kernel"].astype(str)), "kernel", busy_ns)
    api = _top(export.runtime.assign(name=[_API_VERSION.sub("", str(a)) for a in export.runtime["api"]]), "api", span)
    api = api.rename(columns={"pct_of_total": "pct_of_span"})
    kernels = kernels.rename(columns={"pct_of_total": "pct_of_gpu_busy"})
    return TimeBreakdown(span, gpu, _largest_gaps(work, start, end, gaps), kernels, api)


def _union(intervals: pd.DataFrame) -> pd.Series:
    """Lengths of the merged intervals (overlapping or touching intervals merged)."""
    starts, ends = merged_intervals(intervals["start_ns"].to_numpy(np.int64), intervals["end_ns"].to_numpy(np.int64))
    return pd.Series(ends - starts, dtype="int64")

def _largest_gaps(work: dict[str, pd.DataFrame], start: int, end: int, count: int) -> pd.DataFrame:
    """The longest stretches with no GPU work, from the span's start to its end."""
    intervals = pd.concat([frame[["start_ns", "end_ns"]] for frame in work.values()], ignore_index=True)
    ordered = intervals.sort_values("start_ns").to_numpy(dtype=np.int64)
    if len(ordered) == 0:
        return pd.DataFrame({"start_ns": [0], "duration_ns": [end - start]})
    running_end = np.maximum.accumulate(ordered[:, 1])
    gap_starts = np.r_[start, running_end]
    gap_ends = np.r_[ordered[:, 0], end]
    gaps = pd.DataFrame({"start_ns": gap_starts - start, "duration_ns": gap_ends - gap_starts})
    return gaps[gaps["duration_ns"] > 0].nlargest(count, "duration_ns").reset_index(drop=True)


def _top(events: pd.DataFrame, column: str, total: int) -> pd.DataFrame:
    """Time and count per name, longest first; past TOP names, one (other) row."""
    per_name = (events.groupby("name", observed=True)["duration_ns"].agg(["count", "sum"])
                .rename(columns={"sum": "time_ns"}).sort_values("time_ns", ascending=False))
    if len(per_name) > TOP:
        rest = per_name.iloc[TOP:]
        per_name = pd.concat([per_name.iloc[:TOP],
                              pd.DataFrame({"count": [rest["count"].sum()], "time_ns": [rest["time_ns"].sum()]}, index=[OTHER])])
    table = per_name.rename_axis(column).reset_index()
    table["pct_of_total"] = 100 * table["time_ns"] / total
    return table
