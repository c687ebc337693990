"""cuBLAS's gemmEx called through ctypes on a handle of nsprof's own, so that a CUDA graph can hold it.

CuPy's cuBLAS bindings refuse every call while a stream is capturing ("calling cuBLAS API during
stream capture is currently unsupported", CuPy 14.2), although cuBLAS itself supports capture.
This calls the library CuPy already loaded, on its own handle. cublasSetStream resets the handle's
workspace, so the workspace is set again after it on every call: cuBLAS then allocates nothing
inside a capture.
"""

from __future__ import annotations

import ctypes
from functools import cache

from nsprof.launch.shared_library import load_loaded

CUDA_TYPES = {"float32": 0, "float16": 2}  # cudaDataType: CUDA_R_32F, CUDA_R_16F
CUBLAS_OP_N, CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT = 0, 68, 77, -1
WORKSPACE_BYTES = 32 << 20  # what cuBLAS's documentation recommends for Hopper


@cache
def _library():
    """The libcublas that CuPy's bindings loaded into this process, so both share one copy; its calls typed."""
    from cupy_backends.cuda.libs import cublas  # noqa: F401  (loads libcublas)

    lib = load_loaded("libcublas.so", "cuBLAS", but="libcublasLt", fallback="cublas")
    handle, pointer, integer = ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int
    lib.cublasCreate_v2.argtypes = [ctypes.POINTER(handle)]
    lib.cublasSetStream_v2.argtypes = [handle, pointer]
    lib.cublasSetWorkspace_v2.argtypes = [handle, pointer, ctypes.c_size_t]
    lib.cublasGemmEx.argtypes = [handle, integer, integer, integer, integer, integer, pointer, pointer, integer, integer,
                                 pointer, integer, integer, pointer, pointer, integer, integer, integer, integer]
    return lib


@cache
def _handle_and_workspace():
    import cupy as cp

    lib = _library()
    handle = ctypes.c_void_p()
    _check(lib.cublasCreate_v2(ctypes.byref(handle)), "cublasCreate")
    return handle.value, cp.empty(WORKSPACE_BYTES, cp.uint8)


def _check(status: int, call: str) -> None:
    if status != 0:
        raise RuntimeError(f"{call} failed with cuBLAS status {status}")


class RowMajorGemm:
    """C = A·B for row-major A (m x k), B (k x n), C (m x n) of one dtype, accumulated in float32,
    as C^T = B^T·A^T in cuBLAS's column-major terms. `run(stream_ptr)` issues it on that stream.
    Rows of B and C are n elements apart unless `row_pitch` says otherwise (a column block of both);
    precision "tf32" lets cuBLAS round float32 inputs to TF32 (CUBLAS_COMPUTE_32F_FAST_TF32)."""

    def __init__(self, m: int, n: int, k: int, a_ptr: int, b_ptr: int, c_ptr: int, dtype: str, row_pitch: int | None = None,
                 precision: str = "fp32"):
        import numpy as np

        self.lib = _library()
        self.handle, self.workspace = _handle_and_workspace()
        self.one, self.zero = np.ones(1, np.float32), np.zeros(1, np.float32)  # host scalars, read when issued
        kind, pitch = CUDA_TYPES[dtype], row_pitch or n
        self.arguments = (self.handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, self.one.ctypes.data, b_ptr, kind, pitch,
                          a_ptr, kind, k, self.zero.ctypes.data, c_ptr, kind, pitch,
                          CUBLAS_COMPUTE_32F_FAST_TF32 if precision == "tf32" else CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)

    def run(self, stream_ptr: int) -> None:
        lib = self.lib
        _check(lib.cublasSetStream_v2(self.handle, stream_ptr), "cublasSetStream")
        _check(lib.cublasSetWorkspace_v2(self.handle, self.workspace.data.ptr, self.workspace.nbytes), "cublasSetWorkspace")
        _check(lib.cublasGemmEx(*self.arguments), "cublasGemmEx")
