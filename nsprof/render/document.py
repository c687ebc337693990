"""The one document model: what a report or an explanation says, as a list of blocks (headings,
paragraphs, bullet lists, tables, text drawings, images) that nsprof.render.document_writers
writes to a terminal, as Markdown, as one HTML page, or as JSON.

Text is plain unless a block says it is Markdown. Plain text is shown literally, except that
`code` in backticks stays code, so a report can name a command or a file in running text.

Tables keep their values raw (numbers, None for not measured) beside how each column formats
them: the terminal, Markdown and HTML show the formatted cells, JSON the values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# A table column: (heading, record key, format). The format is "" for text (left-aligned), a Python
# format spec such as ",.1f" (".0%" shows a fraction as a percentage) or a function of the value; a
# column with a format is right-aligned. nsprof.render.terminal_table.cell applies it, and shows
# a missing value as nsprof.render.format.MISSING whatever the column (so a function gets only
# values the column holds, of whatever type it holds).
Column = tuple[str, str, str | Callable[[Any], str]]

# The width a document written as a file (Markdown, HTML) is laid out for: its tables have room,
# so every column of the hot-kernel table is shown and names read at their widest.
REPORT_WIDTH = 200

# The format of a column whose cells were formatted already: shown as they are, right-aligned
# as the numbers they hold.
AS_NUMBER: Callable[[object], str] = str


@dataclass(frozen=True)
class Heading:
    level: int  # 1: the document's title; 2: a section; 3: a part of one
    text: str


@dataclass(frozen=True)
class Paragraph:
    text: str
    markdown: bool = False  # written text (a topic's prose) is Markdown; computed sentences are plain
    emphasis: bool = False  # plain text set in italics: a document's one-line summary


@dataclass(frozen=True)
class Bullets:
    items: Sequence[str]
    markdown: bool = False


@dataclass(frozen=True)
class Table:
    title: str | None
    columns: Sequence[Column]
    rows: Sequence[Mapping[str, Any]]  # records: a column's key picks its value
    caption: str | None = None  # a note under the table
    # record keys of the columns a terminal too narrow leaves out, in this order (the caption says which)
    drop_order: tuple[str, ...] = ()
    whole: tuple[str, ...] = ()  # keys of text columns never wrapped on a terminal (short phrases: titles)
    # headings of columns left out already to fit a width (the table was fitted as it was made)
    left_out: tuple[str, ...] = ()

    def caption_with(self, also_left_out: Sequence[str] = ()) -> str | None:
        """The caption with one note naming every column left out, here and by a writer."""
        gone = list(dict.fromkeys([*self.left_out, *also_left_out]))
        note = f"left out to fit the terminal: {', '.join(gone)} (in --json)" if gone else ""
        return "; ".join(part for part in (self.caption, note) if part) or None

    @classmethod
    def preformatted(cls, headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool],
                     title: str | None = None, caption: str | None = None) -> Table:
        """A table of cells formatted already, each row in the headers' order; `right` aligns a
        column right (numbers). The headers are the records' keys, so they must differ."""
        if len(set(headers)) != len(headers):
            raise ValueError(f"a preformatted table needs distinct headers: {headers}")
        columns = tuple((header, header, AS_NUMBER if flush_right else "") for header, flush_right in zip(headers, right))
        return cls(title, columns, [dict(zip(headers, row)) for row in rows], caption)


@dataclass(frozen=True)
class Drawing:
    """Monospace lines (a bank grid, a sector map): never re-wrapped, never re-spaced."""

    title: str
    lines: Sequence[str]
    narrow: Sequence[str] = ()  # the same picture for a terminal narrower than `lines` (none: lines)


@dataclass(frozen=True)
class Image:
    file_name: str  # what Markdown links to; the caller writes the file beside the Markdown
    alt: str
    png: bytes  # HTML carries it inline


Block = Heading | Paragraph | Bullets | Table | Drawing | Image
