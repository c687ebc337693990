"""nsprof's nsys summaries against `nsys stats` on the same real exports: equal to the nanosecond
and the byte (tests/data/user-programs: a PyTorch training step, a CUDA-graph program)."""

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from nsprof.analyze.gpu_utilization import gpu_utilization
from nsprof.analyze.nvtx_attribution import WORK_COLUMNS, range_summary, unattributed_work
from nsprof.analyze.summaries import kernel_summary, memcpy_summary
from nsprof.cli import app
from nsprof.parse.nsys_sqlite import load_nsys

USER = Path(__file__).resolve().parent / "data" / "user-programs"
CAPTURES = ["train", "graph", "graph-node"]


def stats(capture: str, report: str) -> pd.DataFrame:
    return pd.read_csv(USER / f"{capture}-stats_{report}.csv")


@pytest.mark.parametrize("capture", CAPTURES)
def test_kernel_summary_equals_cuda_gpu_kern_sum(capture):
    """Every kernel row as nsys stats has it; graphs traced at graph level are rows of their own
    ("CUDA graph 1") that cuda_gpu_kern_sum leaves out, so % is of kernel and graph time together."""
    export = load_nsys(USER / f"{capture}.sqlite")
    summary = kernel_summary([export])
    graphs = summary[summary["kernel"].str.startswith("CUDA graph ")].set_index("kernel")
    ours = summary[~summary["kernel"].str.startswith("CUDA graph ")].set_index("kernel")
    theirs = stats(capture, "cuda_gpu_kern_sum").set_index("Name")
    assert sorted(ours.index) == sorted(theirs.index)
    theirs = theirs.loc[ours.index]
    assert (ours["count"] == theirs["Instances"]).all()
    assert (ours["total_ns"] == theirs["Total Time (ns)"]).all()
    assert (ours["min_ns"] == theirs["Min (ns)"]).all() and (ours["max_ns"] == theirs["Max (ns)"]).all()
    assert ours["median_ns"].tolist() == pytest.approx(theirs["Med (ns)"].tolist(), abs=0.5)
    kernel_share = ours["total_ns"].sum() / summary["total_ns"].sum()
    assert (ours["pct"] / kernel_share).tolist() == pytest.approx(theirs["Time (%)"].tolist(), abs=0.05)
    assert len(graphs) == (1 if capture == "graph" else 0)
    if capture == "graph":  # five replays of one graph
        assert graphs.loc["CUDA graph 1", "count"] == 5
        assert graphs.loc["CUDA graph 1", "total_ns"] == export.graphs["duration_ns"].sum()


@pytest.mark.parametrize("capture", CAPTURES)
def test_memcpy_summary_equals_cuda_gpu_mem_time_and_size_sums(capture):
    ours = memcpy_summary([load_nsys(USER / f"{capture}.sqlite")])
    times = stats(capture, "cuda_gpu_mem_time_sum")
    sizes = stats(capture, "cuda_gpu_mem_size_sum")
    name = {kind: f"[CUDA memcpy {kind}]" for kind in ours["kind"]} | {"memset": "[CUDA memset]"}
    ours["Operation"] = ours["kind"].map(name)
    merged = ours.merge(times, on="Operation").merge(sizes, on="Operation", suffixes=("", "_size"))
    assert len(merged) == len(ours) == len(times) > 0
    assert (merged["count"] == merged["Count"]).all() and (merged["total_ns"] == merged["Total Time (ns)"]).all()
    assert merged["bytes"].div(1e6).tolist() == pytest.approx(merged["Total (MB)"].tolist(), abs=0.0005)  # stats: MB, 3 decimals


def test_analyze_json_carries_both_summaries():
    result = CliRunner().invoke(app, ["analyze", str(USER / "train.sqlite"), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc["kernel_summary"][0]) == {"kernel", "count", "total_ns", "avg_ns", "median_ns", "min_ns", "max_ns", "pct"}
    assert sum(row["pct"] for row in doc["kernel_summary"]) == pytest.approx(100)
    transfers = {row["kind"]: row for row in doc["memcpy_summary"]}
    assert set(transfers) == {"Host-to-Device", "Device-to-Device", "Device-to-Host"}
    # the targets come from pageable memory (4 steps) as do PyTorch's small parameter uploads; the batch is pinned
    assert (transfers["Host-to-Device"]["count"], transfers["Host-to-Device"]["pageable_count"]) == (14, 10)
    assert transfers["Device-to-Host"]["pageable_count"] == transfers["Device-to-Device"]["pageable_count"] == 0


@pytest.mark.parametrize("capture", CAPTURES)
def test_unattributed_work_and_the_outermost_ranges_add_up_to_all_kernel_time(capture):
    """What no range received plus what the top-level ranges received is every kernel, exactly."""
    export = load_nsys(USER / f"{capture}.sqlite")
    outside = unattributed_work([export])
    top = {"train": ["step"], "graph": ["graph_replay", "overlap"], "graph-node": ["graph_replay", "overlap"]}[capture]
    ranges = range_summary(export).set_index("range").loc[top]
    assert ranges["kernels"].sum() + ranges["graphs"].sum() + outside["kernels"] == len(export.kernels) + len(export.graphs)
    assert ranges["kernel_ns"].sum() + outside["kernel_ns"] == (export.kernels["duration_ns"].sum()
                                                                + export.graphs["duration_ns"].sum())


@pytest.mark.parametrize("capture", CAPTURES)
def test_thread_attribution_equals_nvtx_gpu_proj_sum(capture):
    """GPU operations per range as nsys stats -r nvtx_gpu_proj_sum counts them (one per API call that
    started GPU work, a node-traced graph launch being one), and range instances. nsys leaves graph
    launches traced at graph level out of its projection: graph_replay is absent from its table."""
    ours = range_summary(load_nsys(USER / f"{capture}.sqlite"), "thread").set_index("range")
    theirs = stats(capture, "nvtx_gpu_proj_sum")
    theirs["range"] = theirs["Range"].str.lstrip(":")
    theirs = theirs.set_index("range")
    assert set(theirs.index) <= set(ours.index)
    assert (ours.loc[theirs.index, "gpu_ops"] == theirs["Total GPU Ops"]).all()
    assert (ours.loc[theirs.index, "count"] == theirs["Range Instances"]).all()
    left_out = ours.drop(theirs.index)
    assert (left_out["gpu_ops"] == left_out["graphs"]).all()  # only graph-level graph launches
    if capture == "graph":
        assert left_out.loc["graph_replay", "graphs"] == 5 and left_out.loc["graph_replay", "gpu_time_ns"] > 0


def test_process_attribution_gives_backward_its_autograd_kernels():
    export = load_nsys(USER / "train.sqlite")
    thread, process = (range_summary(export, rule).set_index("range") for rule in ("thread", "process"))
    assert thread.loc["backward", "kernels"] == 4 and process.loc["backward", "kernels"] == 84
    work = list(WORK_COLUMNS)
    assert (process.loc["forward", work] == thread.loc["forward", work]).all()  # forward runs on the Python thread alone
    assert unattributed_work([export], "process") == {"kernels": 0, "kernel_ns": 0, "pct": 0.0, "other_thread_kernels": 0}
    # Under thread attribution, the 80 backward kernels the autograd thread launched are the ones
    # --attribution process would give a range (84 - 4 above): what analyze's hint counts.
    assert unattributed_work([export], "thread")["other_thread_kernels"] == 84 - 4
    doc = json.loads(CliRunner().invoke(app, ["analyze", str(USER / "train.sqlite"), "--json",
                                              "--attribution", "process"]).stdout)
    assert doc["attribution"] == "process"
    assert next(r for r in doc["ranges"] if r["range"] == "backward")["kernels"] == 84


@pytest.mark.parametrize("capture", CAPTURES)
def test_gpu_utilization_is_the_union_of_gpu_work(capture):
    """Busy time against a plain sweep over every event, and the idle gaps are real gaps."""
    export = load_nsys(USER / f"{capture}.sqlite")
    [device] = gpu_utilization([export])
    events = sorted((int(s), int(e)) for frame in (export.kernels, export.memcpys, export.memsets, export.graphs)
                    for s, e in zip(frame["start_ns"], frame["end_ns"]))
    busy, gaps, (start, end) = 0, [], events[0]
    for s, e in events[1:]:
        if s > end:
            busy, gaps, start = busy + end - start, [*gaps, s - end], s
        end = max(end, e)
    busy += end - start
    assert device["busy_ns"] == busy and device["span_ns"] == end - events[0][0]
    assert [gap["duration_ns"] for gap in device["idle_gaps"]] == sorted(gaps, reverse=True)[:5]


def test_pytorch_backward_kernels_are_outside_the_backward_range():
    """The autograd thread launches the backward pass: the `backward` range pushed by the Python thread
    receives 4 of its kernels (one per step), and almost half of the kernel time is in no range."""
    doc = json.loads(CliRunner().invoke(app, ["analyze", str(USER / "train.sqlite"), "--json"]).stdout)
    backward = next(row for row in doc["ranges"] if row["range"] == "backward")
    assert backward["kernels"] == 4 and doc["unattributed"]["kernels"] == 80
    assert 40 < doc["unattributed"]["pct"] < 55


def test_ranges_sort_naturally():
    doc = json.loads(CliRunner().invoke(app, ["analyze", str(USER.parent.parent.parent / "profiles" / "examples" /
                                                             "h200-sgemm-1024"), "--json"]).stdout)
    stages = [row["range"].split("/")[1] for row in doc["ranges"] if row["range"].startswith("nsprof:sgemm/")]
    assert stages == [f"v{i}" for i in range(1, 11)]


def test_kernel_summary_table_tells_template_instances_apart():
    """Kokkos launches many instances of one template (the Perlmutter CloverLeaf capture): the table names
    each by the template's name and the part that tells the instance apart ("par_ranged2d_kernel…2)]>"),
    every instance differently, and --json keeps the full names."""
    cloverleaf = USER.parent / "nsys-pipit" / "perlmutter-cloverleaf-cuda.sqlite"
    lines = CliRunner().invoke(app, ["analyze", str(cloverleaf)]).stdout.splitlines()
    start = lines.index("Kernels by total time (nsys)")
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("└"))
    labels = [line.split("│")[1].strip() for line in lines[start:end] if line.startswith("│")]
    ranged = [label for label in labels if label.startswith("par_ranged2d_kernel…")]
    assert len(ranged) >= 5 and len(set(ranged)) == len(ranged), labels
    doc = json.loads(CliRunner().invoke(app, ["analyze", str(cloverleaf), "--json"]).stdout)
    names = [row["kernel"] for row in doc["kernel_summary"]]
    assert len(names) == len(set(names)) and all("par_ranged2d_kernel" in n for n in names[2:4])
