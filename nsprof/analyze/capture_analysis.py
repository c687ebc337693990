"""One capture's analysis, the one place it is assembled: `CaptureAnalysis` computes each part the
first time it is asked for and keeps it (pure functions over the parsed model: no I/O).

`nsprof analyze` asks for every part (SHOWN_PARTS), `nsprof diff` for those it compares
(DIFF_PARTS), a Dask task of `nsprof analyze` over many captures for its summaries. A program's
capture is analyzed by this class alone; one that holds a ladder's stages (the front door says
which: nsprof.parse.ladder_stages) by nsprof.ladder_analysis.capture.LadderCaptureAnalysis, which
builds on this class and adds its stages; this one knows nothing of ladders. A command that keeps
analyses of many captures (a diff across runs) calls `kept(parts)`: those parts are computed and
the parsed frames let go, so that memory holds the figures, not the timelines.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property
from typing import TypeVar

import pandas as pd

from nsprof.analyze.capture_facts import distinct_launches, gpu_launches, gpu_models, gpu_name, gpu_totals, linked_share
from nsprof.analyze.gpu_utilization import gpu_utilization
from nsprof.analyze.host_side import host_side
from nsprof.analyze.host_types import HostSide
from nsprof.analyze.hot_kernels import capture_hot_kernels, launch_table
from nsprof.analyze.iterations import Loop, capture_loop, steady_part
from nsprof.analyze.kernel_groups import kernel_groups
from nsprof.analyze.launch_configs import LAUNCH_RESOURCES, LAUNCH_SIZES
from nsprof.analyze.launch_findings import missing_metrics, rule_results
from nsprof.analyze.nvtx_attribution import (
    THREAD,
    attribute_work,
    launching_calls,
    summarize_range_families,
    summarize_ranges,
    unattributed_work,
)
from nsprof.analyze.operators import launching_operators, with_operators
from nsprof.analyze.phases import Phase, phases
from nsprof.analyze.pipeline import FlowTimeline, copy_facts, fastest_flow_timeline
from nsprof.analyze.pipeline_types import CopyFacts
from nsprof.analyze.program_harness import SteadyState
from nsprof.analyze.summaries import kernel_family_summary, kernel_summary, memcpy_summary
from nsprof.analyze.timeline import TimeBreakdown, time_breakdown
from nsprof.analyze.triton_kernels import triton_kernels
from nsprof.ceilings.peaks import Ceiling, datasheet_ceiling
from nsprof.parse.ladder_stages import timeline_has_stages
from nsprof.parse.model import GpuTimeline
from nsprof.parse.profile import Capture

# The timeline columns the analysis reads (nsprof.parse.nsys_sqlite.load_nsys's `columns`): a
# 10M-kernel export's whole kernels and runtime frames would not fit the memory it is analyzed in.
ANALYSIS_COLUMNS = {
    "kernels": ("start_ns", "end_ns", "duration_ns", "device_id", "stream_id", "correlation_id", "global_pid", "kernel",
                "mangled_name",
                *LAUNCH_SIZES, *LAUNCH_RESOURCES,  # a launch's configuration (capture_facts labels it by these)
                "operator"),  # a framework trace's (torch.profiler): what launched each kernel
    "runtime": ("start_ns", "end_ns", "correlation_id", "global_tid", "api"),
}

# What `nsprof diff` (and so `nsprof history`) reads of each run, in the order computed: the parts
# they are computed from (ncu's launches) are let go with the frames. A ladder's analysis adds its own.
DIFF_PARTS: tuple[str, ...] = ("gpu", "range_instances", "kernels", "rules", "gpu_utilization", "launch_times", "gpu_totals",
              "gpu_ids", "loop", "phases", "host", "tool_versions", "timeline_tool", "linked_share")

# Every part `nsprof analyze` shows, in an order that frees the launch-call join (a row per launch)
# before the steady state and the hot kernels build their own tables.
SHOWN_PARTS: tuple[str, ...] = ("gpu", "ceiling", "ranges", "range_families", "unattributed", "launches", "kernels", "rules",
               "missing_metrics", "kernel_groups", "kernel_summary", "memcpy_summary", "kernel_families",
               "loop", "phases", "hot_kernels", "harness", "host", "gpu_utilization", "triton_kernels",
               "tool_versions", "timeline_tool", "processing_errors", "gpu_models")

Analysis = TypeVar("Analysis", bound="CaptureAnalysis")  # kept() gives back the class it was called on


class CaptureAnalysis:
    """A capture's analysis (module docstring), of a Capture as the readers fill it
    (nsprof.parse.profile.Capture): its timelines (nsys exports, torch.profiler and jax.profiler
    traces), its counters (several files may hold the same launches, the raw and details pages of
    one run: a launch is kept once, from a report or raw page, which carry every metric), the
    framework traces beside a timeline (the operator that launched each kernel), the kernels its
    Triton compiled, and its documents (`manifest`, `pipeline`, kept as they are). `ceiling`: the
    GPU's as the commands resolve it (nsprof.ceilings.resolve.resolve_ceiling); without one, the
    datasheet's peaks for the GPU the capture names. `attribution` (THREAD or PROCESS): whose CUDA
    calls an NVTX range counts."""

    DIFF_PARTS, SHOWN_PARTS = DIFF_PARTS, SHOWN_PARTS  # what diff compares and analyze shows of this class

    def __init__(self, capture: Capture, ceiling: Ceiling | None = None, attribution: str = THREAD):
        self.manifest = capture.manifest  # what ran (nsprof's manifest.json); None for a bare export
        self.pipeline = capture.pipeline  # what `nsprof pipeline` measured, where it made this capture (pipeline.json)
        self.attribution = attribution
        self.has_nsys, self.has_ncu = bool(capture.timelines), bool(capture.counters)
        self._given_ceiling = ceiling
        self._held: Capture | None = capture
        self._kept: tuple[str, ...] = ()  # the parts kept(), once called, kept

    def __repr__(self) -> str:  # what a notebook shows: what it holds, without computing anything
        computed = [name for name in vars(self) if name in parts_of(type(self))]
        held = "frames let go" if self._held is None else \
            f"{len(self._held.timelines)} timeline(s), {len(self._held.counters)} counter file(s)"
        return f"{type(self).__name__}({held}; computed: {', '.join(computed) or 'nothing yet'})"

    def kept(self: Analysis, parts: Iterable[str]) -> Analysis:
        """This analysis with `parts` computed, in order, and the parsed frames let go: a part not
        among them can no longer be asked for (a RuntimeError names the parts kept)."""
        parts = tuple(parts)
        for part in parts:
            getattr(self, part)
        for name in [name for name in vars(self)  # every part not kept, and the intermediate steps
                     if isinstance(getattr(type(self), name, None), cached_property) and name not in parts]:
            del self.__dict__[name]
        self._held, self._kept = None, parts
        return self

    @property
    def _inputs(self) -> Capture:
        if self._held is None:
            raise RuntimeError(f"this analysis kept only {', '.join(self._kept)} (CaptureAnalysis.kept): "
                               "list every part its reader asks for")
        return self._held

    # --- what ran and where -----------------------------------------------------------------------

    @cached_property
    def gpu(self) -> str | None:
        return gpu_name(self._inputs.timelines, self._inputs.counters, self.manifest)

    @cached_property
    def gpu_models(self) -> list[str]:
        """Every GPU model the capture names (capture_facts.gpu_models): `gpu` is the first."""
        return gpu_models(self._inputs.timelines)

    @cached_property
    def ceiling(self) -> Ceiling | None:
        return self._given_ceiling if self._given_ceiling is not None else datasheet_ceiling(self.gpu)

    @cached_property
    def gpu_ids(self) -> tuple[str, ...]:
        """The captured GPUs' UUIDs (nsys): whether two captures ran on one card."""
        return tuple(sorted({str(uuid) for export in self._inputs.timelines if "uuid" in export.gpus
                             for uuid in export.gpus["uuid"].dropna()}))

    @cached_property
    def processing_errors(self) -> tuple[str, ...]:
        """What the tool reported failing while it processed the timelines (nsys's ProcessEventsError
        rows), each once a time: a capture that kept its kernels may still miss work."""
        return tuple(error for export in self._inputs.timelines for error in export.processing_errors)

    @cached_property
    def tool_versions(self) -> tuple[str, ...]:
        """The versions of the tools that wrote the timelines (nsys's, or a profiler's), each once."""
        return tuple(sorted({export.tool_version for export in self._inputs.timelines if export.tool_version}))

    @cached_property
    def timeline_tool(self) -> str:
        """What wrote the timelines, as tables name their source: 'nsys', 'torch.profiler', or both joined by ' + '."""
        return " + ".join(sorted({export.tool for export in self._inputs.timelines})) or "nsys"

    # --- nsys: NVTX ranges and the work they launched ---------------------------------------------

    @cached_property
    def _part_calls(self) -> list[pd.DataFrame]:
        """Each export's launching calls, joined once: the ranges and what they missed both read them."""
        return [launching_calls(export) for export in self._inputs.timelines]

    def _read_calls(self, reader: str) -> None:
        """`reader` (range_instances or unattributed) has read the launch-call join: once the other
        has too, its row per launch is freed."""
        if ({"range_instances", "unattributed"} - {reader}) <= vars(self).keys():
            self.__dict__.pop("_part_calls", None)

    @cached_property
    def range_instances(self) -> pd.DataFrame | None:
        """Every NVTX range instance with the GPU work it launched (nvtx_attribution.attribute_work)."""
        if not self.has_nsys:
            return None
        instances = pd.concat([attribute_work(export, self.attribution, calls)
                               for export, calls in zip(self._inputs.timelines, self._part_calls)], ignore_index=True)
        self._read_calls("range_instances")
        return instances

    @cached_property
    def ranges(self) -> pd.DataFrame | None:
        """Per range name: nvtx_attribution.summarize_ranges; None without an nsys export."""
        return summarize_ranges(self.range_instances) if self.range_instances is not None else None

    @cached_property
    def range_families(self) -> pd.DataFrame | None:
        return summarize_range_families(self.range_instances) if self.range_instances is not None else None

    @cached_property
    def unattributed(self) -> dict | None:
        """The kernels no NVTX range received (nvtx_attribution.unattributed_work)."""
        if not self.has_nsys:
            return None
        missed = unattributed_work(self._inputs.timelines, self.attribution, self._part_calls)
        self._read_calls("unattributed")
        return missed

    # --- nsys: kernels, copies, the GPU's time ----------------------------------------------------

    @cached_property
    def kernel_summary(self) -> pd.DataFrame | None:
        return kernel_summary(self._inputs.timelines) if self.has_nsys else None

    @cached_property
    def memcpy_summary(self) -> pd.DataFrame | None:
        return memcpy_summary(self._inputs.timelines) if self.has_nsys else None

    @cached_property
    def kernel_families(self) -> pd.DataFrame | None:
        return kernel_family_summary(self._inputs.timelines) if self.has_nsys else None

    @cached_property
    def gpu_utilization(self) -> list[dict] | None:
        """Per device: nsprof.analyze.gpu_utilization."""
        return gpu_utilization(self._inputs.timelines) if self.has_nsys else None

    @cached_property
    def copies(self) -> CopyFacts | None:
        """Copy rates by direction and host memory, and how copies overlapped (nsprof.analyze.pipeline.copy_facts)."""
        return copy_facts(self._inputs.timelines) if self.has_nsys else None

    @cached_property
    def time_breakdown(self) -> TimeBreakdown | None:
        """Where the first export's time went (nsprof.analyze.timeline.time_breakdown); None without CUDA activity."""
        return time_breakdown(self._inputs.timelines[0]) if self.has_nsys else None

    @cached_property
    def flows(self) -> FlowTimeline | None:
        """An `nsprof pipeline` capture's fastest warm variant on its timeline (pipeline.fastest_flow_timeline)."""
        return fastest_flow_timeline(self._inputs.timelines, self.pipeline)

    @cached_property
    def launch_times(self) -> pd.DataFrame | None:
        """Every kernel and graph launch (capture_facts.gpu_launches)."""
        return gpu_launches(self._inputs.timelines) if self.has_nsys else None

    @cached_property
    def linked_share(self) -> float | None:
        """The share of the kernels linked to the CUDA call that launched them (capture_facts.linked_share)."""
        return linked_share(self._inputs.timelines) if self.has_nsys else None

    @cached_property
    def gpu_totals(self) -> dict | None:
        """The summed kernel and copy time (capture_facts.gpu_totals)."""
        return gpu_totals(self._inputs.timelines) if self.has_nsys else None

    @cached_property
    def triton_kernels(self) -> pd.DataFrame | None:
        """The kernels the capture's Triton cache compiled, with their times (nsprof.analyze.triton_kernels)."""
        triton = self._inputs.triton
        return triton_kernels(self._inputs.timelines, triton) if self.has_nsys and triton is not None else None

    # --- ncu: launches and their counters ---------------------------------------------------------

    @cached_property
    def launches(self) -> pd.DataFrame | None:
        """Every profiled launch once, with its raw metric columns."""
        return distinct_launches(self._inputs.counters) if self.has_ncu else None

    @cached_property
    def kernels(self) -> pd.DataFrame | None:
        """kernel_metrics and launch_findings columns with % of peak; None without ncu."""
        return launch_table(self.launches, self.ceiling) if self.launches is not None else None

    @cached_property
    def rules(self) -> pd.DataFrame | None:
        return rule_results(self._inputs.counters) if self.has_ncu else None

    @cached_property
    def missing_metrics(self) -> dict | None:
        return missing_metrics(self.launches, self.manifest) if self.launches is not None else None

    @cached_property
    def kernel_groups(self) -> pd.DataFrame | None:
        """`kernels` per kernel and launch configuration (nsprof.analyze.kernel_groups)."""
        return kernel_groups(self.kernels) if self.kernels is not None else None

    # --- a program's capture: its hot kernels, its harness, its host side -------------------------

    @cached_property
    def loop(self) -> Loop | None:
        """One program's loop: its iterations, marked or found in the GPU work (nsprof.analyze.iterations);
        None for several exports or a ladder's capture."""
        nsys = self._inputs.timelines
        return capture_loop(nsys[0]) if len(nsys) == 1 and not timeline_has_stages(nsys[0]) else None

    @cached_property
    def phases(self) -> tuple[Phase, ...]:
        """Start-up, loop and tail of one program's capture (nsprof.analyze.phases); () without a loop."""
        return phases(self._inputs.timelines[0], self.loop) if self.loop is not None else ()

    @cached_property
    def _part_steady(self) -> tuple[list[GpuTimeline], SteadyState | None] | None:
        return steady_part(self._inputs.timelines, self.loop) if self.has_nsys else None

    @cached_property
    def _part_hot(self) -> tuple[pd.DataFrame | None, dict | None]:
        if self._part_steady is None:
            return None, None
        hot, harness = capture_hot_kernels(self._inputs.timelines, self.kernels, self.rules, steady=self._part_steady)
        operators = launching_operators([*self._inputs.timelines, *self._inputs.framework_traces])
        return (with_operators(hot, operators) if operators else hot), harness

    @cached_property
    def hot_kernels(self) -> pd.DataFrame | None:
        """nsprof.analyze.hot_kernels, with who launched each where a torch.profiler trace says; None without nsys."""
        return self._part_hot[0]

    @cached_property
    def harness(self) -> dict | None:
        """Harness work, nsprof's own and programs' (hot_kernels.harness_summary); None without nsys."""
        return self._part_hot[1]

    @cached_property
    def host(self) -> HostSide | None:
        """One program's capture (one nsys export): why the GPU waits (nsprof.analyze.host_side)."""
        return self._program_host()

    def _program_host(self) -> HostSide | None:
        steady = self._part_steady
        if steady is None or len(self._inputs.timelines) != 1:
            return None
        return host_side(self._inputs.timelines[0], steady[1], self.ceiling)


def parts_of(kind: type[CaptureAnalysis]) -> tuple[str, ...]:
    """Every part an analysis of this class can be asked for (its cached properties and its bases',
    not the intermediate steps)."""
    return tuple(dict.fromkeys(name for klass in reversed(kind.__mro__) for name, value in vars(klass).items()
                               if isinstance(value, cached_property) and not name.startswith("_")))
