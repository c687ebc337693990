"""The host CPU's ceilings, what the CPU rung (v0, v0b, v0blas; s0, ...) is measured against, as
`nsprof ceilings --cpu` measures them with no GPU:

- FP32: the CPU's BLAS (NumPy's matmul) on float32 at FP32_N^3, every core: the peak a program
  reaches, not the datasheet's (which few CPUs state).
- Memory bandwidth: a streaming copy over every core (kernels/common/cpu_stream.c, OpenMP) of
  COPY_BYTES, far beyond the last-level cache, counting bytes read and written.
- Its cores and vector extensions (nsprof.ladder_runs.cpu_stage.host_info).

Each is the median of timed runs after a warm-up, on the wall clock (nsprof.ladder_runs.cpu_stage.time_wall).
"""

from __future__ import annotations

import ctypes
import datetime as dt
from collections.abc import Callable
from typing import cast

import numpy as np

from nsprof import __version__
from nsprof.ceilings.types import CpuCeilings, CpuDevice, MeasuredCeiling
from nsprof.ladder.cpu_roles import PARALLEL_FLAGS
from nsprof.ladder.op_model import find_kernel
from nsprof.ladder_runs.cpu_stage import compiled, host_info, time_wall
from nsprof.launch.gpu_ceilings import ceiling_entry

FP32_N = 2048
COPY_BYTES = 1 << 30
REPEAT = 5


def measure_cpu_ceilings(progress: Callable[[str], None] = lambda message: None) -> CpuCeilings:
    """The host's ceilings document: {"kind": "cpu", "device": {"device": "CPU <model>", and
    host_info()}, "created", "nsprof_version", "ceilings": {"fp32_tflops", "dram_tbyte_per_s"}}, each
    entry with its value, method and timing; saved as the GPUs' are (nsprof.ceilings.files), under
    the CPU's name."""
    progress("FP32: the CPU's BLAS")
    fp32 = _blas_fp32(FP32_N)
    progress("memory bandwidth: a streaming copy")
    bandwidth = _stream_copy(COPY_BYTES)
    host = host_info()
    device = cast(CpuDevice, {"device": f"CPU {host['cpu']}", **host})
    return {"kind": "cpu", "device": device, "nsprof_version": __version__,
            "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "ceilings": {"fp32_tflops": fp32, "dram_tbyte_per_s": bandwidth}}


def _blas_fp32(n: int) -> MeasuredCeiling:
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    out = np.empty((n, n), np.float32)
    timing = time_wall(lambda: np.matmul(a, b, out=out), repeat=REPEAT, warmup=1)
    flops = 2 * n**3
    return ceiling_entry(flops / timing.median_ms / 1e9, timing, flops_per_launch=flops,
                         method=f"NumPy's matmul (its BLAS) on float32 at {n}^3, every core")


def _stream_copy(size: int) -> MeasuredCeiling:
    copy = compiled(str(find_kernel("kernels/common/cpu_stream.c")), PARALLEL_FLAGS).nsprof_cpu_copy
    copy.argtypes, copy.restype = [ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p], None
    source = np.ones(size // 4, np.float32)
    target = np.empty_like(source)
    timing = time_wall(lambda: copy(source.size, source.ctypes.data, target.ctypes.data), repeat=REPEAT, warmup=1)
    moved = 2 * source.nbytes
    return ceiling_entry(moved / timing.median_ms / 1e9, timing, bytes_per_launch=moved,
                         method=f"streaming copy of {size >> 20} MiB over every core (OpenMP), bytes read + written")
