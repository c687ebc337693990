"""Measure the GPU's ceilings (nsprof.ceilings.peaks): DRAM and L2 bandwidth, the FP32 and
tensor-core peaks. CuPy is loaded when a measurement runs (nsprof.launch.gpu.require_cupy).

Each is timed with CUDA events after warm-up (nsprof.launch.measure.time_launches); the median
launch gives the rate. The whole run takes a few seconds:

- DRAM: a device-to-device copy of a buffer far larger than L2, counting bytes read + written.
- L2: many passes of a read-only reduction over a buffer that fits in L2, loading with
  ld.global.cg (cached in L2 only), so that passes after the first are not served from L1.
- FP32: an FMA-bound kernel: every thread runs independent FMA chains (so each scheduler always
  has an FMA to issue), in enough blocks to fill every SM several times.
- Tensor cores: cuBLAS HGEMM (cupy.matmul on float16) at 8192^3.
- The bus: asynchronous copies of HOST_COPY_BYTES between pinned host memory and the GPU, each
  direction alone (what `nsprof pipeline` puts its floor against).

The result is a document for nsprof.ceilings.peaks.with_measurements: each ceiling's value, the
date, the method, and the timing statistics; plus the device it ran on (device_info).
nsprof.ceilings.files.save_ceilings writes it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import cast

import numpy as np

from nsprof import __version__
from nsprof.ceilings.types import GpuCeilings, GpuDevice, MeasuredCeiling
from nsprof.launch.gpu import device_info, require_cupy
from nsprof.launch.measure import time_launches

FMA_CHAINS = 8
FMA_UNROLL = 16  # iterations per loop test (128 FMAs): loop bookkeeping takes issue slots from the FMAs
FMA_ITERATIONS = 4096
BLOCK = 256
THREADS_PER_SM = 2048  # resident threads per SM on Ampere and Hopper data-center GPUs
COPY_BYTES = 1 << 30
L2_PASSES = 100
HGEMM_N = 8192
HOST_COPY_BYTES = 256 << 20
WARMUP = 3
REPEAT = 20

FMA_SOURCE = rf"""
extern "C" __global__ void fma_peak(float* out, float a, float b, int iterations) {{
    float x[{FMA_CHAINS}];
    #pragma unroll
    for (int c = 0; c < {FMA_CHAINS}; ++c) x[c] = threadIdx.x + c;
    #pragma unroll {FMA_UNROLL}
    for (int i = 0; i < iterations; ++i) {{
        #pragma unroll
        for (int c = 0; c < {FMA_CHAINS}; ++c) x[c] = fmaf(x[c], a, b);  // chains never wait on each other
    }}
    float sum = 0.0f;
    #pragma unroll
    for (int c = 0; c < {FMA_CHAINS}; ++c) sum += x[c];
    if (sum == 1.0e30f) out[blockIdx.x] = sum;  // never true, but the compiler cannot know: keeps every FMA
}}
"""

L2_SOURCE = r"""
extern "C" __global__ void l2_read(const float4* data, long long count, int passes, float* out) {
    float4 acc = {0.0f, 0.0f, 0.0f, 0.0f};
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (int pass = 0; pass < passes; ++pass) {
        #pragma unroll 4
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
            float4 v;
            // ld.global.cg: cached in L2, not L1, so every pass reads L2; volatile: every pass really loads
            asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
                         : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(data + i));
            acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
        }
    }
    if (acc.x + acc.y + acc.z + acc.w == 1.0e30f) out[0] = acc.x;  // never true for a zeroed buffer
}
"""


def measure_ceilings(progress: Callable[[str], None] = lambda message: None) -> GpuCeilings:
    """Measure every ceiling on the current GPU; the document nsprof.ceilings.files.save_ceilings writes."""
    cp = require_cupy()
    device = device_info()
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    steps = (
        ("DRAM bandwidth (device-to-device copy)", "dram_tbyte_per_s", lambda: measure_dram(cp)),
        ("L2 bandwidth (reads of an L2-resident buffer)", "l2_tbyte_per_s", lambda: measure_l2(cp, device)),
        ("FP32 peak (FMA chains)", "fp32_tflop_per_s", lambda: measure_fp32(cp, device)),
        ("tensor-core peak (cuBLAS HGEMM)", "fp16_tensor_tflop_per_s", lambda: measure_hgemm(cp)),
        ("host-to-device bandwidth (pinned)", "h2d_tbyte_per_s", lambda: measure_host_copy(cp, to_device=True)),
        ("device-to-host bandwidth (pinned)", "d2h_tbyte_per_s", lambda: measure_host_copy(cp, to_device=False)),
    )
    ceilings: dict[str, MeasuredCeiling] = {}
    for message, name, measure in steps:
        progress(f"measuring {message}")
        ceilings[name] = {**measure(), "date": today}
    return {"nsprof_version": __version__, "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "device": cast(GpuDevice, device), "ceilings": ceilings}


def measure_dram(cp) -> MeasuredCeiling:
    free_bytes, _ = cp.cuda.runtime.memGetInfo()
    size = min(COPY_BYTES, free_bytes // 4)  # two buffers, with room to spare
    source = cp.ones(size, dtype=cp.uint8)
    target = cp.empty_like(source)
    timing = time_launches(lambda: target.data.copy_from_device_async(source.data, size), REPEAT, WARMUP)
    moved = 2 * size  # read once, written once
    return ceiling_entry(moved / timing.median_ms / 1e9, timing, bytes_per_launch=moved,
                  method=f"device-to-device copy of {size / 2**30:g} GiB (bytes read + written)")


def measure_l2(cp, device: dict) -> MeasuredCeiling:
    l2_bytes = device["l2_mib"] * 2**20
    size = int(min(24 * 2**20, max(2**20, l2_bytes / 2.5))) // 16 * 16  # fits in L2 with room to spare
    data = cp.zeros(size // 4, dtype=cp.float32)
    out = cp.zeros(1, dtype=cp.float32)
    kernel = cp.RawKernel(L2_SOURCE, "l2_read")
    grid = device["sm_count"] * (THREADS_PER_SM // BLOCK)  # one full wave: every thread resident at once
    launch = lambda: kernel((grid,), (BLOCK,), (data, np.int64(size // 16), np.int32(L2_PASSES), out))  # noqa: E731
    timing = time_launches(launch, REPEAT, WARMUP)
    moved = L2_PASSES * size
    return ceiling_entry(moved / timing.median_ms / 1e9, timing, bytes_per_launch=moved,
                  method=f"{L2_PASSES} reads of a {size / 2**20:g} MiB buffer with ld.global.cg (L2, not L1)")


def measure_fp32(cp, device: dict) -> MeasuredCeiling:
    out = cp.zeros(1, dtype=cp.float32)
    kernel = cp.RawKernel(FMA_SOURCE, "fma_peak")
    blocks = device["sm_count"] * (THREADS_PER_SM // BLOCK) * 4  # four full waves
    args = (out, np.float32(0.999), np.float32(0.001), np.int32(FMA_ITERATIONS))  # x = 0.999 x + 0.001 stays finite
    launch = lambda: kernel((blocks,), (BLOCK,), args)  # noqa: E731
    timing = time_launches(launch, REPEAT, WARMUP)
    flops = 2 * FMA_CHAINS * FMA_ITERATIONS * blocks * BLOCK
    return ceiling_entry(flops / timing.median_ms / 1e9, timing, flops_per_launch=flops,
                  method=f"FMA microbenchmark ({FMA_CHAINS} independent chains per thread, {blocks:,} blocks of {BLOCK})")


def measure_hgemm(cp) -> MeasuredCeiling:
    rng = cp.random.default_rng(0)
    a = rng.standard_normal((HGEMM_N, HGEMM_N), dtype=cp.float32).astype(cp.float16)
    b = rng.standard_normal((HGEMM_N, HGEMM_N), dtype=cp.float32).astype(cp.float16)
    c = cp.empty((HGEMM_N, HGEMM_N), dtype=cp.float16)
    timing = time_launches(lambda: cp.matmul(a, b, out=c), REPEAT // 2, WARMUP)
    flops = 2 * HGEMM_N**3
    return ceiling_entry(flops / timing.median_ms / 1e9, timing, flops_per_launch=flops,
                  method=f"cuBLAS HGEMM (cupy.matmul, float16) at {HGEMM_N}^3")


def measure_host_copy(cp, to_device: bool) -> MeasuredCeiling:
    import cupyx

    host = cupyx.empty_pinned(HOST_COPY_BYTES, dtype=np.uint8)
    host[:] = 1
    device = cp.empty(HOST_COPY_BYTES, dtype=cp.uint8)
    if to_device:
        copy = lambda: device.data.copy_from_host_async(host.ctypes.data, HOST_COPY_BYTES)  # noqa: E731
    else:
        copy = lambda: device.data.copy_to_host_async(host.ctypes.data, HOST_COPY_BYTES)  # noqa: E731
    timing = time_launches(copy, REPEAT, WARMUP)
    direction = "pinned host to device" if to_device else "device to pinned host"
    return ceiling_entry(HOST_COPY_BYTES / timing.median_ms / 1e9, timing, bytes_per_launch=HOST_COPY_BYTES,
                  method=f"asynchronous copy of {HOST_COPY_BYTES >> 20} MiB, {direction}")


def ceiling_entry(tera_per_s: float, timing, method: str, **amounts) -> MeasuredCeiling:
    """One ceiling (TB/s or TFLOP/s: an amount per launch over the median launch time in ms, / 1e9)."""
    summary = timing.summary()
    return cast(MeasuredCeiling, {"value": round(tera_per_s, 4), "method": f"{method}, median of {summary['runs']}",
                          **amounts, **{key: summary[key] for key in ("median_ms", "spread_pct", "runs")}})
