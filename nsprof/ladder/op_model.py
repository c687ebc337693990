"""The op contract: what an op, a stage and a precision are (dataclasses), and what an op's
workload and launch configurations must offer the harness (protocols).

Each op is one module under nsprof/ladder/ops (sgemm, hgemm, ...) that builds an `Op` from these: its
element type, how a size is written, its FLOP and minimum-byte formulas (and the byte formula as a
caption states it), its precisions and their tolerances, its baselines (per precision), how its
problems are made, checked and launched (`Op.workload`, a `Workload`) and its stages.
nsprof.ladder.registry looks them up (and registers one: `register_op`); everything else reads them
through it, so that a new ladder touches only its own files.

A stage names its kind (nsprof.ladder.stage_kinds: an NVRTC source, a library call, a Triton kernel), its
source and entry points, the launch configurations it can run with (a
`LaunchConfig`: the GEMM and GEMV ladders' is nsprof.ladder.ops.tiles.Tile), how it handles sizes that
are not multiples of its tile, its arithmetic precision, what it changes relative to the previous
stage and which Nsight Compute metric should show that change, and its memory accesses, shared and
global (what `nsprof explain` models for bank conflicts and coalescing).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import Field, asdict, dataclass, fields
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar, cast, runtime_checkable

from typing_extensions import TypedDict  # pydantic reads it for docs/json (typing's, only from Python 3.12)

from nsprof.access import MemoryAccess
from nsprof.ladder.stage_kinds import StageKind
from nsprof.sizes import Size  # one problem size, in the op's dimension order

REPO_ROOT = Path(__file__).resolve().parents[2]  # nsprof/ladder/op_model.py: the checkout's top


@runtime_checkable
class LaunchConfig(Protocol):
    """What the generic code asks of one launch configuration of a stage (a frozen dataclass, which
    `nsprof stages --json` writes whole): the name `--tile` picks it by, the kernel names a launch
    of it can show in a profile, and the target it needs beyond the device's own (None for none)."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]  # a dataclass: `nsprof stages --json` writes asdict()

    @property
    def shape(self) -> str: ...

    @property
    def entries(self) -> tuple[str, ...]: ...

    @property
    def arch(self) -> str | None: ...


@runtime_checkable
class Problem(Protocol):
    """One problem on the GPU: inputs, an output and a float64 reference (verification). Launches read
    its `buffers` (the attribute names of its inputs and output) at each call."""

    buffers: ClassVar[tuple[str, ...]]

    def refresh(self) -> None:
        """Draw fresh inputs (each verification sees data no earlier stage was tuned on)."""

    def poison_output(self) -> None:
        """Fill the output with NaN, so that a launch that writes nothing fails."""

    def relative_error(self) -> float:
        """||output - reference|| / ||reference||, in float64; NaN anywhere gives NaN."""


class Launcher(Protocol):
    """One ready launch of a stage on a problem, as `nsprof bench` verifies and times it (read-only:
    an op's launcher may compute any of these)."""

    @property
    def run(self) -> Callable[[], None]: ...  # the stage's timed work

    @property
    def tile_label(self) -> str: ...  # the launch configuration as the bench table shows it ("library" for a library call)

    @property
    def split_k(self) -> int | None: ...  # how many slices K was split into (None where nothing was chosen)

    @property
    def padded_shape(self) -> tuple[int, ...] | None: ...  # the size the kernel ran on when it was padded, else None

    @property
    def prepare(self) -> Callable[[], None] | None: ...  # a step the stage needs first, timed apart (SGEMV's transpose)

    @property
    def prepare_name(self) -> str | None: ...

    @property
    def steps(self) -> Mapping[str, Callable[[], None]]: ...  # work inside `run` that is also timed alone (v11's transpose of B)


# the problem type of one op's workload: its launcher takes the problems its problem() makes
P = TypeVar("P", bound=Problem)


@runtime_checkable
class Workload(Protocol[P]):
    """How an op's problems are made and its stages launched (the launch layer lends `tools`)."""

    def problem(self, xp, size: Size, seed: int = 0) -> P: ...

    def launcher(self, stage: Stage, problem: P, tools: LaunchTools, tile_shape: str | None = None,
                 split_k: int | None = None, defines: tuple[str, ...] = ()) -> Launcher: ...  # an NVRTC stage

    def library_call(self, stage: Stage, problem: P) -> LibraryCall: ...  # a library stage: what it computes


# what a library stage is, in its declaration's words (nsprof.ladder_runs.library does it)
LIBRARY_TUNING = ("the fastest verified of CuPy's call (cuBLAS) and cuBLASLt's algorithms for the shape, kept "
                  "before timing; torch.{} timed beside it, and % cuBLAS of the faster")


@dataclass(frozen=True)
class LibraryCall:
    """What a library stage computes, for the launch layer to run it every way it can (CuPy's call,
    cuBLASLt's algorithms: nsprof.ladder_runs.library) and keep the fastest: out = a.b, row-major."""

    call: str  # CuPy's call, as records name it: "cublasGemmEx", "cublasSgemv"
    arrays: Callable[[], tuple[Any, Any, Any]]  # the problem's current (a, b, out), read at each launch
    shape: tuple[int, int, int]  # (m, n, k): a m x k, b k x n (n = 1: a vector)
    dtype: str  # "float32", "float16"
    torch_call: str  # the PyTorch function of the same product, timed beside it: "mm", "mv"


@dataclass(frozen=True)
class LaunchTools:
    """What the launch layer lends an op's workload, so that CuPy stays inside nsprof.launch."""

    xp: Any  # CuPy
    sm_count: int
    compute_capability: str  # "9.0"
    load_kernel: Callable[..., Any]  # (path, entry, *, dynamic_smem_bytes, arch, defines, dependent_launch) -> kernel
    encode_tensor_map: Callable[..., bytes]  # nsprof.launch.tensor_map.encode_2d
    runs: Callable[[LaunchConfig], bool]  # whether this GPU can run a launch configuration (its arch)
    module_global: Callable[..., Any]  # (path, name, *, arch, defines) -> a module variable's device address
    # (problem, input name, own buffer, make) -> what gives a buffer the launcher derives from that input for the
    # set of buffers the timed launches are on (nsprof.launch.rotation.per_input_set: cold inputs)
    per_input_set: Callable[..., Callable[[], Any]]


_STAGE_NAME = re.compile(r"^[a-z]*(\d+)([a-z]*)$")


def stage_order(name: str) -> tuple[int, str]:
    """'v9t' -> (9, 't'), 'v10' -> (10, ''): the sort key of a stage name (numbers read as numbers,
    a suffix after its number's plain stage); (0, name) for a name of another form."""
    match = _STAGE_NAME.match(str(name).lower())
    return (int(match[1]), match[2]) if match else (0, str(name))


@dataclass(frozen=True)
class Precision:
    """How a stage computes, and how close to the float64 reference it must land."""

    name: str  # the key stages use: "fp32", "tf32", "fp16"
    description: str  # what `nsprof stages` says about it
    rule: str  # the tolerance as a person reads it
    tolerance: Callable[[Size], float]  # largest relative Frobenius error that passes, per size
    fixed: float | None = None  # the tolerance when it does not depend on the size


def fixed_precision(name: str, description: str, tolerance: float) -> Precision:
    return Precision(name, description, f"{tolerance:g}", lambda size: tolerance, tolerance)


class StageJson(TypedDict):
    """A stage as `nsprof stages --json` lists it (Stage.to_json)."""

    op: str
    stage: str
    title: str
    kernel_file: str | None
    kind: str  # its stage kind's name (nsprof.ladder.stage_kinds)
    tiles: list[dict[str, Any]]  # its launch configurations: a kernel's tiles, a Triton stage's configurations
    ragged: str
    precision: str
    changes: str
    why: str
    metric: str
    watch: list[str]
    notes: str
    accesses: list[dict[str, Any]]  # one warp's loads and stores, as the SASS performs them
    modelled_tile: str | None
    tolerance: float | None  # a fixed tolerance, where the precision has one (tolerance_rule says how it is set)
    tolerance_rule: str
    precision_description: str


@dataclass(frozen=True)
class Stage:
    op: str
    stage: str
    title: str
    kernel_file: str | None  # relative to the repository root; None for library calls
    kind: StageKind  # what the work is: nsprof.ladder.stage_kinds (NVRTC source, library call, Triton kernel)
    tiles: tuple[LaunchConfig, ...]  # first is the default; launch picks among them by size (a Triton stage's: tried)
    # how sizes off the tile are handled: "bounds-check", "pad", "tma-fill" (TMA zero-fills reads past
    # the edges, stores are bounds-checked; an operand whose rows are not 16-byte aligned is copied, its rows
    # whole 128-byte lines: nsprof.ladder.ops.launch_plan.run_shape), "async-fill"
    # (the same with cp.async's zero fill) or "library"
    ragged: str
    precision: Precision  # how it computes and the tolerance it is held to (one of the op's precisions)
    changes: str  # what this stage changes relative to the previous one
    why: str  # why that should be faster
    metric: str  # the Nsight Compute metric that should show the change
    # the same, as columns of nsprof's analysis tables that the report compares with the stage before
    watch: tuple[str, ...] = ()
    notes: str = ""
    # One warp's loads and stores, shared and global, as the SASS performs them (default tile):
    # all of them, so that their mix predicts the kernel's measured counters. See nsprof.access.
    accesses: tuple[MemoryAccess, ...] = ()
    # the shape of the tile `accesses` describe, where it is not the first (v8: 128x128, the tile of its
    # 1024^3 captures, behind the 256x128 tile that larger sizes take)
    modelled_tile: str | None = None

    @property
    def key(self) -> str:
        return f"{self.op}/{self.stage}"

    @property
    def number(self) -> int:
        """The stage's number: 9 for v9 and for v9t (cuBLAS TF32, the baseline beside v9)."""
        return stage_order(self.stage)[0]

    @property
    def order(self) -> tuple[int, str]:
        """Its place in the ladder: by number, then suffix (v9, v9t, v10)."""
        return stage_order(self.stage)

    def tolerance(self, size: Size) -> float:
        """Largest relative Frobenius error against the float64 reference that passes at `size`."""
        return self.precision.tolerance(size)

    def kernel_path(self) -> Path | None:
        if self.kernel_file is None:
            return None
        return find_kernel(self.kernel_file)

    def to_json(self) -> StageJson:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["kind"] = self.kind.name
        d["tiles"] = [asdict(t) for t in self.tiles]
        d["accesses"] = [asdict(a) for a in self.accesses]
        d["precision"] = self.precision.name
        d["tolerance"] = self.precision.fixed
        d["tolerance_rule"] = self.precision.rule
        d["precision_description"] = self.precision.description
        return cast(StageJson, d)  # the dataclass's fields, with the nested ones made plain


@dataclass(frozen=True)
class Op:
    """A problem family (SGEMM, HGEMM, ...): one module under nsprof/ladder/ops builds it."""

    name: str  # "sgemm": CLI choice, NVTX range prefix, JSON key
    title: str  # "SGEMM": how tables and plots name it
    description: str  # the computation, its layouts and types
    dtype: str  # element type of the inputs and the output (a NumPy dtype name)
    element_bytes: int
    dims: str  # how a size is written, "MxNxK"; a single number means all dimensions equal
    stage_prefix: str  # "v" for v1..v11: what a bare stage name ("6", "9t") expands to
    precisions: Mapping[str, Precision]  # by name, the ones its stages use
    stages: tuple[Stage, ...]
    flops: Callable[[Size], int]  # the work the op defines (2MNK for a GEMM), whatever a stage executes
    min_bytes: Callable[[Size], int]  # each input read once and the output written once
    min_bytes_rule: str  # min_bytes as a caption states it: "4(MK + M + K)"
    workload: Workload[Any]  # makes problems and launchers on the GPU (nsprof.ladder.ops.matmul.MatmulWorkload)
    # precision -> the library stage its stages are compared with ("% of cuBLAS"): each precision's own
    baselines: Mapping[str, str]
    headline: str = "flops"  # the rate bench tables lead with: "flops" (TFLOP/s) or "bytes" (TB/s of min_bytes)
    library: str = "cuBLAS"  # what the baselines are, as headings name them ("% cuBLAS")
    notes: str = ""

    @property
    def ndim(self) -> int:
        return len(self.dims.split("x"))


def find_kernel(rel: str) -> Path:
    """A source checkout keeps kernels/ at the top; a wheel ships it as nsprof/kernels."""
    for base in (REPO_ROOT, Path(__file__).resolve().parents[1]):  # the checkout's kernels/, or the wheel's nsprof/kernels
        if (base / rel).is_file():
            return base / rel
    return REPO_ROOT / rel
