"""What a capture holds, whichever tools wrote it: every profiled launch once, and the GPU's name."""

from __future__ import annotations

import pandas as pd

from nsprof.parse.ncu_csv import NcuReport
from nsprof.parse.nsys_sqlite import NsysExport

GPU_NAME_METRIC = "device__attribute_display_name"


def distinct_launches(ncu: list[NcuReport]) -> pd.DataFrame:
    """Every profiled launch once, however many of the CSVs (pages) hold it."""
    raw_first = sorted(ncu, key=lambda report: report.page == "details")  # a report or raw page has every metric
    launches = pd.concat([report.kernels for report in raw_first], ignore_index=True)
    # ncu numbers launches from 0 in every run; the process id tells runs apart.
    key = [column for column in ("process_id", "id", "kernel") if column in launches]
    return launches.drop_duplicates(subset=key, keep="first").reset_index(drop=True)


def gpu_name(nsys: list[NsysExport], ncu: list[NcuReport], manifest: dict | None) -> str | None:
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


def _first_name(names: pd.Series) -> str | None:
    return next((str(name).strip() for name in names if not _missing(name) and str(name).strip()), None)


def _missing(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)
