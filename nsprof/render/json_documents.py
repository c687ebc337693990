"""The document `nsprof analyze --json` writes of one capture, as a type (the diff's is
nsprof.diff.types.DiffDocument, many captures' nsprof.analyze.captures_types.CapturesDocument).
Its typed parts are the analysis's own (the host side, the loop, its phases); a table's rows are
its columns, which docs/analyze.md lists. docs/json/ holds the JSON Schema derived from it
(tests/json_schemas.py)."""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict  # pydantic reads it for docs/json (typing's, only from Python 3.12)

from nsprof.analyze.host_types import HostSide
from nsprof.analyze.loop_types import IterationsJson, LoopJson, PhaseJson

Rows = list[dict[str, Any]]  # a table's rows: column -> value (null where not measured)


class _Analyzed(TypedDict):
    gpu: str | None
    ceiling: dict[str, Any] | None  # the GPU's ceilings the % of peak are of, and where each came from
    processing_errors: list[str]  # what nsys reported failing while it processed the capture


class AnalyzeDocument(_Analyzed, total=False):
    """`nsprof analyze CAPTURE --json`: each part where the capture has what it is computed from."""

    gpu_models: list[str]  # where the capture names more than one
    host: HostSide  # one program's capture: why the GPU waits, what to fix first
    iterations: IterationsJson | None
    phases: list[PhaseJson]
    loop: LoopJson
    hot_kernels: Rows
    harness: dict[str, Any] | None
    triton_kernels: Rows
    kernel_summary: Rows
    kernel_families: Rows
    memcpy_summary: Rows
    gpu_utilization: Rows | None
    unattributed: dict[str, Any] | None
    attribution: str  # thread or process: whose CUDA calls an NVTX range counts
    ranges: Rows
    range_families: Rows
    kernels: Rows  # ncu's launches
    kernel_groups: Rows
    missing_metrics: dict[str, Any] | None
    stages: Rows  # a ladder's stages (a profile directory's)
