"""nsprof diff on real H200 captures: the statistics against scipy, matching, stages, bench
records, the CLI's exit codes and widths."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from nsprof import api
from nsprof.analyze.diff.matching import match_kernels
from nsprof.analyze.diff.statistics import compare_samples
from nsprof.cli import app
from nsprof.parse import load_profile

SGEMM = "profiles/examples/h200-sgemm-1024"
SGEMM_AGAIN = "tests/data/h200/nsys-sgemm-ladder-1024.sqlite"
runner = CliRunner()


def _launches(path: str, kernel: str) -> np.ndarray:
    kernels = load_profile(path).nsys[0].kernels
    return kernels.loc[kernels["kernel"].astype(str) == kernel, "duration_ns"].to_numpy(float)


def test_interval_agrees_with_scipy_bootstrap_on_real_launches():
    scipy_stats = pytest.importorskip("scipy.stats")
    a, b = _launches(f"{SGEMM}/nsys.sqlite", "sgemm_v5"), _launches(SGEMM_AGAIN, "sgemm_v5")
    ours = compare_samples(pd.DataFrame({"key": "k", "value_ns": a}), pd.DataFrame({"key": "k", "value_ns": b})).loc["k"]
    theirs = scipy_stats.bootstrap((a, b), lambda x, y, axis: np.median(y, axis=axis) / np.median(x, axis=axis) - 1,
                                   method="percentile", n_resamples=20000, vectorized=True, random_state=1)
    assert ours["change_pct"] == pytest.approx(100 * (np.median(b) / np.median(a) - 1))
    # both are Monte Carlo estimates of the same percentiles: they agree to a fraction of the width
    width = ours["ci_high_pct"] - ours["ci_low_pct"]
    assert abs(ours["ci_low_pct"] - 100 * theirs.confidence_interval.low) < 0.15 * width + 0.05
    assert abs(ours["ci_high_pct"] - 100 * theirs.confidence_interval.high) < 0.15 * width + 0.05


def test_too_few_launches_have_no_interval():
    stats = compare_samples(pd.DataFrame({"key": ["k", "k"], "value_ns": [1.0, 2.0]}),
                            pd.DataFrame({"key": ["k"] * 5, "value_ns": [9.0] * 5})).loc["k"]
    assert not stats["testable"] and np.isnan(stats["ci_low_pct"])


def test_a_changed_template_argument_pairs_by_base_name_and_graphs_pair_as_graphs():
    a = pd.DataFrame({"name": ["gemm<128>(float*)", "CUDA graph 3", "only_a(int)"], "is_graph": [False, True, False],
                      "start_ns": [1, 2, 3]})
    b = pd.DataFrame({"name": ["gemm<64>(float*)", "CUDA graph 7", "only_b(int)"], "is_graph": [False, True, False],
                      "start_ns": [1, 2, 3]})
    keys = match_kernels(a, b).set_index(["side", "name"])["key"]
    assert keys["a", "gemm<128>(float*)"] == "gemm<64>(float*)"
    assert keys["a", "CUDA graph 3"] == "CUDA graph 7"
    assert keys["a", "only_a(int)"] == "only_a(int)" and keys["b", "only_b(int)"] == "only_b(int)"


def test_the_same_ladder_captured_twice_calls_nothing_faster_or_slower():
    result = api.diff(f"{SGEMM}/nsys.sqlite", SGEMM_AGAIN)
    assert {row["status"] for row in result.kernels + result.stages} == {"same"}
    # the two captures ran 10 and 5 timed launches per stage (their manifests' repeat), plus 4 others
    v1 = next(row for row in result.kernels if row["kernel"] == "sgemm_v1")
    assert (v1["a_count"], v1["b_count"]) == (14, 7)
    assert any("different number of times" in line for line in result.warnings)
    assert result.slower_than(2.0) == []


def test_v5_to_v6_is_a_small_real_speedup_with_store_conflicts_cut():
    [row] = api.diff(SGEMM, stages=("v5", "v6")).stages
    analysis = api.analyze(SGEMM)
    times = analysis.stages.set_index("label")["time_per_launch_ns"]
    assert row["change_pct"] < 0 and row["ci_high_pct"] < 0 and row["significant"]
    assert row["change_pct"] == pytest.approx(100 * (times["v6"] / times["v5"] - 1), abs=0.5)  # medians vs means
    conflicts = row["metrics"]["bank_conflicts_per_launch"]
    assert conflicts["b"] < 0.1 * conflicts["a"]


def test_bench_records_compare_per_stage_and_size():
    result = api.diff("benchmarks/h200-sgemm.json", f"{SGEMM}/bench-nsys.json")
    assert len(result.stages) == 10 and all(row["size"] == "1024x1024x1024" for row in result.stages)
    assert any("only in A" in line for line in result.warnings)
    records = {r["stage"]: r for r in json.load(open("benchmarks/h200-sgemm.json"))["results"] if r["size"].startswith("1024x")}
    v6 = next(row for row in result.stages if row["label"] == "v6")
    assert v6["a_median_ns"] == pytest.approx(records["v6"]["median_ms"] * 1e6)


def test_cli_json_keys_and_fail_if_slower(tmp_path):
    ok = runner.invoke(app, ["diff", SGEMM, "--stages", "v6,v5", "--json"])
    document = json.loads(ok.stdout)
    assert set(document) >= {"kernels", "ranges", "stages", "totals"}
    assert document["stages"][0]["change_pct"] > 0
    failed = runner.invoke(app, ["diff", SGEMM, "--stages", "v6,v5", "--fail-if-slower", "0.5"])
    assert failed.exit_code == 1 and "slower by more than 0.5%" in failed.stderr
    passed = runner.invoke(app, ["diff", SGEMM, "--stages", "v6,v5", "--fail-if-slower", "5"])
    assert passed.exit_code == 0


def test_cli_tables_fit_80_columns_and_bad_input_is_one_line():
    result = runner.invoke(app, ["diff", "tests/data/user-programs/train.sqlite", "tests/data/user-programs/graph.sqlite"],
                           env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    missing = runner.invoke(app, ["diff", SGEMM, "nowhere.sqlite"])
    assert missing.exit_code == 1 and missing.stderr.count("\n") == 1 and "Traceback" not in missing.output
