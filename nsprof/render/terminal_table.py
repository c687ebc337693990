"""Tables for the terminal, the one way every command prints one (analyze, pipeline, explain), and
how a table is fitted to the terminal's width (columns left out in a stated order).

A column is (heading, record key, format): "" for text, a Python format spec (",.1f"; ".0%" shows
a fraction as a percentage), or a function of the value (nsprof.render.format's). A value that was not measured reads as
nsprof.render.format.MISSING, whatever the table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rich.markup import escape
from rich.table import Table

from nsprof.render.document import Table as DocumentTable
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
    if spec.endswith("d") and isinstance(value, float) and value.is_integer():
        value = int(value)  # a count column that pandas made float because another row lacks it
    return format(value, spec) if isinstance(value, (int, float)) else str(value)


def in_us(spec: str):
    """A column's format for nanoseconds shown in microseconds (its heading says us)."""
    return lambda ns: format(ns / 1e3, spec)


def in_mb(spec: str):
    """A column's format for bytes shown in MB."""
    return lambda nbytes: format(nbytes / 1e6, spec)


def rich_table(title: str | None, columns: tuple, rows: Sequence[Mapping[str, Any]], caption: str | None = None,
               width: int | None = None, whole: tuple[str, ...] = ()) -> Table:
    """A rich Table: numbers right-aligned, text folded. Given the terminal's `width`, a table too
    wide for it wraps its prose columns (text with spaces) at spaces and keeps every other column
    whole (rich would narrow the widest column first, breaking a name or a number)."""
    table = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    fixed = _prose_widths(columns, rows, width, whole) if width else None
    for index, (heading, key, spec) in enumerate(columns):
        # a problem size is never folded (no_wrap: rich then narrows the other columns; a min_width
        # would make it crop the table's right edge instead)
        table.add_column(heading, justify="right" if spec else "left", overflow="fold", no_wrap=key == "size",
                         width=fixed[index] if fixed else None)
    for row in rows:
        table.add_row(*(escape(cell(row.get(key), spec)) for _, key, spec in columns))
    return table


def fit_columns(columns: list, rows: Sequence[Mapping[str, Any]], width: int, drop_order: tuple[str, ...], prose: bool = False,
                whole: tuple[str, ...] = ()) -> list:
    """`columns` less the first of `drop_order` present, then the next, until the table fits `width`
    terminal columns (each column as wide as its heading's longest line or its widest cell; with
    `prose`, prose columns as wide as their longest word: table_width). Columns empty on every row
    go before any of `drop_order`; the first column, which names the rows, never goes."""
    columns = list(columns)
    empty = [key for _, key, spec in columns[1:] if rows and all(cell(row.get(key), spec) == MISSING for row in rows)]
    for key in dict.fromkeys([*empty, *drop_order]):
        if table_width(columns, rows, prose, whole) <= width:
            break
        columns = [column for column in columns if column[1] != key]
    return columns


def fit_named(columns: list, rows_for, name_widths: tuple[int, ...], width: int,
              drop_order: tuple[str, ...], weighed: int = 1) -> tuple[list, list[dict]]:
    """Columns and rows of a table whose names shorten: `rows_for(name_width)` gives the rows with
    names at most that wide; each width of `name_widths` in turn gets fit_columns' drops, and the
    first that fits is kept (else the last: the terminal then folds). The first `weighed` widths
    are weighed against the columns: of those that fit, the one that keeps most columns wins
    (the widest of equals), so a name a little shorter can keep a column."""
    fitted = []
    for index, name_width in enumerate(name_widths):
        rows = rows_for(name_width)
        columns_shown = fit_columns(columns, rows, width, drop_order)
        if table_width(columns_shown, rows) <= width:
            fitted.append((columns_shown, rows))
            if index + 1 >= weighed:
                break
    if fitted:
        return max(fitted, key=lambda found: len(found[0]))  # max keeps the first (widest names) of equals
    return columns_shown, rows


def table_width(columns: list, rows: Sequence[Mapping[str, Any]], prose: bool = False, whole: tuple[str, ...] = ()) -> int:
    """Terminal columns a table takes: each column as wide as its heading's longest line or its
    widest cell, plus rich's borders and padding; with `prose`, a prose column (text with spaces)
    only as wide as its longest word, as rich_table wraps it."""
    return 1 + sum(3 + width for width in (_least(columns, rows, whole) if prose else _natural(columns, rows)))


def _natural(columns: Sequence, rows: Sequence[Mapping[str, Any]]) -> list[int]:
    return [max(max(len(line) for line in heading.split("\n")), max((len(cell(row.get(key), spec)) for row in rows), default=1))
            for heading, key, spec in columns]


PROSE_MIN = 24  # a prose column narrower than this reads as a word a line: columns go first


def _least(columns: Sequence, rows: Sequence[Mapping[str, Any]], whole: tuple[str, ...] = ()) -> list[int]:
    """Each column's narrowest without breaking a word: headings wrap at spaces; a prose column's
    cells too, to their longest word or PROSE_MIN where their text is longer; other cells whole."""
    widths = []
    for heading, key, spec in columns:
        texts = [cell(row.get(key), spec) for row in rows] or [""]
        heading_word = max(len(word) for word in heading.split() or [""])
        if not spec and key not in whole and any(" " in text for text in texts):
            longest_word = max(len(word) for text in texts for word in text.split() or [""])
            natural = max(len(text) for text in texts)
            widths.append(max(heading_word, longest_word, min(natural, PROSE_MIN)))
        else:
            widths.append(max(heading_word, max(map(len, texts))))
    return widths


def _prose_widths(columns: tuple, rows: Sequence[Mapping[str, Any]], width: int, whole: tuple[str, ...] = ()) -> list[int] | None:
    """Content widths that fit `width`: each column at its least (_least), what is left shared in
    proportion to how much wider each would be whole; None where the table fits as it is, or
    cannot fit even so."""
    natural, least = _natural(columns, rows), _least(columns, rows, whole)
    room = width - 1 - 3 * len(columns)
    if sum(natural) <= room or sum(least) > room:
        return None
    widths = list(least)
    spare = room - sum(least)
    wanted = sum(n - low for n, low in zip(natural, least))
    for index, (n, low) in enumerate(zip(natural, least)):
        widths[index] += (n - low) * spare // wanted if wanted else 0
    return widths


def terminal_table(block: DocumentTable, width: int) -> Table:
    """A document table (nsprof.render.document.Table) for a `width`-column terminal: columns of
    its drop_order left out in that order until it fits with its prose wrapped, then rich_table,
    the caption naming every column left out (here and when the table was made). A table that
    states no order and cannot fit loses its columns from the right, the first one staying."""
    columns, rows, drop_order = list(block.columns), block.rows, block.drop_order
    if not drop_order and table_width(columns, rows, True, block.whole) > width:
        drop_order = tuple(key for _, key, _ in reversed(columns[1:]))
    shown = fit_columns(columns, rows, width, drop_order, True, block.whole) if drop_order else columns
    return rich_table(block.title, tuple(shown), rows, block.caption_with(left_out(columns, shown, rows)), width,
                      block.whole)


def left_out(present: Sequence, shown: Sequence, rows: Sequence[Mapping[str, Any]] = ()) -> tuple[str, ...]:
    """The headings (on one line) of the columns of `present` that are not `shown`, but those
    empty on every one of `rows` (nothing was lost with them): for a Table's left_out."""
    def empty(key, spec) -> bool:
        return bool(rows) and all(cell(row.get(key), spec) == MISSING for row in rows)

    return tuple(heading.replace("-\n", "").replace("\n", " ") for heading, key, spec in present
                 if (heading, key, spec) not in shown and not empty(key, spec))
