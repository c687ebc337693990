"""Everything `nsprof analyze` reports about one profile, as DataFrames (pure functions)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from nsprof.analyze.ceilings import percent_of_peak
from nsprof.gpu_ceilings import Ceiling, datasheet_ceiling
from nsprof.analyze.launch_findings import launch_findings, missing_metrics, rule_results
from nsprof.analyze.metrics import kernel_metrics, range_metrics
from nsprof.analyze.gpu_utilization import gpu_utilization
from nsprof.analyze.nvtx_attribution import THREAD, attribute_work, summarize_ranges, unattributed_work
from nsprof.analyze.stages import stage_records
from nsprof.analyze.summaries import kernel_summary, memcpy_summary
from nsprof.parse.ncu_csv import NcuReport
from nsprof.parse.nsys_sqlite import NsysExport

GPU_NAME_METRIC = "device__attribute_display_name"


@dataclass(frozen=True)
class ProfileAnalysis:
    ranges: pd.DataFrame | None  # nsys: range_summary columns; None without an nsys export
    kernels: pd.DataFrame | None  # ncu: kernel_metrics and launch_findings columns (+ % of peak); None without ncu
    stages: pd.DataFrame  # stage_records columns
    gpu: str | None
    ceiling: Ceiling | None
    kernel_summary: pd.DataFrame | None = None  # nsys: nsprof.analyze.summaries; None without an nsys export
    memcpy_summary: pd.DataFrame | None = None
    unattributed: dict | None = None  # nsys: the kernels no NVTX range received (nvtx_attribution.unattributed_work)
    rules: pd.DataFrame | None = None  # ncu: launch_findings.rule_results; None without ncu
    missing_metrics: dict | None = None  # ncu: launch_findings.missing_metrics; None without ncu
    gpu_utilization: list[dict] | None = None  # nsys: nsprof.analyze.gpu_utilization, per device
    attribution: str = THREAD  # whose API calls an NVTX range counts (nsprof.analyze.nvtx_attribution)


def analyze_profile(nsys: list[NsysExport], ncu: list[NcuReport], manifest: dict | None = None,
                    ceiling: Ceiling | None = None, attribution: str = THREAD) -> ProfileAnalysis:
    """Attribute nsys GPU work to NVTX ranges (by `attribution`: THREAD or PROCESS), derive ncu
    kernel metrics, and join both per stage.

    Several ncu files may hold the same launches (the raw and details pages of one run): a launch
    is kept once, from a report or raw page if there is one (they carry every metric). `ceiling` is the
    GPU's as the commands resolve it (nsprof.parse.sources.resolve_ceiling: measured values laid
    over the datasheet); without one, the datasheet's peaks for the GPU the profile names.
    """
    gpu = gpu_name(nsys, ncu, manifest)
    ceiling = ceiling if ceiling is not None else datasheet_ceiling(gpu)
    ranges = summarize_ranges(pd.concat([attribute_work(export, attribution) for export in nsys], ignore_index=True)) \
        if nsys else None
    kernels = ncu_ranges = rules = missing = None
    if ncu:
        launches = distinct_launches(ncu)
        kernels = pd.concat([kernel_metrics(launches), launch_findings(launches)], axis=1)
        rules, missing = rule_results(ncu), missing_metrics(launches)
        ncu_ranges = range_metrics(kernels)
        if ceiling is not None:
            kernels = percent_of_peak(kernels, ceiling)
            ncu_ranges = percent_of_peak(ncu_ranges, ceiling)
    summaries = (kernel_summary(nsys), memcpy_summary(nsys), unattributed_work(nsys, attribution)) if nsys else (None,) * 3
    return ProfileAnalysis(ranges, kernels, stage_records(ranges, ncu_ranges), gpu, ceiling, *summaries, rules, missing,
                           gpu_utilization(nsys) if nsys else None, attribution)


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
