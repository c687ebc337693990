"""The committed HGEMM capture (the ladder at 1024^3 on the H200, nsys + ncu), analyzed on the CPU:
what a user without a GPU sees, and facts about Nsight's tensor-core counters it records."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nsprof import api
from nsprof.cli import app

EXAMPLE = Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h200-hgemm-1024"
LADDER = [f"h{i}" for i in range(1, 8)]
TWO_N_CUBED = 2 * 1024**3


@pytest.fixture(scope="module")
def analysis():
    return api.analyze(EXAMPLE)


def test_every_stage_is_found_in_both_tools_and_verified(analysis):
    stages = analysis.stages.set_index("stage")
    assert list(stages.index) == LADDER and set(stages["op"]) == {"hgemm"}
    assert (stages["launches"] == 10).all() and (stages["time_source"] == "nsys").all()
    manifest = json.loads((EXAMPLE / "manifest.json").read_text())
    assert {v["tool"] for v in manifest["verification"]} == {"nsys", "ncu"}
    assert [v["stage"] for v in manifest["verification"] if v["tool"] == "ncu"] == LADDER
    assert all(v["status"] == "ok" for v in manifest["verification"])
    assert all(v["rel_error"] <= v["tolerance"] for v in manifest["verification"])


def test_tensor_flops_are_exactly_2mnk_for_hmma_and_wgmma_alike(analysis):
    kernels = analysis.kernels
    mains = kernels[~kernels["kernel"].str.contains("splitk_reduce")]
    assert set(mains["tensor_16bit_flops"]) == {TWO_N_CUBED}
    assert (mains["flops"] == 0).all()  # nothing on the FP32 pipes
    reduce = kernels[kernels["kernel"] == "hgemm_splitk_reduce"]
    assert len(reduce) and (reduce["tensor_16bit_flops"] == 0).all()


def test_split_k_stages_run_their_reduction_inside_the_range(analysis):
    per_stage = analysis.stages.set_index("stage")["ncu_kernels"]
    ranges = analysis.kernels.explode("nvtx").groupby("nvtx")["kernel"].apply(set)
    h4 = next(names for rng, names in ranges.items() if rng.endswith("hgemm/h4/1024x1024x1024"))
    assert h4 == {"hgemm_h4", "hgemm_splitk_reduce"}
    h6 = next(names for rng, names in ranges.items() if rng.endswith("hgemm/h6/1024x1024x1024"))
    assert h6 == {"hgemm_h6_128x64"}
    assert per_stage["h4"] == 2 * per_stage["h6"]


def test_roofline_places_every_stage_under_the_fp16_tensor_roof(tmp_path):
    ladder = api.load_ladder([EXAMPLE])
    points = ladder.points[ladder.points["level"] == "dram"].set_index("label")
    assert set(points.index) >= set(LADDER)
    # every stage against its declared precision's roof (fp16: tensor cores), the split-K stages too,
    # though their reduction adds in FP32 (counted, but not the op's 2MNK FLOPs that the speed is of)
    assert set(points.loc[LADDER, "compute_roof"]) == {"FP16 tensor"}
    work = ladder.work.set_index("label")
    assert (work.loc[["h3", "h4", "h5"], "flops"] > 0).all() and (work.loc[["h1", "h2"], "flops"] == 0).all()
    api.write_roofline(ladder, tmp_path)
    assert (tmp_path / "roofline.png").stat().st_size > 10_000


def test_report_walks_through_the_hgemm_ladder(tmp_path):
    result = CliRunner().invoke(app, ["report", str(tmp_path), "--from", str(EXAMPLE), "--name", "hgemm"])
    assert result.exit_code == 0, result.output
    markdown = (tmp_path / "hgemm" / "report.md").read_text(encoding="utf-8")
    assert markdown.startswith("# HGEMM ladder on NVIDIA H200")
    assert "the time of cuBLAS in the stage's own precision (h7 (cuBLAS) for HGEMM's fp16 stages)" in markdown
    for stage in LADDER[:-1]:
        assert f"### {stage}: " in markdown
