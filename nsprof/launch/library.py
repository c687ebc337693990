"""The library stages' matrix product: CuPy's matmul (cuBLAS), in the stage's precision.

FP32 is CuPy's default. TF32 sets CuPy's compute type for float32 to COMPUTE_TYPE_TF32 around the
call, which makes CuPy pass CUBLAS_COMPUTE_32F_FAST_TF32 to cublasGemmEx (CuPy's documented
CUPY_TF32=1 switch does the same for a whole process), and puts the previous compute type back
afterwards, so that every other float32 product (FP32 cuBLAS, the references) stays FP32.
"""

from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def compute_type(precision: str):
    """CuPy's float32 matrix products in `precision` ("fp32": unchanged, "tf32") inside the block."""
    if precision != "tf32":
        yield
        return
    import numpy as np
    from cupy._core import _routines_linalg as linalg

    before = linalg.get_compute_type(np.float32)
    linalg.set_compute_type(np.float32, linalg.COMPUTE_TYPE_TF32)
    try:
        yield
    finally:
        linalg.set_compute_type(np.float32, before)


def library_matmul(a, b, out, precision: str) -> None:
    """out = a @ b by cuBLAS through CuPy, in `precision`."""
    import cupy

    with compute_type(precision):
        cupy.matmul(a, b, out=out)
