"""nsprof's nsys summaries against `nsys stats` on the same real exports: equal to the nanosecond
and the byte (tests/data/user-programs: a PyTorch training step, a CUDA-graph program)."""

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from nsprof.analyze.nvtx_attribution import range_summary, unattributed_work
from nsprof.analyze.summaries import kernel_summary, memcpy_summary
from nsprof.cli import app
from nsprof.parse.nsys_sqlite import load_nsys

USER = Path(__file__).resolve().parent / "data" / "user-programs"
CAPTURES = ["train", "graph", "graph-node"]


def stats(capture: str, report: str) -> pd.DataFrame:
    return pd.read_csv(USER / f"{capture}-stats_{report}.csv")


@pytest.mark.parametrize("capture", CAPTURES)
def test_kernel_summary_equals_cuda_gpu_kern_sum(capture):
    ours = kernel_summary([load_nsys(USER / f"{capture}.sqlite")]).set_index("kernel")
    theirs = stats(capture, "cuda_gpu_kern_sum").set_index("Name")
    assert sorted(ours.index) == sorted(theirs.index)
    theirs = theirs.loc[ours.index]
    assert (ours["count"] == theirs["Instances"]).all()
    assert (ours["total_ns"] == theirs["Total Time (ns)"]).all()
    assert (ours["min_ns"] == theirs["Min (ns)"]).all() and (ours["max_ns"] == theirs["Max (ns)"]).all()
    assert ours["median_ns"].tolist() == pytest.approx(theirs["Med (ns)"].tolist(), abs=0.5)
    assert ours["pct"].tolist() == pytest.approx(theirs["Time (%)"].tolist(), abs=0.05)


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
    assert ranges["kernels"].sum() + outside["kernels"] == len(export.kernels)
    assert ranges["gpu_time_ns"].sum() + outside["gpu_time_ns"] == export.kernels["duration_ns"].sum()


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
    """Kokkos launches many instances of one template (the Perlmutter CloverLeaf capture): the table shows
    base names, numbered where they repeat, and --json keeps the full names."""
    cloverleaf = USER.parent / "nsys-pipit" / "perlmutter-cloverleaf-cuda.sqlite"
    text = CliRunner().invoke(app, ["analyze", str(cloverleaf)]).stdout
    assert "par_ranged2d_kernel [2]" in text and "par_ranged2d_kernel [3]" in text
    doc = json.loads(CliRunner().invoke(app, ["analyze", str(cloverleaf), "--json"]).stdout)
    names = [row["kernel"] for row in doc["kernel_summary"]]
    assert len(names) == len(set(names)) and all("par_ranged2d_kernel" in n for n in names[2:4])
