"""Whether a capture holds a ladder's stages: nsprof's stage ranges (`nsprof:sgemm/v6/...`) in an
nsys export or open around an ncu launch, or CPU stages timed beside it. The front door analyzes
such a capture as a ladder's (nsprof.ladder_analysis.capture); any other is a program's, which the
generic analysis (nsprof.analyze) reads alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from nsprof.ranges import parse_stage_range

if TYPE_CHECKING:
    from nsprof.parse.model import GpuTimeline, LaunchCounters
    from nsprof.parse.profile import Capture


def timeline_has_stages(export: GpuTimeline) -> bool:
    """Whether an export holds a stage range: each distinct range name is looked at once."""
    return any(parse_stage_range(str(name)) is not None for name in pd.unique(export.nvtx["range"]))


def counters_have_stages(counters: LaunchCounters) -> bool:
    """Whether a launch ncu profiled ran inside a stage range."""
    if "nvtx" not in counters.kernels:
        return False
    names = {name for ranges in counters.kernels["nvtx"] if isinstance(ranges, list) for name in ranges}
    return any(parse_stage_range(name) is not None for name in names)


def holds_stages(profile: Capture) -> bool:
    """Whether the profile holds a ladder's stages (module docstring)."""
    return (profile.cpu is not None or any(timeline_has_stages(export) for export in profile.timelines)
            or any(counters_have_stages(counters) for counters in profile.counters))
