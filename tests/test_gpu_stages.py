"""GPU: every stage of every op computes C = A @ B within its tolerance, at tile-aligned, ragged,
tiny and tall/flat sizes, on fresh random inputs with a NaN-poisoned output. Skipped without a
GPU; a stage this GPU cannot run (h6 needs sm_90a) is skipped with the reason."""

import json

import pytest

from nsprof.registry import all_stages, get_op

pytestmark = pytest.mark.gpu

SIZES = {
    "sgemm": [(256, 256, 256), (1000, 1200, 800), (4095, 4097, 4093), (1, 1, 1), (17, 33, 9), (33, 65, 17),
              (129, 7, 300), (128, 4096, 1024), (4096, 128, 1024), (1024, 1024, 1024)],
    "hgemm": [(256, 256, 256), (1000, 1200, 808), (4095, 4097, 4093), (1, 1, 1), (17, 33, 9), (128, 4096, 1024),
              (4096, 128, 1024), (1024, 1024, 1024)],
    "sgemv": [(1000, 1001), (4097, 3), (3, 4097), (1, 1), (2**20, 256), (256, 2**20), (4096, 4096), (4099, 16387)],
}
CASES = [(stage, size) for stage in all_stages() for size in SIZES[stage.op]]


@pytest.fixture(scope="module")
def tools():
    from nsprof.launch.tools import launch_tools

    return launch_tools()


@pytest.mark.parametrize("stage, size", CASES, ids=[f"{st.key}-{'x'.join(map(str, si))}" for st, si in CASES])
def test_stage_matches_float64_reference(stage, size, tools):
    from nsprof.launch.bench import unavailable_reason
    from nsprof.launch.measure import verify

    if reason := unavailable_reason(stage, tools):
        pytest.skip(reason)
    op = get_op(stage.op)
    problem = op.workload.problem(tools.xp, size, seed=stage.number * 7919 + sum(size))
    launcher = op.workload.launcher(stage, problem, tools)
    err = verify(launcher, problem)
    assert err <= stage.tolerance(size), f"{stage.stage} {size}: relative error {err:.3g}"


def test_poisoned_output_catches_a_kernel_that_writes_nothing(tools):
    from nsprof.launch.measure import verify
    from nsprof.ops.matmul import Launcher, MatmulProblem

    problem = MatmulProblem(tools.xp, (64, 64, 64), "float32")
    err = verify(Launcher(run=lambda: None, plan=None, padded_shape=None), problem)
    assert err != err  # NaN: never passes a tolerance check


def test_bench_reports_timing_and_percent_of_cublas(tmp_path):
    from typer.testing import CliRunner

    from nsprof.cli import app

    result = CliRunner().invoke(app, ["bench", "--stage", "v6,v9", "--size", "512", "--repeat", "5",
                                      "--json", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    by_stage = {r["stage"]: r for r in doc["results"]}
    assert by_stage["v9"]["pct_cublas"] == pytest.approx(100)
    assert by_stage["v6"]["status"] == "ok" and by_stage["v6"]["runs"] == 5
    assert by_stage["v6"]["median_ms"] > 0 and by_stage["v6"]["tflops"] > 0
    assert doc["env"]["device"] and doc["env"]["cupy"]
    saved = list(tmp_path.glob("bench-sgemm-*.json"))
    assert len(saved) == 1 and json.loads(saved[0].read_text())["results"] == doc["results"]


@pytest.mark.parametrize("name, tile, split", [("h3", "128x128", 4), ("h4", "64x128", 4), ("h5", "64x128", 4)])
def test_hgemm_split_k_slices_add_up_to_c(name, tile, split, tools):
    from nsprof.launch.measure import verify
    from nsprof.registry import get_stage

    op, stage, size = get_op("hgemm"), get_stage("hgemm", name), (300, 500, 1100)
    problem = op.workload.problem(tools.xp, size, seed=split)
    launcher = op.workload.launcher(stage, problem, tools, tile_shape=tile, split_k=split)
    assert launcher.plan.split_k == split
    assert verify(launcher, problem) <= stage.tolerance(size)


def test_bench_of_the_hgemm_ladder_against_cublas(tmp_path):
    from typer.testing import CliRunner

    from nsprof.cli import app

    result = CliRunner().invoke(app, ["bench", "--op", "hgemm", "--stage", "h5", "--size", "512x2048x1024",
                                      "--repeat", "5", "--json", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    by_stage = {r["stage"]: r for r in json.loads(result.stdout)["results"]}
    assert by_stage["h7"]["baseline_only"] and by_stage["h7"]["pct_cublas"] == pytest.approx(100)
    assert by_stage["h5"]["status"] == "ok" and by_stage["h5"]["rel_error"] < by_stage["h5"]["tolerance"]
    assert (by_stage["h5"]["m"], by_stage["h5"]["n"], by_stage["h5"]["k"]) == (512, 2048, 1024)
