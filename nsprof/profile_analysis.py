"""A profile read and analyzed under its GPU's ceilings: what `nsprof analyze` and `nsprof explain`
both start from (parse and analyze put together; the layers above call this, never repeat it)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nsprof.analyze.report import ProfileAnalysis
    from nsprof.parse.profile import Profile


def analyzed_profile(path: Path, ceilings: Path | None = None, attribution: str = "thread") -> tuple[Profile, ProfileAnalysis]:
    """The profile at `path` (a directory or one nsys or ncu file) and its analysis, with % of peak
    against the GPU's ceilings as every command resolves them (nsprof.ceilings.resolve.resolve_ceiling;
    `ceilings` is --ceilings). `attribution` ("thread" or "process") says whose CUDA calls an NVTX
    range counts (nsprof.analyze.nvtx_attribution). The profile's nsys frames hold the columns the
    analysis reads (nsprof.analyze.report.ANALYSIS_COLUMNS), not every column."""
    from nsprof.analyze import analyze_profile
    from nsprof.analyze.capture_facts import gpu_name
    from nsprof.analyze.operators import launching_operators, with_operators
    from nsprof.analyze.report import ANALYSIS_COLUMNS
    from nsprof.ceilings.resolve import resolve_ceiling
    from nsprof.parse import load_profile

    profile = load_profile(Path(path), ANALYSIS_COLUMNS)  # only the nsys columns the analysis reads
    ceiling = resolve_ceiling(gpu_name(profile.nsys, profile.ncu, profile.manifest), ceilings, [profile.manifest])
    analysis = analyze_profile(profile.nsys, profile.ncu, profile.manifest, ceiling, attribution, profile.triton,
                               cpu=profile.cpu)
    operators = launching_operators([*profile.nsys, *profile.framework])
    if operators and analysis.hot_kernels is not None:  # a torch.profiler trace names who launched each kernel
        analysis = replace(analysis, hot_kernels=with_operators(analysis.hot_kernels, operators))
    return profile, analysis


def diff_analysis(path: Path, attribution: str = "thread") -> ProfileAnalysis:
    """The parts of the analysis of the profile at `path` that `nsprof diff` compares
    (analyze_profile's `for_diff`: no ceilings), read with the same columns as analyzed_profile."""
    from nsprof.analyze import analyze_profile
    from nsprof.analyze.report import ANALYSIS_COLUMNS
    from nsprof.parse import load_profile

    profile = load_profile(Path(path), ANALYSIS_COLUMNS)
    return analyze_profile(profile.nsys, profile.ncu, profile.manifest, attribution=attribution, for_diff=True)
