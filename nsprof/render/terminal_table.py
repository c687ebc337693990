"""Tables for the terminal, the one way every command prints one (analyze, pipeline, explain).

A column is (heading, record key, format): "" for text, a Python format spec (",.1f"; ".0%" shows
a fraction as a percentage), or a function of the value (nsprof.render.format's). A value that was not measured reads as
nsprof.render.format.MISSING, whatever the table.
"""

from __future__ import annotations

import math
from rich.markup import escape
from rich.table import Table

from nsprof.render.format import MISSING


def plain(value):
    """A value as Python holds it: None for NaN, NA and infinities, numpy scalars as Python ones."""
    if isinstance(value, list):
        return value
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # a NumPy scalar (float32 is no float)
        value = value.item()
    if value is None or type(value).__name__ == "NAType" or (isinstance(value, float) and not math.isfinite(value)):
        return None
    return value


def cell(value, spec) -> str:
    """`value` as its column's format says (module docstring)."""
    value = plain(value)
    if value is None:
        return MISSING
    if not spec:
        return str(value)
    if callable(spec):
        return spec(value)
    return format(value, spec) if isinstance(value, (int, float)) else str(value)


def rich_table(title: str | None, columns: tuple, rows: list[dict], caption: str | None = None) -> Table:
    """A rich Table: numbers right-aligned, text folded."""
    table = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    for heading, key, spec in columns:
        # a problem size is never folded (no_wrap: rich then narrows the other columns; a min_width
        # would make it crop the table's right edge instead)
        table.add_column(heading, justify="right" if spec else "left", overflow="fold", no_wrap=key == "size")
    for row in rows:
        table.add_row(*(escape(cell(row.get(key), spec)) for _, key, spec in columns))
    return table
