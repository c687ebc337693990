"""Which framework operator launched each kernel: torch.profiler records it per launch (the
innermost `cpu_op` open at the launch: nsprof.parse.kineto), nsys does not. A torch.profiler trace
read beside an nsys capture of the same program (a profile directory holding both) names the
operators of nsys's kernels, paired by the name both tools demangle alike (kernel_key)."""

from __future__ import annotations

import pandas as pd

from nsprof.kernel_names import kernel_key
from nsprof.parse.model import GpuTimeline


def launching_operators(timelines: list[GpuTimeline]) -> dict[str, str]:
    """Per kernel_key, the operator that launched most of that kernel's launches ({} without any)."""
    frames = [timeline.kernels[["kernel", "operator"]] for timeline in timelines
              if "operator" in timeline.kernels and timeline.kernels["operator"].notna().any()]
    if not frames:
        return {}
    launches = pd.concat(frames, ignore_index=True).dropna(subset=["operator"]).astype(str)
    launches["key"] = launches["kernel"].map(kernel_key)
    counts = launches.groupby(["key", "operator"]).size().reset_index(name="launches")
    most = counts.sort_values(["key", "launches"], ascending=[True, False]).drop_duplicates("key")
    return dict(zip(most["key"], most["operator"]))


def with_operators(hot: pd.DataFrame, operators: dict[str, str]) -> pd.DataFrame:
    """The hot-kernel table with an `operator` column (None where no trace names one)."""
    return hot.assign(operator=[operators.get(kernel_key(name)) for name in hot["kernel"].astype(str)])
