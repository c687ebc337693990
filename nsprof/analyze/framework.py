"""Which framework a program's capture shows (JAX, PyTorch, CuPy), so that its fixes are written in
that framework's own words: a CuPy program is told of cupy.fuse and CUDA graph capture, not of
torch.compile. Read off what the capture holds, in this order: the profiler that took it
(jax.profiler, torch.profiler), XLA's module ranges (a JAX program under nsys), then its kernels'
names (CuPy's elementwise kernels are `cupy_*`; PyTorch's eager kernels live in `at::native`,
torch.compile's are `triton_*`). None where nothing says: the fixes then name PyTorch's APIs as
examples."""

from __future__ import annotations

import pandas as pd

from nsprof.parse.model import GpuTimeline

JAX, TORCH, CUPY = "JAX", "PyTorch", "CuPy"
TOOLS = {"jax.profiler": JAX, "torch.profiler": TORCH}
XLA_MODULE_RANGE = "TSL:XlaModule:"  # the range XLA opens around each execution of a module
KERNEL_MARKS = ((CUPY, ("cupy_",), ()), (TORCH, ("triton_",), ("at::native",)))  # name starts, name contains


def framework(export: GpuTimeline) -> str | None:
    """The framework the capture shows (module docstring), or None."""
    if export.tool in TOOLS:
        return TOOLS[export.tool]
    ranges = export.nvtx["range"] if "range" in export.nvtx else pd.Series(dtype=object)
    if ranges.astype(str).str.startswith(XLA_MODULE_RANGE).any():
        return JAX
    names = pd.Series(pd.unique(export.kernels["kernel"].astype(str))) if "kernel" in export.kernels else pd.Series([])
    for name, starts, contains in KERNEL_MARKS:
        if names.str.startswith(starts).any() or any(names.str.contains(part, regex=False).any() for part in contains):
            return name
    return None
