"""`nsprof explain wave-quantization`'s page: the launch plan a stage would run, counted in waves
(nsprof.ladder.ops.waves), at the sizes the topic names, on the SMs of the profile's GPU."""

from __future__ import annotations

from nsprof.explain.explain_types import StageWaves, WaveSectionJson
from nsprof.explain.page import prose, section
from nsprof.ladder.ops.waves import COUNTED, Waves, counted, manifest_sm_count, waves_of
from nsprof.ladder.registry import Stage
from nsprof.render.document import Block, Bullets, Table

# the squares, three ragged sizes (5000^3: a sliver of a last round that clusters share by k steps;
# 1000 x 1200 x 808: one part-empty round rather than two), and a transformer's projections: decode, prefill, the
# LM head
SIZES = ((1024, 1024, 1024), (2048, 2048, 2048), (3072, 3072, 3072), (4096, 4096, 4096), (6144, 6144, 6144),
         (8192, 8192, 8192), (3000, 5000, 2000), (5000, 5000, 5000), (1000, 1200, 808), (16, 4096, 4096),
         (2048, 14336, 4096), (8192, 128256, 4096))


H200_SMS = 132  # where no profile names its GPU: the H200 nsprof's examples ran on
_COLUMNS = (("size", "size", ""), ("tile", "tile", ""), ("split\nK", "split_k", "d"), ("blocks", "blocks", "d"),
            ("slots", "slots", "d"), ("waves", "waves", ".2f"), ("last\nwave", "last_wave_fill", ".0%"),
            ("idle if\nunshared", "idle_share_unshared", ".0%"), ("shared\ntiles", "shared_tiles", "d"))
_DROP_ORDER = ("slots", "split_k", "blocks")  # where the terminal is narrow: the waves and the idle share stay


def sm_count_of(manifest: dict | None) -> tuple[int, str]:
    """The SMs of the profile's GPU (its manifest's device), else an H200's; and where that came from."""
    if count := manifest_sm_count(manifest):
        return count, f"{(manifest or {})['device'].get('name', 'the GPU')}, from the profile's manifest"
    return H200_SMS, "an H200's: no profile's manifest names its GPU"


def wave_section(stages: list[Stage], manifest: dict | None) -> tuple[list[Block], WaveSectionJson]:
    """Per stage, its launch plan counted in waves at SIZES, and what the worst fills mean. Only the
    counted stages (nsprof.ladder.ops.waves.COUNTED) declare how many of their blocks one SM holds, which
    a wave needs: another is named, not counted with a guess."""
    sm_count, source = sm_count_of(manifest)
    blocks: list[Block] = []
    records: WaveSectionJson = {"sm_count": sm_count, "sm_count_source": source, "waves": []}
    for stage in stages:
        if not counted(stage):
            blocks.append(prose(f"{stage.stage} is not counted: a wave needs how many of a stage's blocks one SM "
                                f"holds, which only {' and '.join(COUNTED[stage.op])} declare (their entries' launch "
                                "bounds)."))
            continue
        plans = [waves_of(stage, *size, sm_count) for size in SIZES]
        rows: list[StageWaves] = [{"stage": stage.stage, **plan.to_json()} for plan in plans]
        records["waves"] += rows
        blocks.append(Table(f"{stage.stage}: its launch plan on {sm_count} SMs ({source})", _COLUMNS, rows, None,
                            _DROP_ORDER))
        blocks.append(Bullets(_worst(stage, plans)))
    return section("Waves, as nsprof bench would launch them", blocks), records


def _worst(stage: Stage, plans: list[Waves]) -> list[str]:
    """What the most quantized plan and the least filled one leave idle."""
    quantized = max((p for p in plans if p.waves > 1), key=lambda p: p.idle_share)
    lines = [f"{quantized.size}: {quantized.blocks} blocks of {quantized.tile} on {quantized.slots} slots are "
             f"{quantized.waves:.2f} waves; the last of {quantized.rounds} rounds holds {quantized.last_round_blocks} "
             f"({quantized.last_wave_fill:.0%} of the slots), so {quantized.idle_share:.0%} of the slots' time would "
             "idle unless its tiles are shared"
             + (f": {stage.stage} shares those {quantized.shared_tiles} tiles' k steps over every slot (stream-K)."
                if quantized.shared_tiles else ".")]
    sparse = min(plans, key=lambda p: p.waves)
    if sparse.waves < 1:
        lines.append(f"{sparse.size}: {sparse.blocks} blocks of {sparse.tile} (K split {sparse.split_k}) are "
                     f"{sparse.waves:.2f} of a wave: {sparse.slots - sparse.blocks} of {sparse.slots} slots get no block.")
    return lines
