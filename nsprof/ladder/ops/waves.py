"""A matrix product's launch plan counted in waves: the plan a stage would run (the same
nsprof.ladder.ops.launch_plan.choose_plan that `nsprof bench` launches) on a GPU's SMs.

A wave is one block on every slot (SMs x the blocks the entry fits on one SM). A grid of B blocks
runs ceil(B / slots) rounds; the last holds B mod slots blocks, and while it runs the other slots
idle unless the plan shares its tiles out (stream-K: every slot takes an even share of the last
tiles' k steps) or splits K from the start. Only stages whose entries' launch bounds declare how
many blocks one SM holds are counted (COUNTED): another's wave would be a guess.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from typing_extensions import TypedDict  # pydantic reads it for docs/json (typing's, only from Python 3.12)

from nsprof.ladder.op_model import Stage
from nsprof.ladder.ops.launch_plan import busy_share, choose_plan, run_shape
from nsprof.ladder.registry import get_op, get_stage
from nsprof.sizes import parse_label, size_label

# per op, the stages whose every entry's __launch_bounds__ say how many blocks one SM holds (Tile.blocks_per_sm)
COUNTED = {"hgemm": ("h6",), "sgemm": ("v8", "v11")}


def counted(stage: Stage) -> bool:
    return stage.stage in COUNTED.get(stage.op, ())


def manifest_sm_count(manifest: dict | None) -> int | None:
    """The SMs of the GPU a profile's manifest names (its device), or None."""
    device = (manifest or {}).get("device") or {}
    return int(device["sm_count"]) if device.get("sm_count") else None


class WavesJson(TypedDict):
    """A plan counted in waves, as `nsprof explain wave-quantization --json` writes it (Waves.to_json)."""

    size: str
    tile: str
    split_k: int
    blocks: int
    slots: int
    waves: float
    last_wave_fill: float
    idle_share_unshared: float
    shared_tiles: int


@dataclass(frozen=True)
class Waves:
    """One problem's plan, counted in waves."""

    size: str
    tile: str
    split_k: int
    blocks: int  # tiles x the K split
    slots: int  # blocks that run at once
    shared_tiles: int  # the last tiles whose k steps every slot shares (stream-K); 0: none

    @property
    def waves(self) -> float:
        return self.blocks / self.slots

    @property
    def rounds(self) -> int:
        return math.ceil(self.blocks / self.slots)

    @property
    def last_round_blocks(self) -> int:
        return self.blocks - (self.rounds - 1) * self.slots

    @property
    def last_wave_fill(self) -> float:
        """How full the last round is (1.0: whole waves)."""
        return self.last_round_blocks / self.slots

    @property
    def idle_share(self) -> float:
        """The share of the slots' time, over every round, that the last round leaves idle when no
        tile is shared out (each block taking the same time)."""
        return 1 - busy_share(self.blocks, self.slots)

    def to_json(self) -> WavesJson:
        return {"size": self.size, "tile": self.tile, "split_k": self.split_k, "blocks": self.blocks,
                "slots": self.slots, "waves": round(self.waves, 3), "last_wave_fill": round(self.last_wave_fill, 3),
                "idle_share_unshared": round(self.idle_share, 3), "shared_tiles": self.shared_tiles}


def waves_of(stage: Stage, m: int, n: int, k: int, sm_count: int) -> Waves:
    """The plan `nsprof bench` would launch for an M x N x K product of `stage`, on `sm_count` SMs (for the shape
    its kernels run: `run_shape`)."""
    plan = choose_plan(stage, *run_shape(stage, m, n, k, get_op(stage.op).element_bytes), sm_count)
    tile = plan.tile
    blocks = tile.count(m, n) * plan.split_k
    # a cluster's tile is its blocks' tiles stacked: one slot holds a cluster's worth of SMs
    return Waves(size_label((m, n, k)), tile.shape, plan.split_k, blocks, tile.slots(sm_count),
                 plan.shared_tiles if plan.split_k == 1 else 0)


def launch_waves(op: object, stage: object, size: object, sm_count: int | None) -> Waves | None:
    """The plan of a counted stage (COUNTED: matrix products, sized "MxNxK") at a size label on `sm_count`
    SMs, counted in waves; None for another stage or kernel (NaN in a points frame), a size of another
    shape, or no SM count."""
    if sm_count is None or not isinstance(op, str) or stage not in COUNTED.get(op, ()) or not isinstance(size, str):
        return None
    dims = parse_label(size)  # a stage range's size is digits joined by x (nsprof.ranges), of any count
    if len(dims) != 3:
        return None
    m, n, k = dims
    return waves_of(get_stage(op, str(stage)), m, n, k, sm_count)


def plan_text(waves: Waves) -> str:
    """'384 blocks of 128x192 on 132 slots: 2.91 waves, 3% of the slots' time idle' (the K split and the
    tiles stream-K shares out, where the plan has them)."""
    split = f" (K split in {waves.split_k})" if waves.split_k > 1 else ""
    text = (f"{waves.blocks} blocks of {waves.tile}{split} on {waves.slots} slots: {waves.waves:.2f} "
            f"{'wave' if waves.waves <= 1 else 'waves'}, {waves.idle_share:.0%} of the slots' time idle")
    return text + (f" but for the last {waves.shared_tiles} tiles, shared out by k steps" if waves.shared_tiles else "")
