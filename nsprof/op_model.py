"""What an op, a stage, a launch configuration and a precision are (the dataclasses).

Each op is one module under nsprof/ops (sgemm, hgemm, ...) that builds an `Op` from these: its
element type, how a size is written, its FLOP and minimum-byte formulas, its precisions and
their tolerances, how its problems are made and launched (`Op.workload`) and its stages.
nsprof.registry looks them up; everything else reads them through it.

A stage names its CUDA source and entry points, the block tiles it can launch with, how it
handles sizes that are not multiples of its tile, its arithmetic precision, what it changes
relative to the previous stage and which Nsight Compute metric should show that change, and its
memory accesses, shared and global (what `nsprof explain` models for bank conflicts and coalescing).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Callable, Mapping

from nsprof.access import MemoryAccess
from nsprof.sizes import Size  # one problem size, in the op's dimension order

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Tile:
    """One launch configuration: a block computes a bm x bn tile of C in steps of bk.

    `entry` is the kernel's extern "C" name; `threads` the block shape (x, y).
    Padded stages round M, N up to multiples of bm, bn and K up to a multiple of bk
    (times the split-K factor). `max_split_k` > 1 lets the launcher split K over
    gridDim.z when there are too few tiles to fill the GPU. `arch` names a target the
    entry needs beyond the device's own (sm_90a: wgmma, setmaxnreg), `tma_boxes` the boxes
    (rows, cols) of the A and B tensor maps when the kernel reads its operands through TMA,
    with `swizzle` bytes; `persistent` kernels get one block per SM and loop over tiles.
    `unchecked_entry` names the same kernel without bounds checks, which the launcher runs
    instead when M, N and K are whole tiles (K of bk x the split-K factor; with bn and bk
    multiples of 4, whole tiles also keep float32 rows float4-aligned).
    """

    bm: int
    bn: int
    bk: int
    threads: tuple[int, int]
    entry: str
    dynamic_smem_bytes: int = 0
    max_split_k: int = 1
    arch: str | None = None
    tma_boxes: tuple[tuple[int, int], tuple[int, int]] | None = None
    swizzle: int = 0
    persistent: bool = False
    b_k_major: bool = False
    a_m_major: bool = False  # the kernel reads A as At (K x M, rows padded to 4 floats), written by a first kernel
    unchecked_entry: str | None = None

    @property
    def shape(self) -> str:
        return f"{self.bm}x{self.bn}"

    @property
    def entries(self) -> tuple[str, ...]:
        """Every kernel name a launch of this tile can show in a profile."""
        return (self.entry,) if self.unchecked_entry is None else (self.entry, self.unchecked_entry)

    def entry_for(self, m: int, n: int, k: int, split_k: int = 1) -> str:
        """The entry that runs an M x N x K product (K split in split_k slices): the unchecked one
        when there is one and the product is whole tiles, whole bk-deep steps in every K slice."""
        whole = m % self.bm == 0 and n % self.bn == 0 and k % (self.bk * split_k) == 0
        return self.unchecked_entry if self.unchecked_entry and whole else self.entry


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


@dataclass(frozen=True)
class Stage:
    op: str
    stage: str
    title: str
    kernel_file: str | None  # relative to the repository root; None for library calls
    backend: str  # "nvrtc" (our .cu through CuPy) or "cublas" (the vendor library through CuPy)
    tiles: tuple[Tile, ...]  # first is the default; launch picks among them by size
    # how sizes off the tile are handled: "bounds-check", "pad", "tma-fill" (TMA zero-fills reads past
    # the edges, stores are bounds-checked; padded only where a row is not 16-byte aligned), "async-fill"
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

    def to_json(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["tiles"] = [asdict(t) for t in self.tiles]
        d["accesses"] = [asdict(a) for a in self.accesses]
        d["precision"] = self.precision.name
        d["tolerance"] = self.precision.fixed
        d["tolerance_rule"] = self.precision.rule
        d["precision_description"] = self.precision.description
        return d


@dataclass(frozen=True)
class Op:
    """A problem family (SGEMM, HGEMM, ...): one module under nsprof/ops builds it."""

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
    workload: Any  # makes problems and launchers on the GPU (nsprof.ops.matmul.MatmulWorkload)
    # precision -> the library stage its stages are compared with ("% of cuBLAS"): each precision's own
    baselines: Mapping[str, str]
    headline: str = "flops"  # the rate bench tables lead with: "flops" (TFLOP/s) or "bytes" (TB/s of min_bytes)
    notes: str = ""

    @property
    def ndim(self) -> int:
        return len(self.dims.split("x"))


def find_kernel(rel: str) -> Path:
    """A source checkout keeps kernels/ at the top; a wheel ships it as nsprof/kernels."""
    for base in (REPO_ROOT, Path(__file__).resolve().parent):
        if (base / rel).is_file():
            return base / rel
    return REPO_ROOT / rel
