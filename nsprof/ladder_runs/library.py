"""The library stages' products: CuPy's matmul (cuBLAS) in the stage's precision, and the
candidates a library stage is tuned over (nsprof.ladder_runs.tuning): CuPy's call and cuBLASLt's algorithms.

FP32 is CuPy's default. TF32 sets CuPy's compute type for float32 to COMPUTE_TYPE_TF32 around the
call, which makes CuPy pass CUBLAS_COMPUTE_32F_FAST_TF32 to cublasGemmEx (CuPy's documented
CUPY_TF32=1 switch does the same for a whole process), and puts the previous compute type back
afterwards, so that every other float32 product (FP32 cuBLAS, the references) stays FP32.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager

from nsprof.ladder.op_model import LibraryCall
from nsprof.ladder_runs.tuning import Candidate, TunedLauncher, pinned, tune


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


def library_launcher(stage, problem, call: LibraryCall, tile_shape: str | None = None) -> TunedLauncher:
    """The library stage tuned over its candidates (only `tile_shape`, one an earlier run kept,
    where it is one of them): CuPy's call and every algorithm cuBLASLt's heuristic proposes for the
    shape in the stage's precision (nsprof.launch.cublaslt); the fastest verified one is kept."""
    precision = stage.precision.name

    def cupy_launch() -> Callable[[], None]:
        return lambda: library_matmul(*call.arrays(), precision)

    candidates = [Candidate(call.call, cupy_launch), *_lt_candidates(call, precision)]
    return tune(stage, problem, pinned(candidates, tile_shape)).launcher()


def _lt_candidates(call: LibraryCall, precision: str) -> list[Candidate]:
    import cupy

    from nsprof.launch.cublaslt import LtMatmul

    try:
        plan = LtMatmul(*call.shape, call.dtype, precision)
        algorithms = plan.algorithms()
    except (OSError, RuntimeError) as err:  # no cuBLASLt here: the trial says so
        def missing(err: Exception = err) -> Callable[[], None]:
            raise err
        return [Candidate("cuBLASLt", missing)]

    def candidate(number: int, algorithm) -> Candidate:
        def build() -> Callable[[], None]:
            def run() -> None:
                a, b, out = call.arrays()
                plan.launch(algorithm, a.data.ptr, b.data.ptr, out.data.ptr, cupy.cuda.get_current_stream().ptr)
            return run
        return Candidate(f"cuBLASLt {number}", build)

    return [candidate(number, algorithm) for number, algorithm in enumerate(algorithms)]
