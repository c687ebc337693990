"""Why a ladder's stages have no time: the inputs each time could have come from, and what each lacks.

A stage's time comes from nsys (the kernels whose launch call ran inside its NVTX range, tied by
correlation id) or else from ncu (gpu__time_duration.sum): see nsprof.ladder_analysis.work._with_times.
"""

from __future__ import annotations

from nsprof.parse.model import GpuTimeline, LaunchCounters

NCU_TIME_METRIC = "gpu__time_duration.sum"


def untimed_ladder(work, causes: dict[str, list[str]]) -> str | None:
    """Why no stage of `work` (nsprof.ladder_analysis.work's records) has a time, naming each capture they
    come from (`causes`: each profile's untimed_causes, by name); None when some stage has one, or
    there is no stage."""
    stages = work[work["stage"].notna()]
    if stages.empty or stages["time_per_launch_ns"].notna().any():
        return None
    profiles = set(stages["profile"])
    return "; ".join(dict.fromkeys(cause for name, found in causes.items() if name in profiles for cause in found))


def untimed_causes(nsys: list[GpuTimeline], ncu: list[LaunchCounters]) -> list[str]:
    """What keeps each of a profile's captures from timing a stage, one phrase per capture."""
    causes = [_nsys_cause(export) for export in nsys]
    causes += [f"{report.source} has no {NCU_TIME_METRIC} (kernel duration)" for report in ncu
               if NCU_TIME_METRIC not in report.kernels or report.kernels[NCU_TIME_METRIC].isna().all()]
    if not nsys:
        causes.append("there is no nsys capture to time them")
    return causes


def _nsys_cause(export) -> str:
    if export.kernels.empty:
        return f"{export.path} holds no kernel (no CUPTI_ACTIVITY_KIND_KERNEL rows)"
    if export.runtime.empty:
        return (f"{export.path} holds no CUDA API call (no CUPTI_ACTIVITY_KIND_RUNTIME rows) to tie its kernels "
                "to the NVTX ranges that launched them")
    if export.kernels["correlation_id"].isna().all():
        return f"{export.path}'s kernels have no correlation ids (NULL) to tie them to their launch calls"
    return f"no kernel of {export.path} was launched inside a stage's NVTX range"
