"""Experiment (issue 29): does the Triton HGEMM stage gain from TMA tensor descriptors, and from a
persistent grid, on Hopper? Times kernels/common/triton_matmul.py's matmul_kernel (h8's) against
a TMA-descriptor kernel and a persistent TMA kernel, each over a few configurations, and cuBLAS
(h7), at 4096^3 and 8192^3 fp16, CUDA events after warm-up, medians of 50; every kernel verified.

    python3 benchmarks/gpu/experiments/triton_hgemm_tma.py
"""

import json
import sys

import cupy as cp
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

sys.path.insert(0, ".")
from nsprof.ladder_runs.triton_stage import TritonPointer
from nsprof.launch.measure import time_launches


@triton.jit
def mm_tma(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
           GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_m = min(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % per_group) % group_m
    tile_n = (pid % per_group) // group_m
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([tile_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, tile_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    c_desc.store([tile_m * BLOCK_M, tile_n * BLOCK_N], acc.to(tl.float16))


@triton.jit
def mm_tma_persistent(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
    start = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    steps = tl.cdiv(K, BLOCK_K)
    for tile in tl.range(start, tiles_m * tiles_n, NUM_SMS, flatten=True):
        first_m = (tile // per_group) * GROUP_M
        group_m = min(tiles_m - first_m, GROUP_M)
        tile_m = first_m + (tile % per_group) % group_m
        tile_n = (tile % per_group) // group_m
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, steps):
            a = a_desc.load([tile_m * BLOCK_M, k * BLOCK_K])
            b = b_desc.load([k * BLOCK_K, tile_n * BLOCK_N])
            acc = tl.dot(a, b, acc)
        c_desc.store([tile_m * BLOCK_M, tile_n * BLOCK_N], acc.to(tl.float16))


CONFIGS = [(128, 256, 64, 8, 3), (128, 128, 64, 8, 4), (128, 256, 64, 8, 4), (256, 128, 64, 8, 3),
           (128, 128, 64, 4, 4), (128, 256, 32, 8, 4)]


def one_size(n: int, sms: int, rows: list[dict]) -> None:
    """Every kernel and configuration at n^3, verified, then timed, into `rows`."""
    import triton_matmul

    from nsprof.ladder.ops.matmul import MatmulProblem, triton_config

    problem = MatmulProblem(cp, (n, n, n), "float16")
    a, b, c = problem.A, problem.B, problem.C
    ref = problem.reference()

    def record(name, config, launch):
        c.fill(cp.nan)
        try:
            launch()
            cp.cuda.Device().synchronize()
        except Exception as exc:
            rows.append({"n": n, "kernel": name, "config": config, "error": str(exc).splitlines()[0][:200]})
            print(rows[-1], flush=True)
            return
        err = float(cp.linalg.norm(c.astype(cp.float64) - ref) / cp.linalg.norm(ref))
        ms = time_launches(launch, repeat=50, warmup=10).summary()
        rows.append({"n": n, "kernel": name, "config": config, "rel_error": err, "median_ms": ms["median_ms"],
                     "spread_pct": ms["spread_pct"], "tflops": 2 * n**3 / ms["median_ms"] / 1e9})
        print(rows[-1], flush=True)

    record("cublas", None, lambda: cp.matmul(a, b, out=c))
    for bm, bn, bk, w, s in CONFIGS:
        label = f"{bm}x{bn}x{bk} w{w} s{s}"
        record("h8 (cp.async)", label, triton_matmul.launcher(problem, triton_config(bm, bn, bk, w, s), "fp16"))
        ad = TensorDescriptor(TritonPointer(a), [n, n], [n, 1], [bm, bk])
        bd = TensorDescriptor(TritonPointer(b), [n, n], [n, 1], [bk, bn])
        cd = TensorDescriptor(TritonPointer(c), [n, n], [n, 1], [bm, bn])
        options = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "num_warps": w, "num_stages": s}
        grid = (triton.cdiv(n, bm) * triton.cdiv(n, bn),)
        record("tma", label, lambda ad=ad, bd=bd, cd=cd, grid=grid, options=options: mm_tma[grid](
            ad, bd, cd, n, n, n, **options))
        record("tma persistent", label, lambda ad=ad, bd=bd, cd=cd, options=options: mm_tma_persistent[(sms,)](
            ad, bd, cd, n, n, n, NUM_SMS=sms, **options))
    record("cublas (again)", None, lambda: cp.matmul(a, b, out=c))


def main():
    sys.path.insert(0, "kernels/common")
    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    rows: list[dict] = []
    for n in (4096, 8192):
        one_size(n, sms, rows)
    with open(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tma.json", "w") as out:
        json.dump(rows, out, indent=1)


if __name__ == "__main__":
    main()
