"""Triton stages (nsprof.ladder.stage_kinds.TRITON): autotuned, then launched like every stage.

A Triton stage's file under kernels/ holds its `@triton.jit` kernel and `launcher(problem, config,
precision)`, which returns a function that launches the kernel once on the problem's current
arrays in one configuration (nsprof.triton_config.TritonConfig) and returns what Triton compiled.

Autotuning is nsprof's, not `@triton.autotune`'s, so that it is recorded and never timed as the
stage: the declared configurations are the candidates of nsprof.ladder_runs.tuning (compiled by their
first launch, verified, timed, the fastest kept). `details` records every trial and, for the kept
configuration, what Triton compiled:
warps, stages, registers, spills, shared memory and its SASS instruction mix (wgmma, TMA, mma.sync,
FFMA: whether it used Hopper's tensor-core path).

Triton launches on PyTorch's current stream; each launch makes that stream CuPy's current one, so
the kernel runs on the stream nsprof's events time (the null stream in `bench`, the pipeline's own).
A file's launch may carry `steps` (name -> function): work inside the launch that is also timed
alone (the TF32 matmul's transpose of B), as nsprof.ladder.op_model.Launcher.steps.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import cast

from nsprof.errors import KernelBuildError
from nsprof.ladder.op_model import Stage
from nsprof.ladder_runs.bench_types import CompiledFacts, SassCounts
from nsprof.ladder_runs.tuning import Candidate, TunedLauncher, tune
from nsprof.launch.torch_stream import on_cupy_stream
from nsprof.triton_config import TritonConfig

# SASS opcodes that say which path the kernel took (Hopper: HGMMA is wgmma, UTMALDG a TMA load)
SASS_OPCODES = {"wgmma": "HGMMA", "mma_sync": "HMMA", "tma_load": "UTMALDG", "tma_store": "UTMASTG",
                "cp_async": "LDGSTS", "ffma": "FFMA", "global_load": "LDG", "shared_load": "LDS"}


def triton_launcher(stage: Stage, problem, tile_shape: str | None = None) -> TunedLauncher:
    """Tune `stage` over its configurations (only `tile_shape` when given) on `problem`, and a
    launcher of the fastest verified one (module docstring)."""
    module = _kernel_module(str(stage.kernel_path()))
    configs = [config for config in stage.tiles if tile_shape is None or config.shape == tile_shape]

    def candidate(config: TritonConfig) -> Candidate:
        return Candidate(config.shape, lambda: on_cupy_stream(module.launcher(problem, config, stage.precision.name)))

    tuned = tune(stage, problem, [candidate(config) for config in configs if isinstance(config, TritonConfig)])
    return tuned.launcher(compiled=compiled_facts(tuned.first))


def compiled_facts(compiled) -> CompiledFacts:
    """What Triton compiled: warps, pipeline stages, registers, spills, shared memory, and the
    counts of SASS_OPCODES in its SASS (None where the disassembler is missing)."""
    metadata = compiled.metadata
    try:
        sass = compiled.asm["sass"]
    except Exception:  # nvdisasm not found
        sass = None
    # SASS_OPCODES names every key of SassCounts (tests/test_tuning_types.py)
    counts = None if sass is None else cast(
        SassCounts, {name: len(re.findall(rf"\b{opcode}\b", sass)) for name, opcode in SASS_OPCODES.items()})
    return {"kernel": getattr(metadata, "name", None), "num_warps": getattr(metadata, "num_warps", None),
            "num_stages": getattr(metadata, "num_stages", None), "shared_bytes": getattr(metadata, "shared", None),
            "registers": getattr(compiled, "n_regs", None), "spills": getattr(compiled, "n_spills", None),
            "sass": counts}


@cache
def _kernel_module(path: str) -> ModuleType:
    """A Triton stage's file, imported once (Triton's JIT needs its source file to stay importable)."""
    name = "nsprof_triton_" + re.sub(r"\W", "_", Path(path).stem)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise KernelBuildError(f"cannot import the Triton kernel file {path}", "check that it exists")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class TritonPointer:
    """A CuPy array as Triton takes a tensor argument: its address and element type (Triton reads
    any object with data_ptr() and dtype; no PyTorch tensor needed). For the kernel files."""

    def __init__(self, array):
        self.array, self.dtype = array, array.dtype

    def data_ptr(self) -> int:
        return self.array.data.ptr
