"""ncu captures of programs nsprof did not write (tests/data/user-programs): the .ncu-rep read with
NVIDIA's ncu-report, details pages with rule columns, default-section captures (no FLOP or byte
counters), and what nsprof says about each launch from whatever the capture holds."""

import json
import math
import shutil
import sys
from pathlib import Path

import pytest
from cli_checks import one_line_error
from typer.testing import CliRunner

from nsprof import api, metric_catalog
from nsprof.analyze.launch_findings import BUSY_PCT, bound
from nsprof.cli import app
from nsprof.parse.ncu_csv import load_ncu_csv
from nsprof.parse.profile import load_profile, tool_outputs

USER = Path(__file__).resolve().parent / "data" / "user-programs"
REPORT = USER / "graph-full.ncu-rep"
try:
    import ncu_report  # noqa: F401
    HAS_READER = True
except ImportError:
    HAS_READER = False
needs_reader = pytest.mark.skipif(not HAS_READER, reason="NVIDIA's ncu-report is not installed on this platform")


@needs_reader
def test_report_holds_the_same_metrics_as_its_raw_page():
    report = load_profile(REPORT).counters[0]
    raw = load_ncu_csv(USER / "graph-full-raw.csv")
    assert report.page == "report" and len(report.kernels) == len(raw.kernels) == 2
    compared = 0
    for metric in metric_catalog.METRICS:
        if metric.name in raw.kernels and metric.name in report.kernels:
            # the page rounds % to 2 decimals
            expected = pytest.approx(raw.kernels[metric.name].tolist(), rel=1e-6, abs=0.005)
            assert report.kernels[metric.name].tolist() == expected, metric.name
            compared += 1
    assert compared >= 20
    assert report.kernels["device__attribute_display_name"].tolist() == ["NVIDIA H200"] * 2
    assert report.kernels["grid_size"].tolist() == raw.kernels["grid_size"].tolist()
    assert report.kernels["block_size"].tolist() == raw.kernels["block_size"].tolist()


@needs_reader
def test_report_rules_equal_the_details_page_rules():
    report = load_profile(REPORT).counters[0].rules
    details = load_ncu_csv(USER / "graph-full-details.csv").rules
    def keyed(rules):
        return sorted((row.id, row.rule, row.type, row.speedup_type or "",
                       round(row.speedup_pct, 2) if row.speedup_pct == row.speedup_pct else None)
                      for row in rules.itertuples())
    assert len(report) == len(details) == 23
    assert [(k[0], k[1], k[2], k[3]) for k in keyed(report)] == [(k[0], k[1], k[2], k[3]) for k in keyed(details)]
    for ours, theirs in zip(keyed(report), keyed(details)):  # the page rounds to 4 significant digits
        assert (ours[4] is None) == (theirs[4] is None) and (ours[4] is None or ours[4] == pytest.approx(theirs[4], rel=2e-3))
    # ncu's markup is rendered as the page renders it
    assert not report["message"].str.contains("@section:|@url:").any()
    assert set(report["message"]) == set(details["message"])


def test_details_page_with_rule_columns_reads_rules_and_launch_figures():
    details = load_ncu_csv(USER / "train-details.csv")
    assert len(details.kernels) == 8 and len(details.rules) == 37
    first = details.rules.iloc[1]
    assert (first["id"], first["section"], first["rule"], first["type"]) == (0, "LaunchStats", "LaunchConfiguration", "OPT")
    assert (first["speedup_type"], first["speedup_pct"]) == ("global", 99.24)
    assert math.isnan(details.rules.iloc[0]["speedup_pct"])  # SOLBottleneck estimates nothing


@pytest.mark.parametrize("page", ["details", "raw"])
def test_default_section_capture_gives_sol_occupancy_and_launch_figures(page):
    analysis = api.analyze(USER / f"train-{page}.csv")
    kernels = analysis.kernels.set_index("id")
    # ncu's own numbers for launch 5 (a cuBLAS Kernel2), on both pages
    assert kernels.loc[5, "sm_throughput_pct"] == pytest.approx(15.96)
    assert kernels.loc[5, "memory_throughput_pct"] == pytest.approx(14.47)
    assert kernels.loc[5, "occupancy_pct"] == pytest.approx(11.99)
    assert kernels.loc[5, "registers_per_thread"] == 72
    assert (kernels.loc[5, "grid"], kernels.loc[5, "block"]) == ("(64, 4, 1)", "(128, 1, 1)")
    assert kernels.loc[6, "smem_per_block_bytes"] == pytest.approx(10240, rel=1e-3)
    # the default sections count no FLOPs or bytes: those stay unknown, never 0
    assert kernels["gflops_per_s"].isna().all() and kernels["dram_bytes"].isna().all()
    assert set(kernels["bound"]) == {"latency"}  # tiny training-step kernels: nothing near 60% of peak
    assert kernels.loc[5, "bound_rule"].startswith("SM 16.0%, memory 14.5% of peak: both under 60%")
    assert "dram__bytes_read.sum" in analysis.missing_metrics["metrics"]
    assert analysis.missing_metrics["ncu_options"] == "--metrics " + ",".join(analysis.missing_metrics["metrics"])


def test_bound_words_follow_the_speed_of_light_rule():
    assert bound(63.6, 25.1)[0] == "compute"
    assert bound(20.0, BUSY_PCT)[0] == "memory"
    assert bound(59.9, 59.9)[0] == "latency"
    assert bound(float("nan"), 10.0) == (None, None)


def test_rule_results_come_largest_speedup_first_with_their_kernel():
    rules = api.analyze(USER / "train-details.csv").rules
    speedups = rules["speedup_pct"].dropna().tolist()
    assert speedups == sorted(speedups, reverse=True) and speedups[0] == 99.24
    unestimated = rules["speedup_pct"].isna().sum()
    assert unestimated == 37 - 28 and rules["speedup_pct"].tail(unestimated).isna().all()
    assert rules.iloc[0]["kernel"].startswith("void at::vectorized_elementwise_kernel<4, at::FillFunctor<float>")


@needs_reader
def test_analyze_json_of_a_report_has_findings_rules_and_missing_metrics():
    result = CliRunner().invoke(app, ["analyze", str(REPORT), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    first = doc["kernels"][0]
    assert first["sm_throughput_pct"] == pytest.approx(63.62, abs=0.01) and first["bound"] == "compute"
    assert first["memory_throughput_pct"] == pytest.approx(25.12, abs=0.01)
    assert first["gflops_per_s"] is None  # --set full counts no FP32 FLOPs: no rate, not 0
    assert [rule["speedup_pct"] for rule in first["rules"]][:2] == pytest.approx([50.0, 37.5])
    assert "lts__t_bytes.sum" in doc["missing_metrics"]["metrics"]
    assert "dram__bytes_read.sum" not in doc["missing_metrics"]["metrics"]  # --set full has DRAM bytes


def test_analyze_table_of_a_default_section_capture_says_what_is_missing():
    result = CliRunner().invoke(app, ["analyze", str(USER / "train-details.csv")], terminal_width=100)
    assert result.exit_code == 0, result.output
    assert "ncu's advice (rule results)" in result.stdout and "LaunchConfiguration" in result.stdout
    assert "Not in this capture" in result.stdout and "--metrics dram__bytes_read.sum," in result.stdout
    assert "latency" in result.stdout


def test_without_the_reader_a_report_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ncu_report", None)  # import fails as where no wheel exists
    line = one_line_error(CliRunner().invoke(app, ["analyze", str(REPORT)]))
    assert "needs the ncu-report package" in line and "pip install ncu-report" in line and "--page raw" in line


def test_a_report_and_its_csv_pages_count_once(tmp_path):
    for name in ("graph-full.ncu-rep", "graph-full-raw.csv", "graph-full-details.csv", "train-raw.csv"):
        shutil.copy(USER / name, tmp_path / name)
    assert tool_outputs(tmp_path) == ([], [tmp_path / "graph-full.ncu-rep", tmp_path / "train-raw.csv"])


def test_nsys_report_without_nsys_names_the_export_command(tmp_path, monkeypatch):
    shutil.copy(USER / "graph.nsys-rep", tmp_path / "graph.nsys-rep")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    line = one_line_error(CliRunner().invoke(app, ["analyze", str(tmp_path / "graph.nsys-rep")]))
    assert "needs Nsight Systems' nsys, which is not on PATH" in line
    assert (f"nsys export --type sqlite --force-overwrite true --output {tmp_path / 'graph.sqlite'} "
            f"{tmp_path / 'graph.nsys-rep'}") in line


def test_nsys_report_is_exported_once_beside_it(tmp_path, monkeypatch):
    """A stand-in nsys (this machine has none) that writes the export nsys wrote for this report."""
    shutil.copy(USER / "graph.nsys-rep", tmp_path / "graph.nsys-rep")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    (bin_dir / "nsys").write_text(f"#!/bin/sh\necho \"$@\" >> {calls}\n"
                                  f"while [ \"$1\" != --output ]; do shift; done; cp {USER / 'graph.sqlite'} \"$2\"\n")
    (bin_dir / "nsys").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    for _ in range(2):
        result = CliRunner().invoke(app, ["analyze", str(tmp_path / "graph.nsys-rep"), "--json"])
        assert result.exit_code == 0, result.output
    assert len(calls.read_text().splitlines()) == 1  # the second run reads the cached export
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "calls", "graph.nsys-rep", "graph.sqlite"]
    assert json.loads(result.stdout)["kernel_summary"]


@pytest.mark.parametrize("path", [
    USER / "train.sqlite", USER / "graph.sqlite", USER / "train-details.csv", USER / "train-raw.csv",
    USER.parents[2] / "profiles" / "examples" / "h200-sgemm-1024",
    USER.parents[2] / "profiles" / "examples" / "h200-program-torch-train",
])
def test_every_analyze_table_fits_100_columns(path):
    """Tables fit a 100-column terminal: columns are dropped or names shortened, never a number
    broken across lines (no table line is wider, and no cell of digits wraps)."""
    result = CliRunner().invoke(app, ["analyze", str(path)], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    table_lines = [line for line in result.stdout.splitlines() if line[:1] in "┏┃┡│└"]
    assert table_lines and max(len(line) for line in table_lines) <= 100
    for line in table_lines:  # a wrapped number leaves a cell holding only digits' tail like "│  .15 │"
        assert not any(cell.strip().startswith((".", ",")) for cell in line.split("│")[1:-1]), line


@needs_reader
def test_report_roofline_and_explain_take_a_report(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["report", str(tmp_path / "out"), "--from", str(REPORT)])
    assert result.exit_code == 0, result.output
    row = next(line for line in (tmp_path / "out" / "graph-full" / "report.md").read_text().splitlines()
               if line.startswith("| distribution\\_"))  # the name cut between words, its _ escaped
    assert row.split(" | ")[3] == "–"  # TFLOP/s: no FP32 FLOPs counted, so no rate (not 0.0)
    result = runner.invoke(app, ["explain", "bank-conflicts", "--from", str(REPORT), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["evidence"]["source"] == str(REPORT)
    # --set full counts no FP32 FLOPs: nothing to place, said in one line with what to collect
    line = one_line_error(runner.invoke(app, ["roofline", str(tmp_path / "roof"), "--from", str(REPORT)]))
    assert "nothing to place on a roofline" in line and "FLOP counters" in line
