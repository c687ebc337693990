"""What a capture holds, whichever tools wrote it: every profiled launch once, and the GPU's name."""

from __future__ import annotations

import numpy as np
import pandas as pd

from nsprof.analyze.launch_configs import LAUNCH_RESOURCES, LAUNCH_SIZES, combined_codes
from nsprof.parse.model import GpuTimeline, LaunchCounters

GPU_NAME_METRIC = "device__attribute_display_name"
GPU_LAUNCH_COLUMNS = ("name", "start_ns", "value_ns", "config", "operator")


def gpu_launches(nsys: list[GpuTimeline]) -> pd.DataFrame:
    """Every kernel and graph launch nsys traced, in GPU_LAUNCH_COLUMNS: its name, start and
    duration (`value_ns`), and its grid, block, registers and dynamic shared memory as one label ("" for a
    graph, or where the export holds no sizes), and the framework's operator that launched it where the timeline names one (XLA's
    module and op): what `nsprof diff` compares launch by launch."""
    frames = []
    for export in nsys:
        kernels, graphs = export.kernels, export.graphs
        frames.append(pd.DataFrame({"name": kernels["kernel"].astype(str), "start_ns": kernels["start_ns"],
                                    "value_ns": kernels["duration_ns"], "config": _launch_configs(kernels),
                                    "operator": kernels["operator"].astype(object) if "operator" in kernels else None}))
        frames.append(pd.DataFrame({"name": graphs["name"].astype(str), "start_ns": graphs["start_ns"],
                                    "value_ns": graphs["duration_ns"], "config": "", "operator": None}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(GPU_LAUNCH_COLUMNS))


def linked_share(nsys: list[GpuTimeline]) -> float | None:
    """The share of the kernels whose correlation id names a CUDA call of the runtime table: what
    links GPU work to the host (a range's GPU time, the idle causes); None without kernels."""
    total = linked = 0
    for export in nsys:
        kernels, runtime = export.kernels, export.runtime
        total += len(kernels)
        if not len(kernels) or "correlation_id" not in kernels or "correlation_id" not in runtime or runtime.empty:
            continue
        calls = runtime["correlation_id"].dropna().to_numpy(np.int64)
        linked += int(np.isin(kernels["correlation_id"].dropna().to_numpy(np.int64), calls).sum())
    return linked / total if total else None


def gpu_totals(nsys: list[GpuTimeline]) -> dict:
    """The summed durations of kernels (graph launches too) and of copies and memsets."""
    return {"kernel_ns": float(sum(e.kernels["duration_ns"].sum() + e.graphs["duration_ns"].sum() for e in nsys)),
            "copy_ns": float(sum(e.memcpys["duration_ns"].sum() + e.memsets["duration_ns"].sum() for e in nsys))}


def _launch_configs(kernels: pd.DataFrame) -> pd.Series:
    """Each launch's grid and block, and its registers per thread and dynamic shared memory where the export
    holds both, as one label ("" where the export holds no sizes)."""
    if kernels.empty or not all(column in kernels for column in LAUNCH_SIZES):  # (an empty row-wise agg is a frame)
        return pd.Series("", index=kernels.index, dtype=object)
    columns = [*LAUNCH_SIZES, *(LAUNCH_RESOURCES if all(c in kernels for c in LAUNCH_RESOURCES) else ())]
    # labels made once per distinct configuration (a million launches share a few dozen), then taken per launch
    codes = combined_codes(kernels[column].to_numpy() for column in columns)
    _, first = np.unique(codes, return_index=True)
    labels = kernels[columns].iloc[first].astype("Int64").astype(str).agg(",".join, axis=1).to_numpy(object)
    return pd.Series(labels[codes], index=kernels.index, dtype=object)


def distinct_launches(ncu: list[LaunchCounters]) -> pd.DataFrame:
    """Every profiled launch once, however many of the CSVs (pages) hold it."""
    raw_first = sorted(ncu, key=lambda report: report.page == "details")  # a report or raw page has every metric
    launches = pd.concat([report.kernels for report in raw_first], ignore_index=True)
    # ncu numbers launches from 0 in every run; the process id tells runs apart.
    key = [column for column in ("process_id", "id", "kernel") if column in launches]
    return launches.drop_duplicates(subset=key, keep="first").reset_index(drop=True)


def gpu_name(nsys: list[GpuTimeline], ncu: list[LaunchCounters], manifest: dict | None) -> str | None:
    """The GPU's name as nsys, ncu (if it collected the device name) or the manifest reports it;
    None when none of them names it (a NULL or empty name is no name)."""
    for export in nsys:
        if "name" in export.gpus and (name := _first_name(export.gpus["name"])):
            return name
    for report in ncu:
        if GPU_NAME_METRIC in report.kernels and (name := _first_name(report.kernels[GPU_NAME_METRIC])):
            return name
    device = (manifest or {}).get("device")
    if isinstance(device, dict):
        device = device.get("name")
    return (device.strip() or None) if isinstance(device, str) else None


def gpu_models(nsys: list[GpuTimeline]) -> list[str]:
    """The distinct GPU models the timelines name, in device order: more than one, and the capture
    spans machines of different kinds (its ceilings are the first's)."""
    names = [str(name).strip() for export in nsys if "name" in export.gpus
             for name in export.gpus.sort_values("device_id")["name"] if not _missing(name) and str(name).strip()]
    return list(dict.fromkeys(names))


def _first_name(names: pd.Series) -> str | None:
    return next((str(name).strip() for name in names if not _missing(name) and str(name).strip()), None)


def _missing(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)
