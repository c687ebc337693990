"""TMA tensor maps (CUtensorMap) for the TMA stages, encoded through the CUDA driver.

A TMA kernel takes, instead of a matrix pointer, the address of a 128-byte CUtensorMap in
global memory describing that matrix and the box each cp.async.bulk.tensor copies. The map
is encoded on the host by the driver's cuTensorMapEncodeTiled; this module calls it through
ctypes (no dependency beyond the driver library CuPy itself needs) and returns the 128
bytes, which the caller copies into a 128-byte-aligned device buffer.

libcuda is loaded on first use, so importing this module needs no GPU.
"""

from __future__ import annotations

import ctypes

# Enum values from cuda.h (CUDA 12/13; unchanged since the API appeared in 12.0).
CU_TENSOR_MAP_DATA_TYPE = {1: 0, 2: 6, 4: 7}  # element bytes -> UINT8, FLOAT16, FLOAT32
CU_TENSOR_MAP_INTERLEAVE_NONE = 0
CU_TENSOR_MAP_SWIZZLE = {0: 0, 32: 1, 64: 2, 128: 3}  # bytes -> NONE, 32B, 64B, 128B
CU_TENSOR_MAP_L2_PROMOTION = {0: 0, 64: 1, 128: 2, 256: 3}  # bytes -> NONE, L2_64B, L2_128B, L2_256B
L2_PROMOTION_BYTES = 128  # what L2 fetches around a TMA miss (256 ran h6 2-6% slower; h6_plans.py --l2)
CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0  # out-of-bounds elements read as zeros
TENSOR_MAP_BYTES = 128  # sizeof(CUtensorMap): 16 x uint64, 64-byte aligned on the host

_lib = None


def driver():
    """libcuda with the three entry points typed, initialised once."""
    global _lib
    if _lib is None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as err:
            raise RuntimeError(f"cannot load the CUDA driver library libcuda.so.1 ({err})") from None
        lib.cuInit.argtypes = [ctypes.c_uint]
        lib.cuInit.restype = ctypes.c_int
        lib.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        lib.cuGetErrorName.restype = ctypes.c_int
        lib.cuTensorMapEncodeTiled.argtypes = [
            ctypes.c_void_p,                    # CUtensorMap* tensorMap (out)
            ctypes.c_int,                       # CUtensorMapDataType
            ctypes.c_uint32,                    # tensorRank
            ctypes.c_void_p,                    # globalAddress
            ctypes.POINTER(ctypes.c_uint64),    # globalDim[rank]
            ctypes.POINTER(ctypes.c_uint64),    # globalStrides[rank - 1], bytes
            ctypes.POINTER(ctypes.c_uint32),    # boxDim[rank]
            ctypes.POINTER(ctypes.c_uint32),    # elementStrides[rank]
            ctypes.c_int,                       # CUtensorMapInterleave
            ctypes.c_int,                       # CUtensorMapSwizzle
            ctypes.c_int,                       # CUtensorMapL2promotion
            ctypes.c_int,                       # CUtensorMapFloatOOBfill
        ]
        lib.cuTensorMapEncodeTiled.restype = ctypes.c_int
        check_result(lib, lib.cuInit(0), "cuInit")
        _lib = lib
    return _lib


def check_result(lib, result: int, call: str) -> None:
    if result != 0:
        name = ctypes.c_char_p()
        if lib.cuGetErrorName(result, ctypes.byref(name)) == 0 and name.value:
            label = name.value.decode()
        else:
            label = f"CUresult {result}"
        raise RuntimeError(f"{call} failed: {label}")


def encode_2d(address: int, rows: int, cols: int, row_stride_bytes: int, box_rows: int, box_cols: int,
              swizzle_bytes: int = 128, elem_bytes: int = 2) -> bytes:
    """The 128-byte CUtensorMap of a row-major rows x cols matrix at device `address`.

    Dimension 0 is the contiguous one (cols, then rows with stride `row_stride_bytes`); each
    TMA copy moves a box of box_rows x box_cols elements into shared memory with the given
    swizzle (0, 32, 64 or 128 bytes; with a swizzle, box_cols * elem_bytes must not exceed
    it). Elements are float16 (elem_bytes=2; 4 gives float32, 1 uint8), not interleaved, L2
    promotion L2_PROMOTION_BYTES, and out-of-bounds elements read as zeros. Raises RuntimeError
    naming the CUresult when the driver rejects the map (alignment: address and
    row_stride_bytes must be multiples of 16; boxes at most 256 per dimension).
    """
    if elem_bytes not in CU_TENSOR_MAP_DATA_TYPE:
        raise ValueError(f"elem_bytes must be one of {sorted(CU_TENSOR_MAP_DATA_TYPE)}, not {elem_bytes}")
    if swizzle_bytes not in CU_TENSOR_MAP_SWIZZLE:
        raise ValueError(f"swizzle_bytes must be one of {sorted(CU_TENSOR_MAP_SWIZZLE)}, not {swizzle_bytes}")
    lib = driver()
    global_dim = (ctypes.c_uint64 * 2)(cols, rows)
    global_strides = (ctypes.c_uint64 * 1)(row_stride_bytes)
    box_dim = (ctypes.c_uint32 * 2)(box_cols, box_rows)
    element_strides = (ctypes.c_uint32 * 2)(1, 1)
    # CUtensorMap is declared alignas(64): encode into a 64-byte-aligned spot of a buffer.
    buffer = ctypes.create_string_buffer(TENSOR_MAP_BYTES + 64)
    out = (ctypes.addressof(buffer) + 63) & ~63
    result = lib.cuTensorMapEncodeTiled(
        ctypes.c_void_p(out), CU_TENSOR_MAP_DATA_TYPE[elem_bytes], 2, ctypes.c_void_p(address),
        global_dim, global_strides, box_dim, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
        CU_TENSOR_MAP_SWIZZLE[swizzle_bytes], CU_TENSOR_MAP_L2_PROMOTION[L2_PROMOTION_BYTES],
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
    )
    check_result(lib, result, f"cuTensorMapEncodeTiled({rows}x{cols}, box {box_rows}x{box_cols}, swizzle {swizzle_bytes})")
    return ctypes.string_at(out, TENSOR_MAP_BYTES)
