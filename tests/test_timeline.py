"""`nsprof timeline`: the Gantt chart and the Chrome trace of real nsys captures (tests/data)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_checks import one_line_error
from typer.testing import CliRunner

from nsprof.analyze.gpu_events import KINDS, gpu_events, merged_intervals, range_window
from nsprof.cli import app
from nsprof.parse.nsys_sqlite import load_nsys
from nsprof.render.chrome_trace import GPU_PID_BASE

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(autouse=True)
def _figures_closed():
    """The tests draw timeline_figure's figures themselves (nsprof's callers save and close them):
    close each test's, or pyplot holds them all and warns past 20."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")
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


def test_a_file_nsprof_did_not_write_is_kept_without_force(tmp_path):
    path = DATA / "user-programs" / "graph.sqlite"
    out = tmp_path / "t.png"
    out.write_bytes(b"earlier")
    assert one_line_error(invoke(path, "--out", out), 2) == (
        f"error: {tmp_path}: kept t.png (not written by nsprof). Pass --force to replace it, or choose another output path")
    assert out.read_bytes() == b"earlier"
    assert invoke(path, "--out", out, "--window", "100:130", "--force").exit_code == 0
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".nsprof-") and p.name != ".nsprof-written.json"]


def test_charts_of_one_capture_are_named_for_their_range_and_window(tmp_path):
    path = DATA / "user-programs" / "graph.sqlite"
    for args in ((), ("--window", "100:130"), ("--window", "all")):
        assert invoke(path, "--out", tmp_path, *args).exit_code == 0
    assert sorted(p.name for p in tmp_path.glob("*.png")) == [
        "timeline-graph-100-130ms.png", "timeline-graph-all.png", "timeline-graph.png"]


def test_out_may_name_a_directory_and_a_failed_drawing_writes_nothing(tmp_path, monkeypatch):
    path = DATA / "user-programs" / "graph.sqlite"
    result = invoke(path, "--out", tmp_path, "--window", "100:130")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "timeline-graph-100-130ms.png").read_bytes()[:4] == b"\x89PNG"

    def broken(*args, **kwargs):
        raise MemoryError("drawing failed")
    monkeypatch.setattr("nsprof.render.timeline.timeline_figure", broken)
    with pytest.raises(MemoryError):
        from nsprof import api
        api.write_timeline(path, tmp_path / "b.png", trace=tmp_path / "b.json")
    assert not (tmp_path / "b.json").exists() and not (tmp_path / "b.png").exists()  # the trace waits for the chart


TORCH = Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h200-program-torch-train" / "nsys.sqlite"


def test_default_window_leaves_out_the_start_up_copies_before_the_idle_stretch_and_says_so(tmp_path):
    """The torch capture: 6 host-to-device copies in its first 6 ms, 3.5 s of compilation and
    start-up, then 4 training steps. The default window starts at the steps and says why."""
    from nsprof.analyze.timeline_window import default_window

    export = load_nsys(TORCH)
    events = gpu_events([export])
    window = default_window(events, export.nvtx)
    first_step = export.nvtx[export.nvtx["range"] == "step"]["start_ns"].min()
    early = events[events["end_ns"] < first_step]
    assert len(early) == 6 and set(early["kind"]) == {"HtoD"}  # read from the export, not from the rule
    assert window.left_out == 6 and window.idle_ns > 3e9
    assert window.start_ns <= first_step and window.end_ns >= events["end_ns"].max()
    assert window.start_ns > early["end_ns"].max()
    inside = events[events["start_ns"] >= window.start_ns]
    busy_start, busy_end = merged_intervals(inside["start_ns"].to_numpy(), inside["end_ns"].to_numpy())
    assert (busy_start[1:] - busy_end[:-1]).max() * 2 <= window.end_ns - window.start_ns  # no idle stretch over half

    result = invoke(TORCH.parent, "--out", tmp_path / "t.png")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"wrote {tmp_path / 't.png'}"
    caption = result.stderr.strip()
    origin, last = events["start_ns"].min(), events["end_ns"].max()  # the capture: a copy opens it, a copy ends it
    shown = first_step - (last - first_step) * 0.02  # from the first step, with the 2% margin
    assert caption.startswith(f"window {(shown - origin) / 1e6:,.1f}-{(last - origin) / 1e6:,.1f} ms: where the GPU "
                              "work and NVTX ranges are (6 GPU operations left out")
    assert caption.endswith("--window all for the whole 3,824 ms capture")
    whole = invoke(TORCH.parent, "--out", tmp_path / "all.png", "--window", "all")
    assert whole.exit_code == 0 and whole.stderr.strip() == "window 0-3,824 ms: the whole capture"


def test_a_window_outside_the_capture_is_a_one_line_error(tmp_path):
    line = one_line_error(invoke(TORCH.parent, "--out", tmp_path / "t.png", "--window", "9000:9100"), 2)
    assert "is outside the capture, which runs 0 to 3,823.938 ms" in line
    assert not (tmp_path / "t.png").exists()
    result = invoke(TORCH.parent, "--out", tmp_path / "t.png", "--window", "3800:")  # open-ended: to the capture's end
    assert result.exit_code == 0 and result.stderr.startswith("window 3,800.00-3,823.94 ms: as --window asked")


def _lanes(figure) -> dict[str, list[tuple[float, float, tuple]]]:
    """Each lane's drawn rectangles: (left, right, RGBA), x in ms, keyed by the lane's tick label."""
    axes = figure.axes[0]
    names = [tick.get_text() for tick in axes.get_yticklabels()]
    lanes = {name: [] for name in names}
    for collection in axes.collections:
        colors = np.broadcast_to(collection.get_facecolors(), (len(collection.get_paths()), 4))
        for path, color in zip(collection.get_paths(), colors):
            (left, bottom), (right, _) = path.vertices.min(axis=0), path.vertices.max(axis=0)
            lanes[names[int(bottom)]].append((left, right, tuple(color)))
    return lanes


@pytest.mark.parametrize("path", [DATA / "timeline" / "nsys-12000-kernels.sqlite", TORCH], ids=lambda p: p.parent.name)
def test_bars_drawn_are_the_events(path):
    """Every GPU operation lies inside a bar of its kind's colour on its stream's lane, every bar
    starts where one of them starts; every NVTX range is one bar on its thread's lanes. (The window
    reaches a little past the last event: a bar at its very end is moved in to stay visible.)"""
    from matplotlib.colors import to_rgba

    from nsprof.analyze.gpu_events import capture_origin
    from nsprof.render.timeline import COLORS, timeline_figure

    export = load_nsys(path)
    events = gpu_events([export])
    origin = capture_origin(events, export.nvtx)
    end = int(max(events["end_ns"].max(), export.nvtx["end_ns"].max()))
    end += (end - origin) // 100
    lanes = _lanes(timeline_figure(events, export.nvtx, (origin, end), origin, "t"))
    for (device, stream), lane in events.groupby(["device_id", "stream_id"]):
        drawn = lanes[f"GPU {device} stream {stream}"]
        for kind, group in lane.groupby("kind"):
            # a bar's opacity is the share of it the work filled: its colour is the kind's
            bars = np.array(sorted((left, right) for left, right, color in drawn if color[:3] == to_rgba(COLORS[kind])[:3]))
            starts, ends = (group["start_ns"].to_numpy() - origin) / 1e6, (group["end_ns"].to_numpy() - origin) / 1e6
            which = np.searchsorted(bars[:, 0], starts + 1e-9, side="right") - 1
            assert (which >= 0).all() and (ends <= bars[which, 1] + 1e-9).all()
            assert np.isin(np.round(bars[:, 0], 9), np.round(starts, 9)).all()
    nvtx = [bar for name, bars in lanes.items() if name.startswith("NVTX") for bar in bars]
    assert len(nvtx) == len(export.nvtx) > 0
    assert sorted(left for left, _, _ in nvtx) == pytest.approx(sorted((export.nvtx["start_ns"] - origin) / 1e6))
    threads = {f"NVTX thread {tid}" for tid in export.nvtx["tid"]}
    assert {name.split(" (")[0] for name, bars in lanes.items() if name.startswith("NVTX") and bars} == threads


@pytest.mark.parametrize("window", ["all", None, "3809.8:3812"])
def test_every_nvtx_level_shows_at_any_zoom(window, tmp_path):
    """Rendered, every NVTX range in the window colours pixels of its lane where it starts, nested
    ones of a fraction of a pixel included (the whole torch capture: 0.2 ms ranges in 3.8 s)."""
    from matplotlib.colors import to_rgb

    from nsprof.analyze.gpu_events import capture_origin
    from nsprof.analyze.timeline_window import capture_span, default_window
    from nsprof.render.timeline import NVTX_COLORS, _nvtx_lanes, timeline_figure

    export = load_nsys(TORCH)
    events = gpu_events([export])
    origin = capture_origin(events, export.nvtx)
    if window == "all":
        start, end = capture_span(events, export.nvtx)
    elif window is None:
        chosen = default_window(events, export.nvtx)
        start, end = chosen.start_ns, chosen.end_ns
    else:
        start, end = (origin + round(float(side) * 1e6) for side in window.split(":"))
    figure = timeline_figure(events, export.nvtx, (start, end), origin, "t")
    figure.canvas.draw()
    pixels = np.asarray(figure.canvas.buffer_rgba())[:, :, :3].astype(float) / 255
    axes = figure.axes[0]
    shades = np.array([to_rgb(color) for color in NVTX_COLORS])
    ranges = export.nvtx[(export.nvtx["end_ns"] > start) & (export.nvtx["start_ns"] < end)]
    levels = _nvtx_lanes(ranges)
    assert len(levels) == 2  # step; forward, backward and optimizer inside it
    names = [tick.get_text() for tick in axes.get_yticklabels()]
    for name, level in levels:
        row = names.index(name)
        for left in level["start_ns"]:
            x = axes.transData.transform([((max(left, start) - origin) / 1e6, row + 0.5)])[0]
            column, middle = round(x[0]), round(pixels.shape[0] - x[1])
            patch = pixels[middle - 2:middle + 3, column - 2:column + 3].reshape(-1, 3)
            distance = np.abs(patch[:, None, :] - shades[None, :, :]).max(axis=2).min(axis=1)
            assert (distance < 0.1).any(), f"{name}: range at {(left - origin) / 1e6:.3f} ms not drawn"


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_gpu_events_column_subset_is_the_whole_tables_columns(path):
    """gpu_utilization reads four of gpu_events' columns: built alone they are the whole table's,
    row for row, and the table holds every operation, by start then end."""
    exports = [load_nsys(path)]
    whole = gpu_events(exports)
    columns = ("device_id", "name", "start_ns", "end_ns")
    pd.testing.assert_frame_equal(gpu_events(exports, columns), whole[list(columns)])
    export = exports[0]
    assert len(whole) == len(export.kernels) + len(export.memcpys) + len(export.memsets) + len(export.graphs)
    keys = list(zip(whole["start_ns"], whole["end_ns"]))
    assert keys == sorted(keys)


def test_a_range_not_in_a_capture_of_many_names_the_nearest_and_where_all_are(tmp_path):
    """A JAX capture holds tens of thousands of range names: the error names the nearest to the one
    asked for (the train step for a misspelling of it) and the command listing them all; a capture
    of few ranges lists every one."""
    jax = DATA / "real-programs" / "jax-a"
    line = one_line_error(invoke(jax, "--out", tmp_path / "a.png", "--range", "train_stepp"), 2)
    assert "the nearest: train:step, " in line and f"(all of them: nsprof analyze {jax})" in line
    graph = DATA / "user-programs" / "graph.sqlite"
    names = sorted(set(load_nsys(graph).nvtx["range"]))
    line = one_line_error(invoke(graph, "--out", tmp_path / "b.png", "--range", "nope"), 2)
    assert 0 < len(names) <= 10 and line.endswith(f"ranges: {', '.join(names)}")
