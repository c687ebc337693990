"""cuBLASLt's matrix product through ctypes: the algorithms its heuristic proposes for one shape,
each a candidate the library stages try (nsprof.ladder_runs.tuning), with a workspace.

CuPy binds cuBLAS but not cuBLASLt (cupy/cupy#7360: no plans to), and its matmul calls
cublasGemmEx, which picks one algorithm by itself. cuBLASLt ranks several for the shape, precision
and workspace, and the fastest of them is what a tuned library gives its users (PyTorch's cuBLASLt
path takes the first; a benchmark harness times them all). The heuristic result is a 96-byte
struct: the algorithm (8 x uint64), its workspace size, a status, waves, 4 reserved ints.

A row-major product O = A.B (A m x k, B k x n) is the column-major O^T = B^T.A^T, so cuBLASLt's
"A" is our B (n x k, leading dimension n), its "B" our A (k x m, ld k) and its output n x m (ld n).
A matrix-vector product is the case n = 1, where cuBLASLt has kernels of its own.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from functools import cache

from nsprof.launch.shared_library import load_loaded

WORKSPACE_BYTES = 32 << 20  # cuBLAS's documentation recommends 32 MiB on Hopper, as PyTorch gives cuBLAS there
HEURISTIC_COUNT = 16  # algorithms asked of the heuristic; it returns those that apply (7 or 8 on an H200)
CUDA_R_32F, CUDA_R_16F = 0, 2
COMPUTE = {"fp32": 68, "tf32": 77, "fp16": 68}  # CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_FAST_TF32
DATA_TYPE = {"float32": CUDA_R_32F, "float16": CUDA_R_16F}
PREF_MAX_WORKSPACE_BYTES = 1  # CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES


class _HeuristicResult(ctypes.Structure):
    _fields_ = [("algo", ctypes.c_uint64 * 8), ("workspace_size", ctypes.c_size_t), ("state", ctypes.c_int),
                ("waves_count", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


@cache
def _library():
    """The libcublasLt that CuPy's cuBLAS loaded into this process (libcublas needs it), its calls typed."""
    from cupy_backends.cuda.libs import cublas  # noqa: F401  (loads libcublas and with it libcublasLt)

    lib = load_loaded("libcublasLt.so", "cuBLASLt", fallback="cublasLt")
    pointer, u64, i64 = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int64
    lib.cublasLtCreate.argtypes = [ctypes.POINTER(pointer)]
    lib.cublasLtMatmulDescCreate.argtypes = [ctypes.POINTER(pointer), ctypes.c_int, ctypes.c_int]
    lib.cublasLtMatrixLayoutCreate.argtypes = [ctypes.POINTER(pointer), ctypes.c_int, u64, u64, i64]
    lib.cublasLtMatmulPreferenceCreate.argtypes = [ctypes.POINTER(pointer)]
    lib.cublasLtMatmulPreferenceSetAttribute.argtypes = [pointer, ctypes.c_int, pointer, ctypes.c_size_t]
    lib.cublasLtMatmulAlgoGetHeuristic.argtypes = [pointer, pointer, pointer, pointer, pointer, pointer, pointer,
                                                   ctypes.c_int, ctypes.POINTER(_HeuristicResult),
                                                   ctypes.POINTER(ctypes.c_int)]
    lib.cublasLtMatmul.argtypes = [pointer, pointer, pointer, pointer, pointer, pointer, pointer, pointer, pointer,
                                   pointer, pointer, pointer, pointer, pointer, ctypes.c_size_t, pointer]
    return lib


def _check(status: int, call: str) -> None:
    if status != 0:
        raise RuntimeError(f"{call} failed with cuBLAS status {status}")


@cache
def _handle_and_workspace():
    import cupy as cp

    handle = ctypes.c_void_p()
    _check(_library().cublasLtCreate(ctypes.byref(handle)), "cublasLtCreate")
    return handle, cp.empty(WORKSPACE_BYTES, cp.uint8)


@dataclass
class LtMatmul:
    """The cuBLASLt plan of one row-major product shape (m x k times k x n, n = 1 for a matrix and a
    vector) in one dtype and precision ("fp32", "tf32", "fp16"): its descriptors and the
    algorithms the heuristic proposes (`algorithms`), each launched by `launch`."""

    m: int
    n: int
    k: int
    dtype: str
    precision: str

    def __post_init__(self) -> None:
        import numpy as np

        lib = _library()
        self.handle, self.workspace = _handle_and_workspace()
        self.desc = ctypes.c_void_p()
        _check(lib.cublasLtMatmulDescCreate(ctypes.byref(self.desc), COMPUTE[self.precision], CUDA_R_32F),
               "cublasLtMatmulDescCreate")
        kind = DATA_TYPE[self.dtype]
        self.layouts = []
        for rows, cols, lead in ((self.n, self.k, self.n), (self.k, self.m, self.k), (self.n, self.m, self.n)):
            layout = ctypes.c_void_p()
            _check(lib.cublasLtMatrixLayoutCreate(ctypes.byref(layout), kind, rows, cols, lead), "cublasLtMatrixLayoutCreate")
            self.layouts.append(layout)
        self.one, self.zero = np.ones(1, np.float32), np.zeros(1, np.float32)  # host scalars, read when issued

    def algorithms(self, count: int = HEURISTIC_COUNT) -> list[_HeuristicResult]:
        """The heuristic's algorithms for this shape that fit the workspace, best-ranked first."""
        lib = _library()
        preference = ctypes.c_void_p()
        _check(lib.cublasLtMatmulPreferenceCreate(ctypes.byref(preference)), "cublasLtMatmulPreferenceCreate")
        room = ctypes.c_uint64(WORKSPACE_BYTES)
        _check(lib.cublasLtMatmulPreferenceSetAttribute(preference, PREF_MAX_WORKSPACE_BYTES, ctypes.byref(room), 8),
               "cublasLtMatmulPreferenceSetAttribute")
        results, returned = (_HeuristicResult * count)(), ctypes.c_int()
        b_layout, a_layout, c_layout = self.layouts
        _check(lib.cublasLtMatmulAlgoGetHeuristic(self.handle, self.desc, b_layout, a_layout, c_layout, c_layout,
                                                  preference, count, results, ctypes.byref(returned)),
               "cublasLtMatmulAlgoGetHeuristic")
        return [result for result in results[:returned.value] if result.state == 0]

    def launch(self, algorithm: _HeuristicResult, a_ptr: int, b_ptr: int, out_ptr: int, stream_ptr: int) -> None:
        """out = a.b (row-major) with `algorithm`, on the stream."""
        b_layout, a_layout, c_layout = self.layouts
        _check(_library().cublasLtMatmul(self.handle, self.desc, self.one.ctypes.data, b_ptr, b_layout, a_ptr, a_layout,
                                         self.zero.ctypes.data, out_ptr, c_layout, out_ptr, c_layout,
                                         ctypes.byref(algorithm.algo), self.workspace.data.ptr, WORKSPACE_BYTES,
                                         stream_ptr), "cublasLtMatmul")
