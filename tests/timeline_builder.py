"""GpuTimelines built by hand, without nsys or any export: a few rows per table in the model's own
columns and declared types (nsprof.parse.model.TIMELINE_COLUMNS), so that an analysis can be tested on a timeline
whose every number the test wrote (proton's style of kilobyte fixtures)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from nsprof.parse.model import TIMELINE_COLUMNS, GpuTimeline


def frame(table: str, rows: list[dict]) -> pd.DataFrame:
    """`rows` as `table`'s frame: every column the model declares, in its declared type, durations
    derived from the start and end the rows give."""
    declared = TIMELINE_COLUMNS[table]
    data = pd.DataFrame(rows, columns=list(declared))
    if "duration_ns" in data:
        data["duration_ns"] = data["end_ns"] - data["start_ns"]
    for name, column in declared.items():
        if column.type != "text":
            data[name] = data[name].astype(column.type)
    return data


def kernel(name: str, start: int, end: int, correlation: int, stream: int = 7, pid: int = 100) -> dict:
    return {"start_ns": start, "end_ns": end, "device_id": 0, "stream_id": stream, "correlation_id": correlation,
            "global_pid": pid, "pid": pid, "kernel": name, "short_name": name, "mangled_name": name,
            "grid_x": 64, "grid_y": 1, "grid_z": 1, "block_x": 128, "block_y": 1, "block_z": 1,
            "registers_per_thread": 32, "static_smem_bytes": 0, "dynamic_smem_bytes": 0}


def call(api: str, start: int, end: int, correlation: int, tid: int = 100, pid: int = 100) -> dict:
    return {"start_ns": start, "end_ns": end, "correlation_id": correlation, "global_tid": tid, "pid": pid, "tid": tid,
            "api": api}


def nvtx_range(name: str, start: int, end: int, tid: int = 100, pid: int = 100) -> dict:
    return {"start_ns": start, "end_ns": end, "kind": "push_pop", "domain": None, "name": name, "range": name,
            "global_tid": tid, "pid": pid, "tid": tid}


def copy(start: int, end: int, correlation: int, size: int, kind: str = "Host-to-Device", source: str = "Pinned",
         stream: int = 7, pid: int = 100) -> dict:
    return {"start_ns": start, "end_ns": end, "device_id": 0, "stream_id": stream, "correlation_id": correlation,
            "global_pid": pid, "pid": pid, "bytes": size, "copy_kind": kind, "src_kind": source, "dst_kind": "Device"}


def timeline(kernels: list[dict], runtime: list[dict], nvtx: list[dict] = (), memcpys: list[dict] = (),
             gpu: str = "NVIDIA H200") -> GpuTimeline:
    """A GpuTimeline of these rows on one GPU, nothing else captured (no memsets, graphs, syncs)."""
    gpus = pd.DataFrame([{"device_id": 0, "name": gpu, "chip": "GH100", "bus_location": "0000:00:06.0", "sm_count": 132,
                          "clock_hz": 1_980_000_000, "memory_bytes": 150_000_000_000,
                          "memory_bandwidth_bytes_per_s": 4_800_000_000_000, "l2_cache_bytes": 62_914_560,
                          "compute_capability": "9.0", "uuid": "hand-built-0"}], columns=list(TIMELINE_COLUMNS["gpus"]))
    threads = pd.DataFrame({"global_tid": [100], "pid": [100], "tid": [100], "name": ["main"]})
    return GpuTimeline(Path("hand-built"), None, frame("kernels", list(kernels)), frame("memcpys", list(memcpys)),
                       frame("memsets", []), frame("runtime", list(runtime)), frame("nvtx", list(nvtx)), gpus,
                       frame("graphs", []), frame("syncs", []), threads)
