"""`nsprof timeline`: the Gantt chart and the Chrome trace of real nsys captures (tests/data)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from cli_checks import one_line_error
from nsprof.analyze.gpu_events import KINDS, gpu_events, merged_intervals, range_window
from nsprof.cli import app
from nsprof.parse.nsys_sqlite import load_nsys
from nsprof.render.chrome_trace import GPU_PID_BASE, chrome_trace

DATA = Path(__file__).resolve().parent / "data"
CAPTURES = [DATA / "user-programs" / f"{name}.sqlite" for name in ("train", "graph", "graph-node")] + [
    DATA / "nsys-pipit" / "perlmutter-cloverleaf-cuda.sqlite", DATA / "h200" / "nsys-sgemm-ladder-1024.sqlite",
    DATA / "timeline" / "nsys-12000-kernels.sqlite"]


def invoke(*args):
    return CliRunner().invoke(app, ["timeline", *map(str, args)])


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_trace_holds_one_complete_event_per_gpu_operation_on_its_stream_track(path, tmp_path):
    export = load_nsys(path)
    result = invoke(path, "--out", tmp_path / "t.png", "--trace", tmp_path / "t.json")
    assert result.exit_code == 0, result.output
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    gpu = [e for e in events if e["ph"] == "X" and e["pid"] >= GPU_PID_BASE]
    expected = len(export.kernels) + len(export.memcpys) + len(export.memsets) + len(export.graphs)
    assert len(gpu) == expected > 0
    assert sorted(e["dur"] for e in gpu if e["cat"] == "kernel") == pytest.approx(
        sorted(export.kernels["duration_ns"] / 1e3), abs=1e-3)  # microseconds, to the nanosecond
    assert sum(e["args"]["bytes"] for e in gpu if e["cat"] in ("HtoD", "DtoH", "DtoD")) == export.memcpys["bytes"].sum()
    assert sum(e["cat"] == "graph" for e in gpu) == len(export.graphs)
    tracks = {(e["pid"] - GPU_PID_BASE, e["tid"]) for e in gpu}  # one track per device and stream
    streams = set()
    for frame in (export.kernels, export.memcpys, export.memsets, export.graphs):
        streams |= set(zip(frame["device_id"], frame["stream_id"]))
    assert tracks == {(int(d), int(s)) for d, s in streams}
    named = {(e["pid"], e["tid"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {(e["pid"], e["tid"]) for e in gpu} <= named
    nvtx = [e for e in events if e.get("cat") == "nvtx"]
    assert len(nvtx) == len(export.nvtx.dropna(subset=["start_ns"]))
    assert {(e["pid"], e["tid"]) for e in nvtx} == set(zip(export.nvtx["pid"].astype(int), export.nvtx["tid"].astype(int)))
    assert (tmp_path / "t.png").read_bytes()[:4] == b"\x89PNG"


def test_graph_launches_are_events_on_their_stream():
    export = load_nsys(DATA / "user-programs" / "graph.sqlite")
    events = gpu_events([export])
    graphs = events[events["kind"] == "graph"]
    assert len(graphs) == 5 and set(graphs["stream_id"]) == set(export.graphs["stream_id"])
    assert set(graphs["name"]) == {"CUDA graph 1"} and set(events["kind"]) <= set(KINDS)


def test_range_zoom_reaches_the_end_of_the_gpu_work_launched_inside():
    export = load_nsys(DATA / "user-programs" / "graph.sqlite")
    events = gpu_events([export])
    start, end = range_window([export], events, "overlap")
    overlap = export.nvtx[export.nvtx["range"] == "overlap"].iloc[0]
    assert start == overlap["start_ns"] and end >= overlap["end_ns"]
    launched = events[(events["start_ns"] >= start) & (events["end_ns"] <= end)]
    assert len(launched) >= 12  # the range's 8 kernels and 4 copies (nvtx_gpu_proj_sum: 12 GPU ops)
    assert range_window([export], events, "no such range") is None


def test_merging_keeps_every_event_inside_a_bar():
    rng = np.random.default_rng(0)
    starts = np.sort(rng.integers(0, 10_000_000, 12_000))
    ends = starts + rng.integers(100, 3_000, 12_000)
    bar_start, bar_end = merged_intervals(starts, ends, tolerance_ns=10_000_000 // 1500)
    assert len(bar_start) < 1500  # drawable: at most about one bar per pixel
    which = np.searchsorted(bar_start, starts, side="right") - 1
    assert (which >= 0).all() and (ends <= bar_end[which]).all()


def test_twelve_thousand_events_draw_as_few_bars():
    """A lane of 12,000 kernels draws as a bounded number of rectangles."""
    from nsprof.render.timeline import timeline_figure

    n = 12_000
    starts = np.arange(n, dtype=np.int64) * 2_000
    events = pd.DataFrame({"device_id": 0, "stream_id": np.arange(n) % 4, "kind": "kernel", "name": "k",
                           "start_ns": starts, "end_ns": starts + 1_500, "duration_ns": 1_500, "bytes": 0,
                           "correlation_id": pd.array(np.arange(n), dtype="Int64"), "pid": pd.array([1] * n, dtype="Int64")})
    ranges = load_nsys(DATA / "user-programs" / "graph.sqlite").nvtx.iloc[0:0]
    figure = timeline_figure(events, ranges, (0, int(starts[-1]) + 1_500), 0, "synthetic")
    rectangles = sum(len(collection.get_paths()) for collection in figure.axes[0].collections)
    assert 4 <= rectangles <= 4 * 1500


def test_window_and_range_errors_are_one_line(tmp_path):
    path = DATA / "user-programs" / "graph.sqlite"
    assert "no NVTX range named 'nope'" in one_line_error(invoke(path, "--out", tmp_path / "a.png", "--range", "nope"), 2)
    assert "is not START:END" in one_line_error(invoke(path, "--out", tmp_path / "a.png", "--window", "12"), 2)
    assert "ends before it starts" in one_line_error(invoke(path, "--out", tmp_path / "a.png", "--window", "20:10"), 2)
    line = one_line_error(invoke(DATA / "user-programs" / "train-raw.csv", "--out", tmp_path / "a.png"))
    assert "no Nsight Systems capture to draw" in line
    assert not (tmp_path / "a.png").exists()


def test_earlier_output_is_kept_without_force(tmp_path):
    path = DATA / "user-programs" / "graph.sqlite"
    out = tmp_path / "t.png"
    out.write_bytes(b"earlier")
    assert "already exists" in one_line_error(invoke(path, "--out", out), 2)
    assert out.read_bytes() == b"earlier"
    assert invoke(path, "--out", out, "--window", "100:130", "--force").exit_code == 0
    assert out.read_bytes()[:4] == b"\x89PNG" and not list(tmp_path.glob(".t.png-*"))  # no temporary left


def test_out_may_name_a_directory_and_a_failed_drawing_writes_nothing(tmp_path, monkeypatch):
    path = DATA / "user-programs" / "graph.sqlite"
    result = invoke(path, "--out", tmp_path, "--window", "100:130")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "timeline-graph.png").read_bytes()[:4] == b"\x89PNG"

    def broken(*args, **kwargs):
        raise MemoryError("drawing failed")
    monkeypatch.setattr("nsprof.render.timeline.timeline_figure", broken)
    with pytest.raises(MemoryError):
        from nsprof import api
        api.write_timeline(path, tmp_path / "b.png", trace=tmp_path / "b.json")
    assert not (tmp_path / "b.json").exists() and not (tmp_path / "b.png").exists()  # the trace waits for the chart
