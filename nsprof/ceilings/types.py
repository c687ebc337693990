"""The document `nsprof ceilings --json` prints and saves (ceilings-<gpu>.json; ceilings-cpu-<model>.json with
--cpu), as types: a device and its measured ceilings, each a value with how it was measured. docs/json/ holds
the JSON Schema derived from them (tests/json_schemas.py)."""

from __future__ import annotations

from typing import Literal

from typing_extensions import NotRequired, TypedDict  # pydantic reads them for docs/json


class MeasuredCeiling(TypedDict):
    """One measured roof: TB/s or TFLOP/s as its key names (dram_tbyte_per_s, fp32_tflop_per_s), the amount
    one launch moves or computes over the median launch time."""

    value: float
    method: str  # what was timed, and the median of how many runs
    median_ms: float
    spread_pct: float  # interquartile range over the median
    runs: int
    bytes_per_launch: NotRequired[int]  # a bandwidth's
    flops_per_launch: NotRequired[int]  # a compute roof's
    date: NotRequired[str]  # a GPU's: the day it was measured


class GpuDevice(TypedDict):
    """The GPU and the software stack it was measured under (nsprof.launch.gpu.device_info)."""

    device: str
    compute_capability: str
    sm_count: int
    sm_clock_max_mhz: int
    memory_gib: float
    l2_mib: float
    driver: str | None
    driver_cuda: str
    runtime_cuda: str
    cupy: str
    python: str
    host: str
    uuid: NotRequired[str | None]  # the card, as nvidia-smi names it (GPU-...): two cards of one model told apart


class GpuCeilings(TypedDict):
    """`nsprof ceilings --json`: the GPU's DRAM, L2, FP32, tensor-core and bus roofs."""

    nsprof_version: str
    created: str  # ISO 8601, UTC
    device: GpuDevice
    ceilings: dict[str, MeasuredCeiling]


class CpuHost(TypedDict):
    """The host CPU as nsprof.ladder_runs.cpu_stage.host_info describes it (a bench's CPU stages name it too)."""

    cpu: str
    cpu_cores: int | None
    cpu_simd: str | None  # the widest vector extension it has: avx512f, avx2, sve, ...
    blas: str
    compiler: str | None
    host_load: NotRequired[float | None]  # the 1-minute load average before the measurement


class CpuDevice(CpuHost):
    """The host CPU, named as a device."""

    device: str  # "CPU <model>"


class CpuCeilings(TypedDict):
    """`nsprof ceilings --cpu --json`: the host's FP32 (its BLAS) and memory-bandwidth roofs."""

    kind: Literal["cpu"]
    device: CpuDevice
    nsprof_version: str
    created: str
    ceilings: dict[str, MeasuredCeiling]
