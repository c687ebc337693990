"""A Triton matrix product benchmarked the way Triton's tutorial does it, for capturing real Nsight
exports of an autotuning harness: `@triton.autotune` tries each configuration (its trials are
timed by do_bench), then `triton.testing.do_bench` times the chosen one beside torch.matmul; each
timed launch follows do_bench's L2 flush (a fill of a 256 MB buffer). fp16 inputs, fp32
accumulation, one NVTX range per size.

    python3 tests/programs/triton_matmul_bench.py --sizes 1024,2048,4096
"""

from __future__ import annotations

import argparse
import functools

import torch
import triton
import triton.language as tl
from program_ranges import range_maker

nvtx_range = range_maker("bench")

CONFIGS = [
    triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w)
    for m, n, k, s, w in ((128, 256, 64, 3, 8), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4),
                          (64, 128, 32, 4, 4), (128, 32, 32, 4, 4), (64, 32, 32, 5, 2), (128, 128, 64, 4, 8))
]


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_pid_n
    first_m = (pid // group) * GROUP_M
    group_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % group_m
    pid_n = (pid % group) // group_m
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    (M, K), (_, N) = a.shape, b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)  # noqa: E731
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    return c


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1024,2048,4096")
    args = parser.parse_args()
    torch.manual_seed(0)
    for size in (int(s) for s in args.sizes.split(",")):
        a = torch.randn((size, size), device="cuda", dtype=torch.float16)
        b = torch.randn((size, size), device="cuda", dtype=torch.float16)
        with nvtx_range(f"matmul {size}"):
            error = (matmul(a, b).float() - (a.float() @ b.float())).norm() / (a.float() @ b.float()).norm()
            assert error < 1e-2, f"relative error {error:.2e} at {size}"
            triton_ms = triton.testing.do_bench(functools.partial(matmul, a, b), return_mode="median")
            torch_ms = triton.testing.do_bench(functools.partial(torch.matmul, a, b), return_mode="median")
        flops = 2 * size**3
        print(f"{size}^3: triton {triton_ms:.3f} ms ({flops / triton_ms / 1e9:.0f} TFLOP/s, {matmul_kernel.best_config}), "
              f"torch {torch_ms:.3f} ms ({flops / torch_ms / 1e9:.0f} TFLOP/s), rel. error {error:.1e}")


if __name__ == "__main__":
    main()
