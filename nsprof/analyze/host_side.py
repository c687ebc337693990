"""Why the GPU waits: the host side of one program's nsys capture, over its steady state (pure functions).

The window is the program's steady state (nsprof.analyze.program_harness.steady_state: from the
second instance of its repeating NVTX range to the end of its last GPU work), or, without one, the
span of its GPU work; where that holds more than MAX_WINDOW_OPERATIONS GPU operations, its last
iterations that hold at most that many (or its last operations, without iterations): a steady state
repeats itself, and the analysis then takes the same time on a 10M-kernel capture as on a 2M one.
In the window, per device:

- how busy the GPU was (the union of kernels, copies, memsets and graphs), and how much of that was
  copies; the same per stream;
- the launches: how many per second, the median kernel, the host's time between launch calls and in
  each, how long after its launch call a kernel started, and the queue depth (GPU work launched and
  not finished when a launch call begins: 0 means the GPU had nothing left to do);
- the waits (synchronizations and blocking copies), pageable copies, module loading and allocations;
- the GPU's idle time split by cause (IDLE_CAUSES, charged gap by gap as nsprof.analyze.host_idle
  says).

The verdict (VERDICTS) follows one rule, stated with it: a GPU busy at least BUSY_PCT of the window
is GPU-bound, or transfer-bound when copies are most of its busy time; below that, the cause of
most idle time names the verdict. Each cause is a fix with a saving no larger than the idle time it
caused: the GPU cannot gain more than the time it waited.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from nsprof.analyze.gpu_events import GRAPH, KERNEL, gpu_events, merged_intervals
from nsprof.analyze.host_calls import ALLOCATION, COPY, KINDS, LAUNCH, LOADING, HostCalls, host_calls, pageable_copies
from nsprof.analyze.host_idle import (
    COPY_WAITED,
    HOST_WORK,
    HOST_WORK_NS,
    LAUNCHING,
    LOADED,
    QUEUED,
    UNMATCHED,
    WAITED,
    idle_causes,
    idle_gaps,
)
from nsprof.analyze.program_harness import SteadyState
from nsprof.ceilings.peaks import Ceiling
from nsprof.parse.model import GpuTimeline

BUSY_PCT = 80.0  # at least this busy over the window: GPU-bound
MAX_WINDOW_OPERATIONS = 2_000_000
COPY_SHARE = 0.5  # copies at least this share of the busy time: transfer-bound
IDLE_CAUSES = {
    LAUNCHING: "the host had not yet launched the next work: it was in CUDA calls or its own code between launches",
    HOST_WORK: f"the host ran its own code for over {HOST_WORK_NS / 1e3:.0f} us before launching the next work "
               "(data preparation, Python)",
    WAITED: "the host waited for the GPU to finish (a synchronization), so nothing was queued when it did",
    COPY_WAITED: "the host waited in a blocking copy (pageable memory, or a copy not named Async)",
    LOADED: "the host was loading modules or allocating memory",
    QUEUED: "the next work was already launched and waited on something else (another stream, an event, launch "
            "latency)",
    UNMATCHED: "the next work has no launch call in the capture",
}
GPU_BOUND, HOST_BOUND, HOST_WORK_BOUND, SYNC_BOUND, TRANSFER_BOUND, STARTUP_BOUND, UNDECIDED = (
    "GPU-bound", "host-bound (launch overhead)", "host-bound (the host's own work)", "synchronization-bound",
    "transfer-bound", "dominated by start-up and compilation",
    "undecided: the capture links most of the GPU's work to no launch call (its correlation ids are missing)")
VERDICT_OF_CAUSE = {LAUNCHING: HOST_BOUND, HOST_WORK: HOST_WORK_BOUND, WAITED: SYNC_BOUND, COPY_WAITED: TRANSFER_BOUND,
                    LOADED: STARTUP_BOUND, QUEUED: GPU_BOUND, UNMATCHED: UNDECIDED}
RULE = (f"GPU busy >= {BUSY_PCT:.0f}% of the window: GPU-bound (transfer-bound if copies are >= "
        f"{100 * COPY_SHARE:.0f}% of busy time); otherwise the cause of most GPU idle time decides")
FIXES = {
    LAUNCHING: "launch fewer, larger pieces of work: CUDA graphs (torch.cuda.CUDAGraph, "
               "torch.compile(mode=\"reduce-overhead\")), fused kernels",
    HOST_WORK: "move the host's work off the critical path: a data loader with worker processes "
               "(torch.utils.data.DataLoader(num_workers=N, pin_memory=True)), or prepare the next batch while the GPU "
               "works",
    WAITED: "move synchronizations out of the loop: keep values on the GPU (no .item(), .cpu(), print of a tensor "
            "per step), overlap the host's work with the GPU's",
    COPY_WAITED: "copy from pinned memory with non-blocking copies (tensor.pin_memory(), cudaMallocHost), "
                 "overlapped with compute",
    LOADED: "load and allocate before the loop: warm up once (CUDA_MODULE_LOADING=EAGER), reuse buffers or a "
            "caching allocator",
}


@dataclass(frozen=True)
class Window:
    start_ns: int
    end_ns: int
    source: str  # what defines it: the steady state's rule, or the span of GPU work
    iterations: int | None = None  # instances of the repeating range it holds

    def to_json(self) -> dict:
        return {"start_ns": self.start_ns, "end_ns": self.end_ns, "span_ns": self.end_ns - self.start_ns,
                "source": self.source}


def host_side(export: GpuTimeline, state: SteadyState | None, ceiling: Ceiling | None = None) -> dict | None:
    """The host-side analysis of one export (keys below), or None where it has no GPU work or no
    CUDA API calls. `state`: its steady state (nsprof.analyze.program_harness.steady_part's; None:
    the window is the span of its GPU work). `ceiling`: the GPU's, for the bus's pinned rate each way.

    Keys: window, devices (per device: busy and copy figures, idle_ns, idle causes), launches,
    waits, copies, loading, allocation, startup_ns (before the window), verdict (verdict, rule,
    evidence) and fixes (host-side causes as fixes, largest saving first)."""
    if export.runtime.empty:
        return None
    spans = gpu_events([export], ("start_ns", "end_ns"))  # by start: what the window is drawn from
    if spans.empty:
        return None
    window = _window(spans, state)
    del spans
    # every GPU operation of the window, and only those: a 10M-kernel capture's whole table is not made
    inside = gpu_events([_within(export, window)],
                        ("device_id", "stream_id", "kind", "start_ns", "end_ns", "correlation_id", "pid"))
    calls = host_calls(export)
    others = calls.others
    others = others.iloc[slice(*np.searchsorted(others["start_ns"].to_numpy(), [window.start_ns, window.end_ns]))]
    waits = others[others["blocking"].to_numpy() & (others["kind"] != COPY).to_numpy()]
    rows = calls.find(*_ids(inside))  # each operation's launch call, found once
    device_ids = inside["device_id"].to_numpy()
    one = len(np.unique(device_ids)) == 1
    devices = [_device(int(device), inside if one else inside[device_ids == device], rows if one else rows[device_ids == device],
                       calls, window) for device in np.unique(device_ids)]
    result = {"window": window.to_json(), "devices": devices,
              "launches": _launches(export, calls, inside, rows, window),
              "waits": {**_call_summary(waits), "where": _where(export, waits)},
              "copies": _copies(export, others, window, ceiling),
              "loading": _call_summary(others[(others["kind"] == LOADING).to_numpy()]),
              "allocation": _call_summary(others[(others["kind"] == ALLOCATION).to_numpy()]),
              "startup_ns": max(0, window.start_ns - int(calls.start.min())),
              "iterations": None if state is None else {"range": state.range, "count": window.iterations}}
    result["verdict"] = verdict(result)
    result["fixes"] = host_fixes(result)
    return result


def _window(events: pd.DataFrame, state: SteadyState | None) -> Window:
    """The window of the module docstring; `events` by start."""
    start = events["start_ns"].to_numpy()
    end = int(events["end_ns"].max())
    cap = MAX_WINDOW_OPERATIONS

    def operations_from(t: int) -> int:
        return len(start) - int(np.searchsorted(start, t))

    if state is not None and state.start_ns < end:
        starts = state.instance_starts[1:] or (state.start_ns,)
        first = next((i for i, t in enumerate(starts) if operations_from(t) <= cap), len(starts) - 1)
        iterations = len(starts) - first
        if first == 0:
            return Window(starts[0], end, f"steady state: from the second of {state.instances} instances of "
                                          f"{state.range} to the end of the last GPU work", iterations)
        return Window(starts[first], end, f"steady state: the last {iterations:,} of its {len(starts):,} iterations "
                                          f"of {state.range} (at most {cap:,} GPU operations), to the end of the last "
                                          "GPU work", iterations)
    if len(start) > cap:
        return Window(int(start[-cap]), end, f"the last {cap:,} GPU operations of the capture (no repeating NVTX "
                                             "range: mark each iteration with one to analyze the steady state)")
    return Window(int(start[0]), end, "the span of the capture's GPU work, start-up included (no repeating NVTX range: mark each "
                  "iteration with one to analyze the steady state)")


def idle_marks(export: GpuTimeline, events: pd.DataFrame, shown: tuple[int, int]) -> pd.DataFrame | None:
    """The GPU's idle gaps in one program's capture that overlap `shown`, each with the cause that
    took most of it (nsprof.analyze.host_idle): device_id, start_ns, end_ns, cause; None where the
    capture has no CUDA calls. `events`: its gpu_events, with pid and correlation_id."""
    if export.runtime.empty or events.empty:
        return None
    events = events[((events["end_ns"] > shown[0]) & (events["start_ns"] < shown[1])).to_numpy()]  # a zoom's few
    if events.empty:
        return None
    calls = host_calls(export)
    rows = calls.find(*_ids(events))
    device_ids = events["device_id"].to_numpy()
    start, end = events["start_ns"].to_numpy(np.int64), events["end_ns"].to_numpy(np.int64)
    marks = [idle_gaps(start[mine], end[mine], rows[mine], calls, int(start[mine][0]), shown).assign(device_id=device)
             for device in np.unique(device_ids) for mine in [device_ids == device]]
    return pd.concat(marks, ignore_index=True)[["device_id", "start_ns", "end_ns", "cause"]]


def _within(export: GpuTimeline, window: Window) -> GpuTimeline:
    """The export's GPU operations that start in the window, with the columns gpu_events reads."""
    def rows(frame: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
        start = frame["start_ns"].to_numpy()
        kept = [column for column in columns if column in frame]
        return frame.loc[(start >= window.start_ns) & (start < window.end_ns), kept]

    ids = ("start_ns", "end_ns", "device_id", "stream_id", "correlation_id", "global_pid", "pid")
    return replace(export, kernels=rows(export.kernels, (*ids, "kernel")), graphs=rows(export.graphs, (*ids, "name")),
                   memcpys=rows(export.memcpys, (*ids, "bytes", "copy_kind")), memsets=rows(export.memsets, (*ids, "bytes")))


def _device(device_id: int, events: pd.DataFrame, rows: np.ndarray, calls: HostCalls, window: Window) -> dict:
    """One device's busy time, copy share and idle time by cause over the window (`rows`: each
    event's launch call), and the same of each of its streams (`streams`: a stream is idle while
    it runs nothing, though others may)."""
    figures = _busy_and_idle(events, rows, calls, window)
    stream_ids = events["stream_id"].to_numpy()
    streams = [{"stream_id": int(stream), **_busy_and_idle(events[mine], rows[mine], calls, window)}
               for stream in np.unique(stream_ids) for mine in [stream_ids == stream]] if len(np.unique(stream_ids)) > 1 \
        else [{"stream_id": int(stream_ids[0]), **figures}]
    return {"device_id": device_id, **figures, "streams": streams}


def _busy_and_idle(events: pd.DataFrame, rows: np.ndarray, calls: HostCalls, window: Window) -> dict:
    start = events["start_ns"].to_numpy(np.int64)
    end = events["end_ns"].to_numpy(np.int64)
    busy_start, busy_end = merged_intervals(np.maximum(start, window.start_ns), np.minimum(end, window.end_ns))
    busy = int((busy_end - busy_start).sum())
    is_copy = ~_is_work(events)
    copy_start, copy_end = merged_intervals(np.maximum(start[is_copy], window.start_ns),
                                            np.minimum(end[is_copy], window.end_ns))
    span = window.end_ns - window.start_ns
    return {"busy_ns": busy, "busy_pct": 100 * busy / span if span else 100.0,
            "copy_busy_ns": int((copy_end - copy_start).sum()), "idle_ns": span - busy,
            "idle_causes": idle_causes(start, end, rows, calls, window.start_ns)}


def _is_work(events: pd.DataFrame) -> np.ndarray:
    """Which events are kernels or graphs (the rest: copies and memsets)."""
    return events["kind"].isin([KERNEL, GRAPH]).to_numpy()


def _ids(events: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each event's Linux process id and correlation id (-1 where nsys left one out)."""
    return (events["pid"].to_numpy(dtype=np.int64, na_value=-1),
            events["correlation_id"].to_numpy(dtype=np.int64, na_value=-1))


def _launches(export: GpuTimeline, calls: HostCalls, events: pd.DataFrame, rows: np.ndarray, window: Window) -> dict:
    """The launch figures of the module docstring, over the window (`rows`: each event's launch call)."""
    in_window = slice(*np.searchsorted(calls.start, [window.start_ns, window.end_ns])) \
        if _sorted(calls.start) else np.flatnonzero((calls.start >= window.start_ns) & (calls.start < window.end_ns))
    launched = np.arange(len(calls.start))[in_window]
    launched = launched[calls.kind[launched] == KINDS.index(LAUNCH)]
    span = window.end_ns - window.start_ns
    kernel_start = export.kernels["start_ns"].to_numpy(np.int64)
    kernels = (kernel_start >= window.start_ns) & (kernel_start < window.end_ns)
    thread, starts = calls.thread[launched], calls.start[launched]
    if len(thread) and (thread == thread[0]).all() and _sorted(starts):  # one launching thread: no sort
        between = np.diff(starts)
    else:
        order = np.lexsort((starts, thread))
        between = np.diff(starts[order])[thread[order][1:] == thread[order][:-1]]
        del order
    work = _is_work(events)
    rows = rows[work]
    matched = rows >= 0
    call_start, call_end = calls.start[rows[matched]], calls.end[rows[matched]]
    to_start = events["start_ns"].to_numpy(np.int64)[work][matched] - call_end
    depth = _queue_depth(call_start, events["end_ns"].to_numpy(np.int64)[work][matched])
    graphs = [i for i, name in enumerate(calls.api.categories) if "GraphLaunch" in str(name)]
    durations = calls.end[launched] - starts
    return {"count": len(launched), "per_s": 1e9 * len(launched) / span if span else None,
            "kernels": int(kernels.sum()), "graphs": int(np.isin(calls.api.codes[launched], graphs).sum()),
            "median_kernel_ns": _median(export.kernels["duration_ns"].to_numpy(np.int64)[kernels]),
            "median_call_ns": _median(durations), "median_between_ns": _median(between),
            "median_to_start_ns": _median(to_start), "median_queue_depth": _median(depth),
            "empty_queue_pct": 100 * float((depth == 0).mean()) if len(depth) else None,
            "threads": len(np.unique(thread)), "host_ns": int(durations.sum())}


def _sorted(values: np.ndarray) -> bool:
    return bool((values[1:] >= values[:-1]).all())


def _queue_depth(launch_start: np.ndarray, work_end: np.ndarray) -> np.ndarray:
    """At each launch call's start: the GPU work launched before it that had not yet finished."""
    starts, ends = np.sort(launch_start, kind="stable"), np.sort(work_end, kind="stable")  # nearly sorted: fast
    return np.searchsorted(starts, launch_start, side="left") - np.searchsorted(ends, launch_start, side="right")


WHERE_ROWS = 5


def _where(export: GpuTimeline, calls: pd.DataFrame) -> list[dict]:
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
        thread = names.get(tid) or (f"thread {int(tid) % 0x1000000}" if tid >= 0 else "an unnamed thread")
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


def _call_summary(calls: pd.DataFrame) -> dict:
    """Count and host time of some calls, and the APIs that took most of it."""
    by_api = calls.groupby("api", observed=True)["duration_ns"].agg(["count", "sum"])
    top = by_api.sort_values("sum", ascending=False).head(5)
    return {"count": len(calls), "host_ns": int(calls["duration_ns"].sum()),
            "apis": [{"api": str(api), "count": int(row["count"]), "host_ns": int(row["sum"])} for api, row in top.iterrows()]}


def _copies(export: GpuTimeline, window_calls: pd.DataFrame, window: Window, ceiling: Ceiling | None) -> dict:
    """`window_calls`: HostCalls.others in the window."""
    """Copies in the window: all, and those with a pageable side (count, bytes, GPU time), the host
    time blocked in copy calls, and per direction the pageable copies with the pinned rate they are
    held against (`pageable`)."""
    every = export.memcpys.assign(pageable=pageable_copies(export.memcpys))
    copies = every[(every["start_ns"] >= window.start_ns) & (every["start_ns"] < window.end_ns)]
    pageable = copies[copies["pageable"]]
    blocking = window_calls[window_calls["blocking"].to_numpy() & (window_calls["kind"] == COPY).to_numpy()]
    directions = []
    for direction, group in pageable.groupby(pageable["copy_kind"].astype(str), observed=True):
        rate, source = _pinned_rate(every, direction, ceiling)
        directions.append({"direction": direction, "count": len(group), "bytes": int(group["bytes"].sum()),
                           "gpu_ns": int(group["duration_ns"].sum()), "pinned_bytes_per_s": rate, "rate_source": source})
    return {"count": len(copies), "bytes": int(copies["bytes"].sum()), "gpu_ns": int(copies["duration_ns"].sum()),
            "pageable_count": len(pageable), "pageable_bytes": int(pageable["bytes"].sum()),
            "pageable_gpu_ns": int(pageable["duration_ns"].sum()), "pageable": directions,
            "blocking_calls": len(blocking), "blocking_host_ns": int(blocking["duration_ns"].sum())}


PINNED_SAMPLE_BYTES = 1 << 20  # pinned copies this large or larger show the bus's rate (smaller ones, its latency)


def _pinned_rate(copies: pd.DataFrame, direction: str, ceiling: Ceiling | None) -> tuple[float | None, str | None]:
    """The pinned rate of one direction: the GPU's measured bus, else the capture's own large pinned
    copies of that direction (`copies` with a `pageable` column); (None, None) where neither says."""
    measured = {"Host-to-Device": ceiling.h2d_tbyte_per_s, "Device-to-Host": ceiling.d2h_tbyte_per_s} if ceiling else {}
    bus = measured.get(direction)
    if bus:
        return 1e12 * bus, "the GPU's bus as nsprof ceilings measured it"
    kinds = {"Host-to-Device": ("src_kind", "Pinned"), "Device-to-Host": ("dst_kind", "Pinned")}
    if direction not in kinds or kinds[direction][0] not in copies:
        return None, None
    side, pinned_kind = kinds[direction]
    pinned = copies[(copies["copy_kind"].astype(str) == direction) & (copies[side].astype(str) == pinned_kind)
                    & (copies["bytes"] >= PINNED_SAMPLE_BYTES)]
    if pinned.empty or not pinned["duration_ns"].sum():
        return None, None
    return 1e9 * float(pinned["bytes"].sum() / pinned["duration_ns"].sum()), "this capture's pinned copies of 1 MiB or more"


def _median(values) -> float | None:
    values = np.asarray(values, dtype=np.float64)
    return float(np.median(values)) if len(values) else None


def verdict(host: dict) -> dict:
    """The verdict (module docstring) of host_side's figures: `verdict`, `rule`, `evidence`."""
    devices = host["devices"]
    busiest = max(devices, key=lambda device: device["busy_ns"])
    busy_pct = busiest["busy_pct"]
    copy_share = busiest["copy_busy_ns"] / busiest["busy_ns"] if busiest["busy_ns"] else 0.0
    causes = busiest["idle_causes"]
    top_cause = max(causes, key=causes.__getitem__) if any(causes.values()) else None
    if busy_pct >= BUSY_PCT or top_cause is None:
        said = TRANSFER_BOUND if copy_share >= COPY_SHARE else GPU_BOUND
    else:
        said = VERDICT_OF_CAUSE[top_cause]
        if said == GPU_BOUND and copy_share >= COPY_SHARE:
            said = TRANSFER_BOUND
    evidence = {"device_id": busiest["device_id"], "busy_pct": busy_pct, "copy_share_pct": 100 * copy_share,
                "idle_ns": busiest["idle_ns"], "top_idle_cause": top_cause,
                "top_idle_cause_pct": 100 * causes[top_cause] / busiest["idle_ns"] if top_cause and busiest["idle_ns"]
                else None}
    return {"verdict": said, "rule": RULE, "evidence": evidence}


def host_fixes(host: dict) -> list[dict]:
    """Each host-side cause of idle time as a fix: what, its saving (the idle time it caused on the
    busiest device: the GPU cannot gain more than it waited), what bounds it, and the evidence."""
    busiest = max(host["devices"], key=lambda device: device["busy_ns"])
    causes = busiest["idle_causes"]
    launches, waits, copies = host["launches"], host["waits"], host["copies"]
    evidence = {
        LAUNCHING: f"{launches['count']:,} launches ({_rate(launches['per_s'])}), median kernel "
                   f"{_us(launches['median_kernel_ns'])}, {_us(launches['median_between_ns'])} of host time between "
                   f"launches, queue empty at {_pct(launches['empty_queue_pct'])} of them",
        HOST_WORK: f"host gaps over {HOST_WORK_NS / 1e3:.0f} us between launches",
        WAITED: f"{waits['count']:,} waits, {_us(waits['host_ns'], 0)} blocked"
                + (f" ({', '.join(api['api'] for api in waits['apis'][:2])})" if waits["apis"] else ""),
        COPY_WAITED: f"{copies['blocking_calls']:,} blocking copies, {_us(copies['blocking_host_ns'], 0)} blocked; "
                     f"{copies['pageable_count']:,} pageable ({copies['pageable_bytes'] / 1e6:,.1f} MB)",
        LOADED: f"{host['loading']['count']:,} module loading and {host['allocation']['count']:,} allocation calls, "
                f"{_us(host['loading']['host_ns'] + host['allocation']['host_ns'], 0)}",
    }
    fixes = [{"kind": "host", "cause": cause, "fix": FIXES[cause], "saving_ns": int(causes[cause]),
              "bound": "the idle it caused", "evidence": evidence[cause]}
             for cause in FIXES if causes.get(cause, 0) > 0]
    # a few bytes copied from pageable memory cost latency, not bandwidth: a wait, counted as one above
    fixes += [_pageable_fix(direction) for direction in copies["pageable"] if direction["bytes"] >= PINNED_SAMPLE_BYTES]
    return sorted(fixes, key=lambda fix: -fix["saving_ns"])


PAGEABLE = "pageable copies"


def _pageable_fix(direction: dict) -> dict:
    """Pageable copies of one direction as a fix: pinned memory moves them at the pinned rate, so the
    saving is at most their time less their bytes at that rate (their whole time where no rate is known)."""
    rate = direction["pinned_bytes_per_s"]
    floor = 1e9 * direction["bytes"] / rate if rate else 0.0
    saving = max(0, int(direction["gpu_ns"] - floor))
    bound = f"their time at {rate / 1e9:,.1f} GB/s" if rate else "their whole time"
    pinned = (f"pinned rate: {direction['rate_source']}" if rate else
              "no pinned rate known (nsprof ceilings measures the bus)")
    achieved = 1e9 * direction["bytes"] / direction["gpu_ns"] if direction["gpu_ns"] else 0.0
    return {"kind": "copy", "cause": f"{PAGEABLE} {direction['direction']}", "fix": FIXES[COPY_WAITED],
            "saving_ns": saving, "bound": bound,
            "evidence": f"{direction['count']:,} {'copy' if direction['count'] == 1 else 'copies'}, "
                        f"{direction['bytes'] / 1e6:,.1f} MB at {achieved / 1e9:,.1f} GB/s; "
                        f"{pinned}"}


def _us(ns, digits: int = 1) -> str:
    if ns is None:
        return "-"
    return f"{ns / 1e3:,.{digits}f} us" if ns < 1e7 else f"{ns / 1e6:,.1f} ms"


def _rate(per_s) -> str:
    return "-" if per_s is None else f"{per_s:,.0f}/s"


def _pct(value) -> str:
    return "-" if value is None else f"{value:.0f}%"
