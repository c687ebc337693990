"""`explain`: a topic with the ladder's declared accesses and measurements, or an access you describe."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from nsprof.errors import UsageError
from nsprof.verbs.common import path_or_none

if TYPE_CHECKING:  # loaded with the calls that need them: `nsprof --help` stays fast
    from nsprof.explain.page import Explanation


def explain(topic: str | None = None, stage: str | None = None, source: str | Path | None = None, *,
            op: str | None = None, ceilings: str | Path | None = None, shape: str | None = None,
            access: str | None = None, width: int | None = None, store: bool = False, list_topics: bool = False) -> Explanation:
    """`nsprof explain`: a topic with the ladder's declared accesses and measurements (from `source`,
    by default the latest profile), or with `shape`/`access`/`width`/`store` the same models on an
    access you describe, or with `list_topics` the list of topics. Returns
    nsprof.explain.explanation.Explanation (its `document` is the JSON, `page()` the blocks)."""
    from nsprof.explain.topics import TOPICS

    own_access = any(value is not None for value in (shape, access, width)) or store
    if list_topics and topic is not None:
        raise UsageError(f"--list lists every topic; it takes no topic ('{topic}')", "drop one of them")
    if list_topics:
        from nsprof.explain.topics import topic_list

        return topic_list()
    if topic is None:
        raise UsageError("no topic given", f"choose one of: {', '.join(TOPICS)} (or pass --list)")
    if own_access:
        from nsprof.access import parse_shape
        from nsprof.explain.explanation import explain_access

        if stage is not None:
            raise UsageError("--stage and --shape/--access both describe accesses", "give one or the other")
        return explain_access(topic, parse_shape(shape) if shape else None, access or "row",
                              4 if width is None else width, "store" if store else "load")
    from nsprof.explain import explanation as page
    from nsprof.explain.evidence import measurements
    from nsprof.explain.topics import get_topic
    from nsprof.ladder.registry import get_op
    from nsprof.profile_analysis import opened
    from nsprof.verbs import explain_sources as sources

    chosen, given, ceilings_file = get_topic(topic), path_or_none(source), path_or_none(ceilings)
    if chosen.name == "pipeline":
        found = sources.pipeline_source(given)
        return page.pipeline_explanation(chosen, found, *opened(found.path, parts=("copies",)))
    if chosen.name == "gpu-idle":
        found = sources.program_source(given)
        return page.gpu_idle_explanation(chosen, found, opened(found.path)[1])
    if chosen.name == "gpu-vs-cpu":
        op = get_op(op).name if op else None  # an unknown op is named as such before a capture is searched
        found = sources.cpu_gap_source(given, op)
        return page.gpu_vs_cpu_explanation(chosen, found, *opened(found.path, ceilings_file), op, stage)
    focus = page.topic_focus(chosen.name, stage, op)
    # the capture holding most of the steps' stages (both ends of a step compared), else of the topic's
    ladder_found = sources.ladder_source(given, focus.op, focus.wanted)
    measured = measurements(ladder_found, *opened(ladder_found.path, ceilings_file)) if ladder_found else None
    return page.ladder_explanation(focus, ladder_found, measured)
