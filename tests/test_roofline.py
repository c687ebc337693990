"""The roofline: points and bounds (nsprof.analyze.roofline), the figure and its label placement, and
`nsprof roofline` on the H200 captures, the committed example profile and another program's CSV."""

from __future__ import annotations

import csv
import io
import shutil
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_checks import one_line_error
from matplotlib.text import Text
from typer.testing import CliRunner

from nsprof.analyze.roofline import binding_points, roofline_points, roofs
from nsprof.api import load_ladder
from nsprof.ceilings.peaks import datasheet_ceiling
from nsprof.cli import app
from nsprof.render.roofline import MAX_LABELS, SOURCES_WIDTH, roofline_figure

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "h200"
RAW = DATA / "ncu-sgemm-ladder-1024-raw.csv"
EXAMPLE = REPO / "profiles" / "examples" / "h200-sgemm-1024"
H200 = datasheet_ceiling("NVIDIA H200")
PUSH_POP = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
STAGES = [f"v{i}" for i in range(1, 11)]

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])



def raw_stage_totals(path: Path, stage: str) -> dict[str, float]:
    """Sum the raw CSV's own columns over one stage's launches, without nsprof's parser."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    header, _units, *rows = csv.reader(lines[start:])
    launches = [dict(zip(header, row)) for row in rows if f"sgemm/{stage}/" in dict(zip(header, row))[PUSH_POP]]
    assert launches, stage

    def total(metric: str) -> float:
        return sum(float(launch[metric].replace(",", "")) for launch in launches)

    fp32 = (total("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum")
            + total("smsp__sass_thread_inst_executed_op_fmul_pred_on.sum")
            + 2 * total("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"))
    flops = fp32 + total("sm__ops_path_tensor_src_fp16.sum") + total("sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32.sum")
    return {"flops": flops, "fp32": fp32, "ns": total("gpu__time_duration.sum"),
            "dram": total("dram__bytes_read.sum") + total("dram__bytes_write.sum"),
            "l2": total("lts__t_bytes.sum"), "l1": total("l1tex__t_bytes.sum")}


@pytest.fixture(scope="module")
def raw_roofline(tmp_path_factory) -> pd.DataFrame:
    out = tmp_path_factory.mktemp("roofline")
    result = invoke("roofline", out, "--from", RAW)
    assert result.exit_code == 0, result.output
    return pd.read_csv(out / "roofline.csv")


def point(table: pd.DataFrame, label: str, level: str) -> pd.Series:
    rows = table[(table["label"] == label) & (table["level"] == level)]
    assert len(rows) == 1, (label, level)
    return rows.iloc[0]


# --- the CSV against the raw ncu columns ------------------------------------------------------------

@pytest.mark.parametrize("stage", ["v1", "v6", "v10"])
@pytest.mark.parametrize("level", ["dram", "l2", "l1"])
def test_csv_intensity_and_rate_match_the_raw_columns(raw_roofline, stage, level):
    expected = raw_stage_totals(RAW, stage)
    row = point(raw_roofline, stage, level)
    assert row["intensity_flop_per_byte"] == pytest.approx(expected["flops"] / expected[level], rel=1e-5)
    assert row["gflops_per_s"] == pytest.approx(expected["flops"] / expected["ns"], rel=1e-5)  # FLOP/ns = GFLOP/s


def test_csv_bound_and_percent_of_roof_by_hand(raw_roofline):
    v1 = raw_stage_totals(RAW, "v1")
    l1_roof = min(H200.l1_tbyte_per_s * 1e3 * v1["flops"] / v1["l1"], H200.fp32_tflop_per_s * 1e3)  # GFLOP/s
    row = point(raw_roofline, "v1", "l1")
    assert row["bound"] == "memory"  # v1 reads ~2.5 bytes per FLOP through L1
    assert row["roof_gflops_per_s"] == pytest.approx(l1_roof, rel=1e-5)
    assert row["pct_of_roof"] == pytest.approx(100 * v1["flops"] / v1["ns"] / l1_roof, rel=1e-5)
    v10 = point(raw_roofline, "v10", "dram")
    assert (v10["bound"], v10["compute_roof"]) == ("compute", "TF32 tensor")
    assert v10["roof_gflops_per_s"] == pytest.approx(H200.tf32_tensor_tflop_per_s * 1e3)
    assert v10["roof_source"] == "datasheet"


def test_csv_has_every_stage_at_each_level_and_no_l2_roof_without_a_measurement(raw_roofline):
    assert list(raw_roofline.columns[:8]) == ["label", "kernel", "level", "intensity_flop_per_byte", "flops_source",
                                              "gflops_per_s", "bound", "pct_of_roof"]
    for level in ("dram", "l2", "l1"):
        assert list(raw_roofline[raw_roofline["level"] == level]["label"]) == STAGES
    assert raw_roofline[raw_roofline["level"] == "l2"]["bound"].isna().all()  # the datasheet has no L2 figure
    assert point(raw_roofline, "v8", "dram")["kernel"] == "sgemm_v8_128x128"


def test_auto_scaled_units_give_the_same_points(raw_roofline, tmp_path):
    result = invoke("roofline", tmp_path, "--from", DATA / "ncu-sgemm-ladder-1024-raw-auto.csv")
    assert result.exit_code == 0, result.output
    auto = pd.read_csv(tmp_path / "roofline.csv")
    for column in ("intensity_flop_per_byte", "gflops_per_s"):
        np.testing.assert_allclose(auto[column], raw_roofline[column], rtol=1e-2)  # auto units print 3-4 digits


# --- pure model -------------------------------------------------------------------------------------

def work(**columns) -> pd.DataFrame:
    base = {"label": ["a"], "kernel": ["k"], "duration_ns": [1e6]}
    return pd.DataFrame({**base, **{key: [value] for key, value in columns.items()}})


def test_low_intensity_is_memory_bound_and_high_intensity_compute_bound():
    # 1e12 FLOP in 1 ms = 1 PFLOP/s... scaled down: 1e9 FLOP in 1 ms = 1000 GFLOP/s
    low = roofline_points(work(flops=1e9, dram_bytes=1e9), H200).iloc[0]  # 1 FLOP/byte: roof 4.8 TFLOP/s
    assert (low["bound"], low["roof_gflops_per_s"]) == ("memory", pytest.approx(4800))
    assert low["pct_of_roof"] == pytest.approx(100 * 1000 / 4800)
    high = roofline_points(work(flops=1e9, dram_bytes=1e6), H200).iloc[0]  # 1000 FLOP/byte
    assert (high["bound"], high["roof_gflops_per_s"], high["compute_roof"]) == ("compute", pytest.approx(67000), "FP32")


def test_mixed_work_runs_at_the_time_weighted_peak():
    mixed = roofline_points(work(flops=1e9, tensor_tf32_flops=1e9, dram_bytes=1e3), H200).iloc[0]
    seconds_at_peak = 1e9 / 67e12 + 1e9 / 494.7e12
    assert mixed["compute_roof"] == "mixed"
    assert mixed["compute_gflops_per_s"] == pytest.approx(2e9 / seconds_at_peak / 1e9)


def test_fp16_math_on_cuda_cores_is_placed_against_no_peak():
    """Its FLOPs count in the point's speed and intensity, but nsprof keeps no FP16 CUDA-core peak
    (its counted FLOPs are a lower bound for packed code, HALF_FLOPS_PER_INST), so its work has no compute roof."""
    half, mixed = (roofline_points(work(flops=fp32, fp16_flops=1e9, dram_bytes=1e6), H200).iloc[0] for fp32 in (0.0, 1e9))
    assert (half["compute_roof"], mixed["compute_roof"]) == ("FP16 CUDA cores", "mixed")
    assert half["gflops_per_s"] == pytest.approx(1000) and mixed["intensity_flop_per_byte"] == pytest.approx(2000)
    for point in (half, mixed):
        assert np.isnan(point["compute_gflops_per_s"]) and point["bound"] is None and np.isnan(point["pct_of_roof"])
    assert "half" not in {roof.key for roof in roofs(H200)}


def test_unknown_gpu_points_have_no_bound_and_work_without_flops_is_left_out():
    points = roofline_points(pd.concat([work(flops=1e9, dram_bytes=1e6), work(flops=0.0, dram_bytes=1e6)]), None)
    assert len(points) == 1 and points["bound"].isna().all() and points["pct_of_roof"].isna().all()
    assert roofs(None) == []


def test_binding_level_is_the_roof_the_work_comes_closest_to():
    points = roofline_points(work(flops=1e9, dram_bytes=1e6, l1_bytes=1e9), H200)
    assert list(binding_points(points)["level"]) == ["l1"]


# --- figures ----------------------------------------------------------------------------------------

def overlapping_pairs(boxes) -> list[tuple[int, int]]:
    """Index pairs of boxes that overlap by more than a hair (touching edges do not count)."""
    return [(i, j) for i in range(len(boxes)) for j in range(i + 1, len(boxes))
            if min(boxes[i].x1, boxes[j].x1) - max(boxes[i].x0, boxes[j].x0) > 0.01
            and min(boxes[i].y1, boxes[j].y1) - max(boxes[i].y0, boxes[j].y0) > 0.01]


def label_boxes(figure) -> tuple[list[str], list]:
    """Text and on-screen box of every horizontal text in the axes (point and compute-roof labels);
    the boxes of the text alone, without the leader lines annotations carry."""
    figure.canvas.draw()  # annotations take their offsets when drawn, as when saved
    ax = figure.axes[0]
    renderer = figure.canvas.get_renderer()
    texts = [text for text in ax.texts if text.get_text() and text.get_rotation() == 0]
    return [text.get_text() for text in texts], [Text.get_window_extent(text, renderer) for text in texts]


@pytest.fixture(scope="module")
def example_ladder():
    return load_ladder([EXAMPLE], False, None)


def test_ladder_labels_do_not_overlap_and_name_every_stage(example_ladder):
    figure = roofline_figure(example_ladder.points, example_ladder.roofs, example_ladder.gpu)
    texts, boxes = label_boxes(figure)
    assert overlapping_pairs(boxes) == []
    named = {stage for text in texts for stage in text.split(", ")}
    assert set(STAGES) <= named
    frame = figure.axes[0].get_window_extent(figure.canvas.get_renderer())
    assert all(frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1 for box in boxes)


def test_labels_of_several_sizes_do_not_overlap(example_ladder):
    """The ladder at four sizes (scaled from the example: the layout is what is tested)."""
    sizes = []
    for n in (1024, 2048, 4096, 8192):
        scale = (n / 1024) ** 3
        copy = example_ladder.work.copy()
        copy["size"] = f"{n}x{n}x{n}"
        for column in ("flops", "tensor_tf32_flops", "tensor_flops", "l2_bytes", "l1_bytes", "duration_ns"):
            copy[column] = copy[column] * scale
        copy["dram_bytes"] = copy["dram_bytes"] * (n / 1024) ** 2
        copy["duration_ns"] = copy["duration_ns"] * (1 + 0.1 * np.arange(len(copy)) * np.log2(n / 512))
        sizes.append(copy)
    points = roofline_points(pd.concat(sizes, ignore_index=True), H200)
    figure = roofline_figure(points, roofs(H200), "NVIDIA H200")
    texts, boxes = label_boxes(figure)
    assert overlapping_pairs(boxes) == []
    assert sum(len(text.split(", ")) for text in texts if text.startswith("v")) == 40


def test_many_kernels_label_only_the_longest_running():
    rng = np.random.default_rng(0)
    kernels = pd.DataFrame({"label": [f"kernel_{i}" for i in range(120)], "kernel": "k",
                            "duration_ns": rng.uniform(1e3, 1e6, 120), "flops": rng.uniform(1e6, 1e10, 120),
                            "dram_bytes": rng.uniform(1e6, 1e9, 120)})
    figure = roofline_figure(roofline_points(kernels, H200), roofs(H200), "NVIDIA H200")
    texts, boxes = label_boxes(figure)
    labels = [text for text in texts if text.startswith("kernel_")]
    longest = kernels.nlargest(MAX_LABELS, "duration_ns")["label"]
    assert {name for text in labels for name in text.split(", ")} == set(longest)
    assert overlapping_pairs(boxes) == []
    assert "80 more unlabelled" in figure.axes[0].get_title()


def test_title_names_the_gpu_and_the_ceilings_source(example_ladder):
    figure = roofline_figure(example_ladder.points, example_ladder.roofs, example_ladder.gpu)
    assert "NVIDIA H200" in figure.texts[0].get_text()
    assert "datasheet" in figure.axes[0].get_title()


def test_the_line_naming_many_profiles_fits_inside_the_figure():
    """Every H200 example at once: the subtitle names as many profiles as its width holds, then how many
    more, and its text ends inside the figure (it ran off both edges before)."""
    ladder = load_ladder(sorted(EXAMPLE.parent.glob("h200-*")), False, None)  # every H200 example
    figure = roofline_figure(ladder.points, ladder.roofs, ladder.gpu)
    profiles = list(dict.fromkeys(ladder.points["profile"].dropna()))
    line = next(line for line in figure.axes[0].get_title().splitlines() if line.startswith("from "))
    named = line.removeprefix("from ").split(" and ")[0].split(", ")
    assert len(profiles) > len(named) >= 2 and named == profiles[:len(named)]
    assert line.endswith(f" and {len(profiles) - len(named)} more") and len(line) <= SOURCES_WIDTH
    figure.canvas.draw()
    box = figure.axes[0].title.get_window_extent()
    assert box.x0 >= 0 and box.x1 <= figure.bbox.width


# --- the command --------------------------------------------------------------------------------------

def test_roofline_files_are_valid_and_not_trivial(tmp_path):
    result = invoke("roofline", tmp_path, "--from", EXAMPLE)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [f"wrote {tmp_path / name}" for name in ("roofline.png", "roofline.svg", "roofline.csv")]
    png = (tmp_path / "roofline.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 30_000
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert width >= 1200 and height >= 800
    svg = ElementTree.parse(tmp_path / "roofline.svg").getroot()
    assert svg.tag.endswith("svg") and len(list(svg.iter())) > 200


def test_default_from_is_profiles_so_it_works_right_after_install(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    result = invoke("roofline", tmp_path)
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "roofline.csv")
    assert set(table["label"]) >= set(STAGES)


@pytest.mark.parametrize("bad", ["no/such/path", "empty-dir", "not-ncu.csv"])
def test_bad_from_is_a_one_line_error(tmp_path, bad):
    (tmp_path / "empty-dir").mkdir()
    (tmp_path / "not-ncu.csv").write_text("a,b\n1,2\n")
    result = invoke("roofline", tmp_path / "out", "--from", tmp_path / bad)
    assert one_line_error(result, 2 if bad == "no/such/path" else 1).startswith("error: ")  # a missing path: exit 2
    assert not (tmp_path / "out").exists()


def test_a_directory_of_profiles_uses_the_latest_of_each_stage_unless_all(tmp_path):
    for name, started in (("old", "2026-01-01T00:00:00+00:00"), ("new", "2026-02-01T00:00:00+00:00")):
        directory = tmp_path / "profiles" / "nested" / name
        directory.mkdir(parents=True)
        shutil.copy(RAW, directory / "ncu-raw.csv")
        (directory / "manifest.json").write_text(f'{{"started": "{started}"}}')
    result = invoke("roofline", tmp_path / "latest", "--from", tmp_path / "profiles")
    assert result.exit_code == 0, result.output
    latest = pd.read_csv(tmp_path / "latest" / "roofline.csv")
    assert set(latest["profile"]) == {"new"} and len(latest) == 30
    result = invoke("roofline", tmp_path / "all", "--from", tmp_path / "profiles", "--all")
    assert result.exit_code == 0, result.output
    every = pd.read_csv(tmp_path / "all" / "roofline.csv")
    assert len(every) == 60 and {"v6", "v6 #2"} <= set(every["label"])


OTHER_PROGRAM = [
    ["ID", "Kernel Name", "device__attribute_display_name", "gpu__time_duration.sum", "dram__bytes_read.sum",
     "dram__bytes_write.sum", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
     "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"],
    ["", "", "", "nsecond", "byte", "byte", "inst", "inst", "inst"],
    ["0", "void my::gemm_kernel<128, 8>(float const*, float const*, float*, int)", "NVIDIA H200", "100,000", "1,000,000", "0",
     "0", "0", "500,000,000"],
    ["1", "void my::gemm_kernel<128, 8>(float const*, float const*, float*, int)", "NVIDIA H200", "100,000", "1,000,000", "0",
     "0", "0", "500,000,000"],
    ["2", "copy_kernel", "NVIDIA H200", "500", "2,000,000", "2,000,000", "0", "0", "0"],
]


def test_another_programs_csv_is_labelled_by_kernel_name(tmp_path):
    text = io.StringIO()
    csv.writer(text, quoting=csv.QUOTE_ALL).writerows(OTHER_PROGRAM)
    (tmp_path / "app.csv").write_text("program output\n==PROF== Disconnected\n" + text.getvalue())
    result = invoke("roofline", tmp_path / "out", "--from", tmp_path / "app.csv")
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "out" / "roofline.csv")
    assert list(table["label"]) == ["gemm_kernel"]  # the copy did no FLOPs: no place on a roofline
    row = table.iloc[0]
    assert row["intensity_flop_per_byte"] == pytest.approx(2 * 1e9 / 2e6, rel=1e-5)  # both launches: 2e9 FLOP over 2 MB
    assert row["gflops_per_s"] == pytest.approx(2e9 / 200_000, rel=1e-5)  # 10 TFLOP/s
    assert (row["bound"], row["pct_of_roof"]) == ("compute", pytest.approx(100 * 10 / 67, rel=1e-5))


def test_the_committed_h200_ceilings_give_measured_roofs(tmp_path):
    result = invoke("roofline", tmp_path, "--from", EXAMPLE, "--ceilings", REPO / "profiles")
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "roofline.csv")
    l2 = table[table["level"] == "l2"]
    assert l2["bound"].notna().all()  # the measured file has the L2 bandwidth the datasheet lacks
    assert l2["roof_source"].str.startswith("measured").all()


# --- the report of every committed capture: one roofline per ladder -----------------------------------

@pytest.fixture(scope="module")
def every_example():
    from nsprof.render.report import roofline_charts

    ladder = load_ladder(sorted((REPO / "profiles" / "examples").glob("h200-*")), False, None)  # one GPU's
    return ladder, roofline_charts(ladder)


def test_report_of_every_example_draws_one_roofline_per_ladder_and_capture(every_example):
    from nsprof.ladder.registry import stages_for

    ladder, charts = every_example
    ladders = {chart.file_name: chart for chart in charts}
    assert sorted(ladders) == ["roofline-h200-program-torch-compile.png", "roofline-h200-program-torch-train.png",
                               "roofline-hgemm.png", "roofline-sgemm.png", "roofline-sgemv.png"]
    for op in ("sgemm", "hgemm", "sgemv"):
        chart = ladders[f"roofline-{op}.png"]
        own = {stage.stage for stage in stages_for(op)}  # the registry's stages of this op, not the chart's grouping
        texts, _ = label_boxes(chart.figure)
        named = {name for text in texts if "TFLOP/s" not in text for name in text.split(", ")}
        assert named and named <= own, (op, named - own)
        drawn = np.vstack([collection.get_offsets() for collection in chart.figure.axes[0].collections])
        expected = ladder.points[ladder.points["stage"].isin(own) & (ladder.points["op"] == op)]
        assert len(drawn) == len(expected)  # every point of the ladder, and no other ladder's
        assert chart.subject == f"the {op.upper()} ladder" and op.upper() in chart.figure.texts[0].get_text()
    train = ladders["roofline-h200-program-torch-train.png"]
    assert set(train.points["profile"]) == {"h200-program-torch-train"} and train.points["stage"].isna().all()


def test_each_ladder_chart_shows_the_roofs_of_its_own_precision(every_example):
    """HGEMM does its FLOPs on FP16 tensor cores (h3-h5's few FP32 epilogue FLOPs bring no FP32
    roof), SGEMM on FP32 pipes and, from v10, TF32 tensor cores; SGEMV on FP32 pipes only."""
    _, charts = every_example
    roofs_drawn = {}
    for chart in charts:
        texts, _ = label_boxes(chart.figure)
        roofs_drawn[chart.file_name] = {text.split(" ")[0] + (" tensor" if " tensor " in text else "")
                                        for text in texts if "TFLOP/s" in text}
    assert roofs_drawn["roofline-hgemm.png"] == {"FP16 tensor"}
    assert roofs_drawn["roofline-sgemm.png"] == {"FP32", "TF32 tensor"}
    assert roofs_drawn["roofline-sgemv.png"] == {"FP32"}


def test_every_chart_names_its_sources_and_its_labels_do_not_overlap(every_example):
    _, charts = every_example
    colors = set()
    for chart in charts:
        texts, boxes = label_boxes(chart.figure)
        assert overlapping_pairs(boxes) == [], (chart.file_name, [(texts[i], texts[j]) for i, j in overlapping_pairs(boxes)])
        frame = chart.figure.axes[0].get_window_extent(chart.figure.canvas.get_renderer())
        assert all(frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1 for box in boxes)
        subtitle = chart.figure.axes[0].get_title()
        assert all(profile in subtitle for profile in set(chart.points["profile"]))  # which capture
        assert "ceilings measured" in subtitle  # which ceilings
        source = {"nsys": "nsys time per launch", "ncu": "ncu duration"}
        assert all(source[time] in chart.figure.axes[0].get_ylabel() for time in set(chart.points["time_source"]))
        if chart.points["stage"].notna().all():
            colors.add(tuple(chart.figure.axes[0].collections[0].get_facecolors()[0]))
    assert len(colors) == 3  # SGEMM, HGEMM and SGEMV each in a colour of its own


def test_merged_labels_read_in_ladder_order(every_example):
    """SGEMV's s2..s7 sit within a marker of each other at 0.5 FLOP/byte: one label, in stage order."""
    _, charts = every_example
    sgemv = next(chart for chart in charts if chart.file_name == "roofline-sgemv.png")
    texts, _ = label_boxes(sgemv.figure)
    for text in texts:
        names = text.split(", ")
        if len(names) > 1:
            assert names == sorted(names, key=lambda name: int(name[1:]))


def test_each_stage_is_labelled_at_its_dram_point():
    """SGEMV's s3 (x in constant memory, read past L1) sits at 0.483 FLOP/B at DRAM and 0.501 at L1:
    its label and the path's arrow go to the DRAM point, the intensity every table shows, not the
    rightmost."""
    from nsprof import api
    from nsprof.render.roofline import _rightmost_per_work

    points = api.load_ladder([Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h200-sgemv-4096"]).points
    s3 = points[points["label"] == "s3"]
    assert s3.loc[s3["level"] == "l1", "intensity_flop_per_byte"].iloc[0] > s3.loc[s3["level"] == "dram",
                                                                                   "intensity_flop_per_byte"].iloc[0]
    chosen = points.loc[_rightmost_per_work(points)]
    assert set(chosen["level"]) == {"dram"} and list(chosen["label"]) == [f"s{n}" for n in range(1, 8)]


def test_a_cache_level_whose_counter_missed_the_loads_gets_no_point_and_a_line_says_why():
    """The committed TF32 capture: cuBLAS's v9t reads A and B by TMA, so l1tex counted 3% of the
    bytes DRAM moved, which would put an L1 point at 8,000 FLOP/byte; it gets none, and the line
    says why, while v10 (mma.sync fed through L1) keeps its L1 point and every stage its DRAM one."""
    from nsprof.api import unplaced_lines

    ladder = load_ladder([REPO / "profiles" / "examples" / "h200-sgemm-tf32-1024"])
    levels = ladder.points.groupby("stage")["level"].apply(set)
    work = ladder.work.set_index("stage")
    assert work.at["v9t", "l1_bytes"] < 0.05 * work.at["v9t", "dram_bytes"]  # what the counters say
    assert levels["v9t"] == {"dram", "l2"} and "l1" in levels["v10"]
    assert all("dram" in found for found in levels)
    assert (ladder.points["intensity_flop_per_byte"] < 1000).all()
    assert [line for line in unplaced_lines(ladder) if line.startswith("no L1 point")] == [
        f"no L1 point: v9t (1024x1024x1024): {work.at['v9t', 'l1_bytes']:,.0f} bytes counted, under half of "
        f"DRAM's {work.at['v9t', 'dram_bytes']:,.0f}: the loads went around it (TMA, cp.async.bulk)"]


def test_with_no_from_one_ladder_on_one_gpu_is_drawn_and_named(tmp_path, monkeypatch):
    """A fresh clone: profiles/ holds only the committed examples (three ladders, two GPUs, two
    programs): the best-covered ladder, SGEMM on the H200, is read, and a line says so. Once the
    user has a profile of their own, its ladder is read instead."""
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "examples").symlink_to(REPO / "profiles" / "examples")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["roofline", "out"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == ("read 3 profiles of the sgemm ladder on NVIDIA H200 under profiles/ (the "
                                             "committed examples' best-covered ladder; --from chooses others)")
    assert set(pd.read_csv(tmp_path / "out" / "roofline.csv")["op"]) == {"sgemm"}
    shutil.copytree(REPO / "profiles" / "examples" / "h200-hgemm-1024", tmp_path / "profiles" / "mine",
                    ignore=shutil.ignore_patterns("nsys.sqlite"))
    result = CliRunner().invoke(app, ["roofline", "out"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("read 1 profile of the hgemm ladder on NVIDIA H200 under profiles/ (the newest ladder")


def test_the_subtitle_says_how_the_counted_stages_filled_the_gpu(every_example):
    """Issue 60: the roofline says why a point sits under its roof as far as the launch goes: h6 (and SGEMM's v8,
    v11) in waves on the profile's GPU, as roofline.csv's launch_* columns hold them; the other ladders say nothing."""
    _, charts = every_example
    subtitles = {chart.file_name: chart.figure.axes[0].get_title() for chart in charts}
    hgemm = next(chart for chart in charts if chart.file_name == "roofline-hgemm.png")
    h6 = hgemm.points.dropna(subset=["launch_waves"]).iloc[0]
    assert h6["stage"] == "h6" and h6["launch_plan"].startswith("128 blocks of 128x64 on 132 slots")
    assert f"launched in waves: h6 at 1024³ {h6['launch_waves']:.2f} ({h6['launch_idle_share']:.0%} of the slots idle)" \
        in subtitles["roofline-hgemm.png"]
    assert "launched in waves: v8 at 1024³" in subtitles["roofline-sgemm.png"]
    assert "launched in waves" not in subtitles["roofline-sgemv.png"]
    assert all(len(line) <= SOURCES_WIDTH for text in subtitles.values() for line in text.splitlines()
               if line.startswith("launched in waves"))
