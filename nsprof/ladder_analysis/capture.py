"""A capture as a ladder reads it: the generic analysis (nsprof.analyze.capture_analysis) and the
parts that need the ladders' definitions: its pieces of work and stages (nsprof.ladder_analysis.work: the
op's FLOPs and bytes at the stage's size), the host's roofs measured beside its CPU stages, and
why a stage went untimed. A capture that holds stages is no program: it has no host side."""

from __future__ import annotations

from functools import cached_property

import pandas as pd

from nsprof.analyze.capture_analysis import CaptureAnalysis
from nsprof.ladder_analysis.untimed import untimed_causes
from nsprof.ladder_analysis.work import combine, with_peaks, work_records

# What `nsprof diff` (and so `nsprof history`) reads of each run, in the order computed: the parts
# they are computed from (ncu's launches, the work records) are let go with the frames.
DIFF_PARTS = ("gpu", "range_instances", "kernels", "rules", "stages", "gpu_utilization", "launch_times", "gpu_totals",
              "gpu_ids", "loop", "phases", "host", "nsys_versions", "timeline_tool", "linked_share")

# Every part `nsprof analyze` shows, in an order that frees the launch-call join (a row per launch)
# before the steady state and the hot kernels build their own tables.
SHOWN_PARTS = ("gpu", "ceiling", "ranges", "range_families", "unattributed", "launches", "kernels", "rules",
               "missing_metrics", "kernel_groups", "kernel_summary", "memcpy_summary", "kernel_families",
               "work", "stages", "loop", "phases", "hot_kernels", "harness", "host", "gpu_utilization", "triton_kernels",
               "nsys_versions", "timeline_tool", "processing_errors", "gpu_models")


class LadderCaptureAnalysis(CaptureAnalysis):
    """CaptureAnalysis with a ladder's parts (module docstring); every capture nsprof reads is
    analyzed as one, since any may hold stages."""

    @cached_property
    def work(self) -> pd.DataFrame:
        """Every piece of work, stages among them (nsprof.ladder_analysis.work.work_records): what the ladder combines."""
        return work_records(self.launches, self.ranges, self._inputs.cpu)

    @cached_property
    def cpu_ceilings(self) -> dict | None:
        """The host's ceilings measured beside the CPU stages (their ceilings-cpu.json); None without."""
        cpu = self._inputs.cpu
        return cpu.ceilings if cpu is not None and cpu.ceilings else None

    @cached_property
    def untimed_causes(self) -> list[str]:
        """What keeps each of the capture's files from timing a stage (nsprof.ladder_analysis.untimed)."""
        return untimed_causes(self._inputs.nsys, self._inputs.ncu)

    @cached_property
    def stages(self) -> pd.DataFrame:
        """The capture's stages, with the figures report and roofline show (nsprof.ladder_analysis.work.with_peaks)."""
        work = with_peaks(combine([("", None, self.work)]), self.ceiling, self.cpu_ceilings)
        return work[work["stage"].notna()].reset_index(drop=True)

    def _of_one_program(self) -> bool:
        return self.stages.empty  # a ladder's harness is no program
