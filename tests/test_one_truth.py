"""One truth per number: every page that shows a stage's time and speed shows the same ones, with
their source named, for the committed H200 example; and no command writes into a profile."""

import csv
import re
import sqlite3
from pathlib import Path

import pytest
from cli_checks import analysis_pages, one_line_error
from typer.testing import CliRunner

from nsprof.cli import app
from nsprof.render.format import duration_ns, flops_per_s

EXAMPLES = Path(__file__).resolve().parents[1] / "profiles" / "examples"
SGEMM = EXAMPLES / "h200-sgemm-1024"
TORCH = EXAMPLES / "h200-program-torch-train"


def invoke(*args):
    return CliRunner().invoke(app, [str(arg) for arg in args])


def _nsys_tflops(stage: str) -> float:
    """2·1024³ over the mean GPU time per launch of the kernels launched inside the stage's range, by SQL."""
    with sqlite3.connect(SGEMM / "nsys.sqlite") as db:
        per_range = [ns for (ns,) in db.execute("""
            SELECT SUM(k.end - k.start) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId
            JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.globalTid = n.globalTid AND r.start >= n.start AND r.start < n.end
            JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId
            WHERE COALESCE(n.text, s.value) = ? GROUP BY n.start""", (f"sgemm/{stage}/1024x1024x1024",))]
    return 2 * 1024**3 / (sum(per_range) / len(per_range)) / 1e3


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """analyze --json, the report's Markdown and the roofline's CSV of the example, one run each."""
    doc, markdown, points = analysis_pages(SGEMM, tmp_path_factory.mktemp("pages"))
    return doc["stages"], markdown, points


def test_every_page_shows_each_stage_at_one_speed_from_one_named_time(pages):
    stages, markdown, points = pages
    report_rows = {cells[0]: cells for cells in _table_rows(markdown, "| stage | title | size | time | from |")}
    assert len(stages) == 10 and set(report_rows) == {s["stage"] for s in stages}
    for stage in stages:
        # analyze: the op's FLOPs over nsys's warm time (no profiler replay)
        assert stage["time_source"] == "nsys"
        assert stage["tflops_per_s"] == pytest.approx(2 * 1024**3 / stage["time_per_launch_ns"] / 1e3)
        # the report: the same time, source and speed
        cells = report_rows[stage["stage"]]
        assert cells[3:6] == [duration_ns(stage["time_per_launch_ns"]), "nsys",
                              flops_per_s(stage["tflops_per_s"] * 1e12, unit=False)], stage["stage"]
        # the roofline: every level's point of the stage at that speed, over that time
        mine = [p for p in points if p["stage"] == stage["stage"]]
        assert mine, stage["stage"]
        for point in mine:
            assert float(point["gflops_per_s"]) / 1e3 == pytest.approx(stage["tflops_per_s"], rel=1e-5)
            assert point["time_source"] == "nsys"
            assert float(point["duration_ns"]) == pytest.approx(stage["time_per_launch_ns"], rel=1e-5)


def test_v3_no_longer_has_two_speeds(pages):
    """v3 once read 12.7 TFLOP/s in the report's stage table and 10.3 in the roofline and analyze;
    now one speed, nsys's, everywhere."""
    stages, markdown, _points = pages
    v3 = next(s for s in stages if s["stage"] == "v3")
    expected = f"{_nsys_tflops('v3'):.1f}"
    assert f"{v3['tflops_per_s']:.1f}" == expected
    roofline_rows = {cells[0]: cells for cells in _table_rows(markdown, "| work | size | bound | roof above it |")}
    assert roofline_rows["v3"][5] == expected and roofline_rows["v3"][6] == "nsys"


def test_the_roofline_table_names_the_roof_its_percentage_is_of(pages):
    stages, markdown, _ = pages
    for cells in _table_rows(markdown, "| work | size | bound | roof above it |"):
        bound, roof = cells[2], cells[3]
        assert roof.endswith("bandwidth") if bound == "memory" else roof.endswith("peak"), cells
    v8 = next(cells for cells in _table_rows(markdown, "| work | size | bound | roof above it |") if cells[0] == "v8")
    stage = next(s for s in stages if s["stage"] == "v8")
    assert v8[3] == "FP32 peak" and v8[7] == f"{stage['pct_of_compute_peak']:.1f}%"  # % of the FP32 roof, as analyze says


def test_missing_values_read_alike_on_every_page(pages):
    _stages, markdown, _ = pages
    shown = invoke("analyze", SGEMM).stdout
    assert re.search(r"│\s+–\s+│", shown) and "| – / – |" in markdown  # v1 has no shared memory: no n-way
    assert not re.search(r"│\s+-\s+│", shown)  # never the other dash


def test_a_profile_given_as_out_is_read_and_nothing_is_written_into_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in SGEMM.iterdir())
    result = invoke("roofline", SGEMM)
    assert result.exit_code == 0, result.output
    assert "is a profile: reading it as --from and writing into reports/" in result.stderr
    assert (tmp_path / "reports" / "roofline.png").is_file()
    assert sorted(p.name for p in SGEMM.iterdir()) == before
    result = invoke("report", SGEMM)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "reports" / SGEMM.name / "report.md").is_file()
    assert sorted(p.name for p in SGEMM.iterdir()) == before


def test_no_command_writes_inside_a_profile(tmp_path):
    inside = SGEMM / "plots"
    line = one_line_error(invoke("roofline", inside, "--from", SGEMM), 2)
    assert "inside the profile" in line and not inside.exists()
    line = one_line_error(invoke("report", SGEMM, "--from", SGEMM), 2)
    assert "is a profile, not an output directory" in line
    line = one_line_error(invoke("timeline", SGEMM, "--out", SGEMM / "t.png"), 2)
    assert "inside the profile" in line and not (SGEMM / "t.png").exists()


def test_the_roofline_lists_what_it_could_not_place_and_never_shares_a_label(tmp_path):
    """PyTorch's training step: many kernels, some with no FP32 FLOPs counted (fp16 elementwise),
    several whose short names look alike."""
    result = invoke("roofline", tmp_path, "--from", TORCH)
    assert result.exit_code == 0, result.output
    unplaced = [line for line in result.stderr.splitlines() if line.startswith("not on the roofline: ")]
    assert unplaced and all(": no FLOPs counted" in line or ": no bytes" in line or ": no time" in line for line in unplaced)
    with open(tmp_path / "roofline.csv", newline="") as file:
        points = list(csv.DictReader(file))
    kernels_by_label = {}
    for point in points:
        kernels_by_label.setdefault(point["label"], set()).add(point["kernel"])
    assert all(len(kernels) == 1 for kernels in kernels_by_label.values())  # one label, one kernel
    placed = {point["label"] for point in points}
    named = {line.removeprefix("not on the roofline: ").split(": ")[0] for line in unplaced}
    assert not placed & named


def _table_rows(markdown: str, header_start: str) -> list[list[str]]:
    """The cells of each row of the Markdown table whose header starts with `header_start`."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


def test_analyze_prints_through_the_one_document_model():
    """analyze's tables are document blocks, so the report's Markdown writer writes them as well,
    with the same numbers the terminal shows."""
    from nsprof import api
    from nsprof.render.analysis_tables import analysis_blocks
    from nsprof.render.document_writers import to_markdown

    analysis = api.analyze(SGEMM)
    markdown = to_markdown(analysis_blocks(analysis, True, 200))
    v3 = next(line for line in markdown.splitlines() if line.startswith("| sgemm | v3 |"))
    assert f"| nsys | {_nsys_tflops('v3'):.1f} |" in v3
