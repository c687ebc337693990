"""What a stage's declared accesses predict for its whole kernel.

Nsight Compute's counters add up every access of a kind the kernel executes: the measured shared
wavefronts per instruction are a mean over the kernel's mix of shared loads (or stores), and
l1tex__t_bytes totals the sectors of every global request. The registry declares each access with
its instructions per warp per K tile (or per kernel); weighting the models' answers by those
counts, and multiplying by the launch's warps and K tiles, predicts those numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from nsprof.access import MemoryAccess
from nsprof.explain.bank_model import BankAnalysis, analyze_shared
from nsprof.explain.coalescing import SECTOR_BYTES, analyze_global
from nsprof.ladder.registry import Stage

SASS_NAMES = {("shared", "load"): "LDS", ("shared", "store"): "STS", ("global", "load"): "LDG", ("global", "store"): "STG"}
WIDTH_SUFFIX = {4: "", 8: ".64", 16: ".128"}


@dataclass(frozen=True)
class MixPrediction:
    """Per warp and K tile: the shared loads (or stores) of the K loop and their wavefronts."""

    op: str
    analyses: tuple[BankAnalysis, ...]

    @property
    def instructions(self) -> int:
        return sum(a.access.count for a in self.analyses)

    @property
    def wavefronts(self) -> int:
        return sum(a.access.count * a.wavefronts for a in self.analyses)

    @property
    def excess_wavefronts(self) -> int:
        return sum(a.access.count * a.excess_wavefronts for a in self.analyses)

    @property
    def wavefronts_per_instruction(self) -> float:
        return self.wavefronts / self.instructions

    def describe(self) -> str:
        """'16 LDS.128 x 2 wf + 16 LDS.128 x 8 wf': the mix, per warp per K tile."""
        return " + ".join(f"{a.access.count} {sass_name(a.access)} x {a.wavefronts} wf" for a in self.analyses)


def sass_name(access: MemoryAccess) -> str:
    """The SASS instruction of an access: LDS.128, STS, LDG.128, ..."""
    return SASS_NAMES[access.space, access.op] + WIDTH_SUFFIX[access.width]


def shared_analyses(stage: Stage) -> list[BankAnalysis]:
    return [analyze_shared(a) for a in stage.accesses if a.space == "shared"]


def predict_mix(stage: Stage, op: str) -> MixPrediction | None:
    """The K loop's shared loads or stores; None if the stage declares none. (Shared accesses
    outside the K loop would be negligible against it; the ladder has none.)"""
    analyses = tuple(a for a in shared_analyses(stage) if a.access.op == op and not a.access.once)
    return MixPrediction(op, analyses) if analyses else None


def predict_l1_bytes(stage: Stage, warps: int, k_tiles: int) -> int | None:
    """Bytes of the sectors every global request of a launch touches (what l1tex__t_bytes counts);
    None if the stage declares no global access."""
    accesses = [a for a in stage.accesses if a.space == "global"]
    if not accesses:
        return None
    per_warp = sum(len(analyze_global(a).sectors) * SECTOR_BYTES * a.count * (1 if a.once else k_tiles) for a in accesses)
    return per_warp * warps
