"""Every table of analyze, stages, explain and diff fits terminals of 80, 100 and 120 columns with
no name or number broken across lines, on the committed real captures (CliRunner, COLUMNS set)."""

from __future__ import annotations

import functools
import io
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nsprof.cli import app
from nsprof.console import PIPE_WIDTH
from nsprof.explain.topics import TOPICS
from nsprof.ladder.registry import get_stage, stages_for

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "profiles" / "examples"
WIDTHS = (80, 100, 120)
COMMANDS = [
    *(["analyze", str(path)] for path in sorted(EXAMPLES.iterdir()) if path.is_dir()),
    *(["stages", "--op", op] for op in ("sgemm", "hgemm", "sgemv")),
    ["explain", "--list"], ["explain", "bank-conflicts", "--stage", "v5"], ["explain", "coalescing", "--op", "sgemv"],
    *(["explain", topic] for topic in TOPICS),
    ["diff", str(ROOT / "tests/data/diff-pairs/compile-block-eager.sqlite"),
     str(EXAMPLES / "h200-program-torch-compile/nsys.sqlite")],
    ["diff", str(EXAMPLES / "h200-sgemm-1024"), "--stages", "v5,v6"],
    ["diff", str(ROOT / "benchmarks/records/2026-11-24-h200-sgemm/h200-sgemm.json"),
     str(EXAMPLES / "h200-sgemm-1024/bench-nsys.json")],
]


def run(args: list[str], width: int) -> list[str]:
    return list(_run(tuple(args), width))


@functools.cache  # several tests read one command's output at one width
def _run(args: tuple[str, ...], width: int) -> tuple[str, ...]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    return tuple(result.stdout.splitlines())


def table_words(lines: list[str]) -> set[str]:
    """The words in table cells (between │ or ┃, split at spaces and slashes)."""
    return {word for line in lines if line[:1] in "│┃" for word in re.split(r"[\s│┃/]+", line) if word}


def broken_words(lines: list[str], whole: list[str]) -> list[str]:
    """Words of the tables in `lines` that are in none of the tables of `whole`, the same command at
    a width where nothing wraps, and are no shortening (…): pieces of a name or number folded."""
    return sorted(word for word in table_words(lines) - table_words(whole) if "…" not in word)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("args", COMMANDS, ids=lambda args: " ".join(Path(a).name if "/" in a else a for a in args))
def test_fits_the_terminal_with_no_word_broken(args, width):
    lines = run(args, width)
    too_wide = [line for line in lines if len(line) > width]
    assert not too_wide, too_wide[:3]
    assert not broken_words(lines, run(args, 1000))


def test_the_checker_sees_a_folded_name():
    """broken_words on rich's own folding of a name too narrow for its column (the check can fail)."""
    from rich.console import Console

    from nsprof.render.terminal_table import rich_table

    def drawn(width: int) -> list[str]:
        console = Console(width=width, record=True, file=io.StringIO())
        console.print(rich_table(None, (("range", "range", ""), ("us", "us", ",.1f")),
                                 [{"range": "nsprof:verify/sgemm/v10/1024x1024x1024", "us": 38.4}]))
        return console.export_text().splitlines()

    assert broken_words(drawn(24), drawn(200)) and not broken_words(drawn(200), drawn(200))


@pytest.mark.parametrize("width", (80, 100))
def test_sgemm_ranges_keep_v10_and_verify_apart(width):
    """The ranges that broke mid-number at 100 columns: one line each, every label a shortening of
    its own range only (v10 never reads v1, a verify range never reads as the timed one)."""
    lines = run(["analyze", str(EXAMPLES / "h200-sgemm-1024")], width)
    start = next(i for i, line in enumerate(lines) if line.startswith("NVTX ranges"))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("└"))
    labels = [line.split("│")[1].strip() for line in lines[start:end] if line.startswith("│")]
    document = json.loads(CliRunner().invoke(app, ["analyze", str(EXAMPLES / "h200-sgemm-1024"), "--json"]).stdout)
    names = [row["range"] for row in document["ranges"]]
    assert len(labels) == len(names)
    from nsprof.render.table_names import _reads_as

    for label, name in zip(labels, names):
        assert [other for other in names if _reads_as(label, other)] == [name], (label, name)


def test_the_stage_table_keeps_bank_conflicts_at_80_columns():
    lines = run(["analyze", str(EXAMPLES / "h200-sgemm-1024")], 80)
    header = " ".join(line for line in lines[:4] if line.startswith("┃"))
    assert "bank" in header and "conflicts" in header
    caption = " ".join(lines[lines.index(next(line for line in lines if line.startswith("└"))) + 1:][:12])
    assert "left out to fit the terminal:" in caption and "bank conflicts" not in caption.split("left out")[1]


def test_the_missing_metrics_hint_copies_as_one_option():
    """The ncu option is broken over lines with backslashes between metrics: joined as a shell
    joins them it is the option the JSON names."""
    lines = run(["analyze", str(EXAMPLES / "h200-hgemm-1024")], 80)  # captured before the FP16 counters of today's preset
    start = next(i for i, line in enumerate(lines) if line.startswith("  --metrics"))
    block = []
    for line in lines[start:]:
        block.append(line)
        if not line.endswith("\\"):
            break
    joined = "".join(line[:-1] if line.endswith("\\") else line for line in block).strip()
    document = json.loads(CliRunner().invoke(app, ["analyze", str(EXAMPLES / "h200-hgemm-1024"), "--json"]).stdout)
    assert joined == document["missing_metrics"]["ncu_options"]
    assert len(block) > 1 and max(map(len, block)) <= 80


def test_the_v5_lane_grid_fits_80_columns_and_matches_the_declaration():
    """At 80 columns the grid of v5's transposing stores comes in two halves of 16 banks; each lane
    is served by the bank its declared element lives in ((row * 132 ... no: the declared row
    length) / 4 bytes mod 32), in the wavefront the model gives."""
    from nsprof.access import lane_elements
    from nsprof.explain.bank_model import analyze_shared

    lines = run(["explain", "bank-conflicts", "--stage", "v5"], 80)
    assert max(map(len, lines)) <= 80
    access = next(a for a in get_stage("sgemm", "v5").accesses if a.space == "shared" and a.op == "store" and a.width == 4)
    analysis = analyze_shared(access)
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{access.source}: lane -> bank"))
    headers = [i for i in range(start, start + 80) if lines[i].startswith("bank ")]
    assert len(headers) == 2
    seen = {}
    for header in headers:
        banks = [int(b) for b in lines[header].split()[1:]]
        assert len(banks) == 16
        for line in lines[header + 1: header + 33]:
            lane = int(line[5:7])
            cells = line[8:8 + 3 * 16]
            for index, bank in enumerate(banks):
                mark = cells[3 * index: 3 * index + 3].strip()
                if mark != "·":
                    seen[lane] = (bank, int(mark))
    _rows, cols = access.shape
    for lane, (row, col) in enumerate(lane_elements(access)):
        assert seen[lane][0] == (row * cols + col) % 32  # 4-byte words
        assert seen[lane][1] == analysis.lanes[lane].wavefronts[0]


@pytest.mark.parametrize("op", ["sgemm", "hgemm", "sgemv"])
def test_stages_is_compact_and_keeps_file_names_whole(op):
    """At 80 columns at most 6 lines a stage (hgemm's 7 took 96 lines), 7 at any width; every
    kernel file name whole on one line."""
    for width in WIDTHS:
        text = "\n".join(run(["stages", "--op", op], width))
        assert len(text.splitlines()) <= 6 + (6 if width == 80 else 7) * len(stages_for(op))
        for stage in stages_for(op):
            if stage.kernel_file:
                assert re.search(rf"[│/]\s*{re.escape(Path(stage.kernel_file).name)}\s", text), (width, stage.kernel_file)


def test_piped_output_is_100_columns():
    assert PIPE_WIDTH == 100
    result = CliRunner().invoke(app, ["stages"], env={"COLUMNS": ""})
    assert max(map(len, result.stdout.splitlines())) <= PIPE_WIDTH


def test_bare_nsprof_prints_its_help():
    result = CliRunner().invoke(app, [])
    assert result.exit_code in (0, 2)
    assert "Usage: nsprof" in result.output and "analyze" in result.output
    assert "error:" not in result.output


def _column_cells(lines: list[str], title: str, column: int) -> list[str]:
    """A column's cells in the table titled `title`, a row each (continuation lines, blank there,
    left out)."""
    start = next(i for i, line in enumerate(lines) if line.strip() == title)
    body = next(i for i in range(start, len(lines)) if lines[i].startswith("┡"))
    end = next(i for i in range(body, len(lines)) if lines[i].startswith("└"))
    return [cell for line in lines[body + 1:end] if line.startswith("│") and (cell := line.split("│")[1 + column].strip())]


NCU_EXAMPLES = [path for path in sorted(EXAMPLES.iterdir()) if any(path.glob("ncu*.csv"))]
KERNEL_TABLES = (  # title, the --json records it shows (in order), the option that shows it
    ("Where the time goes and what to fix first (nsys + ncu)", "hot_kernels", None),
    ("Kernels (ncu)", "kernel_groups", None),
    ("Kernel launches (ncu)", "kernels", "--launches"),
)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", NCU_EXAMPLES, ids=lambda path: path.name)
def test_kernel_tables_keep_the_part_that_tells_kernels_apart(path, width):
    """The hot-kernel and ncu kernel tables name each kernel by a shortening of its own name (whole
    words, an ellipsis where cut: table_names.telling_names), one label per kernel, different
    kernels different labels, at 80, 100 and 120 columns on every real capture with ncu output."""
    from nsprof.kernel_names import kernel_label
    from nsprof.render.hot_kernels_table import HOT_ROWS
    from nsprof.render.table_names import _reads_as

    for title, key, option in KERNEL_TABLES:
        args = ["analyze", str(path), *([option] if option else [])]
        lines = run(args, width)
        assert not [line for line in lines if len(line) > width]
        assert not broken_words(lines, run(args, 1000))
        names = [row["kernel"] for row in json.loads("\n".join(run([*args, "--json"], 1000)))[key]]
        names = names[:HOT_ROWS] if key == "hot_kernels" else names
        labels = _column_cells(lines, title, 1 if key == "kernels" else 0)  # the launches table: after the id
        assert len(labels) == len(names), (title, labels)
        for label, name in zip(labels, names):
            assert _reads_as(re.sub(r" \[\d+\]$", "", label), kernel_label(name)), (title, label, name)
        by_name = dict(zip(names, labels))
        assert all(by_name[name] == label for name, label in zip(names, labels))  # one label per kernel
        assert len(set(by_name.values())) == len(by_name), (title, by_name)  # different kernels read differently
