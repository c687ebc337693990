"""One record per measured stage, joining nsys range totals and ncu kernel metrics (pure functions).

nsprof wraps each measured launch in the NVTX range `OP/STAGE/MxNxK` of domain `nsprof`
(`nsprof:sgemm/v6/4096x4096x4096` as both parsers name it); verification launches use
`verify/...` and are not stages. Both tools' tables are keyed by that range string.
"""

from __future__ import annotations

import re

import pandas as pd

from nsprof.ranges import parse_stage_range

NSYS_COLUMNS = {"count": "launches", "kernels": "nsys_kernels", "gpu_time_ns": "nsys_gpu_time_ns"}


def stage_records(nsys_ranges: pd.DataFrame | None, ncu_ranges: pd.DataFrame | None) -> pd.DataFrame:
    """Columns: range, op, stage, size; from nsys (range_summary) `launches` (range instances),
    `nsys_kernels`, `nsys_gpu_time_ns` and `nsys_gpu_time_per_launch_ns`; from ncu (range_metrics)
    `ncu_kernels`, the metric totals and ratios, and `ncu_duration_per_kernel_ns`. Where one tool
    did not see a stage its columns are missing values; a tool not given adds no columns."""
    parts = []
    if nsys_ranges is not None:
        # grouped, since a default-domain range could be named like another domain's ("x:a")
        parts.append(nsys_ranges.groupby("range")[list(NSYS_COLUMNS)].sum().rename(columns=NSYS_COLUMNS))
    if ncu_ranges is not None:
        parts.append(ncu_ranges.set_index("range").rename(columns={"kernels": "ncu_kernels"}))
    if not parts:
        return pd.DataFrame(columns=["range", "op", "stage", "size"])
    joined = pd.concat(parts, axis=1, join="outer")
    stages = joined[[parse_stage_range(str(name)) is not None for name in joined.index]].copy()
    counts = [column for column in ("launches", "nsys_kernels", "nsys_gpu_time_ns", "ncu_kernels") if column in stages]
    stages[counts] = stages[counts].astype("Int64")  # the outer join made them float
    if "launches" in stages:
        stages["nsys_gpu_time_per_launch_ns"] = stages["nsys_gpu_time_ns"] / stages["launches"]
    if "ncu_kernels" in stages:
        stages["ncu_duration_per_kernel_ns"] = stages["duration_ns"] / stages["ncu_kernels"]
    keys = pd.DataFrame([parse_stage_range(str(name)) for name in stages.index], index=stages.index,
                        columns=["op", "stage", "size"])
    records = pd.concat([keys, stages], axis=1).rename_axis("range").reset_index()
    sort_keys = [(op, _natural(stage), _natural(size))
                 for op, stage, size in zip(records["op"], records["stage"], records["size"])]
    order = sorted(range(len(records)), key=sort_keys.__getitem__)
    return records.iloc[order].reset_index(drop=True)


def _natural(text: str) -> tuple:
    """Sort key that puts v2 before v10 and 512x... before 4096x..."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))
