"""ncu's launches grouped by kernel and launch configuration (nsprof.analyze.kernel_groups), and the
labels the tables give kernels (one per full name; [n] only tells apart different full names)."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nsprof import api, metric_catalog
from nsprof.analyze.launch_findings import bound
from nsprof.cli import app
from nsprof.render.analysis_tables import KERNEL_FIELDS
from nsprof.render.table_names import telling_names

REPO = Path(__file__).resolve().parents[1]
USER = REPO / "tests" / "data" / "user-programs"
TORCH = REPO / "profiles" / "examples" / "h200-program-torch-train"
CAPTURES = [TORCH, USER / "train-raw.csv", USER / "train-details.csv", USER / "graph-full-raw.csv",
            USER / "graph-full-details.csv", REPO / "profiles" / "examples" / "h200-sgemm-1024",
            REPO / "profiles" / "examples" / "h200-hgemm-1024", REPO / "profiles" / "examples" / "h200-sgemv-4096",
            REPO / "tests" / "data" / "h200" / "ncu-sgemm-ladder-1024-raw.csv"]
NSYS_CAPTURES = [TORCH, USER / "train.sqlite", USER / "graph.sqlite"]


@pytest.fixture(scope="module", params=CAPTURES, ids=lambda path: path.name)
def analysis(request):
    return api.analyze(request.param)


def test_every_launch_is_in_exactly_one_group_of_its_own_kernel_and_configuration(analysis):
    kernels, groups = analysis.kernels.set_index("id"), analysis.kernel_groups
    assert groups["launches"].sum() == len(kernels)
    ids = [i for group in groups["ids"] for i in group]
    assert sorted(ids) == sorted(kernels.index) and len(set(ids)) == len(ids)
    assert not groups.duplicated(["kernel", "grid", "block"]).any()
    for group in groups.itertuples():
        members = kernels.loc[group.ids]
        assert len(members) == group.launches
        assert set(members["kernel"]) == {group.kernel}
        assert set(members["grid"]) == {group.grid} and set(members["block"]) == {group.block}


def test_group_times_are_the_median_min_and_max_of_ncus_durations(analysis):
    launches = analysis.launches.set_index("id")  # the parser's column (raw page: metric name; details: "Duration")
    raw = launches[next(name for name in metric_catalog.names("duration_ns") if name in launches)].astype(float)
    for group in analysis.kernel_groups.itertuples():
        durations = raw.loc[group.ids].tolist()
        assert (group.median_ns, group.min_ns, group.max_ns) == (
            pytest.approx(statistics.median(durations)), min(durations), max(durations))


def test_other_figures_are_medians_and_the_bound_is_decided_from_them(analysis):
    kernels = analysis.kernels.set_index("id")
    for group in analysis.kernel_groups.itertuples():
        for column in ("gflops_per_s", "sm_throughput_pct", "occupancy_pct", "dram_bytes"):
            measured = kernels.loc[group.ids, column].dropna().tolist()
            expected = statistics.median(measured) if measured else None
            value = getattr(group, column)
            assert (value != value and expected is None) or value == pytest.approx(expected), column
        assert (group.bound, group.bound_rule) == bound(group.sm_throughput_pct, group.memory_throughput_pct)


RAW_PAGES = [TORCH, REPO / "profiles" / "examples" / "h200-sgemm-1024"]  # the captures whose raw page has both SOL figures


@pytest.mark.parametrize("capture", RAW_PAGES, ids=lambda path: path.name)
def test_the_bound_agrees_with_ncus_raw_page_read_on_its_own(capture):
    """The oracle is ncu's raw page, read by the csv module: per kernel and configuration, the
    median SM and memory throughput of its launches, and the bound the README states (latency
    when both are under 60% of peak, else the busier unit), not nsprof's own `bound`."""
    from test_hot_kernels import ncu_raw

    raw = ncu_raw(capture / "ncu-raw.csv")
    figures = {"sm": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
               "memory": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"}
    for name in figures.values():
        raw[name] = raw[name].str.replace(",", "").astype(float)
    groups = api.analyze(capture).kernel_groups.set_index(["kernel", "grid", "block"])
    verdicts = set()
    for (kernel, grid, block), launches in raw.groupby(["Kernel Name", "Grid Size", "Block Size"]):
        sm, memory = (statistics.median(launches[name]) for name in figures.values())
        expected = "latency" if max(sm, memory) < 60 else "compute" if sm >= memory else "memory"
        group = groups.loc[(kernel, grid, block)]
        assert (group["sm_throughput_pct"], group["memory_throughput_pct"]) == (pytest.approx(sm), pytest.approx(memory))
        assert group["bound"] == expected, (kernel, grid, sm, memory)
        verdicts.add(expected)
    assert len(raw) == groups["launches"].sum()  # every launch
    if capture.name == "h200-sgemm-1024":
        assert {"latency", "compute"} <= verdicts  # the oracle tells verdicts apart


def test_the_torch_training_step_groups_its_launches_of_one_kernel_by_configuration():
    """12 launches: 7 of one float16 copy kernel in four grids, 2 of the GEMM, 2 of GELU, 1 cutlass."""
    groups = api.analyze(TORCH).kernel_groups
    copy = groups[groups["kernel"].str.contains("float16_copy_kernel_cuda")]
    assert copy["grid"].tolist() == ["(1, 1, 1)", "(1024, 1, 1)", "(256, 1, 1)", "(10, 1, 1)"]
    assert copy["launches"].tolist() == [3, 2, 1, 1] and set(copy["block"]) == {"(128, 1, 1)"}
    gemm = groups[groups["kernel"].str.startswith("nvjet")].iloc[0]
    assert (gemm["launches"], gemm["ids"], gemm["grid"]) == (2, [3, 7], "(8, 12, 1)")
    assert len(groups) == 7


@pytest.mark.parametrize("path", CAPTURES + NSYS_CAPTURES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_one_label_per_full_name_and_different_names_never_look_alike(path):
    analysis = api.analyze(path)
    tables = [t["kernel"] for t in (analysis.kernels, analysis.kernel_groups, analysis.kernel_summary) if t is not None]
    for names in tables:
        labels = telling_names(names, 26)
        by_name = {}
        for name, label in zip(names, labels):
            assert by_name.setdefault(name, label) == label  # launches of one kernel: one label
        assert len(set(by_name.values())) == len(by_name)  # different kernels: different labels


def test_numbers_tell_apart_different_full_names_only():
    """Template arguments tell kernels apart and stay; names alike but for their namespaces are numbered."""
    names = ["void f<1>(int)", "void a::g(int)", "void f<1>(int)", "void b::g(int)", "void a::g(int)", "void c::g(int)"]
    assert telling_names(names, 24) == ["f<1>", "g", "f<1>", "g [2]", "g", "g [3]"]


def _rows(output: str, title: str) -> list[list[str]]:
    """The cells of the body rows of the table titled `title` in a terminal rendering."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == title)
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("└"):
            return rows
        if line.startswith("│"):
            rows.append([cell.strip() for cell in line.split("│")[1:-1]])


def test_the_default_table_has_a_row_per_group_and_launches_one_per_launch():
    runner = CliRunner()
    grouped = runner.invoke(app, ["analyze", str(TORCH)], env={"COLUMNS": "100"})
    assert grouped.exit_code == 0, grouped.output
    rows = _rows(grouped.stdout, "Kernels (ncu)")
    assert len(rows) == 7 and "every other column the median" in re.sub(r"\s+", " ", grouped.stdout)
    assert [row[1:4] for row in rows[:3]] == [["1", "128", "3"], ["1024", "128", "2"], ["256", "128", "1"]]
    launches = runner.invoke(app, ["analyze", str(TORCH), "--launches"], env={"COLUMNS": "100"})
    rows = {int(row[0]): row[1] for row in _rows(launches.stdout, "Kernel launches (ncu)")}
    assert len(rows) == 12 and "Kernels (ncu)" not in launches.stdout
    assert rows[3] == rows[7] == "nvjet_sm90_hsh_48x64_…"  # one GEMM, two launches: one label
    assert rows[0] == rows[1] == rows[10] != rows[4] == rows[8]  # float16 copy and GELU: two kernels
    assert "float16_copy" in rows[0] and "Gelu" in rows[4]  # each keeps what tells it from the other


def test_json_keeps_launches_and_adds_the_groups():
    doc = json.loads(CliRunner().invoke(app, ["analyze", str(TORCH), "--json"]).stdout)
    assert len(doc["kernels"]) == 12 and set(doc["kernels"][0]) == set(KERNEL_FIELDS) | {"rules"}
    groups = doc["kernel_groups"]
    assert sum(group["launches"] for group in groups) == 12 and len(groups) == 7
    assert {"kernel", "grid", "block", "launches", "median_ns", "min_ns", "max_ns", "ids", "gflops_per_s",
            "fp16_flops", "sm_throughput_pct", "bound"} <= set(groups[0])
    assert "id" not in groups[0] and "nvtx" not in groups[0]
    gemm = next(group for group in groups if group["kernel"].startswith("nvjet"))
    launches = [k for k in doc["kernels"] if k["id"] in gemm["ids"]]
    assert gemm["median_ns"] == pytest.approx(statistics.median(k["duration_ns"] for k in launches))
    assert gemm["fp16_flops"] is None  # this capture predates the FP16 counters: unknown, not 0
