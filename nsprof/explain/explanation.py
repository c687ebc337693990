"""Assemble an explanation: a topic's text beside what nsprof computes (the access models, facts
from the registry) and measures (a profile, which the explain verb finds and opens through the
front door: nsprof.verbs.explain_sources). The public entry points of nsprof.explain."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from nsprof.access import user_access
from nsprof.errors import UsageError
from nsprof.explain import evidence
from nsprof.explain.bank_model import analyze_shared, conflict_free_row_length
from nsprof.explain.coalescing import analyze_global
from nsprof.explain.cold_inputs import inputs_section
from nsprof.explain.drawings import bank_drawing, sector_map
from nsprof.explain.evidence_sections import evidence_section
from nsprof.explain.explain_types import (
    AccessPage,
    DescribedAccess,
    EvidenceSource,
    GpuVsCpuPage,
    HostFacts,
    LadderPage,
    LadderStage,
    LadderStep,
    MeasuredPage,
    ModelJson,
    PipelineFacts,
)
from nsprof.explain.facts import topic_facts
from nsprof.explain.model_sections import BANK_GRID_TITLE, global_model, shared_model, why_banks, why_sectors
from nsprof.explain.page import Explanation, prose, section
from nsprof.explain.topic import Topic
from nsprof.explain.topics import get_topic
from nsprof.explain.waves import wave_section
from nsprof.ladder.registry import Stage, get_op, get_stage, select_stages
from nsprof.paths import shown_path
from nsprof.render.document import Block, Bullets, Drawing, Table

if TYPE_CHECKING:
    from nsprof.analyze.capture_analysis import CaptureAnalysis
    from nsprof.parse.profile import Capture

DEFAULT_SHAPES = {"shared": (32, 32), "global": (1024, 1024)}  # a float tile; a matrix as profiled


@dataclass(frozen=True)
class Focus:
    """What of a ladder a topic's page is about: its op, the one stage asked for (--stage), the
    stages and optimization steps it concerns."""

    topic: Topic
    op: str
    stage: Stage | None
    stages: list[Stage]
    steps: tuple[tuple[str, str], ...]

    @property
    def wanted(self) -> list[str]:
        """The stages whose measurements the page wants: both ends of each step, else the topic's."""
        return list(dict.fromkeys(n for s in self.steps for n in s)) or [s.stage for s in self.stages]


def topic_focus(name: str, stage_name: str | None = None, op: str | None = None) -> Focus:
    """The topic (a name nsprof knows) on `op`'s ladder (the topic's own by default), narrowed to
    `stage_name` and the steps that concern it where one is given."""
    topic = get_topic(name)
    op = get_op(op or topic.op).name  # an unknown op is named as such before the topic is asked
    topic_stages, topic_steps = topic.ladder(op)
    stage = get_stage(op, stage_name) if stage_name else None
    steps = tuple(s for s in topic_steps if stage is None or stage.stage in s)
    focus = [stage.stage, *(n for s in steps for n in s if n != stage.stage)] if stage else list(topic_stages)
    return Focus(topic, op, stage, select_stages(op, focus) if focus else [], steps)


def ladder_explanation(focus: Focus, found: evidence.Source | None, measured: evidence.Measurements | None) -> Explanation:
    """The topic's text; the ladder's stages and steps it concerns; the access model on the topic's
    examples, or on one stage's declared accesses; computed facts; and the measurements `found`
    (the explain verb finds and opens them: nsprof.verbs.explain_sources)."""
    topic, stage, stages, steps = focus.topic, focus.stage, focus.stages, focus.steps
    ladder, rows = _ladder(topic, stage, steps, focus.op)
    model, records = _model(focus, measured)
    facts = topic_facts(topic.name, stages, measured)
    measured_section, found_evidence = evidence_section(topic, stages, steps, found, measured)
    # the model's records sit between the ladder and the facts, as they always have in the JSON
    doc: LadderPage = {"topic": topic.name, "summary": topic.summary, "text": topic.text,
                       "stage": stage.stage if stage else None, "ladder": rows, **records, "facts": facts,
                       "evidence": found_evidence, "caveats": list(topic.caveats), "references": list(topic.references)}
    blocks = [prose(topic.text), *ladder, *model, *(section("Computed for this ladder", [Bullets(facts)]) if facts else []),
              *measured_section, *_caveats_and_sources(topic)]
    title = topic.name + (f": {stage.stage} {stage.title}" if stage else "")
    return Explanation(title, topic.summary, blocks, doc)


def _model(focus: Focus, measured: evidence.Measurements | None) -> tuple[list[Block], ModelJson]:
    """The topic's model on its stages (or one stage), with its records; nothing for a topic without one."""
    topic, stage, stages = focus.topic, focus.stage, focus.stages
    if topic.space == "shared":
        measured_names = {s.stage for s, _, _ in evidence.staged(measured)} if measured else set()
        return shared_model(topic, stage, [s for s in stages if s.stage not in measured_names])
    if topic.space == "global":
        return global_model(topic, stage, stages)
    if topic.space == "waves":
        return wave_section(stages, measured.manifest if measured else None)
    if topic.space == "inputs":
        return inputs_section(get_op(focus.op), measured.manifest if measured else None)
    return [], {}  # no model: no records


def pipeline_explanation(topic: Topic, source: evidence.Source, profile: Capture, analysis: CaptureAnalysis) -> Explanation:
    """The pipeline topic reads an nsys capture's copies, not a ladder's ncu measurements."""
    from nsprof.explain.pipeline_facts import fact_lines, pipeline_facts

    facts = pipeline_facts(source.path, profile, analysis)
    return _measured_page(topic, source, facts, fact_lines(facts))


def gpu_idle_explanation(topic: Topic, source: evidence.Source, analysis: CaptureAnalysis) -> Explanation:
    """The gpu-idle topic reads a program's nsys capture: its host side, computed by the analysis."""
    from nsprof.explain.host_facts import fact_lines, host_facts

    facts = host_facts(source.path, analysis)
    return _measured_page(topic, source, facts, fact_lines(facts))


def _measured_page(topic: Topic, source: evidence.Source, facts: PipelineFacts | HostFacts, lines: list[str]) -> Explanation:
    """A topic's text, then the facts measured in the capture read, in Markdown bullets."""
    doc: MeasuredPage = {"topic": topic.name, "summary": topic.summary, "text": topic.text, "facts": lines, "measured": facts,
                         "evidence": _evidence(source), "caveats": list(topic.caveats), "references": list(topic.references)}
    blocks = [prose(topic.text), *section(f"Measured in {shown_path(source.path)} ({source.reason})",
                                          [Bullets(lines, markdown=True)]), *_caveats_and_sources(topic)]
    return Explanation(topic.name, topic.summary, blocks, doc)


def gpu_vs_cpu_explanation(topic: Topic, source: evidence.Source, profile: Capture, analysis: CaptureAnalysis,
                           op: str | None, stage: str | None) -> Explanation:
    """The gpu-vs-cpu topic reads a capture with CPU stages beside the GPU's (bench-cpu.json), its
    ladder being the capture's: the fastest GPU stage there, or `stage`, against the CPU's."""
    from nsprof.explain.cpu_gap_facts import cpu_gap_facts, fact_sections

    path, reason = source.path, source.reason
    facts = cpu_gap_facts(path, profile, analysis, op, stage)
    sections = fact_sections(facts)
    ladder, rows = _ladder(topic, None, (), facts["op"])
    doc: GpuVsCpuPage = {"topic": topic.name, "summary": topic.summary, "text": topic.text, "ladder": rows,
                         "facts": [line for lines in sections.values() for line in lines], "measured": facts,
                         "evidence": _evidence(source), "caveats": list(topic.caveats),
                         "references": list(topic.references)}
    blocks = [prose(topic.text), *ladder,
              *section(f"Measured in {shown_path(path)} ({reason})", [Bullets(sections["roofs"], markdown=True)]),
              *section(f"The stages at {facts['size']}", [Bullets(sections["measured"], markdown=True)]),
              *section("Tiling against the ridge points", [Bullets(sections["tiling"], markdown=True)]),
              *_caveats_and_sources(topic)]
    return Explanation(topic.name, topic.summary, blocks, doc)


def explain_access(name: str, shape: tuple[int, int] | None, pattern: str, width: int = 4, op: str = "load") -> Explanation:
    """An access the user describes (see nsprof.access.user_access) through the topic's model:
    the numbers, the reasons, and a drawing. The computed fields are at the top of the JSON."""
    topic = get_topic(name)
    if topic.space not in DEFAULT_SHAPES:
        raise UsageError(f"--shape and --access describe a memory access; topic '{name}' has no access model",
                         "use them with bank-conflicts (shared memory) or coalescing (global memory)")
    access = user_access(topic.space, shape or DEFAULT_SHAPES[topic.space], pattern, width, op)
    described: DescribedAccess = {"topic": topic.name, "summary": topic.summary, "access": access.source,
                                  "shape": list(access.shape), "width": access.width, "op": access.op}
    doc: AccessPage
    if topic.space == "shared":
        banks = analyze_shared(access)
        row_length = conflict_free_row_length([access]) if banks.n_way > 1 else None
        why, drawing = why_banks(banks, row_length), bank_drawing(BANK_GRID_TITLE, banks)
        doc = {**described, "conflict_free_row_length": row_length, **banks.figures(), "explanation": why}
    else:
        sectors = analyze_global(access)
        why, drawing = why_sectors(sectors), Drawing("cache lines and sectors touched", sector_map(sectors))
        doc = {**described, **sectors.figures(), "explanation": why}
    return Explanation(f"{topic.name}: {access.source}", topic.summary, [Bullets(why), drawing], doc)


def _caveats_and_sources(topic: Topic) -> list[Block]:
    """A section of the topic's caveats and one of its sources, each where it has any (Markdown)."""
    blocks: list[Block] = []
    for heading, items in (("Caveats", topic.caveats), ("Sources", topic.references)):
        if items:
            blocks += section(heading, [Bullets(list(items), markdown=True)])
    return blocks


def _evidence(source: evidence.Source) -> EvidenceSource:
    return {"source": str(source.path), "reason": source.reason}


def _ladder(topic: Topic, stage: Stage | None, steps: tuple, op: str) -> tuple[list[Block], list[LadderStep] | list[LadderStage]]:
    """From the registry: what each of the topic's steps changed, or what its stages change."""
    rows: list[LadderStep] | list[LadderStage]
    if steps:
        changed = [(f"{before} -> {after}", get_stage(op, after)) for before, after in steps]
        step_rows: list[LadderStep] = [{"step": step, "changes": s.changes, "why": s.why, "metric": s.metric}
                                       for step, s in changed]
        rows = step_rows
        columns: tuple[tuple[str, str, str], ...] = (("step", "step", ""), ("what changed", "changes", ""),
                                                     ("why", "why", ""), ("metric to watch", "metric", ""))
    else:
        names = topic.ladder(op)[0]
        chosen = [stage] if stage else select_stages(op, list(names)) if names else []
        stage_rows: list[LadderStage] = [{"stage": s.stage, "title": s.title, "changes": s.changes} for s in chosen]
        rows = stage_rows
        columns = (("stage", "stage", ""), ("title", "title", ""), ("what it changes", "changes", ""))
    # where the terminal is narrow, why goes first, then what changed: the metric to watch stays whole
    table = Table("From the stage registry", columns, rows, None, ("why", "changes") if steps else ("title",))
    return section("In this ladder", [table] if rows else []), rows
