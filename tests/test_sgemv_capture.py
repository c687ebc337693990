"""The committed SGEMV capture (the ladder at 4096^2 on the H200, nsys + ncu with the sector
counters), analyzed on the CPU: the memory-bound ladder seen through nsprof's own analysis."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nsprof import api
from nsprof.cli import app

EXAMPLE = Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h200-sgemv-4096"
LADDER = [f"s{i}" for i in range(1, 8)]


def explain_json(*args):
    result = CliRunner().invoke(app, ["explain", *args, "--from", str(EXAMPLE), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_every_stage_is_found_and_moves_about_its_minimum_bytes():
    stages = api.analyze(EXAMPLE).stages.set_index("stage")
    assert list(stages.index) == LADDER and set(stages["size"]) == {"4096x4096"}
    minimum = 4 * (4096 * 4096 + 2 * 4096)
    # intensity about 0.5 FLOP per byte: 2MK FLOPs over 4MK bytes
    assert ((stages["intensity_flop_per_byte"] - 0.5).abs() < 0.05).all()
    # the coalesced stages read A about once per launch from DRAM; s1 too (its waste is in L1, not DRAM)
    launches = json.loads((EXAMPLE / "manifest.json").read_text())["repeat"]["ncu"]
    per_launch = stages["dram_bytes"] / launches
    assert (per_launch.loc[["s1", "s2", "s5", "s6", "s7"]].between(minimum, 1.1 * minimum)).all()


def test_coalescing_measured_sectors_match_the_sector_model():
    doc = explain_json("coalescing", "--op", "sgemv")
    assert [row["step"] for row in doc["ladder"]] == ["s1 -> s2", "s2 -> s5"]
    l1 = {row["stage"]: row for row in doc["evidence"]["l1_bytes"]}
    assert l1["s1"]["predicted_l1_bytes"] == l1["s1"]["measured_l1_bytes"]  # 32 sectors per request, exactly
    assert l1["s5"]["predicted_l1_bytes"] == l1["s5"]["measured_l1_bytes"]
    assert abs(l1["s2"]["predicted_l1_bytes"] / l1["s2"]["measured_l1_bytes"] - 1) < 0.01
    per_request = {row["stage"]: row["global_ld_sectors_per_request"] for row in doc["evidence"]["quantities"]}
    assert per_request["s1"] > 6 * per_request["s2"]  # A: 32 sectors per warp request against 4


def test_roofline_puts_the_ladder_on_the_dram_roof(tmp_path):
    ladder = api.load_ladder([EXAMPLE])
    points = ladder.points[ladder.points["level"] == "dram"].set_index("label")
    assert (points.loc[LADDER, "bound"] == "memory").all()
    assert points.loc["s6", "pct_of_roof"] > 10 * points.loc["s1", "pct_of_roof"]


def test_report_and_bench_table_name_bandwidth(tmp_path):
    result = CliRunner().invoke(app, ["report", str(tmp_path), "--from", str(EXAMPLE), "--name", "sgemv"])
    assert result.exit_code == 0, result.output
    markdown = (tmp_path / "sgemv" / "report.md").read_text(encoding="utf-8")
    assert markdown.startswith("# SGEMV ladder on NVIDIA H200") and "### s2: " in markdown


@pytest.mark.parametrize("stage", ["s2", "s3", "s4"])
def test_the_transpose_is_timed_apart_and_kept(stage):
    records = json.loads((EXAMPLE / "bench-nsys.json").read_text())["results"]
    rec = next(r for r in records if r["stage"] == stage)
    assert rec["prepare"] == "transpose" and rec["prepare_ms"] > 0 and rec["status"] == "ok"


def test_float_sums_cites_each_stages_own_verification_error():
    facts = explain_json("float-sums")["facts"]
    errors = {fact.split()[0]: float(fact.split("relative error ")[1].split()[0]) for fact in facts if " at 4096x4096:" in fact}
    assert set(errors) == {"s1", "s2", "s5", "s6", "s7"}
    assert errors["s1"] > 3 * errors["s6"]  # a sequential sum of 4,096 terms against a tree of partial sums
    assert any("max(1e-5, 8 sqrt(K) 2^-24)" in fact for fact in facts)
