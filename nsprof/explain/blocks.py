"""The pieces an explanation is made of: sections of Markdown prose, tables, text drawings and
bullet lists (rendered by nsprof.explain.render), and the JSON document with the same records."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Table:
    title: str
    columns: tuple[tuple[str, str, str], ...]  # (heading, record key, format spec; "" for text)
    rows: list[dict]
    caption: str | None = None


@dataclass(frozen=True)
class Drawing:
    title: str
    lines: list[str]


@dataclass(frozen=True)
class Bullets:
    items: list[str]
    markdown: bool = False  # topic data is Markdown; computed lines are plain text


@dataclass(frozen=True)
class Section:
    heading: str | None
    blocks: list = field(default_factory=list)  # Markdown prose (str), Table, Drawing, Bullets


@dataclass(frozen=True)
class Explanation:
    title: str
    summary: str
    sections: list[Section]
    document: dict  # what --json prints
