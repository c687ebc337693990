"""Which kernels of a ladder capture are nsprof's own harness, not the stages being measured.

`nsprof bench` makes random inputs (curand), computes the float64 reference and reduces the error
on the GPU; in a ladder capture that work is 22-40% of kernel time, and `init_curand` can lead
the kernel table above every stage. A stage's kernels are the ones launched inside its measured
NVTX range (nsprof:OP/STAGE/SIZE, nsprof.ranges); every kernel whose name never ran inside such a
range is harness work. (Newer captures also wrap it in nsprof:harness/... ranges, which say so on
the timeline; the rule above needs none, so older captures are read the same way.) A launch
configuration of a measured kernel that never ran inside a stage range (a Triton stage's
autotuning trials, in tune/... ranges) is harness work too.

A capture with no stage ranges (the user's own program) is read by nsprof.analyze.program_harness
instead: the autotuners and benchmark harnesses inside it, each by its own rule.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from nsprof.analyze.launch_configs import Configuration, configurations
from nsprof.analyze.program_harness import HARNESS_RULES, HarnessKey, SteadyState, program_harness, steady_state
from nsprof.parse.model import GpuTimeline, linux_pid
from nsprof.ranges import NVTX_DOMAIN, parse_stage_range


def launched_inside(export: GpuTimeline, wanted: Callable[[str], bool]) -> np.ndarray | None:
    """For each of export.kernels' rows, whether the API call that launched it ran inside a push/pop
    range of the launching thread whose name `wanted` accepts (such ranges of one thread never
    overlap: nsprof's stage and tune ranges); None when no range is wanted."""
    nvtx = export.nvtx
    names = nvtx["range"].astype(str)
    chosen = nvtx[names.isin([name for name in pd.unique(names) if wanted(name)]).to_numpy()]  # each name asked once
    chosen = chosen.dropna(subset=["end_ns"])
    if chosen.empty:
        return None
    calls = export.runtime[["correlation_id", "global_tid", "start_ns"]].dropna(subset=["correlation_id"])
    kernels = export.kernels[["correlation_id", "global_pid"]].reset_index(drop=True)
    kernels = kernels.assign(row=np.arange(len(kernels)), pid=linux_pid(kernels["global_pid"]))
    launched = kernels.dropna(subset=["correlation_id"]).merge(  # the process part, as nsys_sqlite derives it
        calls.assign(pid=linux_pid(calls["global_tid"])), on=["pid", "correlation_id"], how="inner")
    inside = np.zeros(len(kernels), dtype=bool)
    for thread, ranges in chosen.groupby("global_tid"):
        ranges = ranges.sort_values("start_ns")
        starts = ranges["start_ns"].to_numpy(dtype=np.int64)
        ends = ranges["end_ns"].to_numpy(dtype=np.int64)
        mine = launched[launched["global_tid"] == thread]
        times = mine["start_ns"].to_numpy(dtype=np.int64)
        slot = np.searchsorted(starts, times, side="right") - 1
        inside[mine["row"].to_numpy()[(slot >= 0) & (times <= ends[np.clip(slot, 0, None)])]] = True
    return inside


def is_tuning_range(name: str) -> bool:
    """A Triton stage's tuning trial (nsprof.ranges.tune_range_name)."""
    return name.startswith(f"{NVTX_DOMAIN}:tune/")


def stage_kernels(export: GpuTimeline) -> set[Configuration] | None:
    """The (kernel, grid, block) configurations launched inside a measured stage range (by the
    thread that pushed it), or None when the export has no stage range at all."""
    inside = launched_inside(export, lambda name: parse_stage_range(name) is not None)
    if inside is None:
        return None
    return configurations(export.kernels[inside])


NSPROF_HARNESS = "nsprof-harness"
NSPROF_TUNING = "nsprof-tuning"
HARNESS_RULE_WORDS = {NSPROF_HARNESS: "nsprof's own harness (inputs, reference, checks): never launched inside a "
                                      "stage's measured range",
                      NSPROF_TUNING: "a Triton stage's tuning trials (tune/... ranges), timed before the stage and "
                                     "never as it", **HARNESS_RULES}


def harness_kernels(exports: list[GpuTimeline], steady: SteadyState | None) -> dict[HarnessKey, str]:
    """Kernel name, or (kernel, grid, block) -> the rule that makes it harness work in these exports
    (HARNESS_RULE_WORDS): nsprof's own in a ladder capture (the module docstring), else a program's
    autotuners and benchmark harnesses (nsprof.analyze.program_harness). `steady` is the steady
    state of a single export (nsprof.analyze.iterations.steady_part), found once by the caller;
    several exports have theirs found here."""
    harness: dict[HarnessKey, str] = {}
    for export in exports:
        measured = stage_kernels(export)
        if measured is not None:
            names = {name for name, _, _ in measured}
            harness.update(dict.fromkeys(set(pd.unique(export.kernels["kernel"].astype(str))) - names, NSPROF_HARNESS))
            # configurations of a measured kernel that ran only outside the stages: a Triton stage's tuning trials
            harness.update(dict.fromkeys((configuration for configuration in configurations(export.kernels)
                                          if configuration[0] in names and configuration not in measured), NSPROF_HARNESS))
        else:
            state = steady if len(exports) == 1 else steady_state(export)
            for name, rule in program_harness(export, state).items():
                harness.setdefault(name, rule)
    return harness
