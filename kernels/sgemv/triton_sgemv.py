"""Triton matrix-vector product: y = A @ x in float32, A row-major M x K (the SGEMV stage).

SGEMV reads each element of A once and does two FLOPs with it, so it is bound by DRAM bandwidth: the
kernel's job is to stream A in long coalesced runs. Each program owns BLOCK_M rows and walks K in
BLOCK_K-wide steps: a BLOCK_M x BLOCK_K tile of A (rows contiguous along K, the way A lies in memory)
times a BLOCK_K slice of x, summed along K into BLOCK_M float32 partial sums, so the hand-written
ladder's s5/s6 idea (a warp streams one row in 16-byte loads) is what Triton's layout of that tile
gives. Masks on M and on K's last step make ragged sizes exact; nothing is written past y.

What it lacks is s6's split over K: with few rows (256 x 2^20) there are few programs, about two per
SM, too few loads in flight, and it reaches about half of cuBLAS there (benchmarks/records/2026-11-26-h200-triton/h200-triton.md).

nsprof's contract for a Triton stage's file (nsprof.ladder_runs.triton_stage): `launcher(problem,
config, precision)` returns a function that launches once and returns what Triton compiled.
"""

import triton
import triton.language as tl

from nsprof.ladder_runs.triton_stage import TritonPointer


@triton.jit
def sgemv_kernel(a_ptr, x_ptr, y_ptr, M, K, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(axis=0) * BLOCK_M + tl.arange(0, BLOCK_M)
    depth = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        cols = k * BLOCK_K + depth
        a = tl.load(a_ptr + rows[:, None] * K + cols[None, :], mask=(rows[:, None] < M) & (cols[None, :] < K), other=0.0)
        x = tl.load(x_ptr + cols, mask=cols < K, other=0.0)
        acc += a * x[None, :]
    tl.store(y_ptr + rows, tl.sum(acc, axis=1), mask=rows < M)


def launcher(problem, config, precision: str):
    """Launch sgemv_kernel once on the problem's current A, x and y in `config`; returns what Triton
    compiled."""
    m, k = problem.m, problem.k
    if m * k >= 2**31:
        raise ValueError(f"{m}x{k}: a matrix of 2^31 elements or more overflows the kernel's 32-bit offsets")
    grid = (triton.cdiv(m, config.meta["BLOCK_M"]),)
    options = {**config.meta, "num_warps": config.num_warps, "num_stages": config.num_stages}

    def launch():
        return sgemv_kernel[grid](TritonPointer(problem.A), TritonPointer(problem.x), TritonPointer(problem.y), m, k, **options)

    return launch
