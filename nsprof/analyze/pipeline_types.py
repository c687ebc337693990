"""What nsprof.analyze.pipeline says of copies and of an `nsprof pipeline` capture, as types: what
`nsprof explain pipeline --json` writes under `measured`. Plain dicts at run time; mypy checks every key
read, and docs/json/ holds the JSON Schema derived from them (tests/json_schemas.py)."""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict  # pydantic reads it for docs/json (typing's, only from Python 3.12)


class CopyRate(TypedDict):
    """The copies of one direction and host-memory kind that moved a MiB or more."""

    direction: str  # Host-to-Device, Device-to-Host
    host_memory: str  # pageable, or pinned or device
    copies: int
    bytes: int
    gbytes_per_s: float


class CopyFacts(TypedDict):
    """copy_facts: copy rates, and the union of each kind of GPU work and of their overlaps, in ms."""

    copy_rates: list[CopyRate]
    h2d_ms: float
    d2h_ms: float
    kernel_ms: float
    both_directions_at_once_ms: float
    copies_during_kernels_ms: float


class BusFloor(TypedDict):
    """bus_floor: the least time the bytes can take over the bus; the times are None where the pinned
    bandwidths were not measured."""

    floor_ms: float | None
    sequential_floor_ms: float | None
    h2d_gbyte_per_s: float | None
    d2h_gbyte_per_s: float | None
    source: str | None  # where the bandwidths came from, or why there are none


class FastestFlow(TypedDict):
    """fastest_flow: an `nsprof pipeline` record's fastest warm variant and the tutorial's pageable flow
    of its stage, each a row of pipeline.json's records (column -> value), the size and the bus floor."""

    size: str
    best: dict[str, Any]
    pageable: dict[str, Any] | None
    floor: BusFloor | None
