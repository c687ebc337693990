"""fp16 arithmetic on the CUDA cores (not the tensor cores), with a known operation count, to read
how ncu counts half-precision thread instructions: each element is added, multiplied, and
multiplied-and-added once (PyTorch's elementwise kernels use packed half2 instructions where they can).

    ncu --metrics smsp__sass_thread_inst_executed_op_hadd_pred_on.sum,... python3 tests/programs/fp16_flops.py
"""

import torch

N = 1 << 24
a, b, c = (torch.rand(N, device="cuda", dtype=torch.float16) for _ in range(3))
torch.add(a, b)  # N adds
torch.mul(a, b)  # N multiplies
torch.addcmul(c, a, b)  # N fused multiply-adds (or a multiply and an add)
torch.cuda.synchronize()
print(f"{N} elements")

# The same multiply-adds written by hand, one half per thread (HFMA) and two per thread (HFMA2):
# ncu's hfma count for the packed kernel tells whether a half2 instruction counts once or twice.
import cupy as cp  # noqa: E402

source = r"""
#include <cuda_fp16.h>
extern "C" __global__ void fma_half(const __half* x, const __half* y, __half* z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = __hfma(x[i], y[i], z[i]);
}
extern "C" __global__ void fma_half2(const __half2* x, const __half2* y, __half2* z, int n2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) z[i] = __hfma2(x[i], y[i], z[i]);
}
"""
module = cp.RawModule(code=source, options=("--std=c++17",))
x, y, z = (cp.random.rand(N, dtype=cp.float32).astype(cp.float16) for _ in range(3))
module.get_function("fma_half")(((N + 255) // 256,), (256,), (x, y, z, cp.int32(N)))
module.get_function("fma_half2")(((N // 2 + 255) // 256,), (256,), (x, y, z, cp.int32(N // 2)))
cp.cuda.Device().synchronize()
print("hand-written HFMA and HFMA2 kernels ran")
