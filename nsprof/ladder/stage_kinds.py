"""Stage kinds: what a stage's work is, declared with the stage and checked when its op registers.

- NVRTC: a CUDA C++ source under kernels/ (`.cu`), compiled at run time through CuPy, launched by
  the op's workload with one of the stage's tiles (nsprof.ladder.ops.tiles.Tile).
- LIBRARY: a vendor library's product, declared by the op's workload's `library_call`: tuned
  over CuPy's call (cuBLAS) and the algorithms cuBLASLt proposes (nsprof.ladder_runs.library), and
  timed beside PyTorch's same product; no source and no tiles.
- TRITON: a Python file under kernels/ holding a `@triton.jit` kernel and a `launcher(problem,
  config, precision)` function; its tiles are the configurations it is autotuned over
  (nsprof.triton_config.TritonConfig). Triton is an optional extra: without it these stages are
  "not available" and everything else works.
- CPU: C under kernels/ (`.c`, one entry `nsprof_cpu_product`) compiled by the host's C compiler,
  or, with no file, the CPU's BLAS through NumPy; run on the host on NumPy arrays, timed on the wall
  clock (nsprof.ladder_runs.cpu_stage). No GPU needed: the rung every seed ladder starts from.

Every GPU kind is launched on the stream nsprof times and measured by the same CUDA events
(nsprof.ladder_runs.stage_launch picks the launcher by kind: a new kind adds its entry there and its
own files, never a branch in an op's workload); the CPU kind runs on the host's wall clock.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StageKind:
    name: str  # "nvrtc", "library", "triton": `nsprof stages --json` writes it
    says: str  # what `nsprof stages` says a stage of this kind is
    problems: Callable[[Any], list[str]]  # what breaks this kind's declaration in a stage (registration)
    needs: str | None = None  # the Python package it needs beyond nsprof's own
    install: str | None = None  # how to get that package
    # what the kind's stages do, asked by the code instead of which kind a stage is
    on_host: bool = False  # runs on the CPU, timed on the wall clock: no GPU, no profiler
    vendor_library: bool = False  # a library's product: tuned over its algorithms, timed beside PyTorch's
    autotuned: bool = False  # its tiles are configurations it is autotuned over before timing

    @property
    def tuned(self) -> bool:
        """Whether a stage of this kind is tuned before it is timed (its configurations, or the
        library's algorithms): a tuning to keep, and to reuse where the same stage runs again."""
        return self.autotuned or self.vendor_library

    def unavailable(self) -> str | None:
        """Why no stage of this kind can run here (its package is missing); None when one can."""
        if self.needs is None or importlib.util.find_spec(self.needs) is not None:
            return None
        return f"not installed: {self.needs} ({self.install})"


def _source(suffix: str) -> Callable[[Any], list[str]]:
    def problems(stage) -> list[str]:
        found = []
        if not (stage.kernel_file or "").endswith(suffix):
            found.append(f"stage {stage.stage} is a {stage.kind.name} stage without a {suffix} kernel file")
        if not stage.tiles:
            found.append(f"stage {stage.stage} declares no launch configuration")
        return found
    return problems


def _library(stage) -> list[str]:
    return [f"stage {stage.stage} is a library call with {what}" for what, bad in
            (("a kernel file", stage.kernel_file is not None), ("tiles", bool(stage.tiles))) if bad]


def _cpu(stage) -> list[str]:
    found = [f"stage {stage.stage} is a CPU stage with tiles"] if stage.tiles else []
    if stage.kernel_file is not None and not stage.kernel_file.endswith(".c"):
        found.append(f"stage {stage.stage} is a CPU stage whose file is not C (.c)")
    return found


def _triton(stage) -> list[str]:
    from nsprof.triton_config import TritonConfig

    return _source(".py")(stage) + [f"stage {stage.stage}: {config!r} is not a TritonConfig"
                                    for config in stage.tiles if not isinstance(config, TritonConfig)]


NVRTC = StageKind("nvrtc", "CUDA C++ compiled at run time (NVRTC through CuPy)", _source(".cu"))
LIBRARY = StageKind("library", "a vendor library call: the fastest verified of cuBLAS's and cuBLASLt's algorithms",
                    _library, vendor_library=True)
TRITON = StageKind("triton", "a Triton kernel, autotuned over its declared configurations before timing", _triton,
                   needs="triton", install='pip install -e ".[cuda13,triton]"', autotuned=True)
CPU = StageKind("cpu", "C compiled by the host compiler (or NumPy's BLAS), run on the CPU and timed on the wall clock",
                _cpu, on_host=True)
STAGE_KINDS = {kind.name: kind for kind in (NVRTC, LIBRARY, TRITON, CPU)}
