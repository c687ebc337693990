"""A CuPy program that spreads batches over non-blocking streams, for capturing real Nsight exports
of CuPy's own kernels: per stream, an async copy in from pinned memory, an ElementwiseKernel, a
RawKernel (each row's sum of squares), a reduction and cuBLAS's matrix product, an async copy back to pinned memory; each part
an NVTX range (CuPy's own NVTX calls), every stream joined at the end of an iteration. The last
iteration's results are checked on the host (exit 1 if wrong).

    python3 tests/programs/cupy_streams.py --iterations 20
"""

from __future__ import annotations

import argparse
import sys

import cupy as cp
import cupyx
import numpy as np
from cupy.cuda import nvtx

SAXPY = cp.ElementwiseKernel("float32 a, float32 x, float32 y", "float32 out", "out = a * x + y", "saxpy")
SQUARE_ROWS = cp.RawKernel(r"""
extern "C" __global__ void square_rows(const float* x, float* out, int rows, int cols) {
    int row = blockIdx.x, col = threadIdx.x;
    float sum = 0.0f;
    for (int c = col; c < cols; c += blockDim.x) sum += x[row * cols + c] * x[row * cols + c];
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffff, sum, offset);
    __shared__ float warps[32];
    if (col % 32 == 0) warps[col / 32] = sum;
    __syncthreads();
    if (col == 0) {
        float total = 0.0f;
        for (int w = 0; w < blockDim.x / 32; ++w) total += warps[w];
        out[row] = total;
    }
}
""", "square_rows")


class Range:
    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> None:
        nvtx.RangePush(self.name)

    def __exit__(self, *exc) -> None:
        nvtx.RangePop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--streams", type=int, default=4)
    parser.add_argument("--rows", type=int, default=2048)
    parser.add_argument("--cols", type=int, default=1024)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    shape = (args.rows, args.cols)
    streams = [cp.cuda.Stream(non_blocking=True) for _ in range(args.streams)]
    host_in = [cupyx.empty_pinned(shape, np.float32) for _ in streams]
    host_out = [cupyx.empty_pinned((args.rows,), np.float32) for _ in streams]
    for buffer in host_in:
        buffer[...] = rng.standard_normal(shape, dtype=np.float32)
    # scaled on the host: a float64 NumPy scalar would make CuPy's result float64 (NEP 50)
    weights = cp.asarray((rng.standard_normal((args.cols, args.cols)) / np.sqrt(args.cols)).astype(np.float32))
    device = [cp.empty(shape, cp.float32) for _ in streams]
    for _ in range(args.iterations):
        with Range("iteration"):
            for index, stream in enumerate(streams):
                with stream:
                    with Range("h2d"):
                        device[index].set(host_in[index], stream=stream)
                    with Range("compute"):
                        y = SAXPY(np.float32(2.0), device[index], device[index])  # 3x
                        y = y @ weights
                        norms = cp.empty((args.rows,), cp.float32)
                        SQUARE_ROWS((args.rows,), (256,), (y, norms, np.int32(args.rows), np.int32(args.cols)))
                        norms += y.sum(axis=1)  # a reduction kernel of CuPy's own
                    with Range("d2h"):
                        norms.get(stream=stream, out=host_out[index])
            for stream in streams:
                stream.synchronize()
    y = 3 * host_in[0].astype(np.float64) @ cp.asnumpy(weights).astype(np.float64)
    expected = np.square(y).sum(axis=1) + y.sum(axis=1)
    ok = np.allclose(host_out[0], expected, rtol=1e-3, atol=1e-2 * np.abs(expected).mean())
    print(f"cupy_streams: {args.iterations} iterations on {args.streams} streams, "
          f"{'results correct' if ok else 'RESULTS WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
