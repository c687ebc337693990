"""Compile a stage's CUDA source with NVRTC through CuPy and cache the result.

Most kernels compile for the device's own architecture through cupy.RawModule. A kernel that
needs an architecture-specific target (sm_90a: wgmma, setmaxnreg) is compiled by NVRTC straight
to a cubin for that target, since RawModule always names the device's plain architecture.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from functools import cache
from pathlib import Path

from nsprof.errors import KernelBuildError
from nsprof.launch.dependent_launch import DependentLaunch
from nsprof.launch.gpu import cuda_include_dir, require_cupy

_ARCH = re.compile(r"^sm_(\d+)(\d)(a?)$")  # sm_90a: major 9, minor 0; sm_100a: 10, 0


def nvrtc_options(defines: tuple[str, ...] = (), kernel_dir: Path | None = None) -> tuple[str, ...]:
    """C++17, CUDA's headers, the kernel's own directory (its shared .cuh files) and -D defines."""
    opts = ["-std=c++17"]
    include = cuda_include_dir()
    if include:
        opts.append(f"-I{include}")
    if kernel_dir is not None:
        opts.append(f"-I{kernel_dir}")
    opts += [f"-D{d}" for d in defines]
    return tuple(opts)


def arch_runs(arch: str | None, compute_capability: str) -> bool:
    """Whether a GPU of `compute_capability` ("9.0") runs code built for `arch`: any device of at
    least sm_XY's capability runs sm_XY code; sm_XYa code runs on capability X.Y alone."""
    if arch is None:
        return True
    match = _ARCH.match(arch)
    if not match:
        raise ValueError(f"unknown CUDA architecture '{arch}'")
    major, minor, specific = int(match[1]), int(match[2]), bool(match[3])
    have = tuple(int(part) for part in compute_capability.split("."))
    return have == (major, minor) if specific else have >= (major, minor)


def _build_error(path: str, log: str) -> KernelBuildError:
    first = next((line for line in log.splitlines() if "error" in line), (log.splitlines() or ["no log"])[0])
    return KernelBuildError(f"{path} failed to compile: {first.strip()}", "fix the source; nvcc -arch=sm_90 gives the full log")


@cache
def _module(path: str, mtime: float, options: tuple[str, ...], arch: str | None):
    cupy = require_cupy()
    source = Path(path).read_text(encoding="utf-8")
    if arch is not None:
        return cupy.RawModule(path=str(_cubin(path, source, options, arch)))
    module = cupy.RawModule(code=source, options=options)
    try:
        module.compile()
    except cupy.cuda.compiler.CompileException as err:
        raise _build_error(path, str(err)) from None
    return module


def _cubin(path: str, source: str, options: tuple[str, ...], arch: str) -> Path:
    """NVRTC straight to a cubin for `arch`, cached in the temporary directory by content."""
    from cupy_backends.cuda.libs import nvrtc

    options = (*options, f"-arch={arch}")
    kernel_dir = Path(path).parent  # its own .cuh files, and those kernels/common shares between ops
    files = sorted(kernel_dir.glob("*.cuh")) + sorted((kernel_dir.parent / "common").glob("*.cuh"))
    headers = [header.read_text(encoding="utf-8") for header in files]
    digest = hashlib.sha256("\0".join((source, *headers, *options)).encode()).hexdigest()[:16]
    target = Path(tempfile.gettempdir()) / f"nsprof-{Path(path).stem}-{arch}-{digest}.cubin"
    if target.exists():
        return target
    program = nvrtc.createProgram(source, Path(path).name, [], [])
    try:
        nvrtc.compileProgram(program, list(options))
        binary = nvrtc.getCUBIN(program)
    except nvrtc.NVRTCError:
        raise _build_error(path, nvrtc.getProgramLog(program)) from None
    finally:
        nvrtc.destroyProgram(program)
    partial = target.with_suffix(".partial")
    partial.write_bytes(binary)
    partial.replace(target)  # whole or not at all, also with several processes compiling
    return target


def module_global(path: Path, name: str, *, arch: str | None = None, defines: tuple[str, ...] = ()):
    """The device address (a CuPy MemoryPointer) of a __constant__ or __device__ variable of the
    module that load_kernel compiled from `path` with the same options."""
    return _module(str(path), path.stat().st_mtime, nvrtc_options(defines, path.parent), arch).get_global(name)


def load_kernel(path: Path, entry: str, *, dynamic_smem_bytes: int = 0, arch: str | None = None,
                defines: tuple[str, ...] = (), dependent_launch: bool = False):
    """The CuPy RawKernel `entry` of the source at `path`, with its dynamic shared memory allowed; with
    `dependent_launch`, called as a programmatic dependent launch (nsprof.launch.dependent_launch)."""
    kernel = _module(str(path), path.stat().st_mtime, nvrtc_options(defines, path.parent), arch).get_function(entry)
    if dynamic_smem_bytes > 0:
        # Static and dynamic shared memory together may pass 48 KB only after opting in; a kernel
        # with 48 KB of dynamic memory and a few static bytes (an mbarrier) needs it too.
        kernel.max_dynamic_shared_size_bytes = dynamic_smem_bytes
    return DependentLaunch(kernel) if dependent_launch else kernel
