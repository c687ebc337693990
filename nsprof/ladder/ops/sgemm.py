"""SGEMM: C = A @ B in float32, the ladder v1 (naive) to v11 (wgmma on TF32): cuBLAS as v9 (FP32)
and v9t (TF32), the baselines of the FP32 and the TF32 stages.

The stages, their launch tiles and their declared memory accesses (what `nsprof explain` models)
live here; the kernels in kernels/sgemm/, one .cu per stage.
"""

from __future__ import annotations

from nsprof.access import MemoryAccess
from nsprof.ladder.op_model import LIBRARY_TUNING, Op, Stage, fixed_precision
from nsprof.ladder.ops import matmul
from nsprof.ladder.ops.tiles import Tile
from nsprof.ladder.stage_kinds import CPU, LIBRARY, NVRTC, TRITON

FP32 = fixed_precision("fp32", "float32 multiply-adds", 1e-5)
TF32 = fixed_precision("tf32", "inputs rounded to TF32 (10-bit mantissa), float32 accumulation", 5e-3)


def _t(bm, bn, bk, threads, entry, smem=0, max_split_k=1) -> Tile:
    return Tile(bm, bn, bk, threads, entry, smem, max_split_k)


def _v10_smem(bm: int, bn: int, stages: int = 3, bk: int = 32) -> int:
    """Bytes of the v10 shared-memory ring: padded A and B tiles per stage (see its source)."""
    return stages * (bm * (bk + 4) + bk * (bn + 8)) * 4


def _v10(bm: int, bn: int) -> Tile:
    """A v10 tile: 8 warps, 32-deep k tiles; sgemm_v10_<bm>x<bn> checks bounds, its _unchecked twin runs whole tiles."""
    entry = f"sgemm_v10_{bm}x{bn}"
    return Tile(bm, bn, 32, (256, 1), entry, _v10_smem(bm, bn), unchecked_entry=f"{entry}_unchecked")


def _v11_smem(bn: int, stages: int) -> int:
    """Bytes v11 asks for: 1 KB of alignment slack, the ring (16 KB of A and bn x 128 bytes of Bt per
    stage) and its mbarriers (see its source)."""
    return 1024 + stages * (128 * 32 * 4 + bn * 32 * 4) + 256


def _v11_rs(stages: int) -> Tile:
    """v11's 256x128 tile without the transpose: C^T = B^T A^T, A's 256 rows (K-major, as wgmma's shared-memory
    operand) in one TMA box of 256 rows x 32 floats, B as given in boxes of 32 rows of K x 32 floats of N, read
    into registers as wgmma's other operand (b_in_registers). Its ring: 32 KB of A and 16 KB of B a stage."""
    return Tile(256, 128, 32, (384, 1), "sgemm_v11_rs_256x128", 1024 + stages * (256 * 32 * 4 + 32 * 128 * 4) + 256,
                arch="sm_90a", tma_boxes=((256, 32), (32, 32)), swizzle=128, persistent=True, b_in_registers=True)


def _v11(bn: int, stages: int, persistent: bool) -> Tile:
    """A v11 tile: 3 warpgroups; both TMA boxes 32 floats (128 bytes: one swizzle atom) wide, A's
    128 rows, Bt's bn rows (B transposed to N x K first: b_k_major)."""
    return Tile(128, bn, 32, (384, 1), f"sgemm_v11_128x{bn}", _v11_smem(bn, stages), arch="sm_90a",
                tma_boxes=((128, 32), (bn, 32)), swizzle=128, persistent=persistent, b_k_major=True)


# Stage.accesses, per stage: warp 0 of a block. Global arrays are 1024 x 1024 row-major floats,
# as profiled; shared arrays are the kernel's declarations, padding included.
def _smem(source, op, array, shape, row, col, width=4, count=1, note="") -> MemoryAccess:
    return MemoryAccess(source, "shared", op, array, shape, row, col, width, 4, count, False, note)


def _gmem(source, op, array, row, col, width=4, count=1, once=False, note="") -> MemoryAccess:
    return MemoryAccess(source, "global", op, array, (1024, 1024), row, col, width, 4, count, once, note)


_V1_ACCESSES = (
    _gmem("A[m * K + k]", "load", "A", "warp", "0", note="m = ty: the warp's 32 lanes share one address"),
    _gmem("B[k * N + n]", "load", "B", "0", "lane", note="n = tx: consecutive lanes, consecutive floats"),
    _gmem("C[m * N + n] = acc", "store", "C", "warp", "lane", once=True),
)
# v2: a block is 32 x 32 threads, so warp w is row ty = w and lane is tx.
_V2_ACCESSES = (
    _gmem("A[m * K + k0 + tx]", "load", "A", "warp", "lane"),
    _gmem("B[(k0 + ty) * N + n]", "load", "B", "warp", "lane"),
    _gmem("C[m * N + n] = acc", "store", "C", "warp", "lane", once=True),
    _smem("As[ty][tx] = ...", "store", "As", (32, 32), "warp", "lane"),
    _smem("Bs[ty][tx] = ...", "store", "Bs", (32, 32), "warp", "lane"),
    _smem("As[ty][k]", "load", "As", (32, 32), "warp", "0", width=16, count=8,
          note="the compiler reads As[ty][k..k+3] as one LDS.128 (all lanes on one address): "
               "40 shared loads per warp per tile (32 + 8), as measured"),
    _smem("Bs[k][tx]", "load", "Bs", (32, 32), "0", "lane", count=32),
)
# v3/v4: 256 threads; tx = tid % 16, ty = tid / 16; As[128][8], Bs[8][128]; e = tid + 256 * r.
_V3_TILE_COPY = (
    _gmem("Ablk[(e / BK) * K + k0 + e % BK]", "load", "A", "tid / 8", "tid % 8", count=4),
    _gmem("Bblk[(k0 + e / BN) * N + e % BN]", "load", "B", "tid / 128", "tid % 128", count=4),
    _smem("As[e / BK][e % BK] = ...", "store", "As", (128, 8), "tid / 8", "tid % 8", count=4),
    _smem("Bs[e / BN][e % BN] = ...", "store", "Bs", (8, 128), "tid / 128", "tid % 128", count=4),
)
_V3_ACCESSES = (
    *_V3_TILE_COPY,
    _gmem("Cblk[(ty * TM + i) * N + tx * TN + j] = acc[i][j]", "store", "C", "(tid / 16) * 8", "(tid % 16) * 8",
          count=64, once=True, note="lanes 8 floats (32 bytes) apart: one sector each, 4 of its 32 bytes used"),
    _smem("As[ty * TM + i][k]", "load", "As", (128, 8), "(tid / 16) * 8", "0", width=16, count=16,
          note="the compiler reads a row's 8 values of k as two LDS.128 (16 per tile), as the measured "
               "instruction count shows"),
    _smem("Bs[k][tx * TN + j]", "load", "Bs", (8, 128), "0", "(tid % 16) * 8", width=16, count=16,
          note="a thread's 8 contiguous columns are read as two LDS.128, lanes 8 words apart: two lanes "
               "of each quarter-warp share every bank (the measured 5.0 wavefronts per load come from this)"),
)
_V4_ACCESSES = (
    *_V3_TILE_COPY,
    _gmem("Cblk[(ty + 16 * i) * N + tx + 16 * j] = acc[i][j]", "store", "C", "tid / 16", "tid % 16",
          count=64, once=True),
    _smem("As[ty + 16 * i][k]", "load", "As", (128, 8), "tid / 16", "0", width=16, count=16,
          note="read as two LDS.128 per row, as in v3; the two rows of a warp are the two halves"),
    _smem("Bs[k][tx + 16 * j]", "load", "Bs", (8, 128), "0", "tid % 16", count=64,
          note="32-bit loads: 16 consecutive words, the two half-warps on the same words (broadcast)"),
)

# v5..v8 copy one float4 of A (a_row = tid / 2, a_col = (tid % 2) * 4) and of B per thread and tile.
_FLOAT4_TILE_LOADS = (
    _gmem("*(float4*)&Ablk[a_row * K + k0 + a_col]", "load", "A", "tid / 2", "(tid % 2) * 4", width=16),
    _gmem("*(float4*)&Bblk[(k0 + b_row) * N + b_col]", "load", "B", "tid / 32", "(tid % 32) * 4", width=16),
)


def _float4_accesses(a_ld: int) -> tuple[MemoryAccess, ...]:
    """v5..v7: tx = tid % 16, ty = tid / 16; the A tile stored transposed in rows of a_ld floats."""
    return (
        *_FLOAT4_TILE_LOADS,
        _gmem("*(float4*)&Cblk[row * N + tx * 4] (and + 64) = ...", "store", "C", "(tid / 16) * 4", "(tid % 16) * 4",
              width=16, count=16, once=True),
        _smem("As[a_col + i][a_row] = a.x (.y, .z, .w)", "store", "As", (8, a_ld), "(tid % 2) * 4", "tid / 2", count=4,
              note="transposing scalar stores: even lanes write row i, odd lanes row 4 + i"),
        _smem("*(float4*)&Bs[b_row][b_col] = ...", "store", "Bs", (8, 128), "tid / 32", "(tid % 32) * 4", width=16),
        _smem("*(float4*)&As[k][ty * 4] (and [64 + ty * 4])", "load", "As", (8, a_ld), "0", "(tid / 16) * 4",
              width=16, count=16),
        _smem("*(float4*)&Bs[k][tx * 4] (and [64 + tx * 4])", "load", "Bs", (8, 128), "0", "(tid % 16) * 4",
              width=16, count=16),
    )


# v8 (128x128 tile, the one its 1024^3 launches use; modelled_tile): a warp covers 4 x 8 threads;
# ty = (warp / 2) * 4 + lane / 8, tx = (warp % 2) * 8 + lane % 8.
# K tiles of V8_BK = 16 arrive by 16-byte cp.async: per tile a thread copies two float4 of At (A transposed
# first, K x M: a warp copies 512 consecutive bytes of one row) and two of B. cp.async writes shared memory
# without STS instructions, so only the FMAs' shared loads are declared as shared accesses.
# The two buffers As[2][16][132] and Bs[2][16][128] are modelled as 32 rows; buffer 0 is shown.
V8_BK = 16  # the kernel's V8_BK default
_V8_TY, _V8_TX = "((warp / 2) * 4 + lane / 8)", "((warp % 2) * 8 + lane % 8)"
_V8_ACCESSES = (
    _gmem("cp.async16(&As[buf][kk][col], &At[(k0 + kk) * lda + m0 + col])", "load", "At", "tid / 32",
          "(tid % 32) * 4", width=16, count=2, note="LDGSTS: global to shared without registers"),
    _gmem("cp.async16(&Bs[buf][row][col], &B[(k0 + row) * N + n0 + col])", "load", "B", "tid / 32",
          "(tid % 32) * 4", width=16, count=2, note="LDGSTS: global to shared without registers"),
    _gmem("*(float4*)&Cblk[row * N + tx * 4] (and + BN / 2) = ...", "store", "C", f"{_V8_TY} * 4", f"{_V8_TX} * 4",
          width=16, count=16, once=True, note="a float4 atomicAdd (RED) instead when K is split over blocks"),
    _smem("*(float4*)&As[buf][k][ty * 4] (and [BM / 2 + ty * 4])", "load", "As", (2 * V8_BK, 132), "0", f"{_V8_TY} * 4",
          width=16, count=2 * V8_BK, note="lanes 8 apart share an address: a paired load, served in half-warps"),
    _smem("*(float4*)&Bs[buf][k][tx * 4] (and [BN / 2 + tx * 4])", "load", "Bs", (2 * V8_BK, 128), "0", f"{_V8_TX} * 4",
          width=16, count=2 * V8_BK),
)


V8_STAGES = 2  # the kernel's V8_STAGES default


def _v8_smem(bm: int, bn: int, bk: int = V8_BK, stages: int = V8_STAGES) -> int:
    """Bytes of v8's shared-memory ring (dynamic): per stage a bk x (bm + 4) tile of At and bk x bn of B."""
    return stages * bk * (bm + 4 + bn) * 4


def _v8(bm: int, bn: int, threads: int, blocks_per_sm: int, max_split_k: int = 1, stream_k: bool = False) -> Tile:
    """A v8 tile: sgemm_v8_<bm>x<bn> checks bounds (any size), its _unchecked twin runs whole tiles; both
    read A transposed (At, written by sgemm_v8_transpose_a first: a_m_major). `stream_k`: the tile's last
    wave is shared out by k steps (256x128 only: see the kernel's header); `blocks_per_sm`: what its
    __launch_bounds__ promise."""
    entry = f"sgemm_v8_{bm}x{bn}"
    return Tile(bm, bn, V8_BK, (threads, 1), entry, _v8_smem(bm, bn), max_split_k=max_split_k,
                unchecked_entry=f"{entry}_unchecked", a_m_major=True, stream_k=stream_k, blocks_per_sm=blocks_per_sm)


STAGES = (
    Stage(
        "sgemm", "v0", "CPU: serial loop", "kernels/sgemm/v0_cpu_serial.c", CPU, (), "bounds-check", FP32,
        changes="the tutorials' first version, on the host: the m, n, k triple loop on one core, compiled (-O2)",
        why="where every ladder starts: how far below the GPU stages one core's loop sits, and why",
        metric="none (no GPU work): its wall-clock time against v1's",
    ),
    Stage(
        "sgemm", "v0b", "CPU: blocked, all cores", "kernels/sgemm/v0b_cpu_blocked.c", CPU, (), "bounds-check", FP32,
        changes="the CPU's own optimizations: loops reordered (m, k, n) and blocked for the caches, vectorized "
        "(-O3 -march=native) and shared over every core (OpenMP)",
        why="B's blocks are reused from the L2 cache and the inner loop runs on the vector FMA units of every core",
        metric="none (no GPU work): its wall-clock time against v0's and the CPU's FP32 peak",
    ),
    Stage(
        "sgemm", "v0blas", "CPU: BLAS (NumPy)", None, CPU, (), "library", FP32,
        changes="the CPU's vendor library: NumPy's matmul, the BLAS it was built with (OpenBLAS, MKL)",
        why="the CPU's baseline, as cuBLAS is the GPU's: packed, register-blocked, every core",
        metric="none (no GPU work): every GPU stage's speed-up over it",
    ),
    Stage(
        "sgemm", "v1", "naive", "kernels/sgemm/v01_naive.cu", NVRTC,
        (_t(32, 32, 1, (32, 32), "sgemm_v1"),), "bounds-check", FP32,
        changes="baseline: one thread per element of C, operands read straight from global memory",
        why="the simplest correct kernel; every FMA requests 8 bytes, so caches do all the reuse",
        metric="l1tex__t_bytes.sum (bytes requested from L1) dwarfs the FLOPs",
        watch=('l1_bytes', 'flops'),
        accesses=_V1_ACCESSES,
    ),
    Stage(
        "sgemm", "v2", "shared-memory tiling", "kernels/sgemm/v02_smem_tiling.cu", NVRTC,
        (_t(32, 32, 32, (32, 32), "sgemm_v2"),), "bounds-check", FP32,
        changes="32x32 tiles of A and B staged in shared memory; each loaded float is used 32 times",
        why="global/L1 traffic falls 32x; shared memory feeds the FMAs",
        metric="l1tex__t_bytes.sum and lts__t_bytes.sum fall ~32x against v1",
        watch=('l1_bytes', 'l2_bytes'),
        accesses=_V2_ACCESSES,
    ),
    Stage(
        "sgemm", "v3", "register tiling", "kernels/sgemm/v03_register_tiling.cu", NVRTC,
        (_t(128, 128, 8, (256, 1), "sgemm_v3"),), "pad", FP32,
        changes="128x128 block tile, each thread accumulates a contiguous 8x8 block of C in registers",
        why="64 FMAs per 16 shared-memory loads instead of 1 per 2: the FMA pipe becomes the limit",
        metric="smsp__sass_inst_executed_op_shared_ld.sum per FLOP falls; sm__throughput rises",
        watch=('smem_ld_instructions', 'sm_throughput_pct'),
        accesses=_V3_ACCESSES,
    ),
    Stage(
        "sgemm", "v4", "re-indexed loads", "kernels/sgemm/v04_reindexed_loads.cu", NVRTC,
        (_t(128, 128, 8, (256, 1), "sgemm_v4"),), "pad", FP32,
        changes="each thread's 8x8 outputs are strided by 16 rows/columns instead of contiguous",
        why="lanes read consecutive shared-memory words (no bank conflicts) and store C coalesced",
        metric="l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum falls to ~0",
        watch=('smem_ld_conflicts', 'smem_ld_nway'),
        accesses=_V4_ACCESSES,
    ),
    Stage(
        "sgemm", "v5", "float4 loads", "kernels/sgemm/v05_float4_loads.cu", NVRTC,
        (_t(128, 128, 8, (256, 1), "sgemm_v5"),), "pad", FP32,
        changes="16-byte loads and stores throughout; A tile stored transposed (As[k][m]) so A is read as float4",
        why="4 LDS.128 per k where v4 issued 10 loads; but the transposing scalar stores are 2-way conflicted",
        metric="smsp__sass_inst_executed_op_shared_ld.sum falls; shared store bank conflicts appear",
        watch=('smem_ld_instructions', 'smem_st_conflicts', 'smem_st_nway'),
        accesses=_float4_accesses(128),
    ),
    Stage(
        "sgemm", "v6", "bank-conflict-free shared memory", "kernels/sgemm/v06_conflict_free_smem.cu",
        NVRTC, (_t(128, 128, 8, (256, 1), "sgemm_v6"),), "pad", FP32,
        changes="rows of the transposed A tile padded from 128 to 132 floats",
        why="the transposing stores of a warp spread over all 32 banks instead of 16 (no 2-way conflict)",
        metric="l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum falls to ~0 against v5",
        watch=('smem_st_conflicts', 'smem_st_nway'),
        accesses=_float4_accesses(132),
    ),
    Stage(
        "sgemm", "v7", "outer product from registers", "kernels/sgemm/v07_outer_product.cu", NVRTC,
        (_t(128, 128, 8, (256, 1), "sgemm_v7"),), "pad", FP32,
        changes="register fragments for step k+1 are loaded while the 8x8 outer product of step k runs",
        why="shared-memory latency hides behind 64 independent FMAs instead of stalling the warp",
        metric="smsp__average_warp_latency_issue_stalled_short_scoreboard falls",
        watch=('stall_short_scoreboard',),
        accesses=_float4_accesses(132),
    ),
    Stage(
        "sgemm", "v8", "double buffering", "kernels/sgemm/v08_double_buffering.cu", NVRTC,
        (
            _v8(256, 128, 256, 1, stream_k=True),
            _v8(128, 128, 256, 2, max_split_k=8),
            _v8(64, 128, 128, 4),
            _v8(64, 64, 64, 8),
        ),
        "bounds-check", FP32,
        changes="two shared buffers filled by cp.async: the next tile's copies overlap this tile's FMAs; A is "
        "transposed first (timed with the stage) so both tiles arrive as 16-byte copies in the layout the FMAs "
        "read; 256x128 tiles (8x16 outputs a thread, one block per SM) where they fill the GPU, the last "
        "partial wave's tiles shared out by k steps (stream-K), and K split, or smaller tiles, where 128x128 "
        "tiles would not spread evenly over the SMs",
        why="global-load latency is hidden, one barrier per tile remains instead of two, and no register or "
        "shared store is spent on moving tiles",
        metric="smsp__average_warp_latency_issue_stalled_long_scoreboard and _barrier fall",
        watch=('stall_long_scoreboard', 'stall_barrier'),
        accesses=_V8_ACCESSES,
        modelled_tile="128x128",
    ),
    Stage(
        "sgemm", "v9", "cuBLAS", None, LIBRARY, (), "library", FP32,
        changes="the vendor library in FP32 (no TF32): " + LIBRARY_TUNING.format("mm"),
        why="the reference point every hand-written stage is compared with",
        metric="whatever cuBLAS chose: compare sm__throughput and dram__bytes with v8",
        watch=('sm_throughput_pct', 'dram_bytes'),
    ),
    Stage(
        "sgemm", "v9t", "cuBLAS TF32", None, LIBRARY, (), "library", TF32,
        changes="the vendor library in TF32 (CUBLAS_COMPUTE_32F_FAST_TF32, restored to FP32 after each call): "
        + LIBRARY_TUNING.format("mm"),
        why="the baseline of the TF32 stages: v10 and v11 are compared with cuBLAS computing what they compute",
        metric="whatever cuBLAS chose (wgmma on Hopper): compare sm__pipe_tensor_op_gmma_cycles_active with v11",
        watch=('tensor_flops', 'sm_throughput_pct'),
    ),
    Stage(
        "sgemm", "v10", "tensor cores (TF32 mma.sync)", "kernels/sgemm/v10_tensor_cores.cu", NVRTC,
        (
            _v10(128, 256),
            _v10(128, 128),
        ),
        "async-fill", TF32,
        changes="warp-level TF32 MMA (mma.sync m16n8k8, ldmatrix) with float32 accumulation, cp.async 3-stage ring",
        why="tensor cores do many times the FP32 pipes' work per cycle",
        metric="sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32 appears; ffma counts drop to ~0",
        watch=('tensor_flops', 'flops'),
        notes="inputs rounded to TF32 (10-bit mantissa) with cvt.rna: errors near 3e-4, tolerance 5e-3",
    ),
    Stage(
        "sgemm", "v11", "wgmma + TMA (TF32, Hopper)", "kernels/sgemm/v11_wgmma_tma.cu", NVRTC,
        (_v11_rs(4), _v11(256, 4, True), _v11(128, 6, True), _v11(64, 5, False)),
        "tma-fill", TF32,
        changes="warpgroup MMAs (wgmma m64nNk8 on TF32) read A from shared memory, which TMA fills in the 128-byte "
        "swizzle; a producer warpgroup loads, two consumer warpgroups multiply. TF32 wgmma reads only K-major operands "
        "from shared memory, and B is N-major: the 256x128 tile computes C^T = B^T A^T with B's tile read into "
        "registers as the MMA's other operand; the smaller tiles transpose B to N x K first (timed with the stage)",
        why="mma.sync cannot keep Hopper's tensor cores busy; wgmma runs asynchronously at full rate, with no "
        "fragments in registers and no per-thread copies or address math",
        metric="sm__pipe_tensor_op_gmma_cycles_active approaches the elapsed cycles; smsp__inst_executed falls >10x against v10",
        watch=('tensor_flops', 'sm_throughput_pct'),
        notes="sm_90a only; A's float32 bits are read as TF32 (truncated), B is rounded with cvt.rna (into registers, "
        "or in the transpose); ragged M, N, K by TMA's zero fill and bounds-checked stores; where K % 4 != 0 or "
        "N % 4 != 0 the operands whose rows are not 16-byte aligned are copied into rows of whole 128-byte lines",
    ),
    Stage(
        "sgemm", "v12", "Triton (FP32)", "kernels/common/triton_matmul.py", TRITON,
        tuple(matmul.triton_config(*config) for config in ((128, 128, 32, 8, 3), (128, 64, 32, 4, 3),
                                                           (64, 128, 32, 4, 3), (64, 64, 32, 4, 4))),
        "bounds-check", FP32,
        changes="the product written in Triton: a block-tiled tl.dot loop in IEEE float32, tiles in groups of 8 "
        "rows for L2 reuse, autotuned over the declared tiles before timing",
        why="what a Triton kernel of a few lines reaches against the hand-tuned v8 and cuBLAS: Triton plans "
        "shared memory, vector loads and pipelining itself",
        metric="ffma counts as v8's (IEEE float32 has no tensor-core path); compare sm__throughput with v8 and v9",
        watch=('sm_throughput_pct', 'flops'),
        notes="needs the triton extra; tl.dot on float32 defaults to TF32: this stage asks for input_precision='ieee'",
    ),
    Stage(
        "sgemm", "v12t", "Triton TF32", "kernels/common/triton_matmul.py", TRITON,
        tuple(matmul.triton_config(*config) for config in ((128, 256, 32, 8, 3), (256, 128, 32, 8, 3), (128, 128, 64, 8, 3),
                                                           (128, 64, 32, 4, 4), (64, 128, 32, 4, 4),
                                                           (128, 256, 32, 8, 3, True), (128, 128, 32, 8, 4, True))),
        "bounds-check", TF32,
        changes="the same Triton kernel with tl.dot in TF32, which Triton lowers to Hopper's wgmma fed by TMA or "
        "cp.async, autotuned over the declared tiles before timing",
        why="the tensor-core path v10 and v11 write by hand, generated: how close it comes to cuBLAS TF32 and v11",
        metric="sm__pipe_tensor_op_gmma_cycles_active as v11's; the SASS holds HGMMA (nsprof stages: what it compiled)",
        watch=('tensor_flops', 'sm_throughput_pct'),
        notes="needs the triton extra",
    ),
)


OP = Op(
    name="sgemm",
    title="SGEMM",
    description="C = A @ B, row-major float32, A is MxK and B is KxN",
    dtype="float32",
    element_bytes=4,
    dims=matmul.DIMS,
    stage_prefix="v",
    precisions={p.name: p for p in (FP32, TF32)},
    stages=STAGES,
    baselines={"fp32": "v9", "tf32": "v9t"},
    flops=matmul.flops,
    min_bytes=matmul.min_bytes(4),
    min_bytes_rule=matmul.min_bytes_rule(4),
    workload=matmul.MatmulWorkload("float32", split_k="atomic"),
)
