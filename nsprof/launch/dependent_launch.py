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
SCALARS_BY_TYPE = {dtype.type for dtype in SCALARS}


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
    launch on the current stream.

    The launch configuration and the packed parameters are built once per distinct grid and stream and per
    distinct argument values, and reused. Building them through ctypes on every launch took 31 us of Python a
    launch, against 4.5 us now (medians, the driver mocked, a 2-core CPU: benchmarks/launch_cost.py); on an H200's
    host an h6 launch and its two events took 47.6-49.7 us, more than a 2048^3 HGEMM's 28 us on the GPU, so a
    loop of launches left the GPU idle (benchmarks/records/2026-12-01-h200-hgemm-decode-rings, section 5); with
    the cache, 30.8-30.9 us a launch on the wall clock for a 28.1 us kernel: the GPU stays busy
    (benchmarks/records/2026-12-02-h200-hgemm-library-finalists, section 4). The arguments are keyed by value
    (`argument_key`): a scalar, a map's bytes, a device array's address."""

    def __init__(self, kernel):
        import cupy

        self.function = getattr(kernel, "kernel", kernel)  # a RawKernel's CUfunction (cupy.cuda.function.Function)
        self.attribute = serialization_attribute()  # the same for every launch: built once, off the launch path
        self.cupy, self.lib = cupy, driver()  # looked up once, not on each launch
        self.function_ptr = ctypes.c_void_p(self.function.ptr)
        self.configs: dict[tuple, LaunchConfig] = {}
        self.packed: dict[tuple, tuple[list, ctypes.Array]] = {}  # arguments' key -> (their values, the pointers)

    def __call__(self, grid: Sequence[int], block: Sequence[int], args: Sequence[Any], shared_mem: int = 0) -> None:
        stream = self.cupy.cuda.get_current_stream().ptr
        result = self.lib.cuLaunchKernelEx(ctypes.byref(self.config(grid, block, shared_mem, stream)),
                                           self.function_ptr, self.parameters(args), None)
        check_result(self.lib, result, "cuLaunchKernelEx")

    def config(self, grid: Sequence[int], block: Sequence[int], shared_mem: int, stream: int) -> LaunchConfig:
        key = (*grid, *block, shared_mem, stream)
        found = self.configs.get(key)
        if found is None:
            found = LaunchConfig((ctypes.c_uint * 3)(*grid), (ctypes.c_uint * 3)(*block), shared_mem,
                                 ctypes.c_void_p(stream), ctypes.pointer(self.attribute), 1)
            self.configs[key] = _bounded(self.configs, found)
        return found

    def parameters(self, args: Sequence[Any]) -> ctypes.Array:
        """cuLaunchKernelEx's kernelParams for `args`: one pointer to each argument's bytes."""
        key = tuple(argument_key(a) for a in args)
        found = self.packed.get(key)
        if found is None:
            values = [kernel_argument(a) for a in args]  # kept alive beside the pointers into them
            pointers = (ctypes.c_void_p * len(values))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p)
                                                         for v in values])
            found = self.packed[key] = _bounded(self.packed, (values, pointers))
        return found[1]


MAX_CACHED = 256  # argument sets or configurations a launch keeps: a rotation of cold inputs uses a few dozen


def _bounded(cache: dict, value):
    """`value`, after making room for it in `cache` (the oldest entry goes)."""
    if len(cache) >= MAX_CACHED:
        cache.pop(next(iter(cache)))
    return value


def argument_key(value: Any) -> Any:
    """What an argument passes, as a dictionary key: a scalar's type and value (NumPy scalars hash and compare by
    value), a map's bytes, a device array's address."""
    kind = type(value)
    if kind in SCALARS_BY_TYPE:
        return kind, value
    if isinstance(value, (np.ndarray, np.void)):
        return value.tobytes()
    return getattr(getattr(value, "data", None), "ptr", None) or id(value)
