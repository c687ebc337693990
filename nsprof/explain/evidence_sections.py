"""What a profile measured, as the "Measured" section of an explanation: predicted against measured
shared-memory counters and L1 bytes, a topic's quantities per stage, the time across each step,
and for profiles without nsprof stage ranges, kernels ranked by bank conflicts."""

from __future__ import annotations

from nsprof.explain import evidence
from nsprof.explain.evidence import Measurements, Source
from nsprof.explain.explain_types import ConflictChange, Evidence, EvidenceParts
from nsprof.explain.page import prose, section
from nsprof.explain.topic import Topic
from nsprof.ladder.registry import Stage
from nsprof.render.document import Block, Table
from nsprof.render.format import MISSING

_TIME_COLUMNS = (
    ("before", "before", ""), ("after", "after", ""), ("size", "size", ""),
    ("nsys us\nbefore", "nsys_before_us", ",.2f"), ("\nafter", "nsys_after_us", ",.2f"),
    ("\nchange %", "nsys_change_pct", "+.1f"),
    ("ncu mean\nus before", "ncu_before_us", ",.2f"), ("\nafter", "ncu_after_us", ",.2f"),
    ("\nchange %", "ncu_change_pct", "+.1f"),
)
# Left out in this order where the terminal is narrow: ncu's replayed times after the size (the
# warm nsys times stay: the ones every page shows)
_TIME_DROP_ORDER = ("size", "ncu_before_us", "ncu_after_us", "ncu_change_pct")
_COMPARISON_COLUMNS = (
    ("stage", "stage", ""), ("size", "size", ""), ("declared mix per\nwarp per K tile", "mix", ""),
    ("wavefronts/instr.\npredicted", "predicted_wavefronts_per_instruction", ".2f"),
    ("measured", "measured_wavefronts_per_instruction", ".2f"),
    ("instructions\npredicted", "predicted_instructions", ",.0f"), ("measured", "measured_instructions", ",.0f"),
    ("conflicts\npredicted", "predicted_conflicts", ",.0f"), ("measured", "measured_conflicts", ",.0f"),
)
# Left out in this order where the terminal is narrow: conflicts and wavefronts, what the topic is
# about, stay longest
_COMPARISON_DROP_ORDER = ("size", "predicted_instructions", "measured_instructions", "mix")
_RANKING_DROP_ORDER = ("st_wavefronts_per_instruction", "ld_wavefronts_per_instruction", "launches")
_RANKING_COLUMNS = (("kernel", "kernel", ""), ("launches", "launches", "d"), ("conflicts", "conflicts", ",.0f"),
                    ("load conflicts", "ld_conflicts", ",.0f"), ("store conflicts", "st_conflicts", ",.0f"),
                    ("load wavefronts/instr.", "ld_wavefronts_per_instruction", ".2f"),
                    ("store wavefronts/instr.", "st_wavefronts_per_instruction", ".2f"))


def evidence_section(topic: Topic, stages: list[Stage], steps: tuple, found: Source | None,
                     measured: Measurements | None) -> tuple[list[Block], Evidence | None]:
    """The section, and its records for JSON (None when there was no profile to read)."""
    if found is None or measured is None:  # both are None, or neither
        return section("Measured", [prose("No measurements: no ncu CSV under ./profiles and no committed example. "
                                          "Run `nsprof profile`, or pass --from PATH.")]), None
    names = [s.stage for s in stages]
    parts: EvidenceParts = {}  # what the profile measured of the topic, filled in below
    blocks: list[Block] = [prose(f"From `{found.path}`: {found.reason}. GPU: {measured.gpu or 'not recorded'}.")]
    measured_stages = list(dict.fromkeys(s.stage for s, _, _ in evidence.staged(measured)))
    if not measured_stages:
        blocks += _unstaged(topic, measured, parts)
    elif not set(names) & set(measured_stages):
        blocks.append(prose(f"This profile measured {', '.join(measured_stages)}, none of {', '.join(names)}: "
                            "pass --from with a profile of those stages."))
    elif topic.space == "shared":
        blocks += _shared_memory(measured, names, steps, parts)
    else:
        blocks += _l1_bytes(topic, measured, names, parts) + _quantities(topic, measured, names, parts)
    times = evidence.step_times(measured, steps) if measured_stages else []
    if times:
        blocks.append(Table("Time per launch across each step", _TIME_COLUMNS, times,
                            "nsys: the timeline run's GPU time per launch; ncu: gpu__time_duration under replay, "
                            "every kernel of the stage (a split-K reduce too) per launch, a mean, as the stages table "
                            "has it (analyze's kernel tables give each kernel's own median)", _TIME_DROP_ORDER))
    record: Evidence = {"source": str(found.path), "reason": found.reason, "gpu": measured.gpu, **parts, "steps": times}
    # a topic that measures nothing of its own (float-sums reads the profile's verification above)
    return section("Measured" if len(blocks) > 1 else "Profile read", blocks), record


def _shared_memory(measured: Measurements, names: list[str], steps: tuple, parts: EvidenceParts) -> list[Block]:
    rows = evidence.shared_memory_comparison(measured, names)
    parts["shared_memory"] = rows
    blocks: list[Block] = [Table(f"Shared {op}s per launch: predicted from the declared accesses, measured by ncu",
                                 _COMPARISON_COLUMNS, [r for r in rows if r["op"] == op],
                                 f"measured wavefronts/instr.: every shared {op} of the stage's own kernel, averaged "
                                 "(nsprof analyze's n-way column, which also counts a step the stage runs, such "
                                 "as v8's transpose of A)", _COMPARISON_DROP_ORDER)
                           for op in ("load", "store") if any(r["op"] == op for r in rows)]
    changes: list[ConflictChange] = []
    for before, after in steps:
        for op in ("load", "store"):
            was, now = (next((r for r in rows if r["stage"] == s and r["op"] == op), None) for s in (before, after))
            if was is not None and now is not None and was["size"] == now["size"]:
                changes.append({"step": f"{before} -> {after}", "op": op, "size": was["size"],
                                "predicted_change": _difference(now["predicted_conflicts"], was["predicted_conflicts"]),
                                "measured_change": _difference(now["measured_conflicts"], was["measured_conflicts"])})
    parts["conflict_changes"] = changes
    if changes:
        blocks.append(Table("Bank conflicts per launch removed (-) or added (+) by each step",
                            (("step", "step", ""), ("op", "op", ""), ("size", "size", ""),
                             ("predicted", "predicted_change", "+,.0f"), ("measured", "measured_change", "+,.0f")), changes,
                            None, ("size",)))
    return blocks


def _l1_bytes(topic: Topic, measured: Measurements, names: list[str], parts: EvidenceParts) -> list[Block]:
    """The sector model predicts what l1tex__t_bytes measures: both, where the topic shows L1 bytes."""
    rows = evidence.l1_bytes_comparison(measured, names) if "l1_mbytes" in topic.quantities else []
    if not rows:
        return []
    parts["l1_bytes"] = rows
    return [Table("L1 bytes requested per launch: the sector model against l1tex__t_bytes",
                  (("stage", "stage", ""), ("size", "size", ""), ("predicted", "predicted_l1_bytes", ",.0f"),
                   ("measured", "measured_l1_bytes", ",.0f")), rows)]


def _quantities(topic: Topic, measured: Measurements, names: list[str], parts: EvidenceParts) -> list[Block]:
    if not topic.quantities:
        return []
    rows, missing, keys = evidence.stage_quantities(measured, names, topic.quantities)
    parts["quantities"], parts["missing_metrics"] = rows, missing
    columns = (("stage", "stage", ""), ("size", "size", ""),
               *((evidence.QUANTITIES[k].label, k, evidence.QUANTITIES[k].spec) for k in keys))
    notes = [f"{MISSING}: not in this profile; collect with nsprof profile --metrics default,{','.join(missing)}"] \
        if missing else []
    if any(evidence.QUANTITIES[k].stage_column for k in keys):
        notes.append("TFLOP/s and % of peak: the op's FLOPs over the stage's time (nsys where it saw the stage, "
                     "else ncu), as report and roofline show them")
    return [Table("Measured per launch (Nsight Compute, unless said)", columns, rows, "; ".join(notes) or None)]


def _unstaged(topic: Topic, measured: Measurements, parts: EvidenceParts) -> list[Block]:
    note = "No nsprof stage ranges (nsprof:OP/STAGE/MxNxK) in this profile, so no stage-by-stage comparison."
    if topic.space != "shared":
        return [prose(note)]
    parts["kernels"] = evidence.kernels_by_conflicts(measured)
    return [prose(note + " Kernels ranked by measured shared-memory bank conflicts per launch:"),
            Table("Kernels by bank conflicts (ncu)", _RANKING_COLUMNS, parts["kernels"], None, _RANKING_DROP_ORDER)]


def _difference(after: float | None, before: float | None) -> float | None:
    return None if after is None or before is None else after - before
