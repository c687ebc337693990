"""What the GEMM launcher hands an h6 kernel, read on the CPU: its grid and its tensor-map arguments. A candidate in
side-by-side clusters counts blocks in the grid's x (the kernel's tile origin reads blockIdx.x as a block's own
columns), and one that takes its maps by value gets their 128 bytes, not a device address: a mismatch either way
only shows on the GPU machine, as a wrong product or a fault."""

from __future__ import annotations

import ctypes
import dataclasses
import itertools
from types import SimpleNamespace

import numpy as np
from h6_probe import h6_candidates

from nsprof.ladder.op_model import LaunchTools
from nsprof.ladder.registry import get_op, get_stage
from nsprof.launch.dependent_launch import kernel_argument
from nsprof.launch.rotation import per_input_set

_ADDRESSES = itertools.count(1 << 20, 4096)


class DeviceArray:
    """A stand-in for a CuPy array: its bytes and a device address."""

    def __init__(self, host: np.ndarray):
        self.host, self.nbytes = host, host.nbytes
        self.data = SimpleNamespace(ptr=next(_ADDRESSES))


def _xp():
    return SimpleNamespace(asarray=DeviceArray, float32=np.float32,
                           zeros=lambda shape, dtype: DeviceArray(np.zeros(shape, dtype)),
                           full=lambda shape, value, dtype: DeviceArray(np.full(shape, value, dtype)))


def _launch(tile, size):
    """Launch `tile` alone (h6's stage with that tile) on an M x N x K problem: the grid and arguments it got."""
    calls, maps, loads = [], [], []

    def encode(address, rows, cols, stride, box_rows, box_cols, swizzle, elem):
        encoded = (f"{address}:{rows}x{cols}/{box_rows}x{box_cols}".encode()).ljust(128, b"\0")
        maps.append(encoded)
        return encoded

    def kernel_for(*_args, **kwargs):
        loads.append(kwargs)
        return lambda grid, block, args, shared_mem: calls.append((grid, args, shared_mem))

    tools = LaunchTools(_xp(), 132, "9.0", kernel_for, encode, lambda t: True, lambda *a, **k: 0, per_input_set)
    m, n, k = size
    problem = SimpleNamespace(m=m, n=n, k=k, A=DeviceArray(np.zeros((m, k), np.float16)),
                              B=DeviceArray(np.zeros((k, n), np.float16)), C=DeviceArray(np.zeros((m, n), np.float16)))
    stage = dataclasses.replace(get_stage("hgemm", "h6"), tiles=(tile,))
    get_op("hgemm").workload.launcher(stage, problem, tools).run()
    (grid, args, shared_mem), = calls
    assert loads[0]["dependent_launch"] == tile.dependent_launch
    return grid, args, shared_mem, maps


def _candidate(entry: str):
    return next(t for t in h6_candidates() if t.entry == entry)


def test_a_side_by_side_pair_counts_blocks_in_the_grid_x_and_an_odd_column_of_tiles_gets_a_whole_pair():
    pair = _candidate("hgemm_h6_cl2a_128x128")  # two 128 x 64 blocks a cluster
    grid, args, _, maps = _launch(pair, (1024, 904, 1024))  # 15 columns of 64: the last pair's second block idles
    assert grid == (16, 8, 1)
    assert [int(a) for a in args[:3]] == [1024, 904, 1024]
    assert b"/64x64" in maps[0]  # A's box: 64 rows, the half of A's 128 a block fetches and multicasts
    a_map, b_map = args[3], args[4]
    assert isinstance(a_map, np.uint64) and isinstance(b_map, np.uint64) and a_map != b_map


def test_the_declared_128x64_tile_keeps_its_grid_of_tiles():
    tile = next(t for t in get_stage("hgemm", "h6").tiles if t.entry == "hgemm_h6_128x64")
    grid, _, _, maps = _launch(tile, (1024, 904, 1024))
    assert grid == (15, 8, 1)
    assert b"/128x64" in maps[0]


def test_maps_by_value_go_as_their_bytes_and_c_s_map_too_where_c_is_stored_by_tma():
    tile = _candidate("hgemm_h6_byval_pp_tma_128x128")
    grid, args, _, maps = _launch(tile, (2048, 2048, 2048))
    assert grid == (132, 1, 1)
    a_map, b_map, c_map = args[3], args[4], args[5]
    for value, encoded in zip((a_map, b_map, c_map), maps):
        assert isinstance(value, np.ndarray) and value.dtype.itemsize == 128 and value.tobytes() == encoded
    by_address = _launch(dataclasses.replace(tile, maps_by_value=False), (2048, 2048, 2048))[1]
    assert all(isinstance(v, np.uint64) for v in by_address[3:6])


def test_every_h6_tile_is_a_dependent_launch_and_its_arguments_pack_as_its_parameters():
    """cuLaunchKernelEx takes each parameter's bytes: an int as 4, a map by value as its 128, an address (a map's,
    C's, the workspace's or none) as 8."""
    tiles = [*get_stage("hgemm", "h6").tiles, *h6_candidates()]
    assert all(t.dependent_launch for t in tiles)
    _, args, _, maps = _launch(_candidate("hgemm_h6_byval_pp_tma_128x128"), (2048, 2048, 2048))
    packed = [kernel_argument(a) for a in args]
    assert [ctypes.sizeof(p) for p in packed] == [4, 4, 4, 128, 128, 128, 8]
    assert packed[0].value == 2048 and bytes(packed[3]) == maps[0] and packed[6].value == 0  # no workspace
    _, args, _, _ = _launch(_candidate("hgemm_h6_cl2a_128x128"), (1024, 904, 1024))
    packed = [kernel_argument(a) for a in args]
    assert [ctypes.sizeof(p) for p in packed] == [4, 4, 4, 8, 8, 8, 8]
    assert packed[5].value == args[5].data.ptr and packed[6].value == 0  # C, no workspace


def test_the_launch_configuration_has_cuda_h_s_layout():
    """cuLaunchKernelEx reads CUlaunchConfig and CUlaunchAttribute by offset (x86-64 cuda.h: the attribute's id
    padded to 8 bytes before a 64-byte union; the stream after seven unsigned ints, padded to 8)."""
    from nsprof.launch.dependent_launch import (
        PROGRAMMATIC_STREAM_SERIALIZATION,
        LaunchAttribute,
        LaunchConfig,
        serialization_attribute,
    )

    assert ctypes.sizeof(LaunchAttribute) == 72 and LaunchAttribute.value.offset == 8
    assert (LaunchConfig.stream.offset, LaunchConfig.attrs.offset, LaunchConfig.num_attrs.offset) == (32, 40, 48)
    attribute = serialization_attribute()
    assert attribute.id == PROGRAMMATIC_STREAM_SERIALIZATION == 6
    assert int.from_bytes(bytes(attribute.value[:4]), "little") == 1 and not any(attribute.value[4:])


class _Driver:
    """cuLaunchKernelEx as the launch sees it: each call's configuration and parameter pointers."""

    def __init__(self):
        self.calls = []

    def cuLaunchKernelEx(self, config, function, params, extra):
        self.calls.append((config._obj, params))
        return 0


def _dependent_launch(monkeypatch):
    from nsprof.launch import dependent_launch

    stream = SimpleNamespace(ptr=0)
    monkeypatch.setitem(__import__("sys").modules, "cupy",
                        SimpleNamespace(cuda=SimpleNamespace(get_current_stream=lambda: stream)))
    lib = _Driver()
    monkeypatch.setattr(dependent_launch, "driver", lambda: lib)
    monkeypatch.setattr(dependent_launch, "check_result", lambda *a: None)
    return dependent_launch.DependentLaunch(SimpleNamespace(ptr=1234)), lib, stream


def _passed(params, sizes):
    """The bytes each parameter pointer points at."""
    return [ctypes.string_at(params[i], size) for i, size in enumerate(sizes)]


def test_a_dependent_launch_packs_each_set_of_arguments_once_and_passes_the_current_values(monkeypatch):
    launch, lib, stream = _dependent_launch(monkeypatch)
    c = DeviceArray(np.zeros(4, np.float16))
    tensor_map = np.frombuffer(b"m" * 128, dtype=np.dtype((np.void, 128)))
    first = (np.int32(2048), tensor_map, c)
    second = (np.int32(1024), tensor_map, c)
    sizes = [4, 128, 8]
    expected_first = [(2048).to_bytes(4, "little"), b"m" * 128, c.data.ptr.to_bytes(8, "little")]
    launch((132, 1, 1), (384, 1, 1), first, 1000)
    launch((132, 1, 1), (384, 1, 1), second, 1000)
    launch((132, 1, 1), (384, 1, 1), (np.int32(2048), tensor_map, c), 1000)  # equal values, new objects
    (config, p1), (_, p2), (again, p3) = lib.calls
    assert _passed(p1, sizes) == expected_first and _passed(p3, sizes) == expected_first
    assert _passed(p2, sizes)[0] == (1024).to_bytes(4, "little")
    assert p3 is p1 and again is config and len(launch.packed) == 2  # built once, reused
    assert (list(config.grid), list(config.block), config.shared_mem_bytes) == ([132, 1, 1], [384, 1, 1], 1000)
    stream.ptr = 77  # another stream: another configuration
    launch((132, 1, 1), (384, 1, 1), first, 1000)
    assert lib.calls[-1][0].stream == 77 and len(launch.configs) == 2


def test_a_dependent_launch_keeps_a_bounded_number_of_argument_sets(monkeypatch):
    from nsprof.launch.dependent_launch import MAX_CACHED

    launch, lib, _ = _dependent_launch(monkeypatch)
    for size in range(MAX_CACHED + 5):
        launch((1, 1, 1), (32, 1, 1), (np.int32(size),))
    assert len(launch.packed) == MAX_CACHED
    assert _passed(lib.calls[-1][1], [4]) == [(MAX_CACHED + 4).to_bytes(4, "little")]
