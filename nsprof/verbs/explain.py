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
    from nsprof.explain.explanation import explain_topic

    return explain_topic(topic, stage, path_or_none(source), op=op, ceilings=path_or_none(ceilings))
