"""Everything nsprof reports about one profile, as DataFrames (pure functions): the one place an
analysis of a capture is assembled, for `nsprof analyze`, the report, the ladder and `nsprof diff`
alike (diff asks for the parts it compares, `for_diff`, and reads nothing else)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from nsprof.analyze.capture_facts import distinct_launches, gpu_launches, gpu_name, gpu_totals
from nsprof.analyze.gpu_utilization import gpu_utilization
from nsprof.analyze.host_side import host_side
from nsprof.analyze.hot_kernels import capture_hot_kernels, launch_table
from nsprof.analyze.kernel_groups import kernel_groups
from nsprof.analyze.ladder import combine, with_peaks, work_records
from nsprof.analyze.launch_findings import missing_metrics, rule_results
from nsprof.analyze.nvtx_attribution import (
    THREAD,
    attribute_work,
    launching_calls,
    summarize_range_families,
    summarize_ranges,
    unattributed_work,
)
from nsprof.analyze.program_harness import SteadyState, steady_part
from nsprof.analyze.summaries import kernel_family_summary, kernel_summary, memcpy_summary
from nsprof.analyze.triton_kernels import triton_kernels
from nsprof.ceilings.peaks import Ceiling, datasheet_ceiling
from nsprof.parse.model import CpuRung, GpuTimeline, LaunchCounters

# The timeline columns analyze_profile reads (nsprof.parse.nsys_sqlite.load_nsys's `columns`): a
# 10M-kernel export's whole kernels and runtime frames would not fit the memory it is analyzed in.
ANALYSIS_COLUMNS = {
    "kernels": ("start_ns", "end_ns", "duration_ns", "device_id", "stream_id", "correlation_id", "global_pid", "kernel",
                "mangled_name",
                "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "dynamic_smem_bytes",
                "operator"),  # a framework trace's (torch.profiler): what launched each kernel
    "runtime": ("start_ns", "end_ns", "correlation_id", "global_tid", "api"),
}


@dataclass(frozen=True)
class ProfileAnalysis:
    ranges: pd.DataFrame | None  # nsys: range_summary columns; None without an nsys export
    kernels: pd.DataFrame | None  # ncu: kernel_metrics and launch_findings columns (+ % of peak); None without ncu
    stages: pd.DataFrame  # nsprof.analyze.ladder's work columns, for the profile's stages: the figures report and roofline show
    gpu: str | None
    ceiling: Ceiling | None
    kernel_summary: pd.DataFrame | None = None  # nsys: nsprof.analyze.summaries; None without an nsys export
    memcpy_summary: pd.DataFrame | None = None
    unattributed: dict | None = None  # nsys: the kernels no NVTX range received (nvtx_attribution.unattributed_work)
    rules: pd.DataFrame | None = None  # ncu: launch_findings.rule_results; None without ncu
    missing_metrics: dict | None = None  # ncu: launch_findings.missing_metrics; None without ncu
    gpu_utilization: list[dict] | None = None  # nsys: nsprof.analyze.gpu_utilization, per device
    attribution: str = THREAD  # whose API calls an NVTX range counts (nsprof.analyze.nvtx_attribution)
    launches: pd.DataFrame | None = None  # ncu: every profiled launch once, with its raw metric columns
    kernel_groups: pd.DataFrame | None = None  # ncu: `kernels` per kernel and launch configuration (nsprof.analyze.kernel_groups)
    hot_kernels: pd.DataFrame | None = None  # nsys (+ ncu): nsprof.analyze.hot_kernels; None without nsys
    harness: dict | None = None  # nsys: harness work, nsprof's own and programs' (harness_summary); None without nsys
    range_families: pd.DataFrame | None = None  # nsys: nvtx_attribution.summarize_range_families; None without nsys
    kernel_families: pd.DataFrame | None = None  # nsys: summaries.kernel_family_summary; None without families
    triton_kernels: pd.DataFrame | None = None  # nsys + the capture's Triton cache: nsprof.analyze.triton_kernels
    manifest: dict | None = None  # what ran (nsprof's manifest.json); None for a bare export
    # nsprof.analyze.ladder.work_records: every piece of work, stages among them (what the ladder combines)
    work: pd.DataFrame = field(default_factory=pd.DataFrame)
    nsys_versions: tuple[str, ...] = ()  # the versions of nsys that wrote the exports
    timeline_tool: str = "nsys"  # what wrote the timelines, as tables name their source (GpuTimeline.tool)
    # for_diff only: every kernel and graph launch (capture_facts.gpu_launches), the summed kernel
    # and copy time (capture_facts.gpu_totals), and every range instance (nvtx_attribution.attribute_work)
    launch_times: pd.DataFrame | None = None
    gpu_totals: dict | None = None
    range_instances: pd.DataFrame | None = None
    gpu_ids: tuple[str, ...] = ()  # the captured GPUs' UUIDs (nsys): whether two captures ran on one card
    # nsys, one program's capture: why the GPU waits (nsprof.analyze.host_side: window, figures, verdict, fixes)
    host: dict | None = None


def analyze_profile(nsys: list[GpuTimeline], ncu: list[LaunchCounters], manifest: dict | None = None,
                    ceiling: Ceiling | None = None, attribution: str = THREAD,
                    triton: pd.DataFrame | None = None, for_diff: bool = False,
                    cpu: CpuRung | None = None) -> ProfileAnalysis:
    """Attribute nsys GPU work to NVTX ranges (by `attribution`: THREAD or PROCESS), derive ncu
    kernel metrics, and each stage's figures as every report shows them (nsprof.analyze.ladder).

    Several ncu files may hold the same launches (the raw and details pages of one run): a launch
    is kept once, from a report or raw page if there is one (they carry every metric). `ceiling` is the
    GPU's as the commands resolve it (nsprof.ceilings.resolve.resolve_ceiling: measured values laid
    over the datasheet); without one, the datasheet's peaks for the GPU the profile names. `triton`:
    the kernels the program's Triton compiled (nsprof.parse.triton_cache), where the capture kept them.
    `for_diff`: only what `nsprof diff` compares (_diff_parts), no ceilings needed. `cpu`: the CPU
    stages timed beside the capture (its bench-cpu.json), shown as work beside the GPU stages.
    """
    gpu = gpu_name(nsys, ncu, manifest)
    calls = [launching_calls(export) for export in nsys]  # joined once: the ranges and what they missed both read it
    attributed = pd.concat([attribute_work(export, attribution, launched)
                            for export, launched in zip(nsys, calls)], ignore_index=True) if nsys else None
    ranges = summarize_ranges(attributed) if attributed is not None else None
    if for_diff:
        return _diff_parts(nsys, ncu, manifest, gpu, attribution, ranges, attributed)
    ceiling = ceiling if ceiling is not None else datasheet_ceiling(gpu)
    families = summarize_range_families(attributed) if attributed is not None else None
    del attributed
    unattributed = unattributed_work(nsys, attribution, calls) if nsys else None
    del calls  # a call table per export: freed before the other analyses build theirs
    kernels = rules = missing = launches = None
    if ncu:
        launches = distinct_launches(ncu)
        kernels = launch_table(launches, ceiling)
        rules, missing = rule_results(ncu), missing_metrics(launches, manifest)
    summaries: tuple[pd.DataFrame | None, pd.DataFrame | None, dict | None] = (
        (kernel_summary(nsys), memcpy_summary(nsys), unattributed) if nsys else (None, None, None))
    records = work_records(launches, ranges, cpu)
    work = with_peaks(combine([("", None, records)]), ceiling, cpu.ceilings if cpu else None)
    stages = work[work["stage"].notna()].reset_index(drop=True)
    steady = steady_part(nsys) if nsys else None
    hot, harness = capture_hot_kernels(nsys, kernels, rules, steady=steady) if steady else (None, None)
    host = _program_host(nsys, steady, ceiling) if stages.empty else None  # a ladder's harness is no program
    return ProfileAnalysis(ranges, kernels, stages, gpu, ceiling, *summaries, rules, missing,
                           gpu_utilization(nsys) if nsys else None, attribution, launches,
                           None if kernels is None else kernel_groups(kernels), hot, harness, families,
                           kernel_family_summary(nsys) if nsys else None,
                           triton_kernels(nsys, triton) if nsys and triton is not None else None,
                           manifest=manifest, work=records, nsys_versions=_nsys_versions(nsys), host=host,
                           timeline_tool=timeline_tool(nsys))


def _diff_parts(nsys: list[GpuTimeline], ncu: list[LaunchCounters], manifest: dict | None, gpu: str | None,
                attribution: str, ranges: pd.DataFrame | None, attributed: pd.DataFrame | None) -> ProfileAnalysis:
    """The analysis `nsprof diff` reads: ranges and their instances, ncu's launches with their
    findings (no % of peak: no ceiling), stages, rules, utilization, and nsys's launches and totals."""
    launches = distinct_launches(ncu) if ncu else None
    kernels = launch_table(launches, None) if launches is not None else None
    work = work_records(launches, ranges)
    stages = work[work["stage"].notna()].reset_index(drop=True) if "stage" in work else work
    return ProfileAnalysis(ranges, kernels, stages, gpu, None, rules=rule_results(ncu) if ncu else None, work=work,
                           gpu_utilization=gpu_utilization(nsys) if nsys else None, attribution=attribution,
                           launches=launches, manifest=manifest, nsys_versions=_nsys_versions(nsys),
                           timeline_tool=timeline_tool(nsys),
                           launch_times=gpu_launches(nsys) if nsys else None,
                           gpu_totals=gpu_totals(nsys) if nsys else None, range_instances=attributed,
                           gpu_ids=_gpu_ids(nsys),
                           host=_program_host(nsys, steady_part(nsys) if nsys else None, None) if stages.empty else None)


def _gpu_ids(nsys: list[GpuTimeline]) -> tuple[str, ...]:
    """The UUIDs of the GPUs the exports name (none where they do not say)."""
    return tuple(sorted({str(uuid) for export in nsys if "uuid" in export.gpus for uuid in export.gpus["uuid"].dropna()}))


def _program_host(nsys: list[GpuTimeline], steady: tuple[list[GpuTimeline], SteadyState | None] | None,
                  ceiling: Ceiling | None) -> dict | None:
    """The host side (nsprof.analyze.host_side) of a capture of one program: one nsys export."""
    return host_side(nsys[0], steady[1], ceiling) if steady is not None and len(nsys) == 1 else None


def timeline_tool(nsys: list[GpuTimeline]) -> str:
    """What wrote the timelines, in words: 'nsys', 'torch.profiler', or both joined by ' + '."""
    return " + ".join(sorted({export.tool for export in nsys})) or "nsys"


def _nsys_versions(nsys: list[GpuTimeline]) -> tuple[str, ...]:
    return tuple(sorted({export.nsys_version for export in nsys if export.nsys_version}))

