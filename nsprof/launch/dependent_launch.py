"""Programmatic dependent launch (Hopper on): a kernel launched with cuLaunchKernelEx and the attribute
CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION may have its blocks placed before the grid ahead of it in
the stream has finished (once that grid's blocks have all called griddepcontrol.launch_dependents or exited);
the kernel itself waits for that grid's writes (griddepcontrol.wait) before it touches memory the grid wrote.
What it hides is the gap between two kernels: the next grid's launch and its blocks' set-up. CuPy launches
through cuLaunchKernel, which takes no attributes, so this calls the driver through ctypes.

libcuda is loaded on first use (nsprof.launch.tensor_map's handle), so importing this module needs no GPU.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

import numpy as np

from nsprof.launch.tensor_map import check_result, driver

PROGRAMMATIC_STREAM_SERIALIZATION = 6  # CUlaunchAttributeID in cuda.h
# The kernels' scalar parameters, by NumPy type
SCALARS: dict[np.dtype, type[ctypes._SimpleCData]] = {
    np.dtype(np.int32): ctypes.c_int32, np.dtype(np.uint32): ctypes.c_uint32, np.dtype(np.int64): ctypes.c_int64,
    np.dtype(np.uint64): ctypes.c_uint64, np.dtype(np.float32): ctypes.c_float}


class LaunchAttribute(ctypes.Structure):
    """CUlaunchAttribute: the id, padding to 8 bytes, and a 64-byte union of values."""
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_ubyte * 64)]


class LaunchConfig(ctypes.Structure):
    """CUlaunchConfig."""
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("shared_mem_bytes", ctypes.c_uint),
                ("stream", ctypes.c_void_p), ("attrs", ctypes.POINTER(LaunchAttribute)), ("num_attrs", ctypes.c_uint)]


def serialization_attribute() -> LaunchAttribute:
    """The attribute that allows the launch to overlap the grid before it (programmaticStreamSerializationAllowed
    = 1, an int at the union's start)."""
    attribute = LaunchAttribute(id=PROGRAMMATIC_STREAM_SERIALIZATION)
    attribute.value[0] = 1
    return attribute


def kernel_argument(value: Any) -> ctypes._SimpleCData | ctypes.Array:
    """One argument as the bytes the kernel's parameter holds, as CuPy passes it: a NumPy scalar as itself, a
    host array (a tensor map by value: one element of 128 bytes) as its bytes, a device array as its address."""
    if isinstance(value, (np.ndarray, np.void)):
        return ctypes.create_string_buffer(value.tobytes(), value.nbytes)
    if isinstance(value, np.generic):
        return SCALARS[value.dtype](value.item())
    pointer = getattr(getattr(value, "data", None), "ptr", None)
    if pointer is None:
        raise TypeError(f"cannot pass a {type(value).__name__} to a kernel")
    return ctypes.c_void_p(pointer)


class DependentLaunch:
    """A loaded CuPy kernel (its CUfunction) called as CuPy calls it, launched as a programmatic dependent
    launch on the current stream."""

    def __init__(self, kernel):
        import cupy

        self.function = getattr(kernel, "kernel", kernel)  # a RawKernel's CUfunction (cupy.cuda.function.Function)
        self.attribute = serialization_attribute()  # the same for every launch: built once, off the launch path
        self.cupy, self.lib = cupy, driver()  # looked up once, not on each launch

    def __call__(self, grid: Sequence[int], block: Sequence[int], args: Sequence[Any], shared_mem: int = 0) -> None:
        config = LaunchConfig((ctypes.c_uint * 3)(*grid), (ctypes.c_uint * 3)(*block), shared_mem,
                              ctypes.c_void_p(self.cupy.cuda.get_current_stream().ptr), ctypes.pointer(self.attribute), 1)
        values = [kernel_argument(a) for a in args]
        params = (ctypes.c_void_p * len(values))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in values])
        result = self.lib.cuLaunchKernelEx(ctypes.byref(config), ctypes.c_void_p(self.function.ptr), params, None)
        check_result(self.lib, result, "cuLaunchKernelEx")
