"""A ladder's analysis: the profiles of one GPU put together for the report commands (`roofline`,
`report`), each profile read through its own capture's analysis (CaptureAnalysis): their work
records combined (the latest of each stage), their roofline points under the GPU's roofs (a CPU
stage's under the host's own), and where each nsys capture's time went. It builds on the generic
analysis (nsprof.analyze), which knows nothing of it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import pandas as pd

from nsprof.analyze.pipeline import FlowTimeline
from nsprof.analyze.roofline import Roof, roofline_points, roofs
from nsprof.analyze.timeline import TimeBreakdown
from nsprof.ceilings.peaks import Ceiling
from nsprof.errors import UsageError
from nsprof.ladder.ops.waves import launch_waves, manifest_sm_count, plan_text
from nsprof.ladder_analysis.capture import LadderCaptureAnalysis
from nsprof.ladder_analysis.work import combine, host_roofs, with_compulsory_intensity, with_peaks


@dataclass(frozen=True)
class LadderCapture:
    """One profile of a ladder: its name and start time (nsprof.parse.sources.Source) and its analysis."""

    name: str  # a slug, unique among the profiles read together: reports write OUT/<name>
    started: dt.datetime  # the manifest's start time, else the files' modification time
    analysis: LadderCaptureAnalysis


@dataclass(frozen=True)
class LadderAnalysis:
    gpu: str | None
    roofs: list[Roof]  # from the GPU's ceilings
    work: pd.DataFrame  # combine's columns
    points: pd.DataFrame  # nsprof.analyze.roofline.POINT_COLUMNS, then with_launch_plans's
    captures: list[LadderCapture]  # the profiles shown: those some work row comes from, or with no work rows at all
    timelines: dict[str, TimeBreakdown]  # per profile name, for those with an nsys capture
    hot_kernels: dict[str, tuple[pd.DataFrame, dict]] = field(default_factory=dict)  # per profile name with
    # an nsys capture: nsprof.analyze.hot_kernels.capture_hot_kernels (where the time goes, the harness)
    cpu_roofs: list[Roof] = field(default_factory=list)  # the host's, for the CPU stages (host_roofs); [] when not measured
    chosen: str | None = None  # which profiles were read and why, where the command chose them (no --from)
    flows: dict[str, FlowTimeline] = field(default_factory=dict)  # per profile name with an `nsprof pipeline` record
    sm_count: int | None = None  # the GPU's SMs, as the profiles' manifests name them; None where none does


def ladder_gpu(gpus: dict[str, str | None]) -> str | None:
    """The one GPU the profiles were captured on (`gpus`: each profile's, by name; None if none says).
    Raises UsageError when they come from several: one roofline has one set of roofs."""
    names: dict[str, str] = {}
    for profile, name in gpus.items():
        if name:
            names.setdefault(name, profile)
    if len(names) > 1:
        listed = ", ".join(f"{gpu} ({profile})" for gpu, profile in names.items())
        raise UsageError(f"the profiles come from several GPUs: {listed}",
                         "pass --from with the profiles of one GPU")
    return next(iter(names), None)


def analyze_ladder(captures: list[LadderCapture], gpu: str | None, ceiling: Ceiling | None,
                   keep_all: bool = False) -> LadderAnalysis:
    """Work records of every profile (the latest of each stage unless `keep_all`), their points
    under the ceiling's roofs (those of `gpu`, see ladder_gpu), and the time breakdown of each
    contributing nsys capture, all from each capture's analysis (CaptureAnalysis, the one assembly
    of a capture's analysis, under `ceiling`)."""
    records = [(capture.name, capture.started, capture.analysis.work) for capture in captures]
    work = combine(records, keep_all)
    # A profile all of whose stages later profiles measured again is left out; one with no work
    # rows at all (an nsys capture of another program) still shows where its time went.
    shown = set(work["profile"]) | {name for name, _, frame in records if frame.empty}
    used = [capture for capture in captures if capture.name in shown]
    timelines = {capture.name: breakdown for capture in used if (breakdown := capture.analysis.time_breakdown) is not None}
    # the host's roofs measured by the newest profile that measured them beside its CPU stages
    host = next((found for capture in reversed(used) if (found := capture.analysis.cpu_ceilings)), None)
    work = with_compulsory_intensity(with_peaks(work, ceiling, host))
    hot = {capture.name: (analysis.hot_kernels, analysis.harness or {}) for capture in used
           if (analysis := capture.analysis).hot_kernels is not None}
    cpu = host_roofs(host)
    flows = {capture.name: flow for capture in used if (flow := capture.analysis.flows) is not None}
    sm_count = _sm_count(used)
    points = with_launch_plans(roofline_points(work, ceiling, cpu), sm_count)
    return LadderAnalysis(gpu, roofs(ceiling), work, points, used, timelines, hot, cpu, flows=flows, sm_count=sm_count)


def with_launch_plans(points: pd.DataFrame, sm_count: int | None) -> pd.DataFrame:
    """The points with how a counted stage's launch fills the GPU at their size (nsprof.ladder.ops.waves):
    `launch_plan` (its text), `launch_waves` and `launch_idle_share`; empty for other work, or without the
    GPU's SM count. What the report's stage sections and roofline.csv say of it."""
    plans = [launch_waves(row.op, row.stage, row.size, sm_count) for row in points[["op", "stage", "size"]].itertuples()]
    return points.assign(launch_plan=[plan_text(p) if p else None for p in plans],
                         launch_waves=[p.waves if p else None for p in plans],
                         launch_idle_share=[p.idle_share if p else None for p in plans])


def _sm_count(captures: list[LadderCapture]) -> int | None:
    """The SMs of the profiles' GPU (one GPU: ladder_gpu), from the first manifest that names them."""
    return next((count for capture in captures if (count := manifest_sm_count(capture.analysis.manifest))), None)
