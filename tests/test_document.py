"""The one document model (nsprof.render.document): the same blocks written to a terminal, as
Markdown, as HTML and as JSON, each format showing the same cells and escaping its own way."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest
from rich.console import Console

from nsprof.render.document import Bullets, Drawing, Heading, Image, Paragraph, Table
from nsprof.render.document_writers import json_ready, markdown_text, to_html, to_json, to_markdown, to_terminal
from nsprof.render.format import MISSING, percent

COLUMNS = (("kernel", "kernel", ""), ("time us", "time_us", ",.2f"), ("share", "share", percent))
ROWS = [{"kernel": "gemm<float>|v2", "time_us": 1234.5, "share": 25.0},
        {"kernel": "sgemm_v1", "time_us": float("nan"), "share": None}]
GRID = ["bank  " + " ".join(f"{b:2d}" for b in range(32)), "lane 0 " + "  ·" * 32]
BLOCKS = [
    Heading(1, "Kernels <on> the GPU"),
    Paragraph("One line of summary.", emphasis=True),
    Heading(2, "Measured"),
    Paragraph("Read from `profiles/a_b` by nsprof."),
    Paragraph("Topic prose with **Markdown** in it.", markdown=True),
    Bullets(["plain *not emphasis*"]),
    Bullets(["**bold** item"], markdown=True),
    Table("Time per launch", COLUMNS, ROWS, "not measured: " + MISSING),
    Drawing("lane -> bank", GRID),
    Image("chart.png", "a chart", b"\x89PNG"),
]


def terminal(blocks, width=200) -> str:
    out = io.StringIO()
    to_terminal(blocks, Console(file=out, width=width, color_system=None))
    return out.getvalue()


def test_a_missing_value_reads_as_missing_in_text_and_null_in_json():
    text = terminal(BLOCKS)
    assert "1,234.50" in text and "25.0%" in text
    assert next(line for line in text.splitlines() if "sgemm_v1" in line).count(MISSING) == 2
    markdown = to_markdown(BLOCKS)
    assert f"| sgemm_v1 | {MISSING} | {MISSING} |" in markdown
    table = next(block for block in to_json(BLOCKS) if block["type"] == "table")
    assert table["rows"][1] == {"kernel": "sgemm_v1", "time_us": None, "share": None}
    assert table["rows"][0]["time_us"] == 1234.5  # the raw value, not the cell
    json.dumps(to_json(BLOCKS), allow_nan=False)  # NaN never reaches the JSON


def test_markdown_keeps_code_and_escapes_the_rest():
    markdown = to_markdown(BLOCKS)
    assert markdown.startswith("# Kernels \\<on> the GPU\n\n*One line of summary.*\n\n## Measured\n")
    assert "| gemm\\<float>\\|v2 | 1,234.50 | 25.0% |" in markdown  # a pipe would end the cell
    assert "| kernel | time us | share |\n| --- | ---: | ---: |" in markdown
    assert "Read from `profiles/a_b` by nsprof." in markdown  # code spans stay code
    assert "Topic prose with **Markdown** in it." in markdown  # Markdown prose passes through
    assert "- plain \\*not emphasis\\*" in markdown and "- **bold** item" in markdown
    assert "**Time per launch**\n\n| kernel" in markdown and f"*not measured: {MISSING}*" in markdown
    assert "**lane -> bank**\n\n```\n" + "\n".join(GRID) + "\n```" in markdown
    assert markdown.endswith("![a chart](chart.png)\n")


def test_markdown_escapes_only_what_markdown_would_read():
    assert markdown_text("sgemm_v1 and l1tex__t_bytes") == "sgemm_v1 and l1tex__t_bytes"  # inside words: literal
    assert markdown_text("_barrier and a_ and [k]") == "\\_barrier and a\\_ and \\[k\\]"
    assert markdown_text("a `x|y` b|c", in_table=True) == "a `x\\|y` b\\|c"
    assert markdown_text("a `x|y`") == "a `x|y`"
    assert markdown_text("two\nlines", in_table=True) == "two lines"


def test_html_escapes_text_and_renders_markdown():
    page = to_html(BLOCKS, "a <title>")
    assert "<title>a &lt;title&gt;</title>" in page and "<h1>Kernels &lt;on&gt; the GPU</h1>" in page
    assert "<p><em>One line of summary.</em></p>" in page
    assert "<p>Read from <code>profiles/a_b</code> by nsprof.</p>" in page
    assert "<p>Topic prose with <strong>Markdown</strong> in it.</p>" in page
    assert "<li>plain *not emphasis*</li>" in page and "<li><strong>bold</strong> item</li>" in page
    assert "<td>gemm&lt;float&gt;|v2</td><td class=\"r\">1,234.50</td>" in page
    assert f"<td class=\"r\">{MISSING}</td>" in page
    assert "<pre>bank " in page and 'src="data:image/png;base64,iVBORw=="' in page


def test_html_shows_no_raw_html_from_markdown_prose():
    page = to_html([Paragraph("a <script>x</script> b", markdown=True)], "t")
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_terminal_never_rewraps_a_drawing_and_names_images():
    text = terminal(BLOCKS, width=60)
    assert "\n".join(GRID) in text  # each grid line whole, though wider than the console
    assert "[image chart.png: a chart]" in text
    assert "Kernels <on> the GPU" in text.splitlines()[0]  # the title's rule
    assert text.splitlines()[1] == "One line of summary."  # no blank line under the rule


def test_json_lists_the_blocks_in_order_with_images_by_name():
    blocks = to_json(BLOCKS)
    assert [block["type"] for block in blocks] == ["heading", "paragraph", "heading", "paragraph", "paragraph",
                                                   "bullets", "bullets", "table", "drawing", "image"]
    assert blocks[0] == {"type": "heading", "level": 1, "text": "Kernels <on> the GPU"}
    assert blocks[-1] == {"type": "image", "file_name": "chart.png", "alt": "a chart"}
    assert blocks[7]["columns"][1] == {"heading": "time us", "key": "time_us"}


def test_json_ready_makes_plain_python():
    value = {"a": (np.float32("nan"), np.int64(3)), "b": [math.inf, {"c": np.float64(0.5)}]}
    assert json_ready(value) == {"a": [None, 3], "b": [None, {"c": 0.5}]}
    assert type(json_ready(np.int64(3))) is int


def test_a_preformatted_table_aligns_as_told_and_keys_its_records_by_header():
    table = Table.preformatted(("stage", "time"), (("v1", "4.96 ms"),), (False, True))
    assert table.rows == [{"stage": "v1", "time": "4.96 ms"}]
    assert "| stage | time |\n| --- | ---: |\n| v1 | 4.96 ms |" in to_markdown([table])
    # a number and its unit never break apart in a browser: a no-break space joins them
    assert '<td>v1</td><td class="r">4.96\xa0ms</td>' in to_html([table], "t")
    with pytest.raises(ValueError, match="distinct headers"):
        Table.preformatted(("a", "a"), (), (False, False))


def test_a_numpy_float32_nan_is_missing_everywhere():
    """NumPy's float32 is no Python float: its NaN must still read as missing, not 'nan'."""
    from nsprof.render.terminal_table import cell

    assert cell(np.float32("nan"), ".1f") == MISSING and json_ready([np.float32("inf")]) == [None]
    assert cell(np.float32(2.5), ".1f") == "2.5"


def test_a_percent_format_spec_is_pythons():
    """'.0%' shows a fraction as a percentage (explain's coalescing table: 1.0 is 100%)."""
    from nsprof.render.terminal_table import cell

    assert (cell(1.0, ".0%"), cell(0.125, ".1%")) == ("100%", "12.5%")
