"""Tables for the terminal, the one way every command prints one (analyze, pipeline, explain).

A column is (heading, record key, format): "" for text, a format spec (",.1f"; one ending in "%"
appends a percent sign), or a function of the value. A value that was not measured reads as
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
    if spec.endswith("%"):
        return f"{value:{spec[:-1]}}%"
    return format(value, spec) if isinstance(value, (int, float)) else str(value)


def rich_table(title: str | None, columns: tuple, rows: list[dict], caption: str | None = None) -> Table:
    """A rich Table: numbers right-aligned, text folded."""
    table = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    for heading, key, spec in columns:
        table.add_column(heading, justify="right" if spec else "left", overflow="fold",
                         min_width=len("4096x4096x4096") if key == "size" else None)
    for row in rows:
        table.add_row(*(escape(cell(row.get(key), spec)) for _, key, spec in columns))
    return table
