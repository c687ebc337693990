"""What the access models say, as explanation sections: one stage's declared accesses (table,
drawings of the conflicted or changed ones, padding that would fix them), the topic's worked
examples, and a described access's numbers with the reasons behind them."""

from __future__ import annotations

from nsprof.access import parse_shape, user_access
from nsprof.explain.bank_model import BankAnalysis, analyze_shared, conflict_free_row_length
from nsprof.explain.coalescing import SectorAnalysis, analyze_global
from nsprof.explain.drawings import bank_drawing, sector_map
from nsprof.explain.explain_types import (
    BankExample,
    BankModelJson,
    MixPredictionRow,
    SectorExample,
    SectorModelJson,
    SectorRow,
    StageSectorRow,
)
from nsprof.explain.page import prose, section
from nsprof.explain.prediction import MixPrediction, predict_mix, sass_name
from nsprof.explain.topic import Topic
from nsprof.ladder.registry import Stage, get_stage
from nsprof.render.document import Block, Bullets, Drawing, Table

BANK_GRID_TITLE = "lane -> bank (wavefront that serves it)"
_BANK_COLUMNS = (("access (warp 0)", "source", ""), ("SASS", "sass", ""), ("per K\ntile", "count", "d"),
                 ("wave-\nfronts", "wavefronts", "d"), ("minimum", "min_wavefronts", "d"), ("n-way", "n_way", "d"),
                 ("counted as\nconflicts", "excess_wavefronts", "d"))
# where the terminal is narrow: the conflict degree and what is counted as conflicts stay longest
_BANK_DROP_ORDER = ("min_wavefronts", "count", "sass", "wavefronts")
_SECTOR_COLUMNS = (("sectors", "sectors", "d"), ("lines", "lines", "d"), ("fewest sectors", "min_sectors", "d"),
                   ("bytes used / moved", "efficiency", ".0%"))


def shared_model(topic: Topic, stage: Stage | None, unmeasured: list[Stage]) -> tuple[list[Block], BankModelJson]:
    """The bank model on `stage`'s shared accesses, or on the topic's examples; the kernel-wide
    prediction for `unmeasured` stages (measured ones get it beside the measurement)."""
    blocks: list[Block] = []
    records: BankModelJson = {}
    if stage is not None:
        analyses = [analyze_shared(a) for a in stage.accesses if a.space == "shared"]
        records["accesses"] = [{"stage": stage.stage, **a.to_json()} for a in analyses]
        if not analyses:
            note = f"{stage.stage} declares no shared-memory access."
            return section(f"{stage.stage}'s shared-memory accesses", [prose(note)]), records
        blocks.append(Table(f"{stage.stage}: every shared access, one warp", _BANK_COLUMNS, [_bank_row(a) for a in analyses],
                            None, _BANK_DROP_ORDER))
        notes = [f"{a.source}: {a.note}" for a in stage.accesses if a.note and a.space == "shared"]
        blocks += [Bullets(notes)] if notes else []
        partners = _partners(topic, stage)
        blocks += [bank_drawing(f"{a.access.source}: {BANK_GRID_TITLE}", a)
                   for a in analyses if a.n_way > 1 or _changed(a, partners)]
        padding = _padding_facts(analyses)
        blocks += [Bullets(padding)] if padding else []
    else:
        examples = [_bank_example(shape, pattern, width) for shape, pattern, width in topic.examples]
        records["examples"] = examples
        blocks.append(Table("Worked by the model (one warp, 4-byte banks)",
                            (("shape", "shape", ""), ("access", "access", ""), ("bytes/lane", "width", "d"),
                             *_BANK_COLUMNS[3:]), examples))
    predictions = [_mix_row(s, op, mix) for s in unmeasured for op in ("load", "store")
                   if (mix := predict_mix(s, op)) is not None]
    records["predictions"] = predictions
    if predictions:
        blocks.append(Table("Predicted for the whole kernel (not measured in this profile)",
                            (("stage", "stage", ""), ("op", "op", ""), ("mix per warp per K tile", "mix", ""),
                             ("wavefronts/instr.", "wavefronts_per_instruction", ".2f"),
                             ("conflicts/instr.", "conflicts_per_instruction", ".2f")), predictions))
    return section("The bank model", blocks), records


def global_model(topic: Topic, stage: Stage | None, stages: list[Stage]) -> tuple[list[Block], SectorModelJson]:
    """The sector model on `stage`'s global accesses, or on the topic's examples and every global
    access of `stages`."""
    blocks: list[Block]
    if stage is not None:
        analyses = [analyze_global(a) for a in stage.accesses if a.space == "global"]
        records: SectorModelJson = {"accesses": [{"stage": stage.stage, **a.to_json()} for a in analyses]}
        if not analyses:
            return section(f"{stage.stage}'s global accesses", [prose(f"{stage.stage} declares no global access.")]), records
        partners = _partners(topic, stage)
        blocks = [Table(f"{stage.stage}: every global access, one warp request",
                        (("access (warp 0)", "source", ""), ("SASS", "sass", ""), ("count", "count", ""), *_SECTOR_COLUMNS),
                        [_sector_row(a) for a in analyses])]
        blocks += [Drawing(f"{a.access.source}: sectors touched", sector_map(a))
                   for a in analyses if a.efficiency < 1 or _changed(a, partners)]
        return section("The sector model", blocks), records
    examples: list[SectorExample] = [{"shape": shape, "access": pattern, "width": width,
                                      **_sector_row(analyze_global(user_access("global", parse_shape(shape), pattern, width)))}
                                     for shape, pattern, width in topic.examples]
    ladder: list[StageSectorRow] = [{"stage": s.stage, **_sector_row(analyze_global(a))}
                                    for s in stages for a in s.accesses if a.space == "global"]
    blocks = [Table("Worked by the model (floats, one warp request)",
                    (("shape", "shape", ""), ("access", "access", ""), ("bytes/lane", "width", "d"), *_SECTOR_COLUMNS),
                    examples),
              Table("Every global access of the ladder, one warp request",
                    (("stage", "stage", ""), ("access (warp 0)", "source", ""), ("SASS", "sass", ""),
                     ("count", "count", ""), *_SECTOR_COLUMNS), ladder)]
    return section("The sector model", blocks), {"examples": examples, "predictions": ladder}


def why_banks(a: BankAnalysis, row_length: int | None) -> list[str]:
    """The reasons behind one access's wavefronts, in sentences; `row_length` is the padded row
    length that makes it conflict-free, if one does."""
    access = a.access
    row_words = access.row_bytes // 4
    lines = [f"A row is {access.shape[1]} x {access.width} bytes = {row_words} words; {row_words} mod 32 = {row_words % 32}: "
             f"the same column of consecutive rows lies {row_words % 32} bank(s) further on."]
    if access.width > 4:
        unit = {8: "quarter-warp", 16: "half-warp", 32: "warp"}[len(a.phases[0])]
        paired = " (a load whose lanes pair up on equal addresses: phases doubled)" if a.paired else ""
        lines.append(f"{access.width}-byte accesses are served per {unit}{paired}: {len(a.phases)} phase(s), "
                     f"at least {a.min_wavefronts} wavefront(s).")
    lines.append(f"Most distinct words one bank serves within a phase: {a.n_way} ({a.n_way}-way). "
                 f"{a.wavefronts} wavefront(s) against a minimum of {a.min_wavefronts}: Nsight Compute would count "
                 f"{a.excess_wavefronts} bank conflict(s) for this instruction.")
    if a.n_way > 1:
        lines.append(f"Rows padded to {row_length} elements make it conflict-free." if row_length else
                     "No padding up to 32 elements removes the conflict: change which lane takes which index.")
    return lines


def why_sectors(a: SectorAnalysis) -> list[str]:
    return [f"{len(a.sectors)} sector(s) of 32 bytes in {len(a.lines)} line(s) of 128 bytes for {a.bytes_used} bytes "
            f"the lanes asked for: {a.efficiency:.1%} of the bytes moved are used.",
            f"The fewest sectors that could hold those bytes: {a.min_sectors}."]


def _bank_row(a: BankAnalysis) -> dict:
    return {"source": a.access.source, "sass": sass_name(a.access), "count": a.access.count,
            "wavefronts": a.wavefronts, "min_wavefronts": a.min_wavefronts, "n_way": a.n_way,
            "excess_wavefronts": a.excess_wavefronts}


def _bank_example(shape: str, pattern: str, width: int) -> BankExample:
    a = analyze_shared(user_access("shared", parse_shape(shape), pattern, width))
    return {"shape": shape, "access": pattern, "width": width, "wavefronts": a.wavefronts,
            "min_wavefronts": a.min_wavefronts, "n_way": a.n_way, "excess_wavefronts": a.excess_wavefronts}


def _mix_row(stage: Stage, op: str, mix: MixPrediction) -> MixPredictionRow:
    return {"stage": stage.stage, "op": op, "mix": mix.describe(),
            "wavefronts_per_instruction": mix.wavefronts_per_instruction,
            "conflicts_per_instruction": mix.excess_wavefronts / mix.instructions}


def _sector_row(a: SectorAnalysis) -> SectorRow:
    count = f"{a.access.count} once" if a.access.once else f"{a.access.count}/K tile"
    return {"source": a.access.source, "sass": sass_name(a.access), "count": count, "sectors": len(a.sectors),
            "lines": len(a.lines), "min_sectors": a.min_sectors, "efficiency": a.efficiency}


def _partners(topic: Topic, stage: Stage) -> list[Stage]:
    """The stages on the other side of the topic's steps that involve `stage`."""
    return [get_stage(stage.op, name) for step in topic.ladder(stage.op)[1] if stage.stage in step
            for name in step if name != stage.stage]


def _changed(analysis: BankAnalysis | SectorAnalysis, partners: list[Stage]) -> bool:
    """The same array and op costs differently (wavefronts or sectors) in a partner stage."""
    a = analysis.access
    mine = analysis.wavefronts if isinstance(analysis, BankAnalysis) else len(analysis.sectors)  # shared, global
    for partner in partners:
        for other in partner.accesses:
            if (other.space, other.op, other.array) == (a.space, a.op, a.array):
                cost = analyze_shared(other).wavefronts if a.space == "shared" else len(analyze_global(other).sectors)
                if cost != mine:
                    return True
    return False


def _padding_facts(analyses: list[BankAnalysis]) -> list[str]:
    """For each conflicted array: the row length that would make all its accesses conflict-free."""
    facts = []
    for array in dict.fromkeys(a.access.array for a in analyses if a.n_way > 1):
        accesses = [a.access for a in analyses if a.access.array == array]
        length = conflict_free_row_length(accesses)
        facts.append(f"Rows of {array} padded from {accesses[0].shape[1]} to {length} elements would make all its accesses "
                     "conflict-free and keep them aligned." if length else
                     f"No padding of {array}'s rows (up to 32 elements) removes the conflict: it is within a row, "
                     "so the lane-to-index map has to change.")
    return facts
