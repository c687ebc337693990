"""Compile a stage's CUDA source with NVRTC through CuPy and cache the result."""

from __future__ import annotations

from functools import lru_cache

from nsprof.errors import KernelBuildError
from nsprof.launch.gpu import cuda_include_dir, require_cupy
from nsprof.registry import Stage, Tile


def nvrtc_options(defines: tuple[str, ...] = ()) -> tuple[str, ...]:
    opts = ["-std=c++17"]
    include = cuda_include_dir()
    if include:
        opts.append(f"-I{include}")
    opts += [f"-D{d}" for d in defines]
    return tuple(opts)


@lru_cache(maxsize=None)
def _module(path: str, mtime: float, options: tuple[str, ...]):
    cupy = require_cupy()
    with open(path, encoding="utf-8") as f:
        source = f.read()
    module = cupy.RawModule(code=source, options=options)
    try:
        module.compile()
    except cupy.cuda.compiler.CompileException as err:
        first = next((l for l in str(err).splitlines() if "error" in l), str(err).splitlines()[0])
        raise KernelBuildError(f"{path} failed to compile: {first.strip()}", "fix the source; nvcc -arch=sm_90 gives the full log") from None
    return module


def load_kernel(stage: Stage, tile: Tile, defines: tuple[str, ...] = ()):
    """The CuPy RawKernel for one tile of a stage, with its dynamic shared memory allowed."""
    path = stage.kernel_path()
    kernel = _module(str(path), path.stat().st_mtime, nvrtc_options(defines)).get_function(tile.entry)
    if tile.dynamic_smem_bytes > 48 * 1024:
        # Blocks may use more than 48 KB of shared memory only after opting in.
        kernel.max_dynamic_shared_size_bytes = tile.dynamic_smem_bytes
    return kernel
