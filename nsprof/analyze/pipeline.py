"""What bounds the whole flow of a matrix product, and where its time went (pure functions).

- `bus_floor`: the least time the bytes that must cross the bus can take at the measured pinned
  bandwidths (`nsprof ceilings`): `floor_ms` with both directions overlapped (the larger of the
  two), `sequential_floor_ms` one after the other.
- `flow_breakdown`: from an nsys capture of `nsprof pipeline`, per variant (NVTX range
  pipeline/<op>/<stage>/<variant>/<MxNxK>), the median over its flows of the GPU time in
  host-to-device copies, kernels (memsets and device copies included; the watched variant's
  watch_rows, which only waits for A's rows to land, is not counted as work), device-to-host copies,
  `overlap_ms` (time two of them ran at once: their sum less their union), and `idle_ms` (the GPU
  span of the flow, first operation to last, less their union). Work belongs to a flow when its
  API call started inside the flow's range, on any thread of the process.
- `fastest_flow_timeline`: the GPU work of the fastest warm variant's flows, and the window they
  span, as the report draws them.
- `copy_facts`: any capture's copy rates by direction and host-memory kind, and how much the
  copies overlapped each other and the kernels (what `nsprof explain pipeline` says).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from nsprof.analyze.gpu_events import DTOH, HTOD, KERNEL, capture_origin, covered_ns, gpu_events, range_window
from nsprof.analyze.pipeline_types import BusFloor, CopyFacts, CopyRate, FastestFlow
from nsprof.ceilings.peaks import Ceiling
from nsprof.parse.model import GpuTimeline
from nsprof.ranges import pipeline_range
from nsprof.sizes import parse_label

BREAKDOWN_COLUMNS = ("range", "flows", "h2d_ms", "kernel_ms", "d2h_ms", "overlap_ms", "idle_ms", "gpu_span_ms")
WAITING_KERNELS = ("watch_rows",)  # kernels that spin until a copy lands (kernels/common/watch_rows.cu)


def bus_floor(bytes_in: int, bytes_out: int, ceiling: Ceiling | None) -> BusFloor:
    """The least time the bytes can take over the bus; its times are None when the bandwidths were not
    measured."""
    h2d = ceiling.h2d_tbyte_per_s if ceiling else None
    d2h = ceiling.d2h_tbyte_per_s if ceiling else None
    if ceiling is None or not h2d or not d2h:
        return {"floor_ms": None, "sequential_floor_ms": None, "h2d_gbyte_per_s": None, "d2h_gbyte_per_s": None,
                "source": "not measured: run nsprof ceilings on this GPU"}
    t_in, t_out = bytes_in / (h2d * 1e12) * 1e3, bytes_out / (d2h * 1e12) * 1e3
    return {"floor_ms": max(t_in, t_out), "sequential_floor_ms": t_in + t_out, "h2d_gbyte_per_s": h2d * 1e3,
            "d2h_gbyte_per_s": d2h * 1e3, "source": ceiling.source_of("h2d_tbyte_per_s")}


def against_floor(records: list[dict], floor_of) -> list[dict]:
    """Each record with its bus floor (`floor_of(bytes_in, bytes_out)`, bus_floor's dict) and
    `x_floor`: its time over the overlapped floor. Cold records use their wall clock."""
    out = []
    for record in records:
        floor = floor_of(record.get("bytes_in") or 0, record.get("bytes_out") or 0)
        time_ms = record.get("median_ms") if record.get("median_ms") is not None else record.get("wall_ms")
        out.append({**record, "floor_ms": floor["floor_ms"], "sequential_floor_ms": floor["sequential_floor_ms"],
                    "x_floor": time_ms / floor["floor_ms"] if time_ms is not None and floor["floor_ms"] else None})
    return out


def flow_breakdown(export: GpuTimeline, events: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """BREAKDOWN_COLUMNS, one row per range name starting with `prefix`. `events`: gpu_events([export])."""
    ranges = export.nvtx[export.nvtx["name"].str.startswith(prefix)].dropna(subset=["start_ns", "end_ns"])
    calls = export.runtime.dropna(subset=["correlation_id"])
    working = events[~events["name"].isin(WAITING_KERNELS)]  # once for every flow: waiting is not work
    by_call = working.dropna(subset=["correlation_id"]).groupby("correlation_id")
    rows = []
    for name, instances in ranges.groupby("name", sort=False):
        flows = []
        for row in instances.itertuples(index=False):
            inside = calls[(calls["pid"] == row.pid) & (calls["start_ns"] >= row.start_ns) & (calls["start_ns"] < row.end_ns)]
            ids = [cid for cid in inside["correlation_id"].astype("int64") if cid in by_call.groups]
            if ids:
                flows.append(_one_flow(pd.concat([by_call.get_group(cid) for cid in ids])))
        if flows:
            rows.append({"range": name, "flows": len(flows),
                         **{key: float(np.median([flow[key] for flow in flows])) for key in BREAKDOWN_COLUMNS[2:]}})
    return pd.DataFrame(rows, columns=list(BREAKDOWN_COLUMNS))


def _one_flow(work: pd.DataFrame) -> dict:
    def union(mask) -> int:
        return covered_ns(work["start_ns"][mask].to_numpy(), work["end_ns"][mask].to_numpy())

    h2d, d2h = union(work["kind"] == HTOD), union(work["kind"] == DTOH)
    kernel = union(~work["kind"].isin([HTOD, DTOH]))
    busy = union(np.ones(len(work), dtype=bool))
    span = int(work["end_ns"].max() - work["start_ns"].min())
    ms = 1e-6
    return {"h2d_ms": h2d * ms, "kernel_ms": kernel * ms, "d2h_ms": d2h * ms, "overlap_ms": (h2d + kernel + d2h - busy) * ms,
            "idle_ms": (span - busy) * ms, "gpu_span_ms": span * ms}


def copy_facts(nsys: list[GpuTimeline]) -> CopyFacts:
    """Copy rates by direction and host-memory kind (`copy_rates`, for directions that moved a MiB or
    more: the rates of tiny copies are latency, not bandwidth), and the union of each kind of GPU work
    and of their overlaps, in ms: `h2d_ms`, `d2h_ms`, `kernel_ms`, `both_directions_at_once_ms`,
    `copies_during_kernels_ms`."""
    copies = pd.concat([export.memcpys for export in nsys], ignore_index=True)
    rates: list[CopyRate] = []
    pageable = (copies["src_kind"] == "Pageable") | (copies["dst_kind"] == "Pageable")
    for (direction, is_pageable), group in copies.assign(pageable=pageable).groupby(["copy_kind", "pageable"]):
        if group["bytes"].sum() >= 1 << 20:
            rates.append({"direction": str(direction), "host_memory": "pageable" if is_pageable else "pinned or device",
                          "copies": len(group), "bytes": int(group["bytes"].sum()),
                          "gbytes_per_s": float(group["bytes"].sum() / group["duration_ns"].sum())})
    events = gpu_events(nsys)

    def union(mask) -> int:
        return covered_ns(events["start_ns"][mask].to_numpy(), events["end_ns"][mask].to_numpy())

    h2d, d2h, kernels = (union(events["kind"] == kind) for kind in (HTOD, DTOH, KERNEL))
    both_copies = h2d + d2h - union(events["kind"].isin([HTOD, DTOH]))
    copy_and_kernel = (h2d + d2h - both_copies) + kernels - union(events["kind"].isin([HTOD, DTOH, KERNEL]))
    return {"copy_rates": rates, "h2d_ms": h2d / 1e6, "d2h_ms": d2h / 1e6, "kernel_ms": kernels / 1e6,
            "both_directions_at_once_ms": both_copies / 1e6, "copies_during_kernels_ms": copy_and_kernel / 1e6}


def fastest_flow(document: dict | None) -> FastestFlow | None:
    """An `nsprof pipeline` record's fastest warm variant (`best`), the tutorial's pageable flow of
    the same stage (`pageable`), the size and the bus floor; None without a timed warm variant."""
    warm = [r for r in (document or {}).get("records", []) if r.get("median_ms") is not None and r["variant"] != "cold"]
    if not warm:
        return None
    best = min(warm, key=lambda r: r["median_ms"])
    tutorial = next((r for r in warm if r["variant"] == "pageable" and r["stage"] == best["stage"]), None)
    return {"size": best["size"], "best": best, "pageable": tutorial, "floor": (document or {}).get("floor")}


@dataclass(frozen=True)
class FlowTimeline:
    """The fastest warm variant's flows on the timeline: its record, every GPU operation and NVTX
    range of the capture (nsprof.analyze.gpu_events), the window its flows span, and the capture's
    origin (times are drawn from it)."""

    best: dict
    events: pd.DataFrame
    ranges: pd.DataFrame
    window: tuple[int, int]
    origin: int


def fastest_flow_timeline(nsys: list[GpuTimeline], document: dict | None) -> FlowTimeline | None:
    """FlowTimeline of an `nsprof pipeline` capture; None without a timed warm variant, an nsys
    export, or a range of that variant in it."""
    fastest = fastest_flow(document)
    if fastest is None or not nsys:
        return None
    best = fastest["best"]
    events = gpu_events(nsys)
    window = range_window(nsys, events, pipeline_range(best["op"], best["stage"], best["variant"], parse_label(best["size"])))
    if window is None:
        return None
    ranges = pd.concat([export.nvtx for export in nsys], ignore_index=True)
    return FlowTimeline(best, events, ranges, window, capture_origin(events, ranges))
