"""One launcher per stage kind (nsprof.ladder.stage_kinds): what `bench`, `pipeline` and the profiler call
to get a stage's ready launch on a problem. A new kind adds its entry here and its own files."""

from __future__ import annotations

from collections.abc import Callable

from nsprof.errors import UsageError
from nsprof.ladder.op_model import Launcher, LaunchTools, Stage
from nsprof.ladder.registry import get_op
from nsprof.ladder.stage_kinds import CPU, LIBRARY, NVRTC, TRITON


def stage_launcher(stage: Stage, problem, tools: LaunchTools, tile_shape: str | None = None) -> Launcher:
    """A ready launch of `stage` on `problem` (with the launch configuration `tile_shape`, else the
    one its kind picks: by size for an NVRTC stage, the fastest verified one for a Triton stage)."""
    return LAUNCHERS[stage.kind.name](stage, problem, tools, tile_shape)


def _nvrtc(stage: Stage, problem, tools: LaunchTools, tile_shape: str | None) -> Launcher:
    return get_op(stage.op).workload.launcher(stage, problem, tools, tile_shape=tile_shape)


def _library(stage: Stage, problem, tools: LaunchTools, tile_shape: str | None) -> Launcher:
    from nsprof.ladder_runs.library import library_launcher

    return library_launcher(stage, problem, get_op(stage.op).workload.library_call(stage, problem), tile_shape)


def _triton(stage: Stage, problem, tools: LaunchTools, tile_shape: str | None) -> Launcher:
    from nsprof.ladder_runs.triton_stage import triton_launcher  # imports Triton (and PyTorch): only for its stages

    return triton_launcher(stage, problem, tile_shape)


def _cpu(stage: Stage, problem, tools: LaunchTools, tile_shape: str | None) -> Launcher:
    raise UsageError(f"{stage.key} runs on the CPU, not on a GPU stream", "time it with `nsprof bench`")


# a CPU stage is run by nsprof.ladder_runs.cpu_stage on NumPy arrays, never on a GPU stream
LAUNCHERS: dict[str, Callable[..., Launcher]] = {NVRTC.name: _nvrtc, LIBRARY.name: _library, TRITON.name: _triton,
                                                 CPU.name: _cpu}
