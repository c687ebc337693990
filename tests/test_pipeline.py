"""`nsprof pipeline`: the bus floor and, on a GPU, every variant of the whole flow verified."""

import itertools
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from nsprof.analyze.pipeline import against_floor, bus_floor
from nsprof.ceilings.peaks import Ceiling


def test_floor_is_the_bytes_over_the_pinned_bandwidths():
    ceiling = Ceiling("H200 SXM", 67.0, 494.7, 989.4, 4.8, h2d_tbyte_per_s=0.055, d2h_tbyte_per_s=0.050,
                      sources=(("h2d_tbyte_per_s", "measured 2026-11-22"),))
    floor = bus_floor(8 << 20, 4 << 20, ceiling)
    assert floor["floor_ms"] == pytest.approx((8 << 20) / 55e9 * 1e3)  # the larger direction, overlapped
    assert floor["sequential_floor_ms"] == pytest.approx((8 << 20) / 55e9 * 1e3 + (4 << 20) / 50e9 * 1e3)
    assert floor["source"] == "measured 2026-11-22"
    [record] = against_floor([{"median_ms": 0.3, "bytes_in": 8 << 20, "bytes_out": 4 << 20}],
                             lambda i, o: bus_floor(i, o, ceiling))
    assert record["x_floor"] == pytest.approx(0.3 / floor["floor_ms"])


def test_without_measured_bandwidths_the_floor_is_the_datasheets_link():
    """No `nsprof ceilings` run: an H200's floor is its PCIe 5.0 x16 link's 64 GB/s each way, which
    no copy reaches (so x floor stays at least 1), and the caption says it is the datasheet's."""
    from nsprof.ceilings.peaks import datasheet_ceiling

    floor = bus_floor(8 << 20, 4 << 20, datasheet_ceiling("NVIDIA H200"))
    assert floor["floor_ms"] == pytest.approx((8 << 20) / 64e9 * 1e3) and floor["source"] == "datasheet"
    measured_h2d = 0.0555  # profiles/ceilings-nvidia-h200.json: pinned copies on the H200
    assert datasheet_ceiling("NVIDIA H200").h2d_tbyte_per_s > measured_h2d


def test_a_gpu_without_any_bandwidth_has_no_floor_and_it_says_why():
    floor = bus_floor(8 << 20, 4 << 20, Ceiling("H200 SXM", 67.0, 494.7, 989.4, 4.8))
    assert floor["floor_ms"] is None and "nsprof ceilings" in floor["source"]
    [record] = against_floor([{"median_ms": 0.3, "bytes_in": 1, "bytes_out": 1}], lambda i, o: floor)
    assert record["x_floor"] is None


@pytest.mark.gpu
@pytest.mark.parametrize("op, stage, size", [("sgemm", "v9", "1000x1200x808"), ("sgemm", "v8", "1024"), ("hgemm", "h5", "512")])
def test_every_warm_variant_brings_back_a_verified_product(op, stage, size):
    from nsprof import api

    result = api.pipeline(op, [stage], size, chunks=3, repeat=5, warmup=2, cold=True, capture=False)
    by_variant = {r["variant"]: r for r in result["records"]}
    assert set(by_variant) == {"pageable", "pinned", "streams", "graph", "watched", "cold"}
    for variant, record in by_variant.items():  # cuBLAS (v9) too is held by the graph
        assert record["status"] == "ok", (variant, record)
        assert record["rel_error"] <= record["tolerance"]
    for variant in ("streams", "watched"):
        assert by_variant[variant]["chunks"] == 3 and by_variant[variant]["streams"] == 3
    assert by_variant["cold"]["wall_ms"] > by_variant["pinned"]["median_ms"]
    versus = result["cpu"]  # the CPU's BLAS on the same product (sgemm's v0blas; hgemm has no CPU rung)
    if op == "hgemm":
        assert versus is None and "x_cpu_blas" not in by_variant["graph"]
    else:
        assert versus["stage"] == "v0blas" and versus["median_ms"] > 0
        for record in by_variant.values():
            flow_ms = record.get("median_ms") or record["wall_ms"]
            assert record["x_cpu_blas"] == pytest.approx(versus["median_ms"] / flow_ms)


@pytest.mark.gpu
def test_the_watched_flow_leaves_a_holding_the_sentinel_for_the_next_replay():
    """The watched graph is replayed as is: each flow must end with A back on the sentinel, or the next
    flow's products would start on the last flow's A before its own has landed (and, with the same
    inputs, still verify)."""
    import cupy as cp

    from nsprof.ladder.registry import get_stage
    from nsprof.ladder_runs.pipeline import WATCHED, Pipeline, host_inputs, relative_error
    from nsprof.launch.tools import launch_tools

    size = (512, 256, 384)
    a, b = host_inputs(size, "float32", seed=3)
    pipeline = Pipeline(get_stage("sgemm", "v8"), size, launch_tools(), a, b, chunks=3)
    pipeline.capture(WATCHED)
    sentinel = int(pipeline.device.A.view(cp.uint32)[0, 0])  # capture() filled A before the first flow
    for _ in range(3):
        pipeline.pinned["C"][...] = np.nan
        with pipeline.main:
            pipeline.replay(WATCHED)
        pipeline.main.synchronize()
        assert relative_error(pipeline.pinned["C"], a, b) <= 1e-5
        assert bool((pipeline.device.A.view(cp.uint32) == sentinel).all())
    assert np.isnan(np.uint32(sentinel).view(np.float32))  # no finite input can be mistaken for it


@pytest.mark.gpu
def test_the_watched_flow_is_not_available_when_rows_of_a_are_not_whole_16_byte_words():
    from nsprof import api

    result = api.pipeline("sgemm", ["v9"], "64x64x9", chunks=2, repeat=3, warmup=1, cold=False, capture=False)
    watched = next(r for r in result["records"] if r["variant"] == "watched")
    assert watched["status"] == "not available" and "multiple of 16 (K = 9)" in watched["message"]
    assert all(r["status"] == "ok" for r in result["records"] if r["variant"] != "watched")


@pytest.mark.gpu
def test_the_nsys_breakdown_joins_each_variant(tmp_path):
    from nsprof import api

    if not shutil.which("nsys"):
        pytest.skip("needs nsys on PATH")
    result = api.pipeline("sgemm", ["v8"], "512", repeat=5, warmup=2, cold=False, out=tmp_path)
    for record in result["records"]:
        assert record["status"] == "ok", record
        assert record["kernel_ms"] > 0 and record["h2d_ms"] > 0 and record["d2h_ms"] > 0, record
    by_variant = {r["variant"]: r for r in result["records"]}
    # the graph's copies overlap its products (issued call by call under nsys, a slow host can leave the streams
    # variant at 512^3 with none: 0.0 on an H100 host whose pinned copies also ran at 43 GB/s instead of 55)
    assert by_variant["graph"]["overlap_ms"] > 0 and by_variant["pageable"]["overlap_ms"] == pytest.approx(0, abs=1e-3)
    # watch_rows spins while A lands: not product time, so the watched flow's kernels are the graph's products
    assert by_variant["watched"]["kernel_ms"] < 1.5 * by_variant["graph"]["kernel_ms"]


def test_row_blocks_cover_every_row_once():
    from nsprof.ladder_runs.pipeline import row_blocks

    for m, chunks in ((1024, 4), (1000, 7), (3, 5), (1, 1), (4096, 2)):
        blocks = row_blocks(m, chunks)
        assert blocks[0][0] == 0 and blocks[-1][1] == m
        assert all(r1 > r0 for r0, r1 in blocks) and all(a[1] == b[0] for a, b in itertools.pairwise(blocks))
    assert row_blocks(1024, 4) == [(0, 256), (256, 512), (512, 768), (768, 1024)]
    assert row_blocks(3, 5) == [(0, 1), (1, 2), (2, 3)]  # never an empty block


EXAMPLE = Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h200-pipeline-1024"


def test_breakdown_of_the_committed_capture_is_what_the_run_recorded():
    """`nsprof pipeline` on the H200 recorded each variant's breakdown from its nsys capture;
    recomputing it from the committed SQLite export gives the same numbers."""
    from nsprof.analyze.gpu_events import gpu_events
    from nsprof.analyze.pipeline import flow_breakdown
    from nsprof.parse.nsys_sqlite import load_nsys
    from nsprof.ranges import PIPELINE_PREFIX, pipeline_range

    export = load_nsys(EXAMPLE / "nsys.sqlite")
    breakdown = flow_breakdown(export, gpu_events([export]), PIPELINE_PREFIX + "/").set_index("range")
    recorded = json.loads((EXAMPLE / "pipeline.json").read_text())
    checked = 0
    for record in recorded["records"]:
        if record.get("h2d_ms") is None:
            continue
        row = breakdown.loc[pipeline_range(record["op"], record["stage"], record["variant"], (1024, 1024, 1024))]
        assert row["flows"] == 10
        for key in ("h2d_ms", "kernel_ms", "d2h_ms", "overlap_ms", "idle_ms"):
            assert row[key] == pytest.approx(record[key]), key
        checked += 1
    assert checked == 8  # every warm variant of v10 and v9
    pinned = breakdown.loc["pipeline/sgemm/v9/pinned/1024x1024x1024"]
    assert pinned["overlap_ms"] == pytest.approx(0, abs=1e-3)  # one stream: nothing overlaps
    streamed = breakdown.loc["pipeline/sgemm/v9/streams/1024x1024x1024"]
    assert streamed["overlap_ms"] > 0.02 and streamed["h2d_ms"] == pytest.approx(8 * 2**20 / 55e9 * 1e3, rel=0.15)


def test_explain_pipeline_reads_the_committed_capture(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from nsprof.cli import app

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["explain", "pipeline", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    rates = {(r["direction"], r["host_memory"]): r["gbytes_per_s"] for r in doc["measured"]["copy_rates"]}
    assert rates[("Host-to-Device", "pinned or device")] > 2 * rates[("Host-to-Device", "pageable")]
    best = doc["measured"]["pipeline"]["best"]
    assert (best["stage"], best["variant"]) == ("v9", "streams") and best["median_ms"] > best["floor_ms"]
    assert doc["measured"]["pipeline"]["pageable"]["median_ms"] > 3 * best["median_ms"]
    assert any("bus floor" in line for line in doc["facts"])


def test_report_has_the_whole_flow_and_its_fastest_flow_on_the_timeline(tmp_path):
    from typer.testing import CliRunner

    from nsprof.cli import app

    result = CliRunner().invoke(app, ["report", str(tmp_path), "--from", str(EXAMPLE)])
    assert result.exit_code == 0, result.output
    markdown = (tmp_path / "h200-pipeline-1024" / "report.md").read_text()
    assert "## The whole flow (h200-pipeline-1024)" in markdown
    from nsprof.render.format import duration_ns, ratio

    recorded = json.loads((EXAMPLE / "pipeline.json").read_text())["records"]
    best = min((r for r in recorded if r.get("median_ms")), key=lambda r: r["median_ms"])
    # the recorded median and its ratio to the floor, as the run recorded them
    row = f"| {best['stage']} | {best['variant']} | {duration_ns(best['median_ms'] * 1e6)} | {ratio(best['x_floor'])} |"
    assert row in markdown
    assert (tmp_path / "h200-pipeline-1024" / "pipeline-h200-pipeline-1024.png").read_bytes()[:4] == b"\x89PNG"


def test_the_fastest_flows_window_holds_that_variants_ranges_and_the_work_they_launched():
    """The analysis the report draws (nsprof.analyze.pipeline.fastest_flow_timeline): the fastest
    warm variant, and a window from its first range's opening to past its last range's end."""
    from nsprof.analyze.pipeline import fastest_flow_timeline
    from nsprof.parse import load_profile

    profile = load_profile(EXAMPLE)
    flow = fastest_flow_timeline(profile.timelines, profile.pipeline)
    warm = [r for r in profile.pipeline["records"] if r["variant"] != "cold" and r.get("median_ms") is not None]
    assert flow is not None and flow.best == min(warm, key=lambda r: r["median_ms"])
    mine = flow.ranges[flow.ranges["range"].str.contains(f"/{flow.best['stage']}/{flow.best['variant']}/", regex=False)]
    assert len(mine) and flow.window[0] == mine["start_ns"].min() and flow.window[1] >= mine["end_ns"].max()
    assert flow.events["start_ns"].min() >= flow.origin


def test_the_pipeline_tables_render_the_committed_record_on_any_machine():
    """What `nsprof pipeline` prints, from the record the H200 run saved (document blocks, terminal writer)."""
    import io

    from rich.console import Console

    from nsprof.commands.pipeline import pipeline_blocks
    from nsprof.render.document_writers import to_terminal

    recorded = json.loads((EXAMPLE / "pipeline.json").read_text())
    console = Console(width=100, record=True, file=io.StringIO(), color_system=None)
    to_terminal(pipeline_blocks(recorded, "1024"), console, spaced=False)
    text = console.export_text()
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 100
    for record in recorded["records"]:
        if record["variant"] != "cold":
            assert f"{record['median_ms']:.3f}" in text, record["variant"]
    assert "Cold: the first flow in a fresh process" in text and "floor: 0.151 ms" in text


def test_the_report_puts_each_whole_flow_against_the_cpus_blas(tmp_path):
    """Seed 000's question in the report: `nsprof pipeline`'s x_cpu_blas per flow, from the H100 run's
    own pipeline document (benchmarks/records/2026-11-26-h100-cpu-rung/h100-cpu-rung.json), read beside
    the H200 capture's timeline."""
    import shutil

    from typer.testing import CliRunner

    from nsprof.cli import app
    from nsprof.render.format import speedup

    capture = tmp_path / "flows"
    shutil.copytree(EXAMPLE, capture)
    record = json.loads((EXAMPLE.parents[2] / "benchmarks" / "records" / "2026-11-26-h100-cpu-rung" / "h100-cpu-rung.json")
                        .read_text())["pipeline_1024"]
    (capture / "pipeline.json").write_text(json.dumps(record))
    result = CliRunner().invoke(app, ["report", str(tmp_path / "out"), "--from", str(capture)])
    assert result.exit_code == 0, result.output
    markdown = (tmp_path / "out" / "flows" / "report.md").read_text()
    assert "| x CPU BLAS |" in markdown
    for flow in (r for r in record["records"] if r.get("x_cpu_blas") and r["variant"] != "cold"):  # warm flows only
        assert f"| {flow['stage']} | {flow['variant']} |" in markdown
        line = next(line for line in markdown.splitlines() if line.startswith(f"| {flow['stage']} | {flow['variant']} |"))
        assert line.rstrip(" |").endswith(speedup(flow["x_cpu_blas"]))
    blas = record["cpu"]
    assert f"than the CPU's BLAS ({blas['stage']}) on the same product in host memory" in markdown
    assert blas["cpu"] in markdown


def test_the_flows_under_nsys_are_timed_unheld(tmp_path, monkeypatch):
    """The capture's workload times its flows with no hold kernels between them (NSPROF_HOLD=0, as nsprof
    profile's workload): the timeline the breakdown reads shows the flows' own launches alone."""
    from nsprof.capture.program import program_commands
    from nsprof.ladder.registry import get_stage
    from nsprof.verbs.pipeline import _pipeline_breakdown

    asked = []

    def capture(request, out, tools, progress):
        asked.append(request)
        raise RuntimeError("stop before running nsys")

    monkeypatch.setattr("nsprof.capture.tools.find_tool", lambda tool, path: tool)
    monkeypatch.setattr("nsprof.capture.session.capture_program", capture)
    with pytest.raises(RuntimeError, match="stop before"):
        _pipeline_breakdown("sgemm", [get_stage("sgemm", "v8")], (512, 512, 512), 1, [], tmp_path, None,
                            lambda message: None)
    [nsys] = program_commands(asked[0], {"nsys": "nsys"}, tmp_path)
    assert ("NSPROF_HOLD", "0") in nsys.env and "NSPROF_HOLD=0 nsys profile" in nsys.shell
