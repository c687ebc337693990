"""Print an Explanation three ways: rich formatting for a terminal, Markdown, or JSON."""

from __future__ import annotations

import json
import math
import re

from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape
from rich.table import Table as RichTable
from rich.text import Text

from nsprof.explain.blocks import Bullets, Drawing, Explanation, Table
from nsprof.render.terminal_table import cell, rich_table

def to_terminal(explanation: Explanation, console: Console) -> None:
    console.rule(f"[bold]{escape(explanation.title)}")
    console.print(Text(explanation.summary, style="italic"))
    for section in explanation.sections:
        if section.heading:
            console.print()
            console.print(Text(section.heading, style="bold underline"))
        for block in section.blocks:
            console.print()
            if isinstance(block, str):
                console.print(Markdown(block))
            elif isinstance(block, Table):
                console.print(_rich_table(block))
            elif isinstance(block, Drawing):
                console.print(Text(block.title, style="bold"))
                console.print(Text("\n".join(block.lines)), soft_wrap=True)  # never re-wrap a grid
            elif isinstance(block, Bullets) and block.markdown:
                console.print(Markdown("\n".join(f"- {item}" for item in block.items)))
            elif isinstance(block, Bullets):
                console.print(Text("\n".join(f"• {item}" for item in block.items)))


def to_markdown(explanation: Explanation) -> str:
    parts = [f"# {explanation.title}", f"*{_escape(explanation.summary)}*"]
    for section in explanation.sections:
        if section.heading:
            parts.append(f"## {section.heading}")
        for block in section.blocks:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Table):
                parts.append(_markdown_table(block))
            elif isinstance(block, Drawing):
                parts.append(f"**{_escape(block.title)}**\n\n```\n" + "\n".join(block.lines) + "\n```")
            elif isinstance(block, Bullets):
                parts.append("\n".join(f"- {item if block.markdown else _escape(item)}" for item in block.items))
    return "\n\n".join(parts) + "\n"


def to_json(explanation: Explanation) -> str:
    return json.dumps(_plain(explanation.document), indent=2)


def _rich_table(table: Table) -> RichTable:
    return rich_table(table.title, table.columns, table.rows, table.caption)


def _markdown_table(table: Table) -> str:
    headings = [heading.replace("\n", " ") for heading, _, _ in table.columns]
    lines = [f"**{_escape(table.title)}**", "", "| " + " | ".join(headings) + " |",
             "| " + " | ".join("---:" if spec else "---" for _, _, spec in table.columns) + " |"]
    lines += ["| " + " | ".join(_escape(cell(row.get(key), spec)) for _, key, spec in table.columns) + " |"
              for row in table.rows]
    if table.caption:
        lines += ["", f"*{_escape(table.caption)}*"]
    return "\n".join(lines)


def _escape(text: str) -> str:
    """Plain text made literal in Markdown (table pipes, emphasis, brackets, HTML)."""
    return re.sub(r"([\\`*_\[\]|<])", r"\\\1", text)


def _plain(value):
    """JSON-ready: NaN and infinities become null, numpy scalars Python ones, tuples lists."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
