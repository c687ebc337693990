"""A profile read and analyzed under its GPU's ceilings: what `nsprof analyze` and `nsprof explain`
both start from (parse and analyze put together; the layers above call this, never repeat it).

A program's capture is analyzed by the generic analysis alone (nsprof.analyze.capture_analysis);
one that holds a ladder's stages (nsprof.parse.ladder_stages) by the ladder's, which adds them."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nsprof.analyze.capture_analysis import CaptureAnalysis
    from nsprof.ceilings.peaks import Ceiling
    from nsprof.ladder_analysis.capture import LadderCaptureAnalysis
    from nsprof.parse.profile import Capture


def opened(path: str | Path, ceilings: Path | None = None, attribution: str = "thread",
           parts: Iterable[str] | None = None) -> tuple[Capture, CaptureAnalysis]:
    """The capture at `path` opened through the front door (nsprof.parse.captures: of a set of runs
    or profiler cycles, its first) and analyzed (analyzed_profile): what every verb reads."""
    from nsprof.parse.captures import open_captures

    return analyzed_profile(open_captures(path).first, ceilings, attribution, parts)


def opened_profile(path: str | Path) -> Capture:
    """The capture at `path` opened through the front door and loaded whole, every column, for a
    verb that reads its timelines itself (what a guided capture hands to ncu)."""
    from nsprof.parse import load_profile
    from nsprof.parse.captures import open_captures

    return load_profile(open_captures(path).first)


def analyzed_profile(path: Path, ceilings: Path | None = None, attribution: str = "thread",
                     parts: Iterable[str] | None = None) -> tuple[Capture, CaptureAnalysis]:
    """The profile at `path` (a directory or one nsys or ncu file) and its analysis, with % of peak
    against the GPU's ceilings as every command resolves them (nsprof.ceilings.resolve.resolve_ceiling;
    `ceilings` is --ceilings). `attribution` ("thread" or "process") says whose CUDA calls an NVTX
    range counts (nsprof.analyze.nvtx_attribution). The profile's nsys frames hold the columns the
    analysis reads (nsprof.analyze.capture_analysis.ANALYSIS_COLUMNS), not every column; every part
    `nsprof analyze` shows is computed (the analysis's SHOWN_PARTS), or `parts`, and the frames let go."""
    from nsprof.analyze.capture_analysis import ANALYSIS_COLUMNS
    from nsprof.analyze.capture_facts import gpu_name
    from nsprof.ceilings.resolve import resolve_ceiling
    from nsprof.parse import load_profile

    profile = load_profile(Path(path), ANALYSIS_COLUMNS)  # only the nsys columns the analysis reads
    ceiling = resolve_ceiling(gpu_name(profile.timelines, profile.counters, profile.manifest), ceilings, [profile.manifest])
    analysis = capture_analysis(profile, ceiling, attribution)
    return profile, analysis.kept(analysis.SHOWN_PARTS if parts is None else parts)


def diff_analysis(path: Path, attribution: str = "thread") -> CaptureAnalysis:
    """The parts of the analysis of the profile at `path` that `nsprof diff` compares (the analysis's
    DIFF_PARTS), read with the same columns as analyzed_profile; the frames let go, so that a diff
    across many runs holds their figures only."""
    from nsprof.analyze.capture_analysis import ANALYSIS_COLUMNS
    from nsprof.parse import load_profile

    analysis = capture_analysis(load_profile(Path(path), ANALYSIS_COLUMNS), None, attribution)
    return analysis.kept(analysis.DIFF_PARTS)


def capture_analysis(profile: Capture, ceiling: Ceiling | None = None, attribution: str = "thread") -> CaptureAnalysis:
    """A loaded profile's analysis (parts computed when asked for), under `ceiling`: the ladder's
    where the profile holds stages, else the generic one."""
    from nsprof.parse.ladder_stages import holds_stages

    if holds_stages(profile):
        return ladder_analysis(profile, ceiling, attribution)
    from nsprof.analyze.capture_analysis import CaptureAnalysis

    return CaptureAnalysis(profile, ceiling, attribution)


def ladder_analysis(profile: Capture, ceiling: Ceiling | None = None, attribution: str = "thread") -> LadderCaptureAnalysis:
    """A loaded profile's analysis as a ladder reads it, stages or none: `roofline` and `report`
    read every profiled kernel as a piece of work (nsprof.ladder_analysis.work)."""
    from nsprof.ladder_analysis.capture import LadderCaptureAnalysis

    return LadderCaptureAnalysis(profile, ceiling, attribution)
