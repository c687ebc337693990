"""A kernel launch's configuration as every table names it: its grid and block, '(x, y, z)' each, as
ncu writes them; one (kernel, grid, block) is a Configuration (hot kernels, harness rules, autotune
trials and the Triton kernels table all key launches by it)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

LAUNCH_SIZES = tuple(f"{part}_{axis}" for part in ("grid", "block") for axis in "xyz")  # nsys_sqlite's columns
# what a launch asks of each SM beyond its sizes, where the export holds it (nsys does; a trace may not): the same
# kernel recompiled (its registers), or an autotuner's other pipeline depth (its dynamic shared memory), shows here
# with its grid and block unchanged
LAUNCH_RESOURCES = ("registers_per_thread", "dynamic_smem_bytes")
Configuration = tuple[str, str, str]  # kernel name, grid, block


def launch_config(x, y, z) -> str:
    """'(x, y, z)' as ncu writes a grid or block size."""
    return f"({int(x)}, {int(y)}, {int(z)})"


def configurations(kernels: pd.DataFrame) -> set[Configuration]:
    """The distinct (kernel, grid, block) of a kernels table's launches."""
    distinct = kernels[["kernel", *LAUNCH_SIZES]].drop_duplicates()
    return {(str(row.kernel), launch_config(row.grid_x, row.grid_y, row.grid_z),
             launch_config(row.block_x, row.block_y, row.block_z)) for row in distinct.itertuples()}


def combined_codes(columns: Iterable[np.ndarray], key: np.ndarray | None = None) -> np.ndarray:
    """One code per row for the combination of its values in `columns` (after `key`, codes already),
    numbered by first appearance as a sort=False group-by numbers its groups. Integer columns of a
    small range (a launch's sizes) are folded into the key by arithmetic, the rest factorized
    first, in place: no more than three arrays the length of the table are alive (grouping 10M
    launches by their six sizes at once peaks at a gigabyte), and one hash pass is made, at the end."""
    span = 1 if key is None else int(key.max(initial=0)) + 1
    for values in columns:
        low, high = (int(values.min()), int(values.max())) if len(values) and values.dtype.kind in "iu" else (0, -1)
        if high < low or span * (high - low + 1) >= 1 << 62:  # not integers, or too wide to fold: their codes
            if key is not None and span > 1 << 31:
                key = pd.factorize(key)[0]
                span = int(key.max(initial=0)) + 1
            values, uniques = pd.factorize(values)
            values[values < 0] = len(uniques)  # a missing value (-1) is a value of its own
            low, high = 0, len(uniques)
        if key is None:
            key = values.astype(np.int64) - low
        else:
            key *= high - low + 1
            key += values
            key -= low
        span *= high - low + 1
    return np.zeros(0, dtype=np.int64) if key is None else pd.factorize(key)[0]
