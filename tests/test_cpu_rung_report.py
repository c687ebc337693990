"""The first rung in the report: CPU stages beside a GPU capture (cpu_rung_capture: the committed H200
captures with the CPU stages' runs and `nsprof ceilings --cpu` of a CI-like host) are drawn on the
roofline at their op's compulsory intensity under the host's own roofs, drawn beside the GPU's; the
bar chart turns logarithmic so that every bar shows, CPU bars hatched; and every speed-up over the
CPU is one figure in the stage table, the chart and bench.

Expected values come from the capture's own files, read here with json: the CPU stages' medians
(bench-cpu.json), the host's roofs (ceilings-cpu.json) and the ops' formulas written out below."""

from __future__ import annotations

import csv
import json
import math
import shutil
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from typer.testing import CliRunner

from nsprof import api
from nsprof.cli import app
from nsprof.render import format as fmt
from nsprof.render.document_writers import to_markdown
from nsprof.render.ladder import ladder_chart
from nsprof.render.report import ladder_charts, report_document, roofline_charts

EXAMPLE = Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h200-sgemm-1024"
CAPTURES = ("sgemm-1024", "sgemv-4096")


def _flops(op: str, dims: list[int]) -> int:
    """2MNK for SGEMM (M x K times K x N), 2MK for SGEMV (M x K times K)."""
    return 2 * math.prod(dims)


def _compulsory_bytes(op: str, dims: list[int]) -> int:
    """float32 inputs read once, the output written once: A, B and C; A, x and y."""
    if op == "sgemm":
        m, n, k = dims
        return 4 * (m * k + k * n + m * n)
    m, k = dims
    return 4 * (m * k + k + m)


class Rung:
    """One capture with CPU stages: what its files say (read with json) and what nsprof makes of it."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.bench = json.loads((directory / "bench-cpu.json").read_text())["results"]
        self.host = json.loads((directory / "ceilings-cpu.json").read_text())
        self.fp32_tflops = self.host["ceilings"]["fp32_tflops"]["value"]
        self.memory_tbyte_per_s = self.host["ceilings"]["dram_tbyte_per_s"]["value"]
        self.cpu = self.host["device"]["cpu"]
        self.timed = [r for r in self.bench if r["status"] == "ok"]
        self.op = self.timed[0]["op"]
        self.ladder = api.load_ladder([directory])
        self.markdown = to_markdown(report_document(self.ladder)[1])

    def expected_point(self, record: dict) -> dict:
        """Where the stage belongs on the roofline: the op's FLOPs over its compulsory bytes, its FLOPs
        over its median, under the lower of the host's two roofs there."""
        dims = [int(d) for d in record["size"].split("x")]
        intensity = _flops(self.op, dims) / _compulsory_bytes(self.op, dims)
        tflops = _flops(self.op, dims) / (record["median_ms"] * 1e-3) / 1e12
        memory, compute = self.memory_tbyte_per_s * intensity, self.fp32_tflops
        return {"intensity": intensity, "tflops": tflops, "roof": min(memory, compute),
                "bound": "memory" if memory < compute else "compute"}


@pytest.fixture(autouse=True)
def _close_figures():
    """The figures each test inspects, closed after it (pyplot keeps them otherwise)."""
    yield
    plt.close("all")


@pytest.fixture(scope="module", params=CAPTURES)
def rung(request, cpu_rung_capture) -> Rung:
    return Rung(cpu_rung_capture(request.param))


def _table(markdown: str, header_start: str) -> list[dict[str, str]]:
    """The rows of the Markdown table whose header starts with `header_start`, by header."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    headers = [cell.strip() for cell in lines[start].strip("|").split("|")]
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(headers, (cell.strip() for cell in line.strip("|").split("|")))))
    return rows


def _ladder_figure(rung: Rung):
    (chart,) = roofline_charts(rung.ladder)  # one ladder: one roofline, the CPU stages in it
    return chart.figure


def _line(figure, gid: str):
    return next(line for line in figure.axes[0].get_lines() if line.get_gid() == gid)


def test_the_roofline_draws_the_hosts_roofs_beside_the_gpus(rung):
    figure = _ladder_figure(rung)
    fp32, memory = _line(figure, "roof:cpu_fp32"), _line(figure, "roof:cpu_memory")
    assert list(fp32.get_ydata()) == pytest.approx([rung.fp32_tflops] * 2)  # flat, at the host's BLAS peak (TFLOP/s)
    xs, ys = memory.get_xdata(), memory.get_ydata()
    assert list(ys / xs) == pytest.approx([rung.memory_tbyte_per_s] * 2)  # TFLOP/s per FLOP/byte: TB/s
    ridge = rung.fp32_tflops / rung.memory_tbyte_per_s  # the host's roofs meet here, not where the GPU's do
    assert xs[-1] == pytest.approx(ridge) and fp32.get_xdata()[0] == pytest.approx(ridge)
    gpu_lines = [line for line in figure.axes[0].get_lines() if str(line.get_gid()).startswith("roof:")
                 and not str(line.get_gid()).startswith("roof:cpu_")]
    assert {"roof:dram", "roof:fp32"} <= {line.get_gid() for line in gpu_lines}  # the GPU's roofs stay
    assert fp32.get_color() not in {line.get_color() for line in gpu_lines}
    # named after the host's CPU, with both roofs as the ceilings document holds them
    said = figure.axes[0].get_title()
    assert (f"CPU ({rung.cpu}): {fmt.flops_per_s(rung.fp32_tflops * 1e12)} FP32, "
            f"{fmt.bytes_per_s(rung.memory_tbyte_per_s * 1e12)} memory") in said
    assert rung.host["created"][:10] in said
    assert figure.get_suptitle().endswith("and its host's CPU")  # the CPU is named under it, beside its roofs


def test_cpu_stages_sit_at_their_compulsory_intensity_under_the_hosts_roofs(rung):
    points = rung.ladder.points[rung.ladder.points["level"] == "compulsory"].set_index("label")
    assert set(points.index) == {r["stage"] for r in rung.timed} and len(points) == len(rung.timed)
    for record in rung.timed:
        expected, point = rung.expected_point(record), points.loc[record["stage"]]
        assert point["intensity_flop_per_byte"] == pytest.approx(expected["intensity"])
        assert point["gflops_per_s"] / 1e3 == pytest.approx(expected["tflops"])
        assert point["roof_gflops_per_s"] / 1e3 == pytest.approx(expected["roof"])
        assert point["pct_of_roof"] == pytest.approx(100 * expected["tflops"] / expected["roof"])
        assert (point["bound"], point["time_source"], point["compute_roof"]) == (expected["bound"], "wall clock", "CPU FP32")
        assert point["flops_source"] == "declared"  # the op's FLOPs: nothing counted them
    # drawn where they are, as diamonds of their own
    (markers,) = [c for c in _ladder_figure(rung).axes[0].collections if c.get_gid() == "points:compulsory"]
    drawn = sorted(map(tuple, markers.get_offsets()))
    wanted = sorted((e["intensity"], e["tflops"]) for e in map(rung.expected_point, rung.timed))
    assert len(drawn) == len(wanted) and all(d == pytest.approx(w) for d, w in zip(drawn, wanted))


def test_the_gpu_points_are_those_of_the_capture_without_cpu_stages(rung, tmp_path):
    """The host's roofs and the CPU stages' points change nothing of the GPU's."""
    plain = tmp_path / rung.directory.name
    shutil.copytree(rung.directory, plain)
    for name in ("bench-cpu.json", "ceilings-cpu.json"):
        (plain / name).unlink()
    before = api.load_ladder([plain]).points.reset_index(drop=True)
    after = rung.ladder.points[rung.ladder.points["level"] != "compulsory"].reset_index(drop=True)
    assert len(before) and before.equals(after)


def test_the_report_says_where_each_cpu_stage_is_bound_and_blames_no_counter(rung):
    rows = {row["work"]: row for row in _table(rung.markdown, "| work | size | bound | roof above it |")}
    for record in rung.timed:
        expected, row = rung.expected_point(record), rows[record["stage"]]
        assert row["bound"] == expected["bound"] and row["time from"] == "wall clock"
        assert row["roof above it"] == ("CPU memory bandwidth" if expected["bound"] == "memory" else "CPU FP32 peak")
        assert row["% of that roof"] == fmt.percent(100 * expected["tflops"] / expected["roof"])
        assert row["FLOP per byte"] == f"{fmt.ratio(expected['intensity'], 1)} at compulsory bytes"
    # nothing is left off the roofline for want of counters: the CPU stages are on it
    unplaced = [line for line in rung.markdown.splitlines() if line.startswith("Not on the roofline")]
    assert not any(record["stage"] in line for line in unplaced for record in rung.timed)
    assert "ncu did not count it" not in rung.markdown


def test_without_the_hosts_roofs_a_cpu_stage_is_left_off_and_says_why(rung, tmp_path):
    bare = tmp_path / rung.directory.name
    shutil.copytree(rung.directory, bare)
    (bare / "ceilings-cpu.json").unlink()
    ladder = api.load_ladder([bare])
    assert ladder.cpu_roofs == [] and not (ladder.points["level"] == "compulsory").any()
    markdown = to_markdown(report_document(ladder)[1])
    (line,) = [line for line in markdown.splitlines() if line.startswith("Not on the roofline")]
    for record in rung.timed:
        assert (f"{record['stage']} ({fmt.problem_size(record['size'])}): a CPU stage: the host's roofs were not "
                "measured (nsprof ceilings --cpu)") in line
    (chart,) = roofline_charts(ladder)
    assert not [line for line in chart.figure.axes[0].get_lines() if str(line.get_gid()).startswith("roof:cpu_")]


def test_the_roofline_command_writes_the_cpu_points_and_keeps_quiet_about_them(rung, tmp_path):
    result = CliRunner().invoke(app, ["roofline", str(tmp_path / "out"), "--from", str(rung.directory)])
    assert result.exit_code == 0, result.output
    assert not any(record["stage"] in line for line in result.stderr.splitlines() if line.startswith("not on the roofline")
                   for record in rung.timed)
    with open(tmp_path / "out" / "roofline.csv") as table:
        on_cpu = {row["label"]: row for row in csv.DictReader(table) if row["level"] == "compulsory"}
    assert set(on_cpu) == {record["stage"] for record in rung.timed}
    for record in rung.timed:
        intensity = float(on_cpu[record["stage"]]["intensity_flop_per_byte"])  # as the CSV rounds it
        assert intensity == pytest.approx(rung.expected_point(record)["intensity"], rel=1e-5)
        assert on_cpu[record["stage"]]["time_source"] == "wall clock"


def _bars(figure) -> dict[str, object]:
    """The bars of a one-size chart by stage (the first line of each tick label)."""
    ax = figure.axes[0]
    stages = [label.get_text().split("\n")[0] for label in ax.get_xticklabels()]
    (bars,) = ax.containers
    return dict(zip(stages, bars.patches))


def test_the_chart_turns_logarithmic_with_cpu_bars_hatched(cpu_rung_capture):
    rung = Rung(cpu_rung_capture("sgemm-1024"))
    (chart,) = ladder_charts(rung.ladder)
    ax = chart.figure.axes[0]
    assert ax.get_yscale() == "log" and "log scale" in ax.get_ylabel()
    bars = _bars(chart.figure)
    for record in rung.timed:  # every CPU stage drawn, hatched, at its speed from its median
        bar = bars[record["stage"]]
        assert bar.get_hatch() and bar.get_height() == pytest.approx(rung.expected_point(record)["tflops"])
        assert ax.get_ylim()[0] < bar.get_height()  # above the axis' floor: it shows
    gpu = [stage for stage in bars if stage not in {r["stage"] for r in rung.timed}]
    assert gpu and not any(bars[stage].get_hatch() for stage in gpu)
    legend = ax.get_legend()
    assert "CPU stages" in legend.get_title().get_text() and "wall clock" in legend.get_title().get_text()
    library = rung.ladder.work.loc[rung.ladder.work["label"] == "v1", "baseline"].iloc[0]  # cuBLAS (FP32)
    levels = [segment[0][1] for lines in ax.collections for segment in lines.get_segments()]
    assert levels == [bars[library].get_height()]  # its reference line stays


def test_the_chart_stays_linear_without_cpu_stages():
    ladder = api.load_ladder([EXAMPLE])
    assert ladder.cpu_roofs == [] and not (ladder.work["time_source"] == "wall clock").any()
    (chart,) = ladder_charts(ladder)
    ax = chart.figure.axes[0]
    assert ax.get_yscale() == "linear" and "log" not in ax.get_ylabel()
    assert not any(bar.get_hatch() for bar in _bars(chart.figure).values())
    assert not [text for text in ax.texts if str(text.get_gid()).startswith("speedup:")]


def test_a_ladder_judged_by_bytes_names_the_cpu_stages_it_cannot_draw(cpu_rung_capture):
    """SGEMV's chart is of ncu's DRAM bandwidth, which a CPU stage has none of: named, not drawn as 0."""
    rung = Rung(cpu_rung_capture("sgemv-4096"))
    (chart,) = ladder_charts(rung.ladder)
    drawn = set(_bars(chart.figure))
    assert drawn and not drawn & {record["stage"] for record in rung.timed}
    title = chart.figure.axes[0].get_title()
    assert f"not drawn: {', '.join(record['stage'] for record in rung.timed)} (CPU stages" in title


@pytest.mark.parametrize(("heights", "scale"), [((0.0005, 0.06, 50.0), "log"), ((5.0, 12.0, 50.0), "linear")])
def test_the_axis_is_logarithmic_only_past_a_hundredfold_span(heights, scale):
    records = [{"status": "ok", "op": "sgemm", "stage": stage, "size": "1024x1024x1024", "tflops": height, "title": stage,
                "on_cpu": stage.startswith("v0")} for stage, height in zip(("v0", "v1", "v9"), heights)]
    assert ladder_chart(records, "SGEMM").axes[0].get_yscale() == scale


def test_speedups_are_one_figure_in_the_table_the_chart_and_bench(rung):
    rows = {row["stage"]: row for row in _table(rung.markdown, "| stage | title | size | time | from |")}
    work = rung.ladder.work.set_index("label")
    blas = next(r for r in rung.timed if r.get("cpu_role") == "blas")
    loop = next(r for r in rung.timed if r.get("cpu_role") == "loop")
    for stage, row in rows.items():
        time_ns = work.loc[stage, "time_per_launch_ns"]
        # each stage's time against the CPU's, from the CPU stages' own medians in bench-cpu.json
        assert work.loc[stage, "speedup_vs_cpu_blas"] == pytest.approx(blas["median_ms"] * 1e6 / time_ns)
        assert work.loc[stage, "speedup_vs_cpu_loop"] == pytest.approx(loop["median_ms"] * 1e6 / time_ns)
        assert row["x CPU BLAS"] == fmt.speedup(work.loc[stage, "speedup_vs_cpu_blas"])
        assert row["x CPU loop"] == fmt.speedup(work.loc[stage, "speedup_vs_cpu_loop"])
    for record in rung.timed:  # bench's own figures for the CPU stages, as it saved them
        assert rows[record["stage"]]["x CPU BLAS"] == fmt.speedup(record["speedup_vs_cpu_blas"])
        assert rows[record["stage"]]["x CPU loop"] == fmt.speedup(record["speedup_vs_cpu_loop"])
    # the chart labels each GPU bar with the table's figure, and no CPU bar
    (chart,) = ladder_charts(rung.ladder)
    labels = {str(text.get_gid()).split(":")[1]: text.get_text() for text in chart.figure.axes[0].texts
              if str(text.get_gid()).startswith("speedup:")}
    drawn = {stage for stage in _bars(chart.figure) if stage not in {r["stage"] for r in rung.timed}}
    assert drawn and set(labels) == drawn
    assert all(labels[stage] == rows[stage]["x CPU BLAS"] for stage in drawn)


@pytest.mark.parametrize("name", ["h100-sgemm-cpu-1024", "h100-sgemv-cpu-4096"])
def test_every_roof_label_stays_inside_the_figure(name):
    """The committed H100 captures: on SGEMV the host's ridge (16 FLOP/byte) lies near the axes' right
    edge, where a label set at the start of the CPU's FP32 roof ran off the figure; it goes right-aligned
    at the edge instead, as the GPU's compute roofs do."""
    from nsprof.api import load_ladder

    (chart,) = roofline_charts(load_ladder([Path(__file__).resolve().parents[1] / "profiles" / "examples" / name]))
    figure = chart.figure
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    axes_box = figure.axes[0].get_window_extent(renderer)
    roofs = [text.get_text() for text in figure.axes[0].texts if text.get_text().startswith("CPU ")]
    assert len(roofs) == 2 and any(" FP32 " in roof for roof in roofs)  # the host's memory and FP32 roofs
    for text in figure.axes[0].texts:
        box = text.get_window_extent(renderer)
        assert axes_box.x0 - 1 <= box.x0 and box.x1 <= axes_box.x1 + 1, text.get_text()
