"""Triton stages (nsprof.stage_kinds.TRITON): autotuned, then launched like every stage.

A Triton stage's file under kernels/ holds its `@triton.jit` kernel and `launcher(problem, config,
precision)`, which returns a function that launches the kernel once on the problem's current
arrays in one configuration (nsprof.triton_config.TritonConfig) and returns what Triton compiled.

Autotuning is nsprof's, not `@triton.autotune`'s, so that it is recorded and never timed as the
stage: each declared configuration is compiled (first launch), verified against the float64
reference with a poisoned output (one that fails is out), then timed with the CUDA events every
stage is timed with (TUNE_WARMUP, TUNE_REPEAT); every launch of a trial is in an NVTX range
tune/<op>/<stage>/<size>/<configuration> of its own, so that a capture counts the trials as harness
work (nsprof.analyze.harness.NSPROF_TUNING). The fastest median
is kept. `details` records every trial and, for the kept configuration, what Triton compiled:
warps, stages, registers, spills, shared memory and its SASS instruction mix (wgmma, TMA, mma.sync,
FFMA: whether it used Hopper's tensor-core path).

Triton launches on PyTorch's current stream; each launch makes that stream CuPy's current one, so
the kernel runs on the stream nsprof's events time (the null stream in `bench`, the pipeline's own).
A file's launch may carry `steps` (name -> function): work inside the launch that is also timed
alone (the TF32 matmul's transpose of B), as nsprof.op_model.Launcher.steps.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from types import ModuleType

from nsprof.errors import KernelBuildError
from nsprof.launch.gpu import require_cupy
from nsprof.launch.measure import nvtx_range, time_launches
from nsprof.op_model import Stage
from nsprof.ranges import tune_range_name
from nsprof.triton_config import TritonConfig

TUNE_WARMUP = 5
TUNE_REPEAT = 20
# SASS opcodes that say which path the kernel took (Hopper: HGMMA is wgmma, UTMALDG a TMA load)
SASS_OPCODES = {"wgmma": "HGMMA", "mma_sync": "HMMA", "tma_load": "UTMALDG", "tma_store": "UTMASTG",
                "cp_async": "LDGSTS", "ffma": "FFMA", "global_load": "LDG", "shared_load": "LDS"}


class TritonStageFailed(KernelBuildError):
    """No declared configuration compiled and verified: the stage is recorded as an error."""


@dataclass
class TritonLauncher:
    """nsprof.op_model.Launcher for the kept configuration, with the tuning in `details`."""

    run: Callable[[], None]
    tile_label: str
    details: dict = field(default_factory=dict)
    split_k: None = None
    padded_shape: None = None
    prepare: None = None
    prepare_name: None = None
    steps: dict = field(default_factory=dict)


def triton_launcher(stage: Stage, problem, tile_shape: str | None = None) -> TritonLauncher:
    """Tune `stage` over its configurations (only `tile_shape` when given) on `problem`, and a
    launcher of the fastest verified one (module docstring)."""
    module = _kernel_module(str(stage.kernel_path()))
    size = _size(problem)
    configs = [config for config in stage.tiles if tile_shape is None or config.shape == tile_shape]
    trials, runs = [], {}
    for config in configs:
        assert isinstance(config, TritonConfig)  # the registry checked it (nsprof.stage_kinds)
        trial, kept = _trial(stage, problem, config, module, size)
        trials.append(trial)
        if kept is not None:
            runs[config.shape] = kept
    if not runs:
        reasons = "; ".join(f"{trial['config']}: {trial['message']}" for trial in trials)
        raise TritonStageFailed(f"{stage.key}: no configuration compiled and verified ({reasons})",
                                "see the configurations in nsprof stages --json")
    best = min((trial for trial in trials if trial["status"] == "ok"), key=lambda trial: trial["median_ms"])
    launch, compiled = runs[best["config"]]
    details = {"autotune": {"kept": best["config"], "trials": trials,
                            "rule": f"the fastest median of {TUNE_REPEAT} launches after {TUNE_WARMUP} warm-up "
                                    "among the configurations that verified, timed before the stage and never as it"},
               "compiled": compiled_facts(compiled)}

    def run() -> None:
        launch()

    return TritonLauncher(run, best["config"], details, steps=dict(getattr(launch, "steps", {})))


def _trial(stage: Stage, problem, config: TritonConfig, module: ModuleType,
           size) -> tuple[dict, tuple[Callable, object] | None]:
    """One configuration compiled, verified and timed: the trial's record, and its launch with what
    Triton compiled (None for a configuration that failed: the record says why)."""
    cp = require_cupy()
    trial: dict = {"config": config.shape, "status": "ok", "message": None, "median_ms": None, "rel_error": None}
    with nvtx_range(tune_range_name(stage.op, stage.stage, size, config.shape)):  # every launch of the trial
        try:
            launch = _on_cupy_stream(module.launcher(problem, config, stage.precision.name))
            compiled = launch()  # compiles: never timed
            problem.poison_output()
            launch()
            cp.cuda.Device().synchronize()
        except Exception as err:  # a configuration Triton cannot compile or launch here (too much shared memory)
            return {**trial, "status": "error", "message": _first_line(err)}, None
        error = problem.relative_error()
        trial["rel_error"] = error
        if not error <= stage.tolerance(size):
            message = f"relative error {error:.3g} exceeds {stage.tolerance(size):.3g}"
            return {**trial, "status": "failed", "message": message}, None
        timing = time_launches(launch, repeat=TUNE_REPEAT, warmup=TUNE_WARMUP)
    return {**trial, "median_ms": timing.median_ms}, (launch, compiled)


def compiled_facts(compiled) -> dict:
    """What Triton compiled: warps, pipeline stages, registers, spills, shared memory, and the
    counts of SASS_OPCODES in its SASS (None where the disassembler is missing)."""
    metadata = compiled.metadata
    facts = {"kernel": getattr(metadata, "name", None), "num_warps": getattr(metadata, "num_warps", None),
             "num_stages": getattr(metadata, "num_stages", None), "shared_bytes": getattr(metadata, "shared", None),
             "registers": getattr(compiled, "n_regs", None), "spills": getattr(compiled, "n_spills", None)}
    try:
        sass = compiled.asm["sass"]
    except Exception:  # nvdisasm not found
        sass = None
    facts["sass"] = None if sass is None else {
        name: len(re.findall(rf"\b{opcode}\b", sass)) for name, opcode in SASS_OPCODES.items()}
    return facts


def _on_cupy_stream(launch: Callable[[], object]) -> Callable[[], object]:
    """The launch on CuPy's current stream: Triton launches on PyTorch's, made the same for the call."""
    import torch

    cp = require_cupy()

    def on_stream(call=launch):
        stream = cp.cuda.get_current_stream().ptr
        if stream == torch.cuda.current_stream().cuda_stream:
            return call()
        with torch.cuda.stream(_external_stream(stream)):
            return call()

    on_stream.steps = {name: functools.partial(on_stream, step)  # type: ignore[attr-defined]
                       for name, step in getattr(launch, "steps", {}).items()}
    return on_stream


@lru_cache(maxsize=16)
def _external_stream(pointer: int):
    import torch

    return torch.cuda.ExternalStream(pointer)


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


def _size(problem) -> tuple[int, ...]:
    return tuple(getattr(problem, dim) for dim in ("m", "n", "k") if hasattr(problem, dim))


def _first_line(err: Exception) -> str:
    text = str(err).strip() or type(err).__name__
    return f"{type(err).__name__}: {text.splitlines()[0][:200]}"
