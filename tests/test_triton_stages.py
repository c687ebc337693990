"""The Triton stages' captures (profiles/examples/h200-*-triton-*: real H200 runs of v12/v12t, h8 and
s8 beside v8/v11, h6 and s6) read without a GPU: the tuning kept apart from the stage in the
hot-kernel table, what the tuning kept and what Triton compiled, and `explain triton`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nsprof.analyze.harness import NSPROF_TUNING, is_tuning_range, launched_inside
from nsprof.cli import app
from nsprof.parse.profile import load_profile

EXAMPLES = Path(__file__).resolve().parents[1] / "profiles" / "examples"
HGEMM, SGEMM, SGEMV = (EXAMPLES / name for name in ("h200-hgemm-triton-1024", "h200-sgemm-triton-1024",
                                                     "h200-sgemv-triton-4096"))


def run(*args: str, columns: int = 100):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": str(columns)})


def test_the_profile_reads_what_the_tuning_kept_and_what_triton_compiled():
    profile = load_profile(SGEMM)
    bench = json.loads((SGEMM / "bench-nsys.json").read_text())["results"]
    kept = {(r["stage"], r["size"]): r["tile"] for r in bench if r["stage"] in ("v12", "v12t")}
    assert {key: details["autotune"]["kept"] for key, details in profile.tuning.items()} == kept
    v12t = profile.tuning[("v12t", "1024x1024x1024")]
    assert len(v12t["autotune"]["trials"]) == 7 and v12t["compiled"]["sass"]["wgmma"] > 0  # Hopper's tensor-core path
    v12 = profile.tuning[("v12", "1024x1024x1024")]
    assert v12["compiled"]["sass"]["wgmma"] == 0 and v12["compiled"]["sass"]["ffma"] > 0  # IEEE float32: FFMA
    ncu = json.loads((SGEMM / "bench-ncu.json").read_text())["results"]
    assert {(r["stage"], r["size"]): r["tile"] for r in ncu if r["stage"] in ("v12", "v12t")} == kept  # --tuned


def test_tuning_launches_are_harness_work_apart_from_the_stage():
    """Every launch of a tuning trial ran inside its tune/ range; those launches make rows of their own,
    left out of the ranking by the nsprof-tuning rule, and the kept configuration's measured launches stay."""
    export = load_profile(HGEMM).timelines[0]
    tuned = launched_inside(export, is_tuning_range)
    trials = json.loads((HGEMM / "bench-nsys.json").read_text())["results"]
    h8 = next(r for r in trials if r["stage"] == "h8")["details"]["autotune"]["trials"]
    assert tuned.sum() >= sum(5 + 20 + 2 for trial in h8 if trial["status"] == "ok")  # warm-up, timed, compile, verify
    doc = json.loads(run("analyze", str(HGEMM), "--json").stdout)
    rules = {rule["rule"]: rule for rule in doc["harness"]["rules"]}
    assert rules[NSPROF_TUNING]["launches"] == int(tuned.sum())
    ranked = [row for row in doc["hot_kernels"] if row["kernel"] == "matmul_kernel"]
    assert len(ranked) == 1 and ranked[0]["ncu_launches"] > 0  # the kept configuration, joined with ncu
    text = " ".join(run("analyze", str(HGEMM)).stdout.split())
    assert "a Triton stage's tuning trials (tune/... ranges), timed before the stage and never as it" in text


def test_explain_triton_puts_each_triton_stage_beside_its_hand_written_one():
    stages = {row["stage"]: row for row in json.loads(run("analyze", str(SGEMV), "--json").stdout)["stages"]}
    result = run("explain", "triton", "--op", "sgemv")
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "From profiles/examples/h200-sgemv-triton-4096" in text
    ratio = 100 * stages["s6"]["time_per_launch_ns"] / stages["s8"]["time_per_launch_ns"]
    assert f"s8 at 4096x4096: {ratio:.0f}% of s6's speed" in text
    kept = load_profile(SGEMV).tuning[("s8", "4096x4096")]["autotune"]["kept"]
    assert f"s8 at 4096x4096: kept {kept} of 6 tried" in text
    hgemm = " ".join(run("explain", "triton").stdout.split())
    assert "h8 at 1024x1024x1024" in hgemm and "HGMMA (wgmma)" in hgemm and "h200-hgemm-triton-1024" in hgemm


def test_diff_compares_a_triton_stage_with_the_hand_written_one():
    """h6 -> h8 in one capture: the Triton stage is a stage like any other to `diff --stages`."""
    result = run("diff", str(HGEMM), "--stages", "h6,h8", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    (row,) = doc["stages"]
    stages = {s["stage"]: s for s in json.loads(run("analyze", str(HGEMM), "--json").stdout)["stages"]}
    assert row["a_median_ns"] < row["b_median_ns"] and row["status"] == "slower"  # h8 is 14% slower at 1024^3
    assert row["b_median_ns"] / row["a_median_ns"] == pytest.approx(
        stages["h8"]["time_per_launch_ns"] / stages["h6"]["time_per_launch_ns"], rel=0.05)
