"""A program's Triton kernels told apart by what Triton compiled (nsprof.parse.triton_cache): one row
per kernel, launch configuration and dynamic shared memory of nsys's trace whose name Triton
compiled, with the compiled kernel's warps, pipeline stages, shared memory and source where exactly
one compiled kernel matches (name, block = num_warps x 32 threads, dynamic shared memory = its
`shared`), and `compiled` saying how many did (0: none kept in the cache, 2 or more: several
configurations that launch alike, such as two BLOCK_K values). Largest total time first.
"""

from __future__ import annotations

import pandas as pd

from nsprof.analyze.launch_configs import LAUNCH_SIZES, launch_config
from nsprof.parse.model import GpuTimeline

TRITON_ROW_COLUMNS = ("kernel", "grid", "block", "shared_bytes", "launches", "total_ns", "pct", "num_warps", "num_stages",
                      "source", "compiled")


def triton_kernels(exports: list[GpuTimeline], compiled: pd.DataFrame) -> pd.DataFrame:
    """The rows of the module docstring; empty where Triton compiled nothing the exports launched."""
    names = set(compiled["kernel"])
    launched = [export.kernels for export in exports if len(export.kernels)]
    if not names or not launched:
        return pd.DataFrame(columns=list(TRITON_ROW_COLUMNS))
    kernels = pd.concat(launched, ignore_index=True)
    total = float(kernels["duration_ns"].sum())
    kernels = kernels.assign(kernel=kernels["kernel"].astype(str))
    mine = kernels[kernels["kernel"].isin(names)]
    sizes = [*LAUNCH_SIZES, "dynamic_smem_bytes"]
    grouped = mine.groupby(["kernel", *sizes], sort=False)["duration_ns"].agg(["count", "sum"]).reset_index()
    rows = []
    for row in grouped.itertuples():
        threads = int(row.block_x * row.block_y * row.block_z)
        match = compiled[(compiled["kernel"] == row.kernel) & (compiled["num_warps"] * 32 == threads)
                         & (compiled["shared_bytes"] == int(row.dynamic_smem_bytes))].drop_duplicates(
            ["num_warps", "num_stages", "shared_bytes", "source"])
        one = match.iloc[0] if len(match) == 1 else None
        rows.append({"kernel": row.kernel, "grid": launch_config(row.grid_x, row.grid_y, row.grid_z),
                     "block": launch_config(row.block_x, row.block_y, row.block_z),
                     "shared_bytes": int(row.dynamic_smem_bytes), "launches": int(row.count), "total_ns": int(row.sum),
                     "pct": 100 * float(row.sum) / total if total else 0.0,
                     "num_warps": None if one is None else int(one["num_warps"]),
                     "num_stages": None if one is None else _maybe_int(one["num_stages"]),
                     "source": None if one is None else one["source"], "compiled": len(match)})
    frame = pd.DataFrame(rows, columns=list(TRITON_ROW_COLUMNS))
    return frame.sort_values("total_ns", ascending=False, kind="stable").reset_index(drop=True)


def _maybe_int(value) -> int | None:
    return None if pd.isna(value) else int(value)
