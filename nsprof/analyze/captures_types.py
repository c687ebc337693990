"""The rows of many captures' tables as types (nsprof.analyze.captures builds them, one column per
key, in this order: its *_COLUMNS are these keys), as `analyze DIR --json` writes them. docs/json/
holds the JSON Schema derived from them (tests/json_schemas.py)."""

from __future__ import annotations

from typing_extensions import TypedDict  # pydantic reads it for docs/json (typing's, only from Python 3.12)


class CaptureRow(TypedDict):
    """One capture (a rank, or a run) of the directory."""

    file: str
    rank: int | None  # from the file's name, where it says
    gpu_busy_pct: float
    kernel_ns: float
    copy_ns: float
    comm_ns: float
    comm_overlap_pct: float | None  # of communication, the share that overlapped compute
    idle_ns: float
    top_kernel: str | None
    top_kernel_pct: float | None
    comm_source: str  # NCCL kernels, NVTX collective ranges, or none


class MergedKernelRow(TypedDict):
    """One kernel across the captures."""

    kernel: str
    captures: int  # how many captures ran it
    count: int
    total_ns: float
    pct: float  # of all the captures' kernel time
    min_ns: float  # of the captures' totals: the least and most one capture spent
    median_ns: float
    max_ns: float


class StepRow(TypedDict):
    step_range: str
    step: int
    step_ns: float
    wait_ns: float
    compute_ns: float


class StragglerRow(TypedDict):
    """One step across the ranks: the rank that computed longest, by how much, and what the others waited."""

    step: int
    rank: int | None
    file: str
    compute_ns: float
    late_by_ns: float
    others_wait_ns: float
    step_ns: float


class CapturesDocument(TypedDict):
    """`nsprof analyze DIR --json` of a directory of captures."""

    captures: list[CaptureRow]
    kernels: list[MergedKernelRow]
    step_range: str | None
    stragglers: list[StragglerRow]
    scheduler: str  # where the Dask tasks ran
    failed: list[str]  # "file: why" of each capture that could not be read
