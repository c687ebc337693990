"""Triton matrix product: C = A @ B for the SGEMM stages (float32 in and out: FP32 on the CUDA
cores, or TF32 on the tensor cores) and the HGEMM stage (float16 in and out, float32 sums).

The idea is Triton's matmul tutorial's (03-matrix-multiplication): one program per BLOCK_M x
BLOCK_N tile of C, K walked in BLOCK_K steps by `tl.dot`, which Triton lowers to the tensor cores
(wgmma fed by TMA or cp.async on Hopper, mma.sync before) or, for `input_precision="ieee"` on
float32, to FFMAs; programs are numbered in groups of GROUP_M tile rows so that consecutive ones
share columns of B in L2. Pipelining (num_stages) and warp count are the configuration's.

What differs from the tutorial:
- Its float32 product runs in TF32 unless told otherwise (`tl.dot`'s default input precision for
  float32 is "tf32", `allow_tf32=True` in older Triton), so a "float32" Triton matmul is
  10-bit-mantissa TF32 and fails a float32 tolerance; here the stage's precision picks it: "fp32"
  is IEEE float32 ("ieee"), "tf32" is TF32.
- TF32 on Hopper's wgmma reads both operands K-major from shared memory (v11's header says why),
  and B is row-major (N-major): fed as it is, Triton 3.6 shuffles every B tile through registers and
  the TF32 stage ran at 24% of cuBLAS TF32 on an H200. In TF32, B is first transposed to N x K by a
  small Triton kernel (timed with the stage, and alone as its step, as v11's transpose is) and the
  kernel reads it K-major through its strides.
- Like the tutorial, rows and columns past M and N wrap (`% M`, `% N`) so that loads need no mask on
  them (those rows are computed and never stored) and K's last step is masked, so ragged sizes
  compute exactly. Offsets are 32-bit: the launcher refuses a matrix of 2^31 elements or more, as
  the CUDA stages do.

The stages also tune over the kernel's persistent TMA form (`matmul_kernel_tma`, configurations
marked "tma"): one program per SM walks the tiles and reads them through tensor descriptors
(Triton's tutorial 09); TMA zero-fills reads past the edges, so it needs no masks, but it needs rows
16 bytes apart: where K or N is not, those configurations fail their trial and the others are kept.
Its descriptors are built once per set of arrays: Triton encodes each on the host at every launch it
is given a new one, and three per launch kept the GPU waiting (h8 at 88% of cuBLAS at 4096^3 on the
H200, against 93-100% with them built once: benchmarks/records/2026-11-26-h200-triton/h200-triton.md).

nsprof's contract for a Triton stage's file (nsprof.ladder_runs.triton_stage): `launcher(problem,
config, precision)` returns a function that launches once and returns what Triton compiled.
"""

import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from nsprof.ladder_runs.triton_stage import TritonPointer

INPUT_PRECISION = {"fp32": "ieee", "tf32": "tf32", "fp16": "ieee"}


@triton.jit
def grouped_tile(tile, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(tile row, tile column) of the `tile`-th tile of C, numbered in groups of GROUP_M tile rows:
    consecutive tiles share columns of B in L2."""
    tiles_m = tl.cdiv(M, BLOCK_M)
    per_group = GROUP_M * tl.cdiv(N, BLOCK_N)
    first_m = (tile // per_group) * GROUP_M
    group_m = min(tiles_m - first_m, GROUP_M)
    return first_m + (tile % per_group) % group_m, (tile % per_group) // group_m


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_bk, stride_bn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, PRECISION: tl.constexpr):
    tile_m, tile_n = grouped_tile(tl.program_id(axis=0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rows = (tile_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    cols = (tile_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    depth = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows[:, None] * K + depth[None, :]
    b_ptrs = b_ptr + depth[:, None] * stride_bk + cols[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=depth[None, :] < left, other=0.0)
        b = tl.load(b_ptrs, mask=depth[:, None] < left, other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    out_rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    out_cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + out_rows[:, None] * N + out_cols[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(out_rows[:, None] < M) & (out_cols[None, :] < N))


@triton.jit
def matmul_kernel_tma(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, B_K_MAJOR: tl.constexpr, NUM_SMS: tl.constexpr,
                      PRECISION: tl.constexpr):
    """The same product, persistent (one program per SM walks the tiles) and fed by TMA through
    tensor descriptors, which read zeros past the matrices' edges and store only inside them."""
    for tile in tl.range(tl.program_id(axis=0), tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N), NUM_SMS, flatten=True):
        tile_m, tile_n = grouped_tile(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = a_desc.load([tile_m * BLOCK_M, k * BLOCK_K])
            if B_K_MAJOR:
                b = tl.trans(b_desc.load([tile_n * BLOCK_N, k * BLOCK_K]))
            else:
                b = b_desc.load([k * BLOCK_K, tile_n * BLOCK_N])
            acc = tl.dot(a, b, acc, input_precision=PRECISION)
        c_desc.store([tile_m * BLOCK_M, tile_n * BLOCK_N], acc.to(c_desc.dtype))


@triton.jit
def transpose_kernel(src, dst, R, C, BLOCK: tl.constexpr):
    """dst (C x R) = src (R x C) transposed, a BLOCK x BLOCK tile per program."""
    r = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    tile = tl.load(src + r[:, None] * C + c[None, :], mask=(r[:, None] < R) & (c[None, :] < C))
    tl.store(dst + c[:, None] * R + r[None, :], tl.trans(tile), mask=(c[:, None] < C) & (r[None, :] < R))


TRANSPOSE_BLOCK = 64


def launcher(problem, config, precision: str):
    """Launch matmul_kernel once on the problem's current A, B and C in `config`; returns what
    Triton compiled (the problem draws new arrays between verifications: read at each launch).
    In TF32, B is first transposed to N x K (the launch's step "transpose B", timed with it)."""
    m, n, k = problem.m, problem.n, problem.k
    if max(m * k, k * n, m * n) >= 2**31:
        raise ValueError(f"{m}x{n}x{k}: a matrix of 2^31 elements or more overflows the kernel's 32-bit offsets")
    grid = (triton.cdiv(m, config.meta["BLOCK_M"]) * triton.cdiv(n, config.meta["BLOCK_N"]),)
    options = {**config.meta, "PRECISION": INPUT_PRECISION[precision], "num_warps": config.num_warps,
               "num_stages": config.num_stages}
    k_major = precision == "tf32"
    bt = problem.xp.empty((n, k), dtype=problem.B.dtype) if k_major else None
    b_strides = (1, k) if k_major else (n, 1)

    def transpose():
        grid_t = (triton.cdiv(k, TRANSPOSE_BLOCK), triton.cdiv(n, TRANSPOSE_BLOCK))
        transpose_kernel[grid_t](TritonPointer(problem.B), TritonPointer(bt), k, n, BLOCK=TRANSPOSE_BLOCK)

    def launch():
        if k_major:
            transpose()
        a, b, c = (TritonPointer(array) for array in (problem.A, bt if k_major else problem.B, problem.C))
        return matmul_kernel[grid](a, b, c, m, n, k, *b_strides, **options)

    descriptors = {}  # per set of arrays (the problem draws new ones between verifications): built once

    def launch_tma():
        if k_major:
            transpose()
        b_array = bt if k_major else problem.B
        key = (problem.A.data.ptr, b_array.data.ptr, problem.C.data.ptr)
        if key not in descriptors:
            bm, bn, bk = (config.meta[name] for name in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
            descriptors.clear()
            descriptors[key] = (
                TensorDescriptor(TritonPointer(problem.A), [m, k], [k, 1], [bm, bk]),
                TensorDescriptor(TritonPointer(b_array), [n, k], [k, 1], [bn, bk]) if k_major else
                TensorDescriptor(TritonPointer(b_array), [k, n], [n, 1], [bk, bn]),
                TensorDescriptor(TritonPointer(problem.C), [m, n], [n, 1], [bm, bn]))
        return matmul_kernel_tma[(min(sms, grid[0]),)](*descriptors[key], m, n, k, B_K_MAJOR=k_major, NUM_SMS=sms,
                                                       **options)

    if config.entry == "matmul_kernel_tma":
        if any(extent * problem.A.dtype.itemsize % 16 for extent in (k, n)):
            raise ValueError("TMA needs rows that start 16 bytes apart (K and N multiples of 16 bytes)")
        sms = problem.xp.cuda.Device().attributes["MultiProcessorCount"]
        launch = launch_tma

    launch.steps = {"transpose B": transpose} if k_major else {}
    return launch
