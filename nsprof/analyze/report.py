"""Everything `nsprof analyze` reports about one profile, as DataFrames (pure functions)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from nsprof.analyze.ceilings import Ceiling, datasheet_ceiling, percent_of_peak
from nsprof.analyze.metrics import kernel_metrics, range_metrics
from nsprof.analyze.nvtx_attribution import attribute_work, summarize_ranges
from nsprof.analyze.stages import stage_records
from nsprof.parse.ncu_csv import NcuReport
from nsprof.parse.nsys_sqlite import NsysExport

GPU_NAME_METRIC = "device__attribute_display_name"


@dataclass(frozen=True)
class ProfileAnalysis:
    ranges: pd.DataFrame | None  # nsys: range_summary columns; None without an nsys export
    kernels: pd.DataFrame | None  # ncu: kernel_metrics columns (+ % of peak); None without ncu CSV
    stages: pd.DataFrame  # stage_records columns
    gpu: str | None
    ceiling: Ceiling | None


def analyze_profile(nsys: list[NsysExport], ncu: list[NcuReport], manifest: dict | None = None) -> ProfileAnalysis:
    """Attribute nsys GPU work to NVTX ranges, derive ncu kernel metrics, and join both per stage.

    When a directory holds both pages of the same ncu run, only the raw page is used, so that no
    kernel counts twice.
    """
    gpu = gpu_name(nsys, ncu, manifest)
    ceiling = datasheet_ceiling(gpu)
    ranges = summarize_ranges(pd.concat([attribute_work(export) for export in nsys], ignore_index=True)) if nsys else None
    kernels = ncu_ranges = None
    reports = [report for report in ncu if report.page == "raw"] or ncu
    if reports:
        kernels = pd.concat([kernel_metrics(report.kernels) for report in reports], ignore_index=True)
        ncu_ranges = range_metrics(kernels)
        if ceiling is not None:
            kernels = percent_of_peak(kernels, ceiling)
            ncu_ranges = percent_of_peak(ncu_ranges, ceiling)
    return ProfileAnalysis(ranges, kernels, stage_records(ranges, ncu_ranges), gpu, ceiling)


def gpu_name(nsys: list[NsysExport], ncu: list[NcuReport], manifest: dict | None) -> str | None:
    """The GPU's name as nsys, ncu (if it collected the device name) or the manifest reports it."""
    for export in nsys:
        if len(export.gpus):
            return str(export.gpus["name"].iloc[0])
    for report in ncu:
        if GPU_NAME_METRIC in report.kernels and len(report.kernels):
            return str(report.kernels[GPU_NAME_METRIC].iloc[0])
    device = (manifest or {}).get("device")
    if isinstance(device, dict):
        device = device.get("name")
    return device if isinstance(device, str) else None
