"""Which kernels of a ladder capture are nsprof's own harness, not the stages being measured.

`nsprof bench` makes random inputs (curand), computes the float64 reference and reduces the error
on the GPU; in a ladder capture that work is 22-40% of kernel time, and `init_curand` can lead
the kernel table above every stage. A stage's kernels are the ones launched inside its measured
NVTX range (nsprof:OP/STAGE/SIZE, nsprof.ranges); every kernel whose name never ran inside such a
range is harness work. (Newer captures also wrap it in nsprof:harness/... ranges, which say so on
the timeline; the rule above needs none, so older captures are read the same way.)

A capture with no stage ranges (the user's own program) is read by nsprof.analyze.program_harness
instead: the autotuners and benchmark harnesses inside it, each by its own rule.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from nsprof.analyze.program_harness import HARNESS_RULES, HarnessKey, SteadyState, program_harness, steady_state
from nsprof.parse.nsys_sqlite import NsysExport
from nsprof.ranges import parse_stage_range


def stage_kernel_names(export: NsysExport) -> set[str] | None:
    """The names of the kernels launched inside a measured stage range (by the thread that pushed
    it), or None when the export has no stage range at all."""
    nvtx = export.nvtx
    is_stage = pd.Series([parse_stage_range(str(name)) is not None for name in nvtx["range"]], index=nvtx.index, dtype=bool)
    stage = nvtx[is_stage].dropna(subset=["end_ns"])
    if stage.empty:
        return None
    calls = export.runtime[["correlation_id", "global_tid", "start_ns"]].dropna(subset=["correlation_id"])
    kernels = export.kernels[["correlation_id", "global_pid", "kernel"]].dropna(subset=["correlation_id"])
    kernels = kernels.assign(pid=kernels["global_pid"] // 0x1000000 % 0x1000000)  # as nsys_sqlite derives it
    launched = kernels.merge(calls.assign(pid=calls["global_tid"] // 0x1000000 % 0x1000000),
                             on=["pid", "correlation_id"], how="inner")
    names: set[str] = set()
    for thread, ranges in stage.groupby("global_tid"):  # stage ranges of one thread never overlap
        ranges = ranges.sort_values("start_ns")
        starts = ranges["start_ns"].to_numpy(dtype=np.int64)
        ends = ranges["end_ns"].to_numpy(dtype=np.int64)
        mine = launched[launched["global_tid"] == thread]
        times = mine["start_ns"].to_numpy(dtype=np.int64)
        slot = np.searchsorted(starts, times, side="right") - 1
        inside = (slot >= 0) & (times <= ends[np.clip(slot, 0, None)])
        names.update(mine["kernel"].astype(str)[inside])
    return names


NSPROF_HARNESS = "nsprof-harness"
HARNESS_RULE_WORDS = {NSPROF_HARNESS: "nsprof's own harness (inputs, reference, checks): never launched inside a "
                                      "stage's measured range", **HARNESS_RULES}


def harness_kernels(exports: list[NsysExport], steady: SteadyState | None) -> dict[HarnessKey, str]:
    """Kernel name, or (kernel, grid, block) -> the rule that makes it harness work in these exports
    (HARNESS_RULE_WORDS): nsprof's own in a ladder capture (the module docstring), else a program's
    autotuners and benchmark harnesses (nsprof.analyze.program_harness). `steady` is the steady
    state of a single export (nsprof.analyze.program_harness.steady_part), found once by the caller;
    several exports have theirs found here."""
    harness: dict[HarnessKey, str] = {}
    for export in exports:
        stage_names = stage_kernel_names(export)
        if stage_names is not None:
            harness.update(dict.fromkeys(set(pd.unique(export.kernels["kernel"].astype(str))) - stage_names, NSPROF_HARNESS))
        else:
            state = steady if len(exports) == 1 else steady_state(export)
            for name, rule in program_harness(export, state).items():
                harness.setdefault(name, rule)
    return harness
