"""`nsprof ceilings --cpu`: the host CPU's roofs, measured here with no GPU (nsprof.ladder_runs.cpu_ceilings)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from nsprof.cli import app
from nsprof.ladder_runs import cpu_ceilings as cpu


@pytest.fixture
def small(monkeypatch, tmp_path):
    """A copy that fits a CI machine's memory; the data directory of the test's own."""
    monkeypatch.setattr(cpu, "COPY_BYTES", 64 << 20)
    monkeypatch.setattr(cpu, "FP32_N", 512)
    monkeypatch.setenv("NSPROF_DATA_DIR", str(tmp_path / "data"))
    return tmp_path


def test_the_cpu_ceilings_are_measured_saved_and_printed_without_a_gpu(small):
    result = CliRunner().invoke(app, ["ceilings", "--cpu", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["kind"] == "cpu" and document["device"]["device"].startswith("CPU ")
    assert document["device"]["cpu_cores"] >= 1
    fp32, copy = document["ceilings"]["fp32_tflops"], document["ceilings"]["dram_tbyte_per_s"]
    assert fp32["flops_per_launch"] == 2 * cpu.FP32_N**3 and copy["bytes_per_launch"] == 2 * cpu.COPY_BYTES
    for entry, amount in ((fp32, "flops_per_launch"), (copy, "bytes_per_launch")):  # each rate is its amount over its time
        assert entry["value"] == pytest.approx(entry[amount] / entry["median_ms"] / 1e9, abs=1e-4) and entry["value"] > 0
    [saved] = (small / "data").glob("ceilings-cpu-*.json")
    assert json.loads(saved.read_text())["ceilings"] == document["ceilings"]
    table = CliRunner().invoke(app, ["ceilings", "--cpu", "--no-save"], env={"COLUMNS": "80"})
    assert table.exit_code == 0 and "memory bandwidth" in table.stdout and "FP32 (its BLAS)" in table.stdout
    assert max(len(line) for line in table.stdout.splitlines()) <= 80
