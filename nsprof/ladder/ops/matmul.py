"""What the matrix-product ops (SGEMM, HGEMM) share: sizes M x N x K, 2MNK FLOPs, the problem on
the GPU (random inputs, the float64 reference) and the tiled kernel launcher.

Nothing here imports CuPy: the launch layer hands in the array module (`xp`) and its tools
(nsprof.ladder.op_model.LaunchTools: compile a kernel, encode a TMA tensor map, the SM count), so that an op module
declares how its stages run while CuPy stays inside nsprof.launch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nsprof.errors import UsageError
from nsprof.ladder.op_model import LaunchTools, LibraryCall, Stage, find_kernel
from nsprof.ladder.ops.launch_plan import LaunchPlan, choose_plan, run_shape
from nsprof.ladder.ops.tiles import Tile, as_tiles, round_up
from nsprof.sizes import Size
from nsprof.triton_config import TritonConfig

INT32_MAX = 2**31 - 1
DIMS = "MxNxK"


def flops(size: Size) -> int:
    m, n, k = size
    return 2 * m * n * k


def min_bytes(element_bytes: int) -> Callable[[Size], int]:
    """Each input read once and the output written once."""

    def formula(size: Size) -> int:
        m, n, k = size
        return element_bytes * (m * k + k * n + m * n)

    return formula


def min_bytes_rule(element_bytes: int) -> str:
    """min_bytes as a caption states it."""
    return f"{element_bytes}(MK + KN + MN)"


class MatmulProblem:
    """A (M x K), B (K x N) drawn from a standard normal and rounded to the op's type, the output
    buffer C and a lazily computed float64 reference."""

    buffers = ("A", "B", "C")  # what a launch reads and writes (nsprof.launch.rotation moves them)

    def __init__(self, xp, size: Size, dtype: str, seed: int = 0):
        self.xp = xp
        self.m, self.n, self.k = size
        self.dtype = dtype
        self.seed = seed
        self.C = xp.empty((self.m, self.n), dtype=dtype)
        self.refresh()

    def refresh(self) -> None:
        """Draw fresh inputs so every verification sees data no earlier stage was tuned on."""
        rng = self.xp.random.default_rng(self.seed)
        self.seed += 1
        f32 = self.xp.float32
        self.A = rng.standard_normal((self.m, self.k), dtype=f32).astype(self.dtype, copy=False)
        self.B = rng.standard_normal((self.k, self.n), dtype=f32).astype(self.dtype, copy=False)
        self._reference = None

    def reference(self):
        if self._reference is None:
            f64 = self.xp.float64
            self._reference = self.xp.matmul(self.A.astype(f64), self.B.astype(f64))
        return self._reference

    def poison_output(self) -> None:
        self.C.fill(np.nan)

    def relative_error(self) -> float:
        """||C - ref||_F / ||ref||_F in float64; NaN anywhere in C gives NaN."""
        ref = self.reference()
        diff = self.C.astype(self.xp.float64) - ref
        return float(self.xp.linalg.norm(diff) / self.xp.linalg.norm(ref))


@dataclass
class Launcher:
    """One ready-to-call launch of a stage on a problem (padding included, if any)."""

    run: Callable[[], None]
    plan: LaunchPlan | None  # None for library calls
    padded_shape: tuple[int, int, int] | None  # None when the kernel runs on A, B, C directly
    # work that `run` includes beside the GEMM kernel (v11's transpose of B), each callable alone
    # so that its share of the stage's time can be measured
    steps: dict[str, Callable[[], None]] = field(default_factory=dict)
    entry: str | None = None  # the kernel launched (None for library calls)
    prepare: None = None  # nothing runs before the stage, timed apart (nsprof.ladder.op_model.Launcher)
    prepare_name: None = None

    @property
    def split_k(self) -> int | None:
        return self.plan.split_k if self.plan else None

    @property
    def tile_label(self) -> str:
        if self.plan is None:
            return "library"
        t, plan = self.plan.tile, self.plan
        split = f"/split{plan.split_k}" if plan.split_k > 1 else ""
        tail = f"/tail{plan.shared_tiles}" if plan.shared_tiles and plan.split_k == 1 else ""
        return f"{t.bm}x{t.bn}x{t.bk}{split}{tail}"


def triton_config(bm: int, bn: int, bk: int, warps: int, stages: int, tma: bool = False) -> TritonConfig:
    """A configuration of the Triton matmul (kernels/common/triton_matmul.py) that the SGEMM and HGEMM
    Triton stages are tuned over: a bm x bn tile of C in bk-deep steps, tiles in groups of 8 rows;
    with `tma`, its persistent kernel that reads through TMA tensor descriptors."""
    blocks = (("BLOCK_M", bm), ("BLOCK_N", bn), ("BLOCK_K", bk), ("GROUP_M", 8))
    return TritonConfig("matmul_kernel_tma" if tma else "matmul_kernel", blocks, warps, stages, variant="tma" if tma else "")


COPY_ROWS = "kernels/common/copy_rows.cu"


def _row_copier(tools: LaunchTools, item_bytes: int) -> Callable[[Any, Any], None]:
    """copy(dst, src): src (rows x cols, any row pitch) into dst's first rows and columns, by COPY_ROWS's kernel for
    the element size. (CuPy's strided assignment divides a 64-bit index per element: at 16 x 50257 x 4096 its copy
    of B was most of h6's time.)"""
    kernel = tools.load_kernel(find_kernel(COPY_ROWS), f"copy_rows_{item_bytes}")

    def copy(dst, src) -> None:
        rows, cols = src.shape
        kernel((math.ceil(cols / 128), min(math.ceil(rows / 8), 65535), 1), (32, 8, 1),
               (src, np.int64(src.strides[0] // item_bytes), dst, np.int64(dst.strides[0] // item_bytes),
                np.int32(rows), np.int32(cols)))

    return copy


@dataclass(frozen=True)
class MatmulWorkload:
    """How a GEMM op's stages run: the element type, and how a kernel adds up a K split.

    `split_k`: "atomic" kernels add their partial sums into a zeroed C themselves (float32 C);
    "partials" kernels write float32 slices to a workspace, which `reduce_kernel` (file, entry)
    sums into C. With `partials_argument`, every kernel takes the workspace as a seventh
    argument (null when K is not split).
    """

    dtype: str
    split_k: str = "atomic"
    reduce_kernel: tuple[str, str] | None = None
    partials_argument: bool = False

    def problem(self, xp, size: Size, seed: int = 0) -> MatmulProblem:
        return MatmulProblem(xp, size, self.dtype, seed)

    def launcher(self, stage: Stage, problem: MatmulProblem, tools: LaunchTools, tile_shape: str | None = None,
                 split_k: int | None = None, defines: tuple[str, ...] = (), tail: int | None = None) -> Launcher:
        xp = tools.xp
        m, n, k = problem.m, problem.n, problem.k
        item = np.dtype(self.dtype).itemsize
        runnable = tuple(t for t in as_tiles(stage.tiles) if tools.runs(t))
        _, np_, kp = run_shape(stage, m, n, k, item)  # a TMA stage's copies of rows that are not 16-byte aligned
        plan = choose_plan(stage, m, np_, kp, tools.sm_count, tile_shape, split_k, runnable, tail)
        tile, split = plan.tile, plan.split_k
        if stage.ragged == "pad" or (stage.ragged == "async-fill" and not tile.rows_aligned(n, k, item)):
            mp, np_, kp = round_up(m, tile.bm), round_up(n, tile.bn), round_up(k, tile.bk * split)
        else:
            mp = m
        entry = tile.entry_for(mp, np_, kp, split)  # no bounds checks on whole tiles, where the kernel has such an entry
        kernel = tools.load_kernel(stage.kernel_path(), entry, dynamic_smem_bytes=tile.dynamic_smem_bytes,
                                   arch=tile.arch, defines=defines, dependent_launch=tile.dependent_launch)
        if max(mp * kp, kp * np_, mp * np_) > INT32_MAX:
            raise UsageError(
                f"{m}x{n}x{k} is too large for {stage.stage}: its kernels index with 32-bit ints",
                "use matrices with fewer than 2^31 elements each",
            )
        tiles_x, tiles_y = math.ceil(np_ / tile.bn), math.ceil(mp / tile.bm)
        whole_tiles = tiles_x * tiles_y - plan.shared_tiles
        if tile.persistent:
            grid = (tools.sm_count, 1, 1)
        elif tile.stream_k:
            grid = (whole_tiles + plan.shared_blocks, 1, 1)
        else:  # a cluster's tiles of a non-persistent tile are side by side: the grid's x counts blocks
            grid = (tiles_x * tile.cluster, tiles_y, split)
        shared_rows = whole_tiles // tiles_x * tile.bm  # the first row of C that shared tiles add into
        sizes = (np.int32(mp), np.int32(np_), np.int32(kp))
        sharing = (np.int32(whole_tiles), np.int32(plan.shared_blocks)) if tile.stream_k else ()
        block = (tile.threads[0], tile.threads[1], 1)
        # tiles whose blocks add float32 sums into a workspace: a stream-K tile's shared ones, or every
        # tile of a K split whose slices sum there themselves (no partials, no reduce kernel)
        summed = plan.shared_tiles if tile.stream_k else tiles_x * tiles_y * (split > 1)
        workspace_sums = self._workspace_sums(tools, tile, summed) if summed and tile.sums_in_workspace else None
        add_up = None if tile.sums_in_workspace else self._split_k_step(tools, split, mp, np_)
        operands = self._tensor_maps(tools, tile, tile.tma_boxes, mp, np_, kp) if tile.tma_boxes else (lambda a, b: (a, b))
        output = self._store_map(tools, tile, mp, np_) if tile.tma_store else (lambda c: c)
        # kernels that read an operand transposed get it from a first kernel of their own, timed with the stage
        transpose_a = self._transposer(stage, tools, tile, "a", mp, kp, (kp, round_up(mp, 4)), defines) \
            if tile.a_m_major else None
        transpose_b = self._transposer(stage, tools, tile, "b", kp, np_, (np_, kp), defines) if tile.b_k_major else None

        def launch(a, b, c):
            if plan.shared_tiles and not tile.sums_in_workspace:
                c[shared_rows:].fill(0)  # blocks that share tiles add their sums into C
            elif split > 1 and self.split_k == "atomic":
                c.fill(0)  # the K slices add their partial sums into C
            if transpose_a:
                a = transpose_a(a)  # the kernel reads A as At (K x M, rows padded to 4 floats)
            if transpose_b:
                b = transpose_b(b)  # the kernel reads B as Bt (N x K)
            args = [*sizes, *operands(a, b), output(c)]
            if self.partials_argument:
                workspace = add_up.partials if add_up else workspace_sums
                args.append(np.uint64(0) if workspace is None else workspace)
            kernel(grid, block, (*args, *sharing), shared_mem=tile.dynamic_smem_bytes)
            if add_up is not None:  # split over K into partials
                add_up.into(c)

        steps = {}
        if (mp, np_, kp) == (m, n, k):
            if transpose_a:
                steps["transpose A"] = lambda: transpose_a(problem.A)
            if transpose_b:
                steps["transpose B"] = lambda: transpose_b(problem.B)
        if (mp, np_, kp) == (m, n, k):
            return Launcher(lambda: launch(problem.A, problem.B, problem.C), plan, None, steps, entry)

        # Zero padding on the device: the pad regions stay zero, only the interior is copied
        # per launch; the copies are part of the stage's timed work. An operand of its own shape needs none.
        a_pad = None if (mp, kp) == (m, k) else xp.zeros((mp, kp), dtype=self.dtype)
        b_pad = None if (kp, np_) == (k, n) else xp.zeros((kp, np_), dtype=self.dtype)
        c_pad = None if (mp, np_) == (m, n) else xp.full((mp, np_), np.nan, dtype=self.dtype)
        copy = _row_copier(tools, item)

        def run_padded():
            if a_pad is not None:
                copy(a_pad, problem.A)
            if b_pad is not None:
                copy(b_pad, problem.B)
            launch(problem.A if a_pad is None else a_pad, problem.B if b_pad is None else b_pad,
                   problem.C if c_pad is None else c_pad)
            if c_pad is not None:
                copy(problem.C, c_pad[:m, :n])

        return Launcher(run_padded, plan, (mp, np_, kp), entry=entry)

    def library_call(self, stage: Stage, problem: MatmulProblem) -> LibraryCall:
        return LibraryCall("cublasGemmEx", lambda: (problem.A, problem.B, problem.C), (problem.m, problem.n, problem.k),
                           self.dtype, "mm")

    @staticmethod
    def _transposer(stage: Stage, tools: LaunchTools, tile: Tile, operand: str, rows: int, cols: int,
                    shape: tuple[int, int], defines: tuple[str, ...]) -> Callable[[Any], Any]:
        """For kernels that read an operand transposed: x (rows x cols) -> its transpose, of `shape`
        (cols x rows, or rows rounded up as the kernel's leading dimension), by the stage's own
        <prefix>_transpose_<operand> entry (grid of 32 x 32 tiles, block 32 x 8), into one buffer."""
        out = tools.xp.empty(shape, dtype=tools.xp.float32)
        entry = tile.entry.rsplit("_", 1)[0] + f"_transpose_{operand}"  # sgemm_v11_128x256 -> sgemm_v11_transpose_b
        kernel = tools.load_kernel(stage.kernel_path(), entry, arch=tile.arch, defines=defines)
        grid = (math.ceil(cols / 32), math.ceil(shape[1] / 32), 1)

        def transpose(x):
            kernel(grid, (32, 8, 1), (np.int32(rows), np.int32(cols), x, out))
            return out

        return transpose

    def _split_k_step(self, tools: LaunchTools, split: int, mp: int, np_: int) -> SplitKReduction | None:
        if split == 1 or self.split_k != "partials":
            return None
        if self.reduce_kernel is None:
            raise TypeError("a workload whose kernels write split-K partials needs a reduce_kernel")
        path, entry = self.reduce_kernel
        return SplitKReduction(tools, tools.load_kernel(find_kernel(path), entry), split, mp * np_)

    def _store_map(self, tools: LaunchTools, tile: Tile, mp: int, np_: int):
        """C of a kernel that stores it by TMA: C's tensor map (64 x 64 boxes), encoded once per buffer, as the
        map's device address or its bytes (`Tile.maps_by_value`)."""
        xp, elem = tools.xp, np.dtype(self.dtype).itemsize
        cache: dict[int, Any] = {}

        def output(c):
            if c.data.ptr not in cache:
                encoded = tools.encode_tensor_map(c.data.ptr, mp, np_, np_ * elem, 64, 64, tile.swizzle, elem)
                cache[c.data.ptr] = _map_argument(xp, encoded, tile.maps_by_value)
            return cache[c.data.ptr][0]

        return output

    @staticmethod
    def _workspace_sums(tools: LaunchTools, tile: Tile, shared_tiles: int):
        """The workspace of a tile whose blocks share tiles by k steps or K slices: the float32 sums
        of each shared tile (bm x bn), then a counter per block's part of it (one, or a cluster's side by
        side), zeroed once (each tile's last piece zeroes its sums and counter again)."""
        return tools.xp.zeros(shared_tiles * (tile.bm * tile.bn + tile.cluster), dtype=tools.xp.float32)

    def _tensor_maps(self, tools: LaunchTools, tile: Tile, boxes: tuple[tuple[int, int], tuple[int, int]],
                     mp: int, np_: int, kp: int):
        """Operands of a TMA kernel: A's and B's tensor maps, encoded once per pair of buffers (the maps hold
        the buffers' addresses), as their device addresses or their bytes (`Tile.maps_by_value`). B is K x N, or
        N x K for a kernel that reads it K-major. The maps have the matrices' true sizes: TMA reads zeros past them."""
        xp, elem = tools.xp, np.dtype(self.dtype).itemsize
        (a_rows, a_cols), (b_rows, b_cols) = boxes
        b_shape = (np_, kp) if tile.b_k_major else (kp, np_)
        cache: dict[tuple[int, int], Any] = {}

        def operands(a, b):
            key = (a.data.ptr, b.data.ptr)
            if key not in cache:
                ta = tools.encode_tensor_map(a.data.ptr, mp, kp, kp * elem, a_rows, a_cols, tile.swizzle, elem)
                tb = tools.encode_tensor_map(b.data.ptr, *b_shape, b_shape[1] * elem, b_rows, b_cols, tile.swizzle, elem)
                cache[key] = (_map_argument(xp, ta, tile.maps_by_value), _map_argument(xp, tb, tile.maps_by_value))
            return cache[key][0][0], cache[key][1][0]

        return operands


def _map_argument(xp, encoded: bytes, by_value: bool) -> tuple[Any, Any]:
    """One tensor map as a kernel argument, and what keeps its storage alive: a one-element array of its 128
    bytes, which CuPy passes by value (a `const __grid_constant__` parameter), or the device address of a copy
    (pool blocks are 512-byte aligned; a map in global memory must be 64)."""
    if by_value:
        value = np.frombuffer(encoded, dtype=np.dtype((np.void, len(encoded))))
        return value, value
    copy = xp.asarray(np.frombuffer(encoded, dtype=np.uint8))
    return np.uint64(copy.data.ptr), copy


class SplitKReduction:
    """For "partials" kernels split over K: the float32 workspace of `split` slices of C and the
    kernel that sums them into C (grid-stride, four elements per thread and step)."""

    def __init__(self, tools: LaunchTools, kernel, split: int, count: int):
        self.kernel, self.split, self.count = kernel, split, count
        self.partials = tools.xp.empty(split * count, dtype=tools.xp.float32)
        self.blocks = min(8 * tools.sm_count, -(-count // (4 * 256)))

    def into(self, c) -> None:
        self.kernel((self.blocks,), (256,), (np.int32(self.count), np.int32(self.split), self.partials, c))
