"""Tables for the terminal, the one way every command prints one (analyze, pipeline, explain), and
how a table is fitted to the terminal's width (columns left out in a stated order).

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


def fit_columns(columns: list, rows: list[dict], width: int, drop_order: tuple[str, ...]) -> list:
    """`columns` less the first of `drop_order` present, then the next, until the table fits `width`
    terminal columns (each column as wide as its heading's longest line or its widest cell)."""
    columns = list(columns)
    for key in drop_order:
        if table_width(columns, rows) <= width:
            break
        columns = [column for column in columns if column[1] != key]
    return columns


def fit_named(columns: list, rows_for, name_widths: tuple[int, ...], width: int,
              drop_order: tuple[str, ...]) -> tuple[list, list[dict]]:
    """Columns and rows of a table whose names shorten: `rows_for(name_width)` gives the rows with
    names at most that wide; each width of `name_widths` in turn gets fit_columns' drops, and the
    first that fits is kept (else the last: the terminal then folds)."""
    for name_width in name_widths:
        rows = rows_for(name_width)
        columns_shown = fit_columns(columns, rows, width, drop_order)
        if table_width(columns_shown, rows) <= width:
            break
    return columns_shown, rows


def table_width(columns: list, rows: list[dict]) -> int:
    """Terminal columns a table takes: each column as wide as its heading's longest line or its
    widest cell, plus rich's borders and padding."""
    return 1 + sum(3 + max(max(len(line) for line in heading.split("\n")),
                           max((len(cell(row.get(key), spec)) for row in rows), default=1))
                   for heading, key, spec in columns)


def left_out(present: list, shown: list) -> str:
    """A caption's note naming the columns fit_columns left out."""
    gone = [heading.replace("\n", " ") for heading, key, _ in present if (heading, key, _) not in shown]
    return f"; left out to fit the terminal: {', '.join(gone)} (in --json)" if gone else ""
