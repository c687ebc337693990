"""A capture as a ladder reads it: the generic analysis (nsprof.analyze.capture_analysis) and the
parts that need the ladders' definitions: its pieces of work and stages (nsprof.ladder_analysis.work: the
op's FLOPs and bytes at the stage's size), the host's roofs measured beside its CPU stages, and
why a stage went untimed. A capture that holds stages is no program: it has no host side."""

from __future__ import annotations

from functools import cached_property

import pandas as pd

from nsprof.analyze.capture_analysis import DIFF_PARTS as GENERIC_DIFF_PARTS
from nsprof.analyze.capture_analysis import SHOWN_PARTS as GENERIC_SHOWN_PARTS
from nsprof.analyze.capture_analysis import CaptureAnalysis
from nsprof.analyze.host_types import HostSide
from nsprof.ladder_analysis.untimed import untimed_causes
from nsprof.ladder_analysis.work import combine, with_peaks, work_records


def _inserted(parts: tuple[str, ...], before: str, added: tuple[str, ...]) -> tuple[str, ...]:
    """`parts` with `added` computed just before the part `before`."""
    at = parts.index(before)
    return (*parts[:at], *added, *parts[at:])


# The generic parts, with the ladder's where they are computed: its stages among what diff compares,
# its work (from which they come) before the steady state.
DIFF_PARTS = _inserted(GENERIC_DIFF_PARTS, "gpu_utilization", ("stages",))
SHOWN_PARTS = _inserted(GENERIC_SHOWN_PARTS, "loop", ("work", "stages"))


class LadderCaptureAnalysis(CaptureAnalysis):
    """CaptureAnalysis with a ladder's parts (module docstring): the analysis of a capture that holds
    stages (nsprof.parse.ladder_stages), and of the profiles `roofline` and `report` put together."""

    DIFF_PARTS, SHOWN_PARTS = DIFF_PARTS, SHOWN_PARTS

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
        return untimed_causes(self._inputs.timelines, self._inputs.counters)

    @cached_property
    def stages(self) -> pd.DataFrame:
        """The capture's stages, with the figures report and roofline show (nsprof.ladder_analysis.work.with_peaks)."""
        work = with_peaks(combine([("", None, self.work)]), self.ceiling, self.cpu_ceilings)
        return work[work["stage"].notna()].reset_index(drop=True)

    @cached_property
    def host(self) -> HostSide | None:
        """The generic host side, where the capture ran no stage: a ladder's harness is no program."""
        return self._program_host() if self.stages.empty else None



def stages_of(analysis: CaptureAnalysis) -> pd.DataFrame:
    """The stages of a capture's analysis: none for a program's, which the generic analysis reads
    (nsprof.parse.ladder_stages found no stage in it)."""
    if isinstance(analysis, LadderCaptureAnalysis):
        return analysis.stages
    return pd.DataFrame(columns=["key", "label", "op", "stage", "size"])
