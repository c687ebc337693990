"""A program's loop and phases as `analyze --json` writes them (nsprof.analyze.iterations' Loop and
Iterations, nsprof.analyze.phases' Phase: their to_json). Plain dicts at run time; docs/json/ holds
the JSON Schema derived from them (tests/json_schemas.py)."""

from __future__ import annotations

from typing_extensions import TypedDict  # pydantic reads it for docs/json (typing's, only from Python 3.12)


class MarkerCheckJson(TypedDict):
    """A found loop checked against the markers: iterations each gives, marked ones matched."""

    markers: int
    found: int
    matched: int


class ListedIteration(TypedDict):
    index: int
    start_ns: int
    span_ns: int


class IterationsJson(TypedDict):
    count: int
    source: str  # markers or found
    confidence: str  # high or medium
    rule: str  # what defines the iterations, in words
    start_ns: int
    end_ns: int
    median_ns: float
    spread_pct: float
    min_ns: int
    max_ns: int
    marker: str | None  # the repeating range, where marked
    anchor: str | None  # the GPU operation that starts each iteration, where found
    operations: int | None
    regular: int | None
    drift: str | None
    check: MarkerCheckJson | None
    listed: list[ListedIteration]  # the first and last iterations


class LoopJson(TypedDict):
    iterations: IterationsJson | None  # those that decide: the markers' where marked, else found
    found: IterationsJson | None  # the loop found in the GPU work, where it is not `iterations`
    not_found: str | None  # why no loop was found in the GPU work
    operations: int
    notes: list[str]


class PhasePart(TypedDict):
    part: str
    host_ns: int


class PhaseJson(TypedDict):
    name: str  # start-up, loop or tail
    start_ns: int
    end_ns: int
    span_ns: int
    gpu_busy_ns: int
    operations: int
    parts: list[PhasePart]  # the host's time in it, by kind of CUDA call, then outside them
