"""A report as a list of blocks (headings, paragraphs, lists, tables, images), written out as
Markdown or as one self-contained HTML page (images inline as base64 PNG).

Text is plain; `code` in backticks stays code in both outputs.
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass

_CODE = re.compile(r"`([^`]+)`")
_RIGHT = ' class="r"'

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 1080px; margin: 2em auto;
       padding: 0 1em; color: #1a1a1a; line-height: 1.45; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; } h3 { margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { padding: 0.25em 0.6em; border-bottom: 1px solid #e4e4e4; }
th { text-align: left; background: #f5f5f5; } td.r, th.r { text-align: right; font-variant-numeric: tabular-nums; }
img { max-width: 100%; height: auto; } code { background: #f3f3f3; padding: 0 0.2em; border-radius: 3px; }
"""


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    right: tuple[bool, ...]  # right-align this column (numbers)


@dataclass(frozen=True)
class Image:
    file_name: str  # what Markdown links to; the caller writes the file beside report.md
    alt: str
    png: bytes


Block = Heading | Paragraph | Bullets | Table | Image


def to_markdown(blocks: list[Block]) -> str:
    parts = []
    for block in blocks:
        if isinstance(block, Heading):
            parts.append(f"{'#' * block.level} {block.text}")
        elif isinstance(block, Paragraph):
            parts.append(block.text)
        elif isinstance(block, Bullets):
            parts.append("\n".join(f"- {item}" for item in block.items))
        elif isinstance(block, Table):
            parts.append(_markdown_table(block))
        else:
            parts.append(f"![{block.alt}]({block.file_name})")
    return "\n\n".join(parts) + "\n"


def to_html(blocks: list[Block], title: str) -> str:
    body = []
    for block in blocks:
        if isinstance(block, Heading):
            body.append(f"<h{block.level}>{_inline(block.text)}</h{block.level}>")
        elif isinstance(block, Paragraph):
            body.append(f"<p>{_inline(block.text)}</p>")
        elif isinstance(block, Bullets):
            body.append("<ul>" + "".join(f"<li>{_inline(item)}</li>" for item in block.items) + "</ul>")
        elif isinstance(block, Table):
            body.append(_html_table(block))
        else:
            data = base64.b64encode(block.png).decode("ascii")
            body.append(f'<p><img alt="{html.escape(block.alt)}" src="data:image/png;base64,{data}"></p>')
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{html.escape(title)}</title>\n"
            f"<style>{STYLE}</style>\n</head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n")


def _markdown_table(table: Table) -> str:
    def row(cells):
        return "| " + " | ".join(cell.replace("|", "\\|").replace("\n", " ") for cell in cells) + " |"
    rule = "| " + " | ".join("---:" if right else "---" for right in table.right) + " |"
    return "\n".join([row(table.headers), rule, *(row(cells) for cells in table.rows)])


def _html_table(table: Table) -> str:
    def cells(tag, values):
        return "".join(f"<{tag}{_RIGHT if right else ''}>{_inline(value)}</{tag}>" for value, right in zip(values, table.right))
    rows = "".join(f"<tr>{cells('td', row)}</tr>" for row in table.rows)
    return f"<table><thead><tr>{cells('th', table.headers)}</tr></thead><tbody>{rows}</tbody></table>"


def _inline(text: str) -> str:
    """Escaped text with `code` spans and line breaks kept."""
    return _CODE.sub(lambda match: f"<code>{match.group(1)}</code>", html.escape(text)).replace("\n", "<br>")
