"""Where the time goes and what to fix first, on real H200 captures: the guided capture of a
torch.compile program, the PyTorch training step and nsprof's own SGEMM ladder."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from nsprof.analyze.hot_kernels import COVERAGE_PCT, hot_rows, nsys_kernel_rows
from nsprof.cli import app
from nsprof.kernel_names import kernel_key
from nsprof.parse import load_profile

EXAMPLES = Path(__file__).resolve().parents[1] / "profiles" / "examples"
COMPILE = EXAMPLES / "h200-program-torch-compile"
TRAIN = EXAMPLES / "h200-program-torch-train"
SGEMM = EXAMPLES / "h200-sgemm-1024"


def analyze_json(path: Path) -> dict:
    result = CliRunner().invoke(app, ["analyze", str(path), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def ncu_raw(path: Path) -> pd.DataFrame:
    """ncu's raw page read on its own: the header row, a units row, thousands separators."""
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    return pd.DataFrame(rows[2:], columns=rows[0])


def test_the_guided_capture_profiled_every_hot_kernel():
    """ncu has a launch of every kernel and configuration the guide chose from nsys, and together
    they make at least 80% of the program's kernel time."""
    manifest = json.loads((COMPILE / "manifest.json").read_text())
    guided = manifest["guided"]
    assert manifest["ncu_filters"] == {"guided": True, "top": 10} and manifest["status"] == "ok"
    assert guided["covered_pct"] >= COVERAGE_PCT and guided["skip_per_configuration"] == 2
    doc = analyze_json(COMPILE)
    rows = {(row["kernel"], row["grid"], row["block"]): row for row in doc["hot_kernels"]}
    for kernel in guided["kernels"]:
        row = rows[(kernel["kernel"], kernel["grid"], kernel["block"])]
        assert row["ncu_launches"] >= 1 and row["bound"] and row["top_rule"], row
        assert row["note"] is None
    assert sum(row["pct"] for row in doc["hot_kernels"] if row["ncu_launches"]) >= COVERAGE_PCT


def test_hot_kernels_agree_with_nsys_stats_and_the_ncu_report():
    """nsys's side equals `nsys stats -r cuda_gpu_kern_sum` (each hot kernel runs in one configuration
    here), ncu's side equals the raw page's own values (one launch each), and the saving is ncu's
    estimate (the total times the top rule's estimated speedup) bounded by the kernel's headroom to
    the nearest roof, largest first."""
    stats = pd.read_csv(COMPILE / "stats_cuda_gpu_kern_sum.csv").set_index("Name")
    raw = ncu_raw(COMPILE / "ncu-raw.csv")
    doc = analyze_json(COMPILE)
    hot = doc["hot_kernels"]
    # the program marks no step: its loop is found in the GPU work, and its hot kernels are the steady state's,
    # nsys stats' own figures over the kernels that started from it on
    steady = doc["harness"]["steady_state"]
    assert steady["source"] == "found"
    kernels = load_profile(COMPILE).timelines[0].kernels
    kernels = kernels[kernels["start_ns"] >= steady["start_ns"]]
    per_kernel = kernels.groupby(kernels["kernel"].astype(str))["duration_ns"].agg(["count", "sum", "median"])
    profiled = [row for row in hot if row["ncu_launches"]]
    assert len(profiled) >= 3
    for row in profiled:
        line = per_kernel.loc[row["kernel"]]
        assert (row["launches"], row["total_ns"], row["median_ns"]) == (line["count"], line["sum"], line["median"])
        assert row["launches"] <= stats.loc[row["kernel"], "Instances"]
        [ncu_row] = raw[raw["Kernel Name"] == row["kernel"]].to_dict("records")
        value = float(ncu_row["sm__throughput.avg.pct_of_peak_sustained_elapsed"].replace(",", ""))
        assert row["sm_throughput_pct"] == pytest.approx(value, abs=0.01)  # the page rounds to 2 decimals
        assert row["ncu_saving_ns"] == pytest.approx(row["total_ns"] * row["speedup_pct"] / 100)
        achieved = max(row[key] for key in ("pct_of_roof", "sm_throughput_pct", "memory_throughput_pct")
                       if row[key] is not None)
        assert row["headroom_ns"] == pytest.approx(row["total_ns"] * (1 - achieved / 100))
        assert row["saving_ns"] == pytest.approx(min(row["ncu_saving_ns"], row["headroom_ns"]))
    savings = [row["saving_ns"] for row in profiled]
    assert savings == sorted(savings, reverse=True)
    gemm = profiled[0]
    assert gemm["kernel"].startswith("nvjet_sm90") and gemm["roof"] == "tensor peak" and gemm["tflops_per_s"] > 100


def test_the_two_demanglers_names_meet():
    """nsys writes at::native::f<(int)8>, ncu at::f<8>: every launch ncu profiled in the training step
    finds its kernel in nsys's trace by kernel_key."""
    profile = load_profile(TRAIN)
    nsys_keys = {kernel_key(name) for name in profile.timelines[0].kernels["kernel"].astype(str)}
    ncu_names = set(profile.counters[0].kernels["kernel"].astype(str))
    assert len(ncu_names) >= 4 and all(kernel_key(name) in nsys_keys for name in ncu_names)
    assert kernel_key("void at::native::k<(int)8, (bool)1>(int)") == kernel_key("void at::k<8, true>(int)")


def test_hot_rows_are_the_fewest_that_make_the_coverage():
    rows = nsys_kernel_rows(load_profile(TRAIN).timelines)
    hot = hot_rows(rows, top=100)
    shares = hot["pct"].tolist()
    assert sum(shares) >= COVERAGE_PCT and sum(shares[:-1]) < COVERAGE_PCT
    assert len(hot_rows(rows, top=3)) == 3


def test_a_ladder_leads_with_its_stages_and_leaves_the_harness_out():
    """In the SGEMM ladder's capture init_curand leads nsys's kernel table; it is nsprof's harness,
    named as such, and never ranked among the kernels worth fixing."""
    doc = analyze_json(SGEMM)
    assert doc["kernel_summary"][0]["kernel"].startswith("void init_curand")
    harness = doc["harness"]
    assert any(name.startswith("void init_curand") for name in harness["kernels"])
    assert 20 < harness["pct"] < 40
    hot = {row["kernel"] for row in doc["hot_kernels"]}
    assert not hot & set(harness["kernels"]) and {"sgemm_v1", "sgemm_v8_128x128_unchecked"} <= hot
    text = CliRunner().invoke(app, ["analyze", str(SGEMM)]).stdout
    share = f"harness (inputs, reference, checks), {harness['pct']:.0f}%"  # the table says what the JSON says
    assert text.lstrip().startswith("Stages") and share in text.replace("\n", " ")


def test_a_copy_only_range_shows_its_copy_time():
    """The torch.compile program's h2d range only copies: its GPU time is the copies'."""
    ranges = {row["range"]: row for row in analyze_json(COMPILE)["ranges"]}
    h2d = ranges["block:h2d"]
    assert h2d["kernels"] == 0 and h2d["memcpy_count"] == 5
    assert h2d["copy_ns"] > 0 and h2d["gpu_time_ns"] == h2d["copy_ns"]


def test_fp16_math_on_cuda_cores_counts_in_the_rate():
    """Triton's fused GELU computes in fp16 on the CUDA cores: its FP16 FLOPs are counted."""
    doc = analyze_json(COMPILE)
    gelu = next(k for k in doc["kernels"] if k["kernel"] == "triton_poi_fused_gelu_view_2")
    assert gelu["fp16_flops"] > 0 and gelu["gflops_per_s"] > 0
