"""Stacking tables whose name columns are categorical, without one Python object per row.

nsys names (kernels, API calls) come as pandas categoricals: ten million launches share a few
hundred names. pd.concat of categoricals with different categories falls back to one object per
row; these helpers keep the codes and unite the categories instead.
"""

from __future__ import annotations

import pandas as pd
from pandas.api.types import union_categoricals


def as_categorical(values) -> pd.Categorical:
    """`values` (a Series, array or list) as a Categorical (a categorical Series keeps its codes)."""
    values = values.array if isinstance(values, pd.Series) else values
    values = values if isinstance(values, pd.Categorical) else pd.Categorical(values)
    if values.categories.dtype != object:  # one category dtype for all (pandas' str and object names do not unite)
        values = pd.Categorical.from_codes(values.codes, categories=pd.Index(values.categories, dtype=object))
    return values


def stack_categorical(frames: list[pd.DataFrame], categorical: list[str]) -> pd.DataFrame:
    """The frames (at least one) one under the other, the `categorical` columns kept categorical
    over the union of their categories."""
    stacked = pd.concat([frame.drop(columns=categorical) for frame in frames], ignore_index=True)
    for column in categorical:
        stacked[column] = union_categoricals([as_categorical(frame[column]) for frame in frames], ignore_order=True)
    return stacked[list(frames[0].columns)]
