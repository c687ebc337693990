"""GPU: every stage computes C = A @ B within its tolerance, at tile-aligned, ragged and tiny
sizes, on fresh random inputs with a NaN-poisoned output. Skipped without a GPU."""

import json

import pytest

from nsprof.registry import stages_for

pytestmark = pytest.mark.gpu

SIZES = [(256, 256, 256), (1000, 1200, 800), (1, 1, 1), (33, 65, 17), (129, 7, 300), (1024, 1024, 1024)]
LADDER = stages_for("sgemm")


@pytest.fixture(scope="module")
def tools():
    from nsprof.launch.gpu import launch_tools

    return launch_tools()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("stage", LADDER, ids=lambda s: s.stage)
def test_stage_matches_float64_reference(stage, size, tools):
    from nsprof.launch.measure import verify
    from nsprof.ops.sgemm import OP

    problem = OP.workload.problem(tools.xp, size, seed=stage.number * 7919 + sum(size))
    launcher = OP.workload.launcher(stage, problem, tools)
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
