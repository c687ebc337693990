"""Checks on the ncu numbers nsprof computes with, made once a page or report is read.

The metrics of nsprof.metric_catalog feed FLOP/s, bandwidth and time shares, so a damaged value in
one of them is an error that names the launch and the cell, never a number 1000x off or a column
quietly taken for one that was not collected:

- a cell that is not a number (elsewhere it would turn the whole column to text);
- a time or size in a unit nsprof cannot convert (`cycle` for a duration: taken as ns it is wrong);
- a counter below zero.
"""

from __future__ import annotations

import pandas as pd

from nsprof.errors import ParseError
from nsprof.metric_catalog import METRICS, SUM, Metric
from nsprof.parse.ncu_units import parse_number

EXPORT_AGAIN = "Export it again from the report: ncu --import R.ncu-rep --csv --page raw > FILE.csv"
_CONVERTED_UNITS = ("ns", "byte")  # the units whose values nsprof scales (nsprof.parse.ncu_units)
_CATALOG: dict[str, Metric] = {name: metric for metric in METRICS for name in (metric.name, metric.display) if name}


def check_metrics(kernels: pd.DataFrame, units: dict[str, str], source: str) -> None:
    """Raise ParseError at the first damaged value of a catalogue metric in `kernels` (one row per
    launch, an `id` column, metric columns as ncu names them; `units`: each column's base unit)."""
    for name in kernels.columns.intersection(list(_CATALOG)):
        metric, column = _CATALOG[name], kernels[name]
        unit = units.get(name, "")
        quantity = unit.split("/")[0]  # byte/block is bytes, as the catalogue counts them
        if metric.unit in _CONVERTED_UNITS and quantity not in (metric.unit, ""):  # "": a page without units
            raise ParseError(f"{source}: {name} is in {unit!r}, which nsprof cannot convert to {metric.unit}",
                             EXPORT_AGAIN)
        if not pd.api.types.is_numeric_dtype(column):
            at = next((i for i, cell in enumerate(column) if isinstance(cell, str) and parse_number(cell) is None), None)
            if at is not None:
                raise ParseError(f"{source}: launch {kernels['id'].iloc[at]}'s {name} is {column.iloc[at]!r}, not a "
                                 "number; the file is damaged", EXPORT_AGAIN)
            continue
        below = (column < 0).to_numpy().nonzero()[0] if metric.aggregate == SUM else []
        if len(below):
            first = int(below[0])
            raise ParseError(f"{source}: launch {kernels['id'].iloc[first]}'s {name} is {column.iloc[first]:g}, "
                             "below zero; the file is damaged", EXPORT_AGAIN)
