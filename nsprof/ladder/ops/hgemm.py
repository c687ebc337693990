"""HGEMM: C = A @ B with fp16 inputs and output and float32 accumulation, on the tensor cores.

The ladder h1 (WMMA straight from global memory) to h6 (wgmma fed by TMA, sm_90a), cuBLAS as the
library stage; the kernels in kernels/hgemm/, one .cu per stage. Every stage's M, N, K are
padded on the device to its tile (the copies are timed with the stage), so the kernels need no
bounds checks and every row is 16-byte aligned for cp.async and TMA.
"""

from __future__ import annotations

import dataclasses
import math

from nsprof.ladder.op_model import LIBRARY_TUNING, Op, Precision, Stage
from nsprof.ladder.ops import matmul
from nsprof.ladder.ops.tiles import Tile
from nsprof.ladder.stage_kinds import LIBRARY, NVRTC, TRITON
from nsprof.sizes import Size

UNIT_ROUNDOFF_FP16 = 2.0**-11
UNIT_ROUNDOFF_FP32 = 2.0**-24


def tolerance(size: Size) -> float:
    """Rounding C to fp16 moves each element by at most 2^-11 of itself; float32 accumulation over
    K terms adds about sqrt(K) roundings of 2^-24 (4x for margin). Half-precision accumulation,
    whose error grows like sqrt(K) * 2^-11, fails this from K of a few hundred on."""
    return UNIT_ROUNDOFF_FP16 + 4 * math.sqrt(size[2]) * UNIT_ROUNDOFF_FP32


FP16 = Precision("fp16", "fp16 inputs and output, float32 accumulation",
                 "2^-11 + 4 sqrt(K) 2^-24 (fp16 rounding of C plus float32 accumulation)", tolerance)



# Every h6 tile: wgmma and setmaxnreg need sm_90a; the launch overlaps the grid before it (each body waits for its
# writes first), which hides the gap between kernels run back to back: at 1024^3 on H200s, in chains of 32 launches,
# 6.1-6.3 us each against 7.45-7.75 us launched plainly (benchmarks/records/2026-11-30-h200-hgemm-dependent-launch).
H6_LAUNCH = {"arch": "sm_90a", "dependent_launch": True}


def _t(bm, bn, bk, threads, entry, smem=0, max_split_k=1, **extra) -> Tile:
    return Tile(bm, bn, bk, (threads, 1), entry, smem, max_split_k, **extra)


def _h6(bm: int, bn: int, smem: int, persistent: bool = False, stream_k: bool = False, tma_store: bool = False,
        split_sums: bool = False, fill_gain: float | None = None, ping_pong: bool = False,
        takes_over: str | None = None, replaces_split: str | None = None, one_round_first: bool = False) -> Tile:
    """An h6 tile: 3 warpgroups, 64-deep k-tiles; A's TMA box is 128 rows of 64 halves (128 bytes: one
    swizzle atom), B's 64 rows of 64 columns (a tile of B is bn/64 such boxes). `stream_k`: the
    persistent kernel that shares a last wave at most 0.6 full out by k steps (on an H100, sharing a
    fuller one was slower); `tma_store`: C stored by TMA from swizzled staging boxes (0.5-0.7% faster
    than the staged epilogue at 4096^3 on an H100, up to 0.4% elsewhere:
    benchmarks/records/2026-11-26-h100-h6-stream-k/h100-h6-stream-k.md); `split_sums`: a K split's slices add
    their sums in a workspace, the last one storing C (no reduce kernel); `fill_gain`: an alternative tile
    (nsprof.ladder.ops.launch_plan.choose_plan); `ping_pong`: each consumer warpgroup owns whole tiles, the two
    taking turns at the tensor cores, so one's epilogue runs under the other's MMAs; `takes_over`: the shape whose
    unsplit plans it runs (nsprof.ladder.ops.launch_plan._taken_over says where); `replaces_split`: the
    shape whose shallow K splits it runs unsplit (nsprof.ladder.ops.launch_plan.SHALLOW_SLICE_K says where). A's
    box is as tall as the tile, at most 128 rows."""
    entry = f"hgemm_h6_{'pp_' if ping_pong else ''}{'sk_' if stream_k else ''}{'tma_' if tma_store else ''}{bm}x{bn}"
    return _t(bm, bn, 64, 384, entry, smem, **H6_LAUNCH, tma_boxes=((min(bm, 128), 64), (64, 64)),
              swizzle=128, persistent=persistent, stream_k=stream_k, sums_in_workspace=stream_k or split_sums,
              max_tail_fill=0.6 if stream_k else 1.0, tma_store=tma_store, fill_gain=fill_gain, takes_over=takes_over,
              replaces_split=replaces_split, one_round_first=one_round_first)


def _h6_multicast(bn: int, smem: int, stream_k: bool = False) -> Tile:
    """h6's persistent 128 x bn tile (TMA stores) in clusters of two: two vertically adjacent tiles (a unit of
    256 x bn) share B, each block loading some of B's boxes and multicasting them to both, so a block reads
    16 KB of A and half of B's bytes from the L2 per k step. It replaces the 128 x bn tile where the rows of A
    or B are not whole 128-byte lines (`replaces_unaligned`: K or N not a multiple of 64).

    Why (the H200, paired with the library, benchmarks/records/2026-11-30-h200-hgemm-multicast): there each
    box row straddles two lines and the L2 falls behind; a tile's k step took 1253 cycles at 3000 x 5000 x 2000
    (768 ideal for 128 x 192, 1024 for 128 x 256), 1122 in clusters, and 837 for 128 x 192 in clusters. Paired:
    3000 x 5000 x 2000 86-89% -> 97-99% (256 x 192), 2000 x 7000 x 3000 80% -> 93%, 5000^3 76% -> 88-89%,
    6000 x 6000 x 1000 88% -> 101%, 4000^3 95.4% -> 95.0%; where rows are whole lines, or straddle them in K
    or N alone, alike or up to 0.5 points slower (3072 x 5120 x 2048, 4096^3, 4096 x 4096 x 4000, 4096 x 4000 x
    4096). It also runs a wave of 128 x 256 that falls just short of the SMs where rows straddle sectors
    (nsprof.ladder.ops.launch_plan._nearly_full_wave), but not where its clusters would take another round, nor
    where one operand's rows alone straddle lines at whole sectors and the ping-pong tile reads them better
    (launch_plan._ping_pong_reads_it_better).

    With `stream_k` (hgemm_h6_cl2_sk_tma_256x{bn}): the clusters share the units of a last wave at most 0.6 full by
    k steps, each block adding its own tile's float32 sums in the workspace, where K is deep enough that a round
    outweighs what the sums cost (launch_plan._with_shared_tail)."""
    return _t(256, bn, 64, 384, f"hgemm_h6_cl2_{'sk_' if stream_k else ''}tma_256x{bn}", smem, **H6_LAUNCH,
              tma_boxes=((128, 64), (64, 64)), swizzle=128, persistent=True, tma_store=True,
              replaces_unaligned=f"128x{bn}", cluster=2, stream_k=stream_k, sums_in_workspace=stream_k,
              max_tail_fill=0.6 if stream_k else 1.0)


def _h6_pp_multicast() -> Tile:
    """h6's ping-pong 128 x 128 tile (TMA stores) in clusters of two: two vertically adjacent tiles (a unit of
    256 x 128) share B, each block loading one of its two boxes and multicasting it to both, so a block asks the
    L2 for a quarter fewer requests per k step. It replaces the ping-pong tile where B's rows are not whole
    128-byte lines (`replaces_unaligned`, `straddle`), unless its clusters would take more rounds than the tiles, or
    B's rows alone straddle at whole sectors with K at most 2048 (launch_plan._unaligned_form).

    Why (the H200, paired with the library, benchmarks/records/2026-12-01-h200-hgemm-straddled-rows): where every
    box row straddles two lines the TMA unit asks the L2 for three pieces of it, not one (ncu at 1400^3: 1.66
    sectors a request against 4.0 at 1408^3, 4.3-4.6 times the TMA's requests), and the tile waits on them: 1400^3
    ran 79% of the library against 101% at 1408^3. In clusters: 1400^3 80 -> 85%, 1000 x 1200 x 808 80-84 -> 92-93%,
    1200 x 1000 x 800 77-80 -> 89-90%, 3000 x 1000 x 2000 62 -> 79%, 1800^3 63-64 -> 73%, 500 x 2800 x 2000 +2 to +6
    points, alike at 1100 x 1200 x 1000 and 300 x 3000 x 2000; behind where its units take a second round (1400 x
    1500 x 3000: 88 -> 76%). Held out where B's rows straddle: ahead at all six by 4-18 points (512 x 3000 x 2000
    83 -> 100%); where A's alone straddle, mixed (+4, -0.6 to -3.0, alike), and the side-by-side pairs take those."""
    return dataclasses.replace(_h6(128, 128, _H6_PP_TMA_SMEM, persistent=True, ping_pong=True, tma_store=True),
                               bm=256, entry="hgemm_h6_pp_cl2_tma_256x128", cluster=2, replaces_unaligned="128x128",
                               straddle="B")


def _h6_pp_pairs() -> Tile:
    """h6's ping-pong 128 x 128 tile (TMA stores) in side-by-side pairs (a unit of 128 x 256) that share A: each
    block loads half of A's rows and multicasts them to both, and loads its own B. It replaces the ping-pong tile
    where B's rows are whole 128-byte lines and A's start inside 32-byte sectors (`straddle`): there A's box rows
    are the ones the TMA unit asks for in pieces, and the stacked pairs' shared B does not help.

    Why (the H200, paired with the library, benchmarks/records/2026-12-01-h200-hgemm-straddled-rows): fitted at four
    shapes, 2500 x 1024 x 3000 59-61 -> 71%, 4000 x 512 x 3000 84-89 -> 100%, 3000 x 512 x 1000 87-90 -> 94%, alike
    at 1500 x 768 x 1000; at twelve held out, ahead at nine by 3-12 points (2048 x 1024 x 5000 82-84 -> 94%, 300 x
    4096 x 1000 72-73 -> 84-85%, 6000 x 512 x 3000 72-75 -> 83%), alike at one, behind at two whose 128 tiles nearly
    fill one round (512 x 4096 x 1000 95 -> 92%, 1000 x 2048 x 1000 97-98 -> 92%). Behind where A's rows straddle at
    whole sectors (2048 x 2048 x 2000: 98.5 -> 89%, where the plain tile stays: launch_plan._ping_pong_reads_it_better),
    where the rows of both straddle (3000 x 1000 x 2000: 77 -> 70%, against the stacked pairs), and against 128 x
    256's clusters where those run (2000 x 2048 x 3000: 99 -> 87-91%)."""
    return dataclasses.replace(_h6(128, 128, _H6_PP_TMA_SMEM, persistent=True, ping_pong=True, tma_store=True),
                               bn=256, entry="hgemm_h6_pp_cl2a_tma_128x256", cluster=2, replaces_unaligned="128x128",
                               straddle="A inside sectors", tma_boxes=((64, 64), (64, 64)))


def _h6_few_rows(bn: int, stages: int, rows: int = 64, one_wave_first: bool = False) -> Tile:
    """An h6 tile for products of at most `rows` (64 or 16) rows: rows x bn, each consumer warpgroup 64 x bn/2
    (wgmma's m64: a 16-row tile loads 16 rows of A, 2 KB a stage, and its ring holds more stages of B), K
    split over gridDim.z to fill one wave, the slices adding their sums in a workspace (the last stores C); a
    `stages`-deep ring (C goes out from the registers: no staging tile).

    Why 16 rows (the H200, paired with torch.mm, benchmarks/records/2026-11-29-h200-hgemm-rows-overlap, call 1):
    at 1 x 128256 x 4096, 6 stages of 16 x 256 ran 4.5 TFLOP/s (99.5%) against 5 of 64 x 256's 4.1 (91.2%); at
    N = 14336, 112 unsplit blocks of 16 x 128 (11 stages) 100.4-100.5% against 96.1-97.9% for 16 x 256 split in
    2 (hence `one_wave_first`; 64 x 128, 8 stages, had run 80-88% there against 64 x 256's 94-96%:
    benchmarks/records/2026-11-29-h200-hgemm-sizes). Neither ring is as deep as fits: 16 x 256 keeps 5 stages of
    6, which read 0.8-1.5 points lower at the four products it runs (benchmarks/records/2026-12-01-h200-hgemm-block-ends,
    section 5), and 16 x 128 6 of 11, +0.7 to +5.1 points at five products (11 had run the figures above;
    benchmarks/records/2026-12-01-h200-hgemm-decode-rings). Both paired on two cards."""
    smem = 1024 + stages * (rows * 128 + bn * 128) + 256
    return _t(rows, bn, 64, 384, f"hgemm_h6_{rows}x{bn}", smem, max_split_k=16, **H6_LAUNCH,
              tma_boxes=((rows, 64), (64, 64)), swizzle=128, few_rows=rows, sums_in_workspace=True,
              max_rows=rows if rows < 64 else None,  # the MMAs' other rows of A are not loaded
              one_wave_first=one_wave_first)


def _h6_split(bn: int) -> Tile:
    """An h6 tile for products of 65 to 128 rows whose persistent tiles do not fill the SMs (16 tiles of
    128x256 at 128 x 4096 x 4096): 128 x bn blocks, K split over gridDim.z to fill one wave, the slices
    adding their sums in a workspace. Tried before 128x64, whose 224 tiles fill the SMs at 128 x 14336 x
    4096 but ran 67.8% of torch.mm there, against 100.1% for 112 unsplit blocks of this tile (the H200)."""
    return _t(128, bn, 64, 384, f"hgemm_h6_split_128x{bn}", _H6_SPLIT_SMEM, max_split_k=16, **H6_LAUNCH,
              tma_boxes=((128, 64), (64, 64)), swizzle=128, max_rows=128, sums_in_workspace=True)


# 1 KB of alignment slack + 6 stages x 32 KB (128x128, K split) + barriers; C goes out from the registers
_H6_SPLIT_SMEM = 1024 + 6 * 32768 + 256
# 1 KB of alignment slack + 6 stages x 32 KB + 2 consumer warpgroups x 2 staging boxes of 8 KB + barriers
_H6_PP_TMA_SMEM = 1024 + 6 * 32768 + 2 * 2 * 8192 + 256
# 1 KB of alignment slack + 13 stages x 16 KB (64x64: A's 8 KB box and one of B's) + 16 KB of staging + barriers
_H6_PP64x64_SMEM = 1024 + 13 * 16384 + 16384 + 256
# 1 KB of alignment slack + 9 stages x 24 KB (128x64: A's 16 KB box and one of B's) + barriers; C goes out from the
# registers (the kernel's H6_LAST_DIRECT), so no staging tile
_H6_128x64_SMEM = 1024 + 9 * 24576 + 256
# 1 KB of alignment slack + 5 stages x 40 KB (128x192) + 2 consumer warpgroups x 1 staging box of 8 KB + barriers
_H6_192_SMEM = 1024 + 5 * 40960 + 2 * 8192 + 256
# 1 KB of alignment slack + 4 stages x 48 KB + 2 consumer warpgroups x 2 staging boxes of 8 KB + barriers
_H6_TMA_SMEM = 1024 + 4 * 49152 + 2 * 2 * 8192 + 256


_SEED = ("the seed tutorial accumulated in fp16 (its error grows with K: 1.2e-3 at K = 1024, 3.3e-3 at 8192) "
         "and assumed M, N, K multiples of its tiles")

STAGES = (
    Stage(
        "hgemm", "h1", "WMMA from global memory", "kernels/hgemm/h1_wmma_naive.cu", NVRTC,
        (_t(64, 32, 16, 256, "hgemm_h1"),), "pad", FP16,
        changes="tensor cores through WMMA m16n16k16: one warp per 16x16 tile of C, fragments loaded "
                "straight from global memory, float32 accumulators",
        why="the tensor cores do the multiply-adds; each fragment load is narrow and touches 8 cache lines, "
            "so the L1 load path, not the tensor cores, is the limit",
        metric="sm__ops_path_tensor_src_fp16 counts the FLOPs; l1tex__t_bytes far above the DRAM bytes",
        watch=("tensor_flops", "l1_bytes"),
        notes=_SEED,
    ),
    Stage(
        "hgemm", "h2", "shared-memory strips", "kernels/hgemm/h2_smem_strips.cu", NVRTC,
        (_t(64, 32, 16, 256, "hgemm_h2"),), "pad", FP16,
        changes="the block's 64x16 strip of A and 16x32 strip of B staged in shared memory each k-step "
                "(16-byte loads), fragments read from there",
        why="each operand element is loaded from global memory once per block instead of once per warp",
        metric="l1tex__t_bytes falls ~5x against h1; shared loads appear, 2- and 4-way bank conflicted",
        watch=("l1_bytes", "smem_ld_conflicts"),
        notes=_SEED,
    ),
    Stage(
        "hgemm", "h3", "warp tiles (4x2 fragments per warp)", "kernels/hgemm/h3_warp_tiles.cu", NVRTC,
        (_t(128, 128, 32, 256, "hgemm_h3", max_split_k=4),), "pad", FP16,
        changes="a 128x128 block tile; each warp owns 64x32 of C as 4x2 accumulator fragments and reuses "
                "each A fragment twice and each B fragment four times",
        why="shared-memory traffic per MMA falls from 2 fragments to 0.75; global traffic per FLOP 3x lower",
        metric="smsp__sass_inst_executed_op_ldsm (fragment loads) per tensor FLOP falls; lts__t_bytes falls",
        watch=("smem_ldsm_instructions", "l2_bytes"),
        notes=_SEED,
    ),
    Stage(
        "hgemm", "h4", "cp.async double buffer, padded", "kernels/hgemm/h4_cp_async_double_buffer.cu", NVRTC,
        (_t(128, 128, 64, 256, "hgemm_h4", 71680, 4), _t(64, 128, 64, 256, "hgemm_h4_64x128", 53248, 4)),
        "pad", FP16,
        changes="two shared buffers filled with cp.async while the other feeds the MMAs; rows padded by 8 "
                "halves; 64-deep k-tiles",
        why="global latency hides behind tensor-core work, one barrier per tile, no bank conflicts on ldmatrix",
        metric="l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld ~0; long-scoreboard and barrier stalls fall",
        watch=("smem_ld_conflicts", "stall_long_scoreboard", "stall_barrier"),
        notes="the seed tutorial's last stage (267 TFLOP/s at 4096^3 on the H200 with fp16 accumulation)",
    ),
    Stage(
        "hgemm", "h5", "mma.sync, ldmatrix, swizzled 4-stage ring", "kernels/hgemm/h5_mma_sync_swizzle.cu", NVRTC,
        (_t(128, 256, 32, 256, "hgemm_h5_128x256", 98304), _t(128, 128, 32, 256, "hgemm_h5_128x128", 65536, 2),
         _t(64, 128, 32, 128, "hgemm_h5_64x128", 49152, 4)),
        "pad", FP16,
        changes="PTX mma.sync m16n8k16 on ldmatrix(.trans) fragments, 64x64 warp tiles, a 4-stage cp.async ring, "
                "XOR-swizzled instead of padded shared memory, blocks rasterized in groups of 8 rows",
        why="fewer shared-memory bytes and instructions per MMA, three tiles of latency in flight, no padding",
        metric="bank conflicts stay ~0 without padding; sm__pipe_tensor_op_hmma_cycles_active rises against h4",
        watch=("smem_ld_conflicts", "sm_throughput_pct"),
    ),
    Stage(
        "hgemm", "h6", "wgmma fed by TMA, warp-specialized", "kernels/hgemm/h6_wgmma_tma.cu", NVRTC,
        (_h6(128, 256, _H6_TMA_SMEM, persistent=True, stream_k=True, tma_store=True),
         _h6(128, 256, _H6_TMA_SMEM, persistent=True, tma_store=True),
         _h6(128, 128, _H6_PP_TMA_SMEM, persistent=True, ping_pong=True, tma_store=True, takes_over="128x256",
             one_round_first=True),
         _h6_split(128), _h6(64, 64, _H6_PP64x64_SMEM, persistent=True, ping_pong=True, replaces_split="128x128"),
         _h6(128, 64, _H6_128x64_SMEM, split_sums=True),
         _h6_few_rows(256, 5), _h6_few_rows(128, 8), _h6_few_rows(256, 5, rows=16),
         _h6_few_rows(128, 6, rows=16, one_wave_first=True),
         _h6(128, 192, _H6_192_SMEM, persistent=True, tma_store=True, fill_gain=0.05, one_round_first=True),
         _h6_multicast(256, _H6_TMA_SMEM), _h6_multicast(192, _H6_192_SMEM), _h6_pp_multicast(), _h6_pp_pairs(),
         _h6_multicast(256, _H6_TMA_SMEM, stream_k=True), _h6_multicast(192, _H6_192_SMEM, stream_k=True)),
        "tma-fill", FP16,
        changes="Hopper's wgmma (m64nNk16, operands read from shared memory by descriptor) fed by TMA into "
                "128-byte-swizzled shared memory; a producer warpgroup and two consumer warpgroups with "
                "full/empty mbarriers, setmaxnreg; persistent blocks; C stored back by TMA",
        why="wgmma issues a 64xNx16 product per warpgroup asynchronously and reads B from shared memory without "
            "ldmatrix; TMA moves whole tiles with one thread, so the consumers only do math",
        metric="sm__inst_executed_pipe_tensor_op_gmma replaces _hmma; tensor-pipe active cycles near cuBLAS's",
        watch=("sm_throughput_pct", "l2_bytes"),
        notes="needs sm_90a (compute capability 9.0 exactly): on other GPUs it is reported as not available",
    ),
    Stage(
        "hgemm", "h7", "cuBLAS", None, LIBRARY, (), "library", FP16,
        changes="the vendor library in FP16 with float32 accumulation: " + LIBRARY_TUNING.format("mm"),
        why="the reference point every hand-written stage is compared with",
        metric="whatever cuBLAS chose (HGMMA on Hopper): compare sm__pipe_tensor_op_hmma_cycles_active with h6",
        watch=("sm_throughput_pct", "dram_bytes"),
    ),
    Stage(
        "hgemm", "h8", "Triton", "kernels/common/triton_matmul.py", TRITON,
        tuple(matmul.triton_config(*config) for config in ((128, 256, 64, 8, 3), (256, 128, 64, 8, 3), (128, 128, 64, 8, 4),
                                                 (64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4),
                                                 (64, 128, 32, 4, 4), (128, 256, 64, 8, 3, True),
                                                 (128, 128, 64, 4, 4, True), (128, 256, 32, 8, 4, True))),
        "bounds-check", FP16,
        changes="the product written in Triton (its matmul tutorial's kernel): tl.dot on fp16 tiles in groups of 8 "
                "rows, autotuned over the declared tiles before timing",
        why="Triton generates the wgmma, TMA or cp.async pipeline h5 and h6 write by hand: how close a few lines "
            "come to cuBLAS and to h6",
        metric="sm__pipe_tensor_op_gmma_cycles_active against h6's and cuBLAS's; the SASS holds HGMMA",
        watch=("sm_throughput_pct", "l2_bytes"),
        notes="needs the triton extra",
    ),
)

OP = Op(
    name="hgemm",
    title="HGEMM",
    description="C = A @ B, row-major fp16 inputs and output, float32 accumulation, A is MxK and B is KxN",
    dtype="float16",
    element_bytes=2,
    dims=matmul.DIMS,
    stage_prefix="h",
    precisions={"fp16": FP16},
    stages=STAGES,
    baselines={"fp16": "h7"},
    flops=matmul.flops,
    min_bytes=matmul.min_bytes(2),
    min_bytes_rule=matmul.min_bytes_rule(2),
    workload=matmul.MatmulWorkload("float16", split_k="partials",
                                   reduce_kernel=("kernels/hgemm/splitk_reduce.cu", "hgemm_splitk_reduce"),
                                   partials_argument=True),
)
