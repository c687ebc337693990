"""SGEMV: y = A x in float32, A row-major M x K: the memory-bound ladder, s1 (one thread per row)
to s6 (the bandwidth limit at every shape), cuBLAS as s7.

What moves here is bytes: each stage is judged by its effective bandwidth, 4(MK + M + K) bytes
over its time, against the measured DRAM ceiling. Stages s2-s4 read the transpose of A, made by a
separate kernel that `bench` times apart from the stage and shows beside it (Launcher.prepare).
The kernels, in kernels/sgemv/, handle any M, K >= 1 themselves: nothing is padded.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from nsprof.access import MemoryAccess
from nsprof.ladder.op_model import LIBRARY_TUNING, LaunchTools, LibraryCall, Op, Precision, Stage, find_kernel
from nsprof.ladder.ops.tiles import Tile, as_tile
from nsprof.ladder.stage_kinds import CPU, LIBRARY, NVRTC, TRITON
from nsprof.sizes import Size
from nsprof.triton_config import TritonConfig

UNIT_ROUNDOFF_FP32 = 2.0**-24
CONSTANT_CHUNK = 16_384  # floats of x per launch of s3: 64 KB, all of constant memory


def flops(size: Size) -> int:
    m, k = size
    return 2 * m * k


def min_bytes(size: Size) -> int:
    """A read once, x read once, y written once."""
    m, k = size
    return 4 * (m * k + m + k)


def tolerance(size: Size) -> float:
    """A float32 dot product of K terms drifts by about sqrt(K) roundings of 2^-24 (8x for margin,
    and for sequential sums), never tighter than SGEMM's 1e-5."""
    return max(1e-5, 8 * math.sqrt(size[1]) * UNIT_ROUNDOFF_FP32)


FP32 = Precision("fp32", "float32 multiply-adds, any summation order",
                 "max(1e-5, 8 sqrt(K) 2^-24) (float32 rounding over K terms)", tolerance)


class GemvProblem:
    """A (M x K) and x (K) drawn from a standard normal in float32, the output y and a lazily computed
    float64 reference."""

    buffers = ("A", "x", "y")  # what a launch reads and writes (nsprof.launch.rotation moves them)

    def __init__(self, xp, size: Size, seed: int = 0):
        self.xp = xp
        self.m, self.k = size
        self.seed = seed
        self.y = xp.empty(self.m, dtype=xp.float32)
        self.refresh()

    def refresh(self) -> None:
        rng = self.xp.random.default_rng(self.seed)
        self.seed += 1
        self.A = rng.standard_normal((self.m, self.k), dtype=self.xp.float32)
        self.x = rng.standard_normal(self.k, dtype=self.xp.float32)
        self._reference = None

    def reference(self):
        if self._reference is None:
            f64 = self.xp.float64
            self._reference = self.A.astype(f64) @ self.x.astype(f64)
        return self._reference

    def poison_output(self) -> None:
        self.y.fill(np.nan)

    def relative_error(self) -> float:
        ref = self.reference()
        return float(self.xp.linalg.norm(self.y.astype(self.xp.float64) - ref) / self.xp.linalg.norm(ref))


@dataclass
class GemvLauncher:
    """One ready launch of a stage (what `bench` times), and the step it needs first, timed apart."""

    run: Callable[[], None]
    tile_label: str
    prepare: Callable[[], None] | None = None  # the transpose of A for s2-s4
    prepare_name: str | None = None
    split_k: None = None  # no K split chosen from a list, as a GEMM's launcher does (s6 says its own in tile_label)
    padded_shape: None = None  # nothing is padded
    steps: dict = field(default_factory=dict)  # nothing inside the stage's time is timed alone


# How the launcher calls each kernel entry (the kernels' headers say the same).
ROWS = "rows"  # (M, K, A, x, y) on row-major A
TRANSPOSED = "transposed"  # (M, K, At, x, y) on the transpose, made by sgemv_transpose first
CONSTANT = "constant"  # (M, K, k0, kc, At, y, accumulate) per chunk of x copied to constant memory
SPLIT = "split"  # s6: alone on row-major A when M gives enough blocks, else split over K and reduced
TRANSPOSE = ("kernels/sgemv/transpose.cu", "sgemv_transpose")


@dataclass(frozen=True)
class GemvWorkload:
    forms: dict[str, str] = field(default_factory=dict)  # entry -> ROWS, TRANSPOSED or CONSTANT

    def problem(self, xp, size: Size, seed: int = 0) -> GemvProblem:
        return GemvProblem(xp, size, seed)

    def launcher(self, stage: Stage, problem: GemvProblem, tools: LaunchTools, tile_shape: str | None = None,
                 split_k: int | None = None, defines: tuple[str, ...] = ()) -> GemvLauncher:
        xp, m, k = tools.xp, problem.m, problem.k
        tile = as_tile(stage.tiles[0])
        kernel = tools.load_kernel(stage.kernel_path(), tile.entry, dynamic_smem_bytes=tile.dynamic_smem_bytes,
                                   defines=defines)
        grid, block = (math.ceil(m / tile.bm),), (tile.threads[0],)
        label = f"{tile.threads[0]} threads, {tile.bm} rows/block"
        dims = (np.int32(m), np.int32(k))
        form = self.forms.get(tile.entry, ROWS)
        if form == SPLIT:
            return self._split(stage, tile, kernel, problem, tools, defines)
        if form == ROWS:
            return GemvLauncher(lambda: kernel(grid, block, (*dims, problem.A, problem.x, problem.y),
                                               shared_mem=tile.dynamic_smem_bytes), label)
        transpose = tools.load_kernel(find_kernel(TRANSPOSE[0]), TRANSPOSE[1])

        def transposed(a, at=None):
            at = xp.empty((k, m), dtype=xp.float32) if at is None else at
            transpose((math.ceil(k / 32), math.ceil(m / 32)), (32, 8), (*dims, a, at))
            return at

        own = xp.empty((k, m), dtype=xp.float32)
        # cold inputs: each set of buffers the timed launches rotate among gets its own transpose (made here)
        at_now = tools.per_input_set(problem, "A", own, transposed)

        def prepare():
            transposed(problem.A, own)

        if form == TRANSPOSED:
            return GemvLauncher(lambda: kernel(grid, block, (*dims, at_now(), problem.x, problem.y),
                                               shared_mem=tile.dynamic_smem_bytes), label, prepare, "transpose")
        constant = tools.module_global(stage.kernel_path(), "sgemv_x_const", defines=defines)
        run = self._chunked(kernel, constant, grid, block, problem, at_now, tile)
        return GemvLauncher(run, label, prepare, "transpose")

    def library_call(self, stage: Stage, problem: GemvProblem) -> LibraryCall:
        return LibraryCall("cublasSgemv", lambda: (problem.A, problem.x, problem.y), (problem.m, 1, problem.k), "float32",
                           "mv")

    @staticmethod
    def _split(stage: Stage, tile: Tile, kernel, problem: GemvProblem, tools: LaunchTools,
               defines: tuple[str, ...]) -> GemvLauncher:
        """s6: with fewer than 256 row tiles (too few blocks to keep enough bytes in flight), K is
        split S ways (S = min(512 / tiles, K / 1024)): S x M float partials, then a pass that adds
        each row's S partials in a fixed order (the rule and the layout are the kernel's header's)."""
        m, k = problem.m, problem.k
        tiles = math.ceil(m / tile.bm)
        split = 1 if tiles >= 256 else max(1, min(512 // tiles, k // 1024))
        block, dims = (tile.threads[0],), (np.int32(m), np.int32(k))
        if split == 1:
            return GemvLauncher(lambda: kernel((tiles,), block, (*dims, problem.A, problem.x, problem.y)),
                                f"{tile.threads[0]} threads, {tile.bm} rows/block")
        load = lambda entry: tools.load_kernel(stage.kernel_path(), entry, defines=defines)  # noqa: E731
        partial_sums, reduce = load(f"{tile.entry}_splitk"), load(f"{tile.entry}_reduce")
        partials = tools.xp.empty(split * m, dtype=tools.xp.float32)

        def run():
            partial_sums((split * tiles,), block, (*dims, np.int32(split), problem.A, problem.x, partials))
            reduce((tiles,), block, (np.int32(m), np.int32(split), partials, problem.y))

        return GemvLauncher(run, f"{tile.threads[0]} threads, {tile.bm} rows/block, split K {split}")

    @staticmethod
    def _chunked(kernel, constant, grid, block, problem: GemvProblem, at_now: Callable[[], object],
                 tile: Tile) -> Callable[[], None]:
        """s3: x does not fit constant memory past 16,384 floats, so one launch per chunk of x,
        each adding into y; the copies into constant memory are part of the stage's work."""
        m, k = problem.m, problem.k

        def run():
            at = at_now()
            for k0 in range(0, k, CONSTANT_CHUNK):
                kc = min(CONSTANT_CHUNK, k - k0)
                constant.copy_from_device_async(problem.x[k0:k0 + kc].data, kc * 4)
                kernel(grid, block, (np.int32(m), np.int32(k), np.int32(k0), np.int32(kc), at, problem.y,
                                     np.int32(k0 > 0)), shared_mem=tile.dynamic_smem_bytes)

        return run


def _t(rows: int, threads: int, entry: str, k_step: int, smem: int = 0) -> Tile:
    """A GEMV launch: `rows` rows of y per block of `threads` threads (grid: ceil(M / rows)); each
    warp advances `k_step` columns per step of its loop (what the declared accesses are per)."""
    return Tile(rows, 1, k_step, (threads, 1), entry, smem)


def _gmem(source, op, array, shape, row, col, width=4, once=False, note="") -> MemoryAccess:
    return MemoryAccess(source, "global", op, array, shape, row, col, width, 4, 1, once, note)


# Warp 0's global accesses, as profiled (M = K = 4096): one step of its loop over K (see nsprof.access).
_S1_ACCESSES = (
    _gmem("A[m * K + k]", "load", "A", (4096, 4096), "lane", "0", note="lane = row: 32 rows, K * 4 bytes apart"),
    _gmem("x[k]", "load", "x", (1, 4096), "0", "0", note="one address for the warp: broadcast"),
    _gmem("y[m] = sum", "store", "y", (1, 4096), "0", "lane", once=True),
)
_S2_ACCESSES = (
    _gmem("At[k * M + m]", "load", "At", (4096, 4096), "0", "lane", note="lane = column of the transpose: consecutive"),
    _gmem("x[k]", "load", "x", (1, 4096), "0", "0", note="one address for the warp: broadcast"),
    _gmem("y[m] = sum", "store", "y", (1, 4096), "0", "lane", once=True),
)
_S5_ACCESSES = (
    _gmem("*(float4*)&A[m * K + k + 4 * lane]", "load", "A", (4096, 4096), "0", "4 * lane", width=16,
          note="one row per warp: 512 contiguous bytes per load"),
    _gmem("*(float4*)&x[k + 4 * lane]", "load", "x", (1, 4096), "0", "4 * lane", width=16),
    _gmem("y[m] = sum", "store", "y", (1, 4096), "0", "0", once=True, note="lane 0 stores the warp's row"),
)

_SEED = ("the seed tutorial copied x with M instead of K elements and compared with an absolute 1e-6, "
         "which is why its serial, parallel and cuBLAS results 'disagreed' at K = 12,800")

STAGES = (
    Stage(
        "sgemv", "s0", "CPU: serial loop", "kernels/sgemv/s0_cpu_serial.c", CPU, (), "bounds-check", FP32,
        changes="the tutorials' first version, on the host: one dot product per row on one core, compiled (-O2)",
        why="where every ladder starts: how far below the GPU stages one core's loop sits, and why",
        metric="none (no GPU work): its wall-clock time against s1's",
    ),
    Stage(
        "sgemv", "s0b", "CPU: all cores, vectorized", "kernels/sgemv/s0b_cpu_blocked.c", CPU, (), "bounds-check", FP32,
        changes="rows shared over every core (OpenMP), 8 partial sums a row on the vector FMA units (-O3 -march=native)",
        why="the loop no longer waits on each add: A streams from memory at the host's bandwidth",
        metric="none (no GPU work): its bandwidth against the host's memory bandwidth",
    ),
    Stage(
        "sgemv", "s0blas", "CPU: BLAS (NumPy)", None, CPU, (), "library", FP32,
        changes="the CPU's vendor library: NumPy's matmul (BLAS sgemv)",
        why="the CPU's baseline, as cuBLAS is the GPU's",
        metric="none (no GPU work): every GPU stage's speed-up over it",
    ),
    Stage(
        "sgemv", "s1", "one thread per row", "kernels/sgemv/s1_thread_per_row.cu", NVRTC,
        (_t(128, 128, "sgemv_s1", 1),), "bounds-check", FP32,
        changes="baseline: thread m walks row m of the row-major A",
        why="at each k a warp's 32 lanes read 32 rows K*4 bytes apart: a sector per lane, 4 of its 32 bytes used",
        metric="l1tex__t_sectors_pipe_lsu_mem_global_op_ld per request near 32 (uncoalesced)",
        watch=("dram_bytes", "l1_bytes"),
        notes=_SEED,
        accesses=_S1_ACCESSES,
    ),
    Stage(
        "sgemv", "s2", "transposed, coalesced", "kernels/sgemv/s2_transposed_coalesced.cu", NVRTC,
        (_t(32, 512, "sgemv_s2", 16),), "bounds-check", FP32,
        changes="reads At (K x M, made by a separate transpose kernel timed apart): a warp's lanes read consecutive "
                "floats; the block's 16 warps split K for its 32 rows and add up in shared memory",
        why="every sector fetched is used whole, and 16 loads per thread are in flight",
        metric="sectors per request of global loads falls from ~32 to ~4",
        watch=("dram_bytes", "l1_bytes"),
        accesses=_S2_ACCESSES,
    ),
    Stage(
        "sgemv", "s3", "x in constant memory", "kernels/sgemv/s3_constant_x.cu", NVRTC,
        (_t(32, 512, "sgemv_s3", 16),), "bounds-check", FP32,
        changes="s2 with x read from constant memory, one launch per 16,384-float chunk of x (the seed's worked only "
                "while K <= 16,384)",
        why="x leaves the global-load path; a warp reads one x[k] per step, which constant memory broadcasts",
        metric="smsp__sass_inst_executed_op_global_ld halves against s2",
        watch=("dram_bytes",),
    ),
    Stage(
        "sgemv", "s4", "x in shared memory", "kernels/sgemv/s4_shared_x.cu", NVRTC,
        (_t(32, 512, "sgemv_s4", 16),), "bounds-check", FP32,
        changes="s2 with x staged in shared memory 4,096 floats at a time, every barrier reached by every thread "
                "(the seed's sat inside `if (id < M)` and read x past its end)",
        why="as s3, without the chunked launches",
        metric="smsp__sass_inst_executed_op_global_ld halves against s2; shared loads appear",
        watch=("dram_bytes",),
    ),
    Stage(
        "sgemv", "s5", "warp per row, float4", "kernels/sgemv/s5_warp_per_row_float4.cu", NVRTC,
        (_t(8, 256, "sgemv_s5", 128),), "bounds-check", FP32,
        changes="back to the row-major A (no transpose): one warp per row, 16-byte loads, a warp-shuffle reduction; "
                "scalar head and tail for rows that are not 16-byte aligned",
        why="a warp load moves 512 contiguous bytes of one row, with a quarter of s2's load instructions",
        metric="sectors per request of global loads near 4 with a quarter of the requests; no transpose",
        watch=("dram_bytes", "l1_bytes"),
        accesses=_S5_ACCESSES,
    ),
    Stage(
        "sgemv", "s6", "bandwidth limit: 4 rows per warp, split K", "kernels/sgemv/s6_bandwidth_limit.cu", NVRTC,
        (_t(32, 256, "sgemv_s6", 256),), "bounds-check", FP32,
        changes="4 rows per warp sharing each float4 of x, 8 float4 loads of A in flight per lane (read once, "
                "no L1 allocation), and K split over blocks with a second pass when M gives fewer than 256 blocks",
        why="a bandwidth-bound kernel needs ~22 KB of loads in flight per SM at every shape: wide rows, short rows, few rows",
        metric="dram__throughput.avg.pct_of_peak_sustained_elapsed near the copy bandwidth; dram__bytes_read ~ 4MK",
        watch=("dram_bytes",),
    ),
    Stage(
        "sgemv", "s7", "cuBLAS", None, LIBRARY, (), "library", FP32,
        changes="the vendor library: " + LIBRARY_TUNING.format("mv"),
        why="the reference point every hand-written stage is compared with",
        metric="dram__throughput against the copy bandwidth",
        watch=("dram_bytes",),
    ),
    Stage(
        "sgemv", "s8", "Triton", "kernels/sgemv/triton_sgemv.py", TRITON,
        tuple(TritonConfig("sgemv_kernel", (("BLOCK_M", bm), ("BLOCK_K", bk)), warps, stages)
              for bm, bk, warps, stages in ((1, 1024, 4, 1), (4, 512, 4, 2), (8, 256, 4, 2), (8, 512, 8, 2),
                                            (16, 256, 8, 3), (32, 128, 8, 3))),
        "bounds-check", FP32,
        changes="the product written in Triton: each program streams BLOCK_M rows of A in BLOCK_K-wide tiles "
                "against a slice of x, autotuned over the declared tiles before timing",
        why="a bandwidth-bound kernel in a dozen lines: Triton picks the vector loads and the layout s5 and s6 "
            "write by hand",
        metric="dram__throughput.avg.pct_of_peak_sustained_elapsed against s6's and cuBLAS's",
        watch=("dram_bytes",),
        notes="needs the triton extra",
    ),
)

OP = Op(
    name="sgemv",
    title="SGEMV",
    description="y = A @ x, row-major float32, A is MxK, x has K elements and y M",
    dtype="float32",
    element_bytes=4,
    dims="MxK",
    stage_prefix="s",
    precisions={"fp32": FP32},
    stages=STAGES,
    baselines={"fp32": "s7"},
    flops=flops,
    min_bytes=min_bytes,
    min_bytes_rule="4(MK + M + K)",
    workload=GemvWorkload({"sgemv_s2": TRANSPOSED, "sgemv_s3": CONSTANT, "sgemv_s4": TRANSPOSED, "sgemv_s6": SPLIT}),
    headline="bytes",
)
