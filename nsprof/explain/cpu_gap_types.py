"""What `nsprof explain gpu-vs-cpu --json` writes under `measured` (nsprof.explain.cpu_gap_facts), as types:
the two machines' roofs, the stages timed, like for like against the ratio of the roofs, the serial loop, and
what tiling does to FLOPs per byte. Plain dicts at run time; mypy checks every key, and
docs/json/explain.schema.json holds the JSON Schema derived from them (tests/json_schemas.py)."""

from __future__ import annotations

from typing import Literal

from typing_extensions import NotRequired, TypedDict  # pydantic reads them for docs/json


class Roofs(TypedDict):
    """A machine's FP32 compute roof (TFLOP/s) and DRAM bandwidth (TB/s), and where each came from."""

    fp32_tflop_per_s: float | None
    dram_tbyte_per_s: float | None
    fp32_source: str | None
    dram_source: str | None


class AtIntensity(TypedDict):
    """A machine's roofline at the op's FLOPs per byte."""

    ridge_flop_per_byte: float | None
    attainable_tflop_per_s: float | None
    bound: Literal["compute", "memory"] | None


class GpuRoofs(Roofs):
    name: str | None


class CpuRoofs(Roofs):
    name: str | None
    cores: int | None  # hardware threads
    simd: str | None
    blas: str | None


class GpuMachine(GpuRoofs, AtIntensity):
    pass


class CpuMachine(CpuRoofs, AtIntensity):
    pass


class TimedStage(TypedDict):
    """One stage timed in the capture, and the analysis's speed-ups over the CPU's loop and BLAS."""

    stage: str
    title: str
    precision: str
    time_ms: float
    time_source: str
    tflops_per_s: float | None
    pct_of_compute_peak: float | None
    speedup_vs_cpu_loop: float | None
    speedup_vs_cpu_blas: float | None
    compute_roof: NotRequired[str]  # a GPU stage's: the units its precision computes on
    compute_roof_tflop_per_s: NotRequired[float | None]


class AgainstRoofs(TimedStage):
    """The fastest GPU stage of the CPU BLAS's precision, against that BLAS and the ratio of the roofs."""

    gpu_pct_of_roof: float | None
    cpu_blas_pct_of_roof: float | None
    roof_ratio: float | None
    pct_of_roof_ratio: float | None


class SerialLoop(TimedStage):
    """The CPU's serial loop against the CPU's roof and one hardware thread's share of it."""

    pct_of_cpu_roof: float | None
    pct_of_cpu_fp32: float | None
    one_core_tflop_per_s: float | None
    pct_of_one_core: float | None
    cores: int | None
    simd: str | None
    simd_lanes: int | None
    flags: str
    why: str | None


class NotTimed(TypedDict):
    stage: str
    status: str
    message: str | None


class TileNeed(TypedDict):
    ridge_flop_per_byte: float | None
    min_tile: float | None  # the tile side T from which a T x T tile is compute-bound


class LadderTile(TypedDict):
    stage: str
    title: str
    tile: str
    flop_per_byte: float
    above_gpu_ridge: bool | None
    above_cpu_ridge: bool | None


class Tiling(TypedDict):
    matrix_product: bool
    element_bytes: int
    naive_flop_per_byte: float
    op_intensity_flop_per_byte: float
    gpu: TileNeed
    cpu: TileNeed
    ladder_tiles: list[LadderTile]


class CpuGapFacts(TypedDict):
    """`explain gpu-vs-cpu`'s measurements (cpu_gap_facts): the two machines' roofs, the stages timed at one
    size, like for like against the ratio of the roofs, the serial loop, and what tiling does."""

    source: str
    op: str
    op_title: str
    size: str
    gpu: GpuMachine
    cpu: CpuMachine
    fp32_ratio: float | None
    bandwidth_ratio: float | None
    op_intensity_flop_per_byte: float
    min_bytes_rule: str
    roof_ratio: float | None
    cpu_stages: dict[str, TimedStage]  # role (loop, blocked, blas) -> its stage
    cpu_not_timed: list[NotTimed]
    fastest_gpu: TimedStage
    like_for_like: AgainstRoofs | None
    serial_loop: SerialLoop | None
    tiling: Tiling
