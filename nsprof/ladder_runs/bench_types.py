"""The document `nsprof bench --json` prints and `--save-as` writes, as types: the environment, and a record
per stage and size. docs/json/bench.schema.json is derived from them (tests/json_schemas.py), and every bench
record kept in the repository is checked against it. Keys that older records lack are NotRequired."""

from __future__ import annotations

from typing import Literal

from typing_extensions import NotRequired, TypedDict  # pydantic reads them for docs/json

from nsprof.ceilings.types import CpuHost, GpuDevice


class GpuAndCpuHost(GpuDevice, CpuHost):
    """A bench of GPU and CPU stages: the GPU (nsprof.launch.gpu.device_info) and the host CPU."""


class TuningTrial(TypedDict):
    """One candidate of a tuned stage (nsprof.ladder_runs.tuning): built and launched once, verified on a poisoned
    output, then timed after warm-up, one candidate after the other."""

    config: str  # the candidate: a Triton configuration ("128x256x64 w8 s3 tma"), "cuBLASLt 3", "cublasGemmEx"
    status: Literal["ok", "failed", "error"]  # verified; wrong; could not be built or launched here
    message: str | None  # why a candidate that is not ok is not
    median_ms: float | None
    rel_error: float | None
    in_turn_ms: NotRequired[float]  # a finalist's median timed again in turn with the other finalists


class Tuning(TypedDict):
    """How a tuned stage chose its launch: every candidate's trial, the one kept, and the rule that kept it."""

    kept: str  # the kept candidate's config
    trials: list[TuningTrial]
    rule: str


class SassCounts(TypedDict):
    """How often each instruction that tells a kernel's path apart is in a Triton kernel's SASS
    (nsprof.ladder_runs.triton_stage.SASS_OPCODES names the opcode of each)."""

    wgmma: int
    mma_sync: int
    tma_load: int
    tma_store: int
    cp_async: int
    ffma: int
    global_load: int
    shared_load: int


class CompiledFacts(TypedDict):
    """What Triton compiled a tuned stage's kept configuration to (None where Triton does not say)."""

    kernel: str | None
    num_warps: int | None
    num_stages: int | None
    shared_bytes: int | None
    registers: int | None
    spills: int | None
    sass: SassCounts | None  # None where the disassembler is missing


class StageDetails(TypedDict):
    """A tuned stage's record's details: its tuning, and for a Triton stage what it compiled to."""

    autotune: Tuning
    compiled: NotRequired[CompiledFacts]


class BenchRecord(TypedDict):
    """One stage at one size (nsprof.ladder_runs.bench: _record, bench_stage). A stage that failed
    verification, or was not available or skipped, has no timing (median_ms and the rest None or absent)."""

    op: str  # the ladder: sgemm, hgemm, sgemv
    stage: str
    title: str
    precision: Literal["fp32", "tf32", "fp16"]
    m: int
    n: NotRequired[int]  # a matrix product's (SGEMV's size is M x K)
    k: int
    size: str  # the label: 4096x4096x4096
    status: Literal["ok", "failed", "not available", "skipped", "error", "not run"]
    message: str | None  # why a stage was not timed
    baseline_only: NotRequired[bool]  # a library stage timed only for % cuBLAS, not asked for
    rel_error: float | None  # against the float64 reference, on fresh inputs into a NaN-poisoned output
    tolerance: float
    tile: str | None  # the launch configuration: 128x256x64, 128x256x64/split4, a library's candidate
    split_k: int | None
    padded: bool | None  # whether the launcher copied operands (to whole tiles, or a TMA stage's rows to whole lines)
    details: NotRequired[StageDetails | None]  # a tuned stage's: its trials, and what Triton compiled it to
    # CUDA events after warm-up (nsprof.launch.measure): the median and the spread of `runs` launches
    median_ms: float | None
    q1_ms: NotRequired[float]
    q3_ms: NotRequired[float]
    min_ms: NotRequired[float]
    max_ms: NotRequired[float]
    spread_pct: NotRequired[float]  # (q3 - q1) / median
    runs: NotRequired[int]
    warmup: NotRequired[int]
    tflops: float | None
    tbytes_per_s: NotRequired[float | None]  # each matrix moved once over the median
    pct_dram: NotRequired[float]  # tbytes_per_s over the DRAM ceiling
    baseline: NotRequired[str]  # the library stage in this precision that % cuBLAS is of
    pct_cublas: float | None
    pct_cublas_of: NotRequired[str | None]  # which library: cuBLAS, a cuBLASLt candidate, torch.mm
    pct_cublas_method: NotRequired[Literal["paired", "medians"]]  # launches in turn, or medians timed apart
    input_sets: NotRequired[int]  # a GPU stage's: the sets of buffers its launches rotated among (1: one set)
    prepare: NotRequired[str | None]  # a step the stage needs first (SGEMV's transpose), timed apart
    prepare_ms: NotRequired[float | None]
    steps_ms: NotRequired[dict[str, float] | None]  # work inside the stage's time, each timed alone too
    torch_call: NotRequired[str]  # a library stage's: PyTorch's same product, timed beside it
    torch_ms: NotRequired[float | None]
    torch_message: NotRequired[str | None]  # why PyTorch has no time
    cpu_role: NotRequired[Literal["loop", "blocked", "blas"]]  # a CPU stage's
    speedup_vs_cpu_loop: NotRequired[float]  # where the CPU's serial loop was timed at the same size
    speedup_vs_cpu_blas: NotRequired[float]
    # --back-to-back: the stage's launches in chains with no events between, in turn with the library's
    # (nsprof.launch.back_to_back): the median ms of one launch, and the library's over it, of pct_cublas_of
    back_to_back_ms: NotRequired[float]
    pct_cublas_back_to_back: NotRequired[float]
    run_medians_ms: NotRequired[list[float]]  # --runs N: every run's median, in run order
    run_pct_cublas: NotRequired[list[float]]  # and each run's paired % cuBLAS


class BenchDocument(TypedDict):
    """`nsprof bench --json`, and the results file it writes."""

    nsprof_version: str
    created: str  # ISO 8601, UTC
    command: str
    env: GpuDevice | GpuAndCpuHost | CpuHost  # a GPU bench, one with CPU stages, CPU stages alone
    # How the GPU stages' launches were timed (nsprof.launch.measure._timed): with the host held ahead of the GPU,
    # or unheld (NSPROF_HOLD=0, nsprof profile's workload). Absent from CPU benches and from files before the hold,
    # whose kernels shorter than the host's launch time read the host's time too.
    timing: NotRequired[Literal["host held ahead", "unheld"]]
    # Whether each GPU launch found its inputs in the L2: "cold", each on the next of several copies of the
    # buffers (nsprof.launch.rotation), or "warm", every launch on one set (--warm-inputs; files before
    # 2026-11-30 name none and timed warm). Absent from CPU benches; read it with `timed_inputs`.
    inputs: NotRequired[Literal["cold", "warm"]]
    results: list[BenchRecord]
    runs: NotRequired[int]  # --runs N: the fresh processes the records' medians come from


def timed_inputs(document: dict) -> Literal["cold", "warm"]:
    """How a bench file's GPU launches met their inputs: as its `inputs` says, else "cold" where a record rotated
    among more than one set of buffers (its `input_sets`: files written between the rotation and the field),
    else "warm" (files from before the rotation)."""
    if document.get("inputs") in ("cold", "warm"):
        return document["inputs"]
    rotated = any((record.get("input_sets") or 1) > 1 for record in document.get("results") or [])
    return "cold" if rotated else "warm"
