"""`nsprof report`: the per-stage report (HTML and Markdown) from the H200 captures and the example
profile, what moved between stages, where the time went, and the formatting of numbers."""

from __future__ import annotations

import itertools
import json
import re
import sqlite3
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nsprof.analyze.timeline import time_breakdown
from nsprof.api import load_ladder
from nsprof.cli import app
from nsprof.kernel_names import short_kernel_name
from nsprof.ladder.registry import stages_for
from nsprof.ladder_analysis.work import ALWAYS_WATCHED, stage_changes, watched
from nsprof.parse import load_nsys
from nsprof.render import format as fmt
from nsprof.render.document import Heading, Image, Paragraph, Table
from nsprof.render.document_writers import to_html, to_markdown
from nsprof.render.report import CHANGE_COLUMNS

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
EXAMPLE = REPO / "profiles" / "examples" / "h200-sgemm-1024"
# the stages the committed H200 capture (tests/data/h200) measured: it predates v9t and v11
LADDER = [s for s in stages_for("sgemm") if s.stage in json.loads((EXAMPLE / "manifest.json").read_text())["stages"]]

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


class _Page(HTMLParser):
    """Every tag, attribute and text of a page."""

    def __init__(self):
        super().__init__()
        self.tags, self.sources, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.sources += [value for name, value in attrs if name in ("src", "href")]

    def handle_data(self, data):
        self.text.append(data)


@pytest.fixture(scope="module")
def fixture_report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reports")
    result = invoke("report", out, "--from", DATA / "h200")
    assert result.exit_code == 0, result.output
    return out / "h200"


def test_report_files(fixture_report):
    names = sorted(path.name for path in fixture_report.iterdir())
    assert names == [".nsprof-written.json", "index.html", "report.md", "roofline.png", "tflops.png"]
    for image in ("roofline.png", "tflops.png"):
        assert (fixture_report / image).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_a_ladder_judged_by_bandwidth_is_charted_by_it(tmp_path):
    """The SGEMV report draws each stage's DRAM GB/s (the stage table's figure), not its TFLOP/s."""
    sgemv = Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h200-sgemv-4096"
    result = invoke("report", tmp_path, "--from", sgemv)
    assert result.exit_code == 0, result.output
    written = sorted(path.name for path in (tmp_path / "h200-sgemv-4096").iterdir())
    assert "dram.png" in written and "tflops.png" not in written
    markdown = (tmp_path / "h200-sgemv-4096" / "report.md").read_text()
    assert "![SGEMV: DRAM GB/s per stage, dashed line: cuBLAS at the same size](dram.png)" in markdown


def test_html_is_self_contained_and_has_every_stage(fixture_report):
    page = _Page()
    page.feed((fixture_report / "index.html").read_text(encoding="utf-8"))
    text = " ".join(page.text)
    assert page.sources and all(source.startswith("data:image/png;base64,") for source in page.sources)
    assert page.tags.count("img") == 2
    for stage in LADDER:
        assert f"{stage.stage}: {stage.title}" in text  # its section
        assert stage.changes in text
    assert "Where the time went" in text and "cudaLaunchKernel" in text


def test_markdown_stage_table_and_images(fixture_report):
    markdown = (fixture_report / "report.md").read_text(encoding="utf-8")
    assert "![roofline of the SGEMM ladder](roofline.png)" in markdown
    table = [line for line in markdown.splitlines() if re.match(r"\| v\d+ \| ", line)]
    assert [line.split(" | ")[0].lstrip("| ") for line in table[:10]] == [s.stage for s in LADDER]
    v9 = next(line for line in table if line.startswith("| v9 |"))
    assert "| 100% |" in v9  # cuBLAS against itself


def test_stage_changes_show_what_moved():
    """v5 -> v6 pads the transposed A tile: the shared-store n-way degree falls from 2.47 to 1.68."""
    ladder = load_ladder([EXAMPLE], False, None)
    changes = {(c["label"], c["column"]): c for c in stage_changes(ladder.work)}
    v6 = changes[("v6", "smem_st_nway")]
    assert (v6["previous"], round(v6["before"], 2), round(v6["after"], 2)) == ("v5", 2.47, 1.68)
    v4 = changes[("v4", "smem_ld_conflicts")]
    assert v4["before"] == pytest.approx(12_582_912 / 3) and v4["after"] == 0  # per launch: ncu ran 3
    assert changes[("v1", "l1_bytes")]["previous"] is None
    assert changes[("v7", "stall_short_scoreboard")]["after"] is None  # the stalls preset was not collected


def test_every_watched_column_has_a_name_in_the_report():
    watching = {column for columns in watched().values() for column in columns} | set(ALWAYS_WATCHED)
    assert watching <= set(CHANGE_COLUMNS)


def test_report_of_the_example_says_what_bounds_each_stage(tmp_path):
    result = invoke("report", tmp_path, "--from", EXAMPLE)
    assert result.exit_code == 0, result.output
    markdown = (tmp_path / "h200-sgemm-1024" / "report.md").read_text(encoding="utf-8")
    v1 = markdown[markdown.index("### v1"):markdown.index("### v2")]
    # memory-bound on L1: the share of the L1 bandwidth its bytes per launch take in the stage's time
    doc = json.loads(invoke("analyze", EXAMPLE, "--json").stdout)
    stage = next(s for s in doc["stages"] if s["stage"] == "v1")
    ceiling = doc["ceiling"]["l1_tbyte_per_s"]
    expected = 100 * stage["l1_bytes"] / stage["ncu_kernels"] / stage["time_per_launch_ns"] / (ceiling * 1e3)
    said = re.search(r"memory-bound, at ([\d.]+)% of the L1 roof", v1)
    assert said and float(said[1]) == pytest.approx(expected, abs=0.1)
    v6 = markdown[markdown.index("### v6"):markdown.index("### v7")]
    assert "| 2.47 | 1.68 | -32% |" in v6
    assert "stall latencies come with `nsprof profile --metrics default,stalls`" in markdown


def test_roofline_and_report_of_the_full_ladder(tmp_path):
    # How long they take is a benchmark's business (benchmarks/records/2026-11-21-h200-sgemm/h200.md), not a unit test's.
    assert invoke("roofline", tmp_path, "--from", DATA / "h200").exit_code == 0
    assert invoke("report", tmp_path, "--from", DATA / "h200").exit_code == 0


def test_report_of_an_nsys_capture_without_stages(tmp_path):
    result = invoke("report", tmp_path, "--from", DATA / "nsys-pipit" / "perlmutter-cloverleaf-cuda.sqlite",
                    "--name", "cloverleaf")
    assert result.exit_code == 0, result.output
    markdown = (tmp_path / "cloverleaf" / "report.md").read_text(encoding="utf-8")
    assert markdown.startswith("# Kernels on NVIDIA A100-SXM4-80GB")
    assert "| idle |" in markdown and "cudaDeviceSynchronize" in markdown


def test_bad_from_is_a_one_line_error(tmp_path):
    """A missing --from is a bad argument: exit 2, one line naming what to pass."""
    result = invoke("report", tmp_path, "--from", tmp_path / "missing")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.strip().splitlines() == [f"error: {tmp_path / 'missing'}: no such file or directory. "
                                                  "Pass a profile directory, a directory of them, or one file "
                                                  "(nsys .nsys-rep or .sqlite, ncu .ncu-rep or .csv, "
                                                  "jax.profiler .trace.json.gz or .trace.json or perfetto_trace.json.gz, "
                                                  "torch.profiler .json or .json.gz) "
                                                  "with --from"]


# --- where the time went ----------------------------------------------------------------------------

WORK_TABLES = {"kernels": "CUPTI_ACTIVITY_KIND_KERNEL", "graphs": "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
               "memcpys": "CUPTI_ACTIVITY_KIND_MEMCPY", "memsets": "CUPTI_ACTIVITY_KIND_MEMSET"}
GRAPH_PROGRAM = REPO / "tests" / "data" / "user-programs" / "graph.sqlite"  # a graph replayed 5 times, traced whole


def breakdown_by_sql(path: Path) -> dict:
    """Where the time went, by plain SQL over the export: the span from the first CUDA call or GPU
    operation to the end of the last; per activity its count and the union of its intervals; idle,
    the span less the union of all GPU work; the gaps in that union, from the span's start to its end;
    and the kernels' summed durations."""
    def merged(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
        found: list[list[int]] = []
        for start, end in sorted(intervals):
            if found and start <= found[-1][1]:
                found[-1][1] = max(found[-1][1], end)
            else:
                found.append([start, end])
        return [(start, end) for start, end in found]

    with sqlite3.connect(path) as conn:
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        work = {name: conn.execute(f"SELECT start, end FROM {table}").fetchall() if table in tables else []
                for name, table in WORK_TABLES.items()}
        first, last = conn.execute("SELECT min(start), max(end) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
    everything = [interval for intervals in work.values() for interval in intervals]
    first, last = min(first, *(start for start, _ in everything)), max(last, *(end for _, end in everything))
    busy = merged(everything)
    edges = [first, *(edge for interval in busy for edge in interval), last]
    return {"span": last - first, "idle": last - first - sum(end - start for start, end in busy),
            "activities": {name: (len(intervals), sum(end - start for start, end in merged(intervals)))
                           for name, intervals in work.items()},
            "gaps": sorted((b - a for a, b in zip(edges[::2], edges[1::2]) if b > a), reverse=True),
            "kernel_ns": sum(end - start for start, end in work["kernels"])}


@pytest.mark.parametrize("export_path", [EXAMPLE / "nsys.sqlite", REPO / "profiles" / "examples" / "h200-pipeline-1024" /
                                         "nsys.sqlite", GRAPH_PROGRAM], ids=["sgemm-ladder", "pipeline", "graph"])
def test_time_breakdown_is_the_exports_by_sql(export_path):
    """Each activity's count and time (the union of its intervals), the idle time and the largest idle
    gaps against plain SQL over the export (breakdown_by_sql). The ladder's work runs on one stream;
    the pipeline's copies overlap each other and its kernels (so its activities sum to more than the
    span's busy part, and summing intervals instead of merging them would count time twice); the graph
    program's five launches of a graph traced whole are GPU work that no kernel row lists."""
    export = load_nsys(export_path)
    breakdown = time_breakdown(export)
    by_sql = breakdown_by_sql(export_path)
    gpu = breakdown.gpu.set_index("activity")
    assert breakdown.span_ns == by_sql["span"] and gpu.loc["idle", "time_ns"] == by_sql["idle"]
    for activity, (count, time_ns) in by_sql["activities"].items():
        if count or activity != "graphs":  # no graphs row where nothing was traced whole
            assert (gpu.loc[activity, "count"], gpu.loc[activity, "time_ns"]) == (count, time_ns), activity
    assert ("graphs" in gpu.index) == (export_path == GRAPH_PROGRAM)
    assert list(breakdown.gaps["duration_ns"]) == by_sql["gaps"][:3]
    assert breakdown.kernels["time_ns"].sum() == by_sql["kernel_ns"]
    assert "cudaMalloc" in set(breakdown.api["api"])  # version suffixes (_v3020) dropped
    if "pipeline" in str(export_path):  # the activities overlap: together they exceed the busy time
        assert gpu.drop("idle")["time_ns"].sum() > 1.05 * (by_sql["span"] - by_sql["idle"])


# --- formatting and documents -----------------------------------------------------------------------

@pytest.mark.parametrize("value, unit, text", [
    (4.08e12, "B/s", "4.08 TB/s"), (41.7e-6, "s", "41.7 µs"), (54.06e12, "FLOP/s", "54.1 TFLOP/s"),
    (999.96e9, "B/s", "1.00 TB/s"), (16_640, "B", "16.6 kB"), (0, "B/s", "0 B/s"), (None, "s", fmt.MISSING),
    (float("nan"), "B", fmt.MISSING), (3.0, "s", "3.00 s"),
])
def test_si(value, unit, text):
    assert fmt.si(value, unit) == text


def test_other_formats():
    assert fmt.duration_ns(1_061_792) == "1.06 ms"
    assert (fmt.count(1234), fmt.count(12_582_912)) == ("1,234", "12.6 M")
    assert (fmt.percent(12.49), fmt.ratio(2.4676), fmt.ratio(255.5)) == ("12.5%", "2.47", "256")
    assert (fmt.problem_size("1024x1024x1024"), fmt.problem_size("512x256x128")) == ("1024³", "512x256x128")


def test_rates_read_in_one_unit_each():
    """FLOP rates always in TFLOP/s and bandwidths always in GB/s, so no table mixes GFLOP/s and TFLOP/s."""
    assert (fmt.flops_per_s(1.2678e13), fmt.flops_per_s(6.1e9), fmt.flops_per_s(7.63e14)) == (
        "12.7 TFLOP/s", "0.00610 TFLOP/s", "763 TFLOP/s")
    assert (fmt.bytes_per_s(4.2551e12), fmt.bytes_per_s(55.5e9), fmt.bytes_per_s(24.04e9, unit=False)) == (
        "4,255 GB/s", "55.5 GB/s", "24.0")
    assert fmt.flops_per_s(None) == fmt.bytes_per_s(float("nan")) == fmt.MISSING


def test_short_kernel_names():
    assert short_kernel_name("void ns::gemm<128, 8>(float const*, int)") == "gemm"
    assert short_kernel_name("sgemm_v6") == "sgemm_v6"
    assert short_kernel_name("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x64x8") == "sm80_xmma_gemm_f32f32_…"


def test_documents_escape_their_text():
    blocks = [Heading(1, "a <b>"), Paragraph("use `x|y`"), Table.preformatted(("k", "v"), (("a|b", "1"),), (False, True)),
              Image("f.png", "alt", b"\x89PNG")]
    markdown = to_markdown(blocks)
    assert "| a\\|b | 1 |" in markdown and "| --- | ---: |" in markdown and "![alt](f.png)" in markdown
    page = to_html(blocks, "t")
    assert "<h1>a &lt;b&gt;</h1>" in page and "<code>x|y</code>" in page and 'src="data:image/png;base64,iVBORw=="' in page


def test_earlier_output_is_kept_unless_force(tmp_path):
    source = DATA / "nsys-pipit" / "perlmutter-cloverleaf-cuda.sqlite"
    assert invoke("report", tmp_path, "--from", source, "--name", "c").exit_code == 0
    page = tmp_path / "c" / "index.html"
    page.write_text("earlier")
    result = invoke("report", tmp_path, "--from", source, "--name", "c")
    assert result.stderr == (f"error: {tmp_path / 'c'}: kept index.html (changed since nsprof wrote it). "
                             "Pass --force to replace it, or choose another output path\n")
    assert result.exit_code == 2 and page.read_text() == "earlier"
    assert invoke("report", tmp_path, "--from", source, "--name", "c", "--force").exit_code == 0
    assert page.read_text().startswith("<!DOCTYPE html>") or "<html" in page.read_text()
    assert not [p for p in (tmp_path / "c").iterdir() if p.name.startswith(".nsprof-") and p.name != ".nsprof-written.json"]


def test_a_failing_write_leaves_the_earlier_set_whole(tmp_path, monkeypatch):
    from nsprof.output import write_set

    write_set(tmp_path, {"a.png": b"old a", "a.csv": b"old csv"})
    real_replace = __import__("os").replace

    def failing_replace(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr("nsprof.output.writing.os.replace", failing_replace)
    with pytest.raises(OSError):
        write_set(tmp_path, {"a.png": b"new a", "a.csv": b"new csv"}, force=True)
    monkeypatch.setattr("nsprof.output.writing.os.replace", real_replace)
    assert (tmp_path / "a.png").read_bytes() == b"old a" and (tmp_path / "a.csv").read_bytes() == b"old csv"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".nsprof-written.json", "a.csv", "a.png"]


def test_a_file_written_atomically_gets_the_permissions_a_plain_write_would(tmp_path):
    import os
    import stat

    from nsprof.output import write_atomically

    plain = tmp_path / "plain.json"
    plain.write_bytes(b"{}")
    atomic = write_atomically(tmp_path / "atomic.json", b"{}")
    assert stat.S_IMODE(os.stat(atomic).st_mode) == stat.S_IMODE(os.stat(plain).st_mode)


def test_percent_of_cublas_compares_each_stage_with_its_own_precisions_baseline():
    work = load_ladder([EXAMPLE], False, None).work
    stages = work[work["stage"].notna()].drop_duplicates("stage").set_index("stage")
    v8, v9 = stages.loc["v8"], stages.loc["v9"]
    assert v8["baseline"] == "v9"
    assert v8["pct_of_library"] == pytest.approx(100 * v9["time_per_launch_ns"] / v8["time_per_launch_ns"])
    # v10 computes in TF32: its baseline is cuBLAS TF32 (v9t), which this capture predates, so no percentage
    assert stages.loc["v10", "baseline"] == "v9t" and stages.loc["v10", "pct_of_library"] != stages.loc["v10", "pct_of_library"]


def test_the_stage_charts_labels_never_touch():
    """The whole SGEMM ladder (v1..v12t, 14 stages) as the report charts it: two stage labels under
    the bars stay two characters apart at least (at 0.95 in a stage, "tensor cores" and "wgmma + TMA"
    were 8 px apart and read as one line)."""
    import matplotlib

    matplotlib.use("Agg")
    from nsprof.ladder.registry import stages_for
    from nsprof.render.ladder import ladder_chart

    records = [{"status": "ok", "op": "sgemm", "stage": s.stage, "size": "1024x1024x1024", "tflops": 10.0 + i,
                "title": s.title} for i, s in enumerate(stages_for("sgemm"))]
    figure = ladder_chart(records, "SGEMM")
    figure.canvas.draw()
    boxes = [label.get_window_extent() for label in figure.axes[0].get_xticklabels()]
    assert len(boxes) == len(records) >= 14
    two_characters = 2 * 0.6 * 8 * figure.dpi / 72  # px: 8-point labels, a character about 0.6 of their size
    assert all(right.x0 - left.x1 >= two_characters for left, right in itertools.pairwise(boxes))


def test_a_library_line_spans_only_the_stages_compared_with_it():
    """One capture of v1..v10 (no cuBLAS TF32 in it): FP32 cuBLAS's dashed line spans v1..v9, not
    v10, a TF32 stage that is compared with cuBLAS TF32."""
    import matplotlib

    matplotlib.use("Agg")
    from nsprof.ladder.registry import stages_for
    from nsprof.render.ladder import ladder_chart

    stages = [s for s in stages_for("sgemm") if s.stage in {f"v{n}" for n in range(1, 11)}]
    records = [{"status": "ok", "op": "sgemm", "stage": s.stage, "size": "1024x1024x1024", "tflops": 10.0 + i,
                "title": s.title} for i, s in enumerate(stages)]
    figure = ladder_chart(records, "SGEMM")
    (lines,) = figure.axes[0].collections[-1:]
    (segment,) = lines.get_segments()
    v9, v10 = (next(i for i, s in enumerate(stages) if s.stage == name) for name in ("v9", "v10"))
    assert segment[0][0] == pytest.approx(-0.45) and segment[1][0] == pytest.approx(v9 + 0.45)
    assert segment[1][0] < v10 - 0.45
    assert segment[0][1] == segment[1][1] == records[v9]["tflops"]
