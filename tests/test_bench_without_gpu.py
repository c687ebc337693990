"""Without a usable GPU, `nsprof bench` runs the CPU stages it was given and reports its GPU stages as
skipped, with the reason once; only GPU stages is one line and no run. A CuPy that cannot reach a
driver is blamed on the missing driver, not on an "insufficient" one."""

from __future__ import annotations

import json
import sys
import types

import pytest
from typer.testing import CliRunner

from nsprof.cli import app
from nsprof.errors import GpuUnavailableError
from nsprof.launch import gpu


@pytest.fixture
def no_gpu(monkeypatch):
    def unavailable():
        raise GpuUnavailableError("this command needs an NVIDIA GPU, and this machine has no NVIDIA driver "
                                  "(/proc/driver/nvidia/version is missing)", gpu.NO_GPU_HINT)

    monkeypatch.setattr(gpu, "device_info", unavailable)


def test_the_cpu_stages_run_and_the_gpu_stages_are_skipped_saying_why(no_gpu, tmp_path):
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(app, ["bench", "--stage", "v0,v6", "--size", "64", "--save-as", str(out)],
                                env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    records = {r["stage"]: r for r in json.loads(out.read_text())["results"]}
    assert records["v0"]["status"] == "ok" and records["v0"]["median_ms"] > 0
    assert records["v6"]["status"] == "skipped" and "no NVIDIA driver" in records["v6"]["message"]
    assert " ".join(result.stdout.split()).count("no NVIDIA driver") == 1  # the reason once, not per stage


def test_only_gpu_stages_is_one_line_and_no_run(no_gpu, tmp_path):
    result = CliRunner().invoke(app, ["bench", "--stage", "v6", "--size", "64", "--out", str(tmp_path)])
    assert result.exit_code != 0 and "no NVIDIA driver" in result.output and not list(tmp_path.iterdir())


def test_a_cupy_without_a_driver_names_the_missing_driver(monkeypatch, tmp_path):
    def insufficient():
        raise RuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version")

    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=insufficient)))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(gpu, "DRIVER_FILE", str(tmp_path / "no-driver"))
    with pytest.raises(GpuUnavailableError) as raised:
        gpu.require_cupy()
    assert "no NVIDIA driver" in raised.value.problem and "insufficient" not in raised.value.problem


def test_no_stage_at_all_times_nothing_and_needs_no_gpu():
    """A run of no stages (and no baselines) is no records, not a NameError on the problem it never made."""
    from nsprof.ladder_runs.bench import run_bench

    assert run_bench("sgemm", [], [(64, 64, 64)], baseline=False) == []


def test_back_to_back_without_pairs_is_one_line_and_no_run(no_gpu, tmp_path):
    result = CliRunner().invoke(app, ["bench", "--stage", "v0", "--size", "64", "--back-to-back", "--no-paired",
                                      "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and "--back-to-back" in result.output and "Leave out --no-paired" in result.output
    assert "Traceback" not in result.output and not list(tmp_path.iterdir())
