"""Write a document (blocks of nsprof.render.document) four ways: to a terminal (rich), as
Markdown, as one self-contained HTML page (images inline as base64 PNG), or as JSON-ready data.

Every table goes through nsprof.render.terminal_table's `cell`, so a value reads the same in
each format, and one not measured reads as nsprof.render.format.MISSING (null in JSON).
"""

from __future__ import annotations

import base64
import html
import re
import textwrap
from functools import cache

from rich.console import Console
from rich.markup import escape as rich_escape
from rich.text import Text

from nsprof.render.document import Block, Bullets, Drawing, Heading, Image, Paragraph, Table
from nsprof.render.terminal_table import cell, plain, terminal_table

_CODE_SPAN = re.compile(r"(`[^`]+`)")
# What Markdown could read as markup in plain text (a backtick left outside a code span is a lone one)
_MARKUP = re.compile(r"[\\`*\[\]|<]|_+")
_RIGHT = ' class="r"'  # numbers: right-aligned (STYLE)

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 1080px; margin: 2em auto;
       padding: 0 1em; color: #1a1a1a; line-height: 1.45; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; } h3 { margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { padding: 0.25em 0.6em; border-bottom: 1px solid #e4e4e4; }
th { text-align: left; background: #f5f5f5; } td.r, th.r { text-align: right; font-variant-numeric: tabular-nums; }
td.r { white-space: nowrap; }  /* a number is never broken across lines */
img { max-width: 100%; height: auto; } code { background: #f3f3f3; padding: 0 0.2em; border-radius: 3px; }
div.wide, pre { overflow-x: auto; } h1, h2, h3, p, li, figcaption { overflow-wrap: anywhere; }
"""


# --- terminal ----------------------------------------------------------------------------------

def to_terminal(blocks: list[Block], console: Console, spaced: bool = True) -> None:
    """Headings bold (the title as a rule), Markdown rendered, tables as every command prints them;
    a blank line between blocks unless not `spaced` (a run of tables, as `nsprof analyze` prints)."""
    for index, block in enumerate(blocks):
        previous = blocks[index - 1] if index else None
        if spaced and previous is not None and not (isinstance(previous, Heading) and previous.level == 1):
            console.print()  # a blank line between blocks; a title's rule sets itself apart
        if isinstance(block, Heading) and block.level == 1:
            console.rule(f"[bold]{rich_escape(block.text)}")
        elif isinstance(block, Heading):
            console.print(Text(block.text, style="bold underline" if block.level == 2 else "bold"))
        elif isinstance(block, Paragraph) and block.markdown:
            _print_markdown(console, block.text)
        elif isinstance(block, Paragraph):
            console.print(Text(prose(block.text, console.width), style="italic" if block.emphasis else ""))
        elif isinstance(block, Bullets) and block.markdown:
            _print_markdown(console, _markdown_list(block.items))
        elif isinstance(block, Bullets):
            console.print(Text("\n".join(prose(item, console.width, "• ", "  ") for item in block.items)))
        elif isinstance(block, Table):
            console.print(terminal_table(block, console.width))
        elif isinstance(block, Drawing):
            console.print(Text(block.title, style="bold"))
            wide = max(map(len, block.lines), default=0) > console.width
            lines = block.narrow if wide and block.narrow else block.lines
            console.print(Text("\n".join(lines)), soft_wrap=True)  # a grid re-wrapped is no grid
        else:
            console.print(Text(f"[image {block.file_name}: {block.alt}]", style="dim"))


_NUMBER_AND_UNIT = re.compile(r"(\d) (?=(?:[kMGTPµnm]?(?:s|B|B/s|FLOP/s|FLOP)|[kMGTP])(?!\w))")


def prose(text: str, width: int, first: str = "", rest: str = "") -> str:
    """`text` wrapped to `width` at spaces, never between a number and its unit ("284 k", "146 µs"),
    with no trailing spaces (rich would break "284 k" across lines, and pad them)."""
    glued = _NUMBER_AND_UNIT.sub("\\1\u00a0", text)  # textwrap breaks only at ASCII whitespace
    lines = textwrap.wrap(glued, width, initial_indent=first, subsequent_indent=rest, break_long_words=False,
                          break_on_hyphens=False) or [first.rstrip()]
    return "\n".join(line.replace("\u00a0", " ") for line in lines)


def _print_markdown(console: Console, text: str) -> None:
    """`text` as rich renders Markdown, without the blank line rich puts before a list: the blank
    line between blocks is to_terminal's."""
    from rich.segment import Segment, Segments

    lines = console.render_lines(_rich_markdown(text), console.options, pad=False)
    while lines and not "".join(segment.text for segment in lines[0]).strip():
        lines.pop(0)
    console.print(Segments([segment for line in lines for segment in (*line, Segment.line())]), end="")


def _rich_markdown(text: str):
    """rich's Markdown, loaded when a page has some (its parser costs start-up time: `explain --list` has none)."""
    from rich.markdown import Markdown

    return Markdown(text)


# --- Markdown ----------------------------------------------------------------------------------

def to_markdown(blocks: list[Block]) -> str:
    return "\n\n".join(_markdown_block(block) for block in blocks) + "\n"


def _markdown_block(block: Block) -> str:
    if isinstance(block, Heading):
        return f"{'#' * block.level} {markdown_text(block.text)}"
    if isinstance(block, Paragraph):
        if block.markdown:
            return block.text
        return f"*{markdown_text(block.text)}*" if block.emphasis else markdown_text(block.text)
    if isinstance(block, Bullets):
        return _markdown_list(block.items if block.markdown else [markdown_text(item) for item in block.items])
    if isinstance(block, Table):
        return _markdown_table(block)
    if isinstance(block, Drawing):
        return f"**{markdown_text(block.title)}**\n\n```\n" + "\n".join(block.lines) + "\n```"
    return f"![{block.alt}]({block.file_name})"


def _markdown_table(table: Table) -> str:
    def row(cells):
        return "| " + " | ".join(markdown_text(text, in_table=True) for text in cells) + " |"
    lines = [f"**{markdown_text(table.title)}**", ""] if table.title else []
    lines += [row(heading for heading, _, _ in table.columns),
              "| " + " | ".join("---:" if spec else "---" for _, _, spec in table.columns) + " |"]
    lines += [row(cell(record.get(key), spec) for _, key, spec in table.columns) for record in table.rows]
    if caption := table.caption_with():
        lines += ["", f"*{markdown_text(caption)}*"]
    return "\n".join(lines)


def _markdown_list(items) -> str:
    return "\n".join(f"- {item}" for item in items)


def markdown_text(text: str, in_table: bool = False) -> str:
    """Plain text made literal in Markdown, its `code` spans kept code. In a table cell a line
    break becomes a space and `|` is escaped inside code spans too (a pipe ends a cell there)."""
    parts = _CODE_SPAN.split(text)
    for index, part in enumerate(parts):
        if index % 2 == 0:
            parts[index] = _MARKUP.sub(_escaped, part)
        elif in_table:
            parts[index] = part.replace("|", "\\|")
    joined = "".join(parts)
    return joined.replace("\n", " ") if in_table else joined


def _escaped(match: re.Match) -> str:
    """A markup character backslash-escaped; underscores inside a word (sgemm_v1, l1tex__t_bytes)
    left alone, as Markdown never reads them as emphasis, so names stay readable in the file."""
    text, start, end = match.string, match.start(), match.end()
    if match.group().startswith("_") and start > 0 and end < len(text) and text[start - 1].isalnum() and text[end].isalnum():
        return match.group()
    return "".join(f"\\{character}" for character in match.group())


# --- HTML --------------------------------------------------------------------------------------

def to_html(blocks: list[Block], title: str) -> str:
    body = "\n".join(_html_block(block) for block in blocks)
    # the viewport line: a phone lays the page out at its own width instead of a desktop's, zoomed out
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{html.escape(title)}</title>\n"
            f"<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")


def _html_block(block: Block) -> str:
    if isinstance(block, Heading):
        return f"<h{block.level}>{_inline(block.text)}</h{block.level}>"
    if isinstance(block, Paragraph):
        if block.markdown:
            return _markdown_parser().render(block.text).rstrip("\n")
        return f"<p><em>{_inline(block.text)}</em></p>" if block.emphasis else f"<p>{_inline(block.text)}</p>"
    if isinstance(block, Bullets):
        show = _markdown_parser().renderInline if block.markdown else _inline
        return "<ul>" + "".join(f"<li>{show(item)}</li>" for item in block.items) + "</ul>"
    if isinstance(block, Table):
        return _html_table(block)
    if isinstance(block, Drawing):
        return f"<p><strong>{_inline(block.title)}</strong></p>\n<pre>{html.escape(chr(10).join(block.lines))}</pre>"
    data = base64.b64encode(block.png).decode("ascii")
    return f'<p><img alt="{html.escape(block.alt)}" src="data:image/png;base64,{data}"></p>'


def _html_table(table: Table) -> str:
    def cells(tag, texts):
        return "".join(f"<{tag}{_RIGHT if spec else ''}>{_inline(text)}</{tag}>"
                       for text, (_, _, spec) in zip(texts, table.columns))
    head = cells("th", [heading for heading, _, _ in table.columns])
    rows = "".join(f"<tr>{cells('td', [_unbroken(cell(record.get(key), spec)) for _, key, spec in table.columns])}</tr>"
                   for record in table.rows)
    title = f"<p><strong>{_inline(table.title)}</strong></p>\n" if table.title else ""
    said = table.caption_with()
    caption = f"\n<p><em>{_inline(said)}</em></p>" if said else ""
    # a table wider than the screen scrolls on its own, the page around it does not
    return f"{title}<div class=\"wide\"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>{caption}"


_QUANTITY = re.compile(r"([-+~]?[\d.,]+%?) (\S{1,8})")  # "353 µs", "4.26 M", "1,024 KiB": a number and its unit


def _unbroken(text: str) -> str:
    """A cell that is a number and its unit joined by a no-break space: a browser wrapping a narrow
    column must not put the unit on a line of its own."""
    return _QUANTITY.sub("\\1\u00a0\\2", text) if _QUANTITY.fullmatch(text) else text


def _inline(text: str) -> str:
    """Plain text escaped, its `code` spans and line breaks kept."""
    return _CODE_SPAN.sub(lambda match: f"<code>{match.group(1)[1:-1]}</code>", html.escape(text)).replace("\n", "<br>")


@cache
def _markdown_parser():
    """CommonMark with tables, raw HTML shown as text (markdown-it-py: what rich renders Markdown with)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table")


# --- JSON --------------------------------------------------------------------------------------

def to_json(blocks: list[Block]) -> list[dict]:
    """The blocks as JSON-ready data: tables as records of their columns' raw values, images by
    file name (the PNG is a file beside the document)."""
    return [_json_block(block) for block in blocks]


def _json_block(block: Block) -> dict:
    if isinstance(block, Table):
        keys = [key for _, key, _ in block.columns]
        return {"type": "table", "title": block.title, "caption": block.caption_with(),
                "columns": [{"heading": heading, "key": key} for heading, key, _ in block.columns],
                "rows": [{key: json_ready(record.get(key)) for key in keys} for record in block.rows]}
    if isinstance(block, Image):
        return {"type": "image", "file_name": block.file_name, "alt": block.alt}
    fields = {Heading: ("level", "text"), Paragraph: ("text", "markdown", "emphasis"), Bullets: ("items", "markdown"),
              Drawing: ("title", "lines")}[type(block)]
    return {"type": type(block).__name__.lower(), **{name: json_ready(getattr(block, name)) for name in fields}}


def json_ready(value):
    """`value` as json.dumps takes it: NaN, NA and infinities as None, numpy scalars as Python
    ones, tuples as lists, through dicts and lists."""
    if isinstance(value, dict):
        return {key: json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(item) for item in value]
    return plain(value)
