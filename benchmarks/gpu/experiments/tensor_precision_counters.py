"""Experiment (issue 29): which Nsight Compute counters count the tensor-core math of BF16, FP8 and
INT8 matrix products on Hopper, and do they read 2MNK? Runs one 1024^3 product of each through
PyTorch (bf16 torch.mm, fp8 e4m3 torch._scaled_mm, int8 torch._int_mm), each in an NVTX range, for
ncu to profile with the candidate counters:

    ncu --nvtx --nvtx-include 'probe/' --metrics <list> --csv python3 tensor_precision_counters.py
"""

import torch

N = 1024


def main() -> None:
    a = torch.randn(N, N, device="cuda")
    b = torch.randn(N, N, device="cuda")
    one = torch.tensor(1.0, device="cuda")
    products = {
        "bf16": lambda: torch.mm(a.bfloat16(), b.bfloat16()),
        "fp8": lambda: torch._scaled_mm(a.to(torch.float8_e4m3fn), b.t().contiguous().to(torch.float8_e4m3fn).t(),
                                        scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
        "int8": lambda: torch._int_mm(a.to(torch.int8), b.to(torch.int8)),
    }
    for name, product in products.items():
        product()  # warm-up outside the range (cuBLASLt heuristics, allocations)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push(f"probe-{name}")
        product()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
    print("done")


if __name__ == "__main__":
    main()
