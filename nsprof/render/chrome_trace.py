"""An nsys capture in the Chrome trace event format, which Perfetto (ui.perfetto.dev) and
chrome://tracing open.

One complete event ("ph": "X") per kernel, copy, memset and graph launch, on one track per CUDA
stream (a "process" per GPU, a "thread" per stream), and one per NVTX range on the track of the
thread that opened it. Times are microseconds from the capture's first event, to the nanosecond;
every event carries its name, duration and, in `args`, its kind, bytes, stream and correlation id.
"""

from __future__ import annotations

import math

import pandas as pd

GPU_PID_BASE = 1_000_000  # GPU tracks' process ids, apart from the host's real ones


def chrome_trace(events: pd.DataFrame, ranges: pd.DataFrame, gpu_names: dict[int, str] | None = None,
                 origin: int | None = None) -> dict:
    """`events`: nsprof.analyze.gpu_events.gpu_events; `ranges`: NVTX ranges (GpuTimeline.nvtx rows).
    Times count from `origin` (ns), by default the first event's start."""
    if origin is None:
        starts = [frame["start_ns"].dropna().min() for frame in (events, ranges) if len(frame)]
        origin = int(min(starts)) if starts else 0
    last = int(max([events["end_ns"].max()] if len(events) else [origin]))
    trace = []
    for (device, stream), group in events.groupby(["device_id", "stream_id"], sort=True):
        pid = GPU_PID_BASE + int(device)
        trace.append(_meta("thread_name", pid, int(stream), f"stream {stream}"))
        for row in group.itertuples(index=False):
            trace.append({"ph": "X", "cat": row.kind, "name": row.name, "pid": pid, "tid": int(stream),
                          "ts": _us(row.start_ns - origin), "dur": _us(row.duration_ns),
                          "args": {"kind": row.kind, "bytes": int(row.bytes), "device": int(device), "stream": int(stream),
                                   "correlation_id": None if pd.isna(row.correlation_id) else int(row.correlation_id)}})
    for device in sorted(events["device_id"].unique()) if len(events) else []:
        name = (gpu_names or {}).get(int(device))
        trace.append(_meta("process_name", GPU_PID_BASE + int(device), None, f"GPU {device}" + (f" ({name})" if name else "")))
    for row in ranges.dropna(subset=["start_ns", "pid", "tid"]).itertuples(index=False):
        end = last if pd.isna(row.end_ns) else int(row.end_ns)  # never closed: open to the end
        trace.append({"ph": "X", "cat": "nvtx", "name": row.range, "pid": int(row.pid), "tid": int(row.tid),
                      "ts": _us(int(row.start_ns) - origin), "dur": _us(max(end - int(row.start_ns), 0)),
                      "args": {"kind": row.kind}})
    for pid, tid in ranges.dropna(subset=["pid", "tid"])[["pid", "tid"]].drop_duplicates().itertuples(index=False):
        trace.append(_meta("thread_name", int(pid), int(tid), f"thread {tid} (NVTX)"))
    return {"traceEvents": trace, "displayTimeUnit": "ns",
            "otherData": {"source": "nsprof", "origin_ns": origin, "time_unit": "microseconds from origin_ns"}}


def _meta(name: str, pid: int, tid: int | None, label: str) -> dict:
    event = {"ph": "M", "name": name, "pid": pid, "args": {"name": label}}
    if tid is not None:
        event["tid"] = tid
    return event


def _us(ns: float) -> float:
    """Nanoseconds to microseconds, kept to the nanosecond."""
    return round(float(ns) / 1e3, 3) if not math.isnan(ns) else 0.0
