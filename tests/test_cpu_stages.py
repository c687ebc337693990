"""The CPU rung (nsprof.ladder_runs.cpu_stage): the serial loop, the blocked parallel code and the CPU's
BLAS of the SGEMM and SGEMV ladders, compiled here by the host compiler, verified against float64
with a poisoned output at square, ragged and extreme shapes, and timed on the wall clock, with no
GPU (this suite's machine has none)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nsprof.cli import app
from nsprof.ladder import cpu_roles
from nsprof.ladder.registry import all_stages, get_stage
from nsprof.ladder_runs import cpu_stage
from nsprof.ladder_runs.bench import run_bench

CPU_STAGES = [stage for stage in all_stages() if stage.kind.name == "cpu"]
SHAPES = {"sgemm": [(64, 64, 64), (100, 120, 80), (1, 1, 1), (17, 33, 9), (1, 300, 1), (129, 7, 300), (300, 2, 513)],
          "sgemv": [(1000, 1001), (4097, 3), (3, 4097), (1, 1), (65536, 8), (8, 65536)]}


@pytest.fixture(autouse=True)
def _data_dir(tmp_path_factory, monkeypatch):
    """Compiled CPU stages go to a data directory of the test session's own."""
    monkeypatch.setenv("NSPROF_DATA_DIR", str(tmp_path_factory.getbasetemp() / "nsprof-data"))


def test_both_ladders_start_at_the_cpu():
    assert {(s.op, s.stage) for s in CPU_STAGES} == {("sgemm", "v0"), ("sgemm", "v0b"), ("sgemm", "v0blas"),
                                                     ("sgemv", "s0"), ("sgemv", "s0b"), ("sgemv", "s0blas")}
    assert [cpu_roles.cpu_role(s) for s in CPU_STAGES] == ["loop", "blocked", "blas"] * 2


@pytest.mark.parametrize("stage", CPU_STAGES, ids=lambda s: s.key)
def test_every_cpu_stage_matches_float64_at_square_ragged_and_extreme_shapes(stage):
    records = run_bench(stage.op, [stage], SHAPES[stage.op], repeat=3, warmup=1)
    for record in records:
        assert record["status"] == "ok", (record["size"], record["message"])
        assert record["rel_error"] <= record["tolerance"] and record["runs"] == 3 and record["median_ms"] > 0
        assert record["cpu_role"] == cpu_roles.cpu_role(stage)


def test_a_stage_that_writes_nothing_fails_and_is_not_timed(tmp_path):
    source = tmp_path / "v0_writes_nothing.c"
    source.write_text("void nsprof_cpu_product(int M, int N, int K, const float *A, const float *B, float *C) {}\n")
    broken = dataclasses.replace(get_stage("sgemm", "v0b"), kernel_file=str(source), stage="v0x")
    [record] = run_bench("sgemm", [broken], [(33, 17, 9)], repeat=3)
    assert record["status"] == "failed" and record["rel_error"] != record["rel_error"]  # NaN: the poison stayed
    assert record["median_ms"] is None


def test_a_stage_that_would_take_too_long_says_how_long(monkeypatch):
    """Its rate on a small problem gives the estimate; past the budget the size is skipped."""
    monkeypatch.setattr(cpu_stage, "BUDGET_S", 1e-3)
    [record] = run_bench("sgemm", [get_stage("sgemm", "v0")], [(512, 512, 512)], repeat=3)
    assert record["status"] == "skipped" and record["median_ms"] is None
    printed = re.search(r"would take about ([\d,.e+-]+) s a run", record["message"])[1]
    rate = cpu_stage._rates["sgemm/v0"]
    assert printed == cpu_stage.seconds_text(2 * 512**3 / rate)  # compared as printed: 2 digits are not 1%


@pytest.mark.parametrize("seconds, shapes", [(0.0, [(256, 256, 256)]),
                                              (1e9, [(256, 256, 256), (300, 512, 512), (300, 600, 1000)])])
def test_the_rate_is_measured_on_problems_grown_until_a_run_is_long_enough(monkeypatch, seconds, shapes):
    """A stage fast at 256^3 is calibrated on a larger problem, up to the size asked for, never past it."""
    measured = []
    real = cpu_stage.cpu_launcher

    def spy(stage, call):
        measured.append(tuple(call.shape))
        return real(stage, call)

    monkeypatch.setattr(cpu_stage, "cpu_launcher", spy)
    monkeypatch.setattr(cpu_stage, "CALIBRATION_S", seconds)
    monkeypatch.setattr(cpu_stage, "_rates", {})
    rate = cpu_stage._rate(get_stage("sgemm", "v0blas"), (300, 600, 1000))
    assert measured == shapes and rate > 0


def test_bench_runs_the_cpu_rung_without_a_gpu_with_its_speed_ups():
    result = CliRunner().invoke(app, ["bench", "--stage", "v0,v0b,v0blas", "--size", "96,100x120x80", "--json",
                                      "--no-save", "--repeat", "3"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["env"]["cpu"] and document["env"]["cpu_cores"] >= 1 and "device" not in document["env"]
    by_key = {(r["stage"], r["size"]): r for r in document["results"]}
    assert {r["stage"] for r in document["results"]} == {"v0", "v0b", "v0blas"}  # no GPU baseline added
    for (_, size), record in by_key.items():
        loop, blas = by_key[("v0", size)], by_key[("v0blas", size)]
        assert record["speedup_vs_cpu_loop"] == pytest.approx(loop["median_ms"] / record["median_ms"])
        assert record["speedup_vs_cpu_blas"] == pytest.approx(blas["median_ms"] / record["median_ms"])
    table = CliRunner().invoke(app, ["bench", "--stage", "v0,v0blas", "--size", "64", "--no-save", "--repeat", "3"],
                               env={"COLUMNS": "80"})
    assert table.exit_code == 0 and "CPU: " in table.stdout and "x CPU" in table.stdout
    assert max(len(line) for line in table.stdout.splitlines()) <= 80


@pytest.mark.parametrize("command", [["profile", "--stage", "v0,v0blas", "--dry-run"],
                                     ["pipeline", "--stage", "v0b", "--size", "64"]])
def test_commands_for_gpu_work_refuse_a_cpu_stage_in_one_line(command):
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 2, result.output
    [line] = result.stderr.strip().splitlines()
    assert "CPU stage" in line and "nsprof bench" in line


@pytest.mark.parametrize("stage", [s for s in CPU_STAGES if s.kernel_file], ids=lambda s: s.key)
def test_each_c_file_opens_with_what_it_is_and_why(stage):
    header = "\n".join(line for line in stage.kernel_path().read_text().splitlines() if line.startswith("//"))
    assert header.startswith(f"// {stage.stage} CPU")
    assert "why" in header.lower() and "ragged sizes" in header.lower()
    assert "nsprof_cpu_product" in stage.kernel_path().read_text()


RECORD = Path(__file__).resolve().parents[1] / "benchmarks" / "records" / "2026-11-26-h100-cpu-rung" / "h100-cpu-rung.json"


@pytest.mark.parametrize("run", json.loads(RECORD.read_text())["runs"], ids=lambda run: run["file"])
def test_the_recorded_speed_ups_are_the_medians_ratios(run):
    """On the GPU machine's record: every speed-up is the CPU stage's median over the stage's, at
    the same size, and the bench table names the host's CPU beside the GPU at 100 columns."""
    from rich.console import Console

    from nsprof.render.bench_table import results_table

    by_role = {(r["cpu_role"], r["size"]): r for r in run["results"] if r.get("cpu_role") and r["status"] == "ok"}
    timed = [r for r in run["results"] if r["status"] == "ok"]
    assert len({r["size"] for r in timed}) >= 2 and any(r["status"] == "skipped" for r in run["results"]) == \
        (run["results"][0]["op"] == "sgemm")  # the serial loop at 4096^3 was skipped, with its estimate
    for record in timed:
        for role, key in (("loop", "speedup_vs_cpu_loop"), ("blas", "speedup_vs_cpu_blas")):
            base = by_role.get((role, record["size"]))
            if base is not None:
                assert record[key] == pytest.approx(base["median_ms"] / record["median_ms"])
    console = Console(width=100, record=True)
    console.print(results_table(run["results"], run["env"], width=100))
    lines = console.export_text().splitlines()
    assert "CPU: Intel(R) Xeon(R) Processor (16 threads, avx512f)" in " ".join(" ".join(lines).split())
    assert max(len(line.rstrip()) for line in lines) <= 100


def test_a_busy_host_is_named_beside_the_cpu_stages_times():
    """The committed H100 capture's CPU stages: v0b's timed runs spread 33% (its 16 threads met other
    work), which the bench table warns of; the same records on a host whose load average says 3 other
    processes held its 2 cores get the load named too; a quiet host with tight spreads gets nothing."""
    import json
    from pathlib import Path

    from nsprof.render.bench_table import busy_host_note

    capture = Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h100-sgemm-cpu-1024" / "bench-cpu.json"
    run = json.loads(capture.read_text())
    note = busy_host_note(run["results"], run["env"])
    assert note is not None and "spread v0b 1024x1024x1024 33%" in note and "load average" not in note
    loaded = busy_host_note(run["results"], {**run["env"], "host_load": 4.0, "cpu_cores": 2})
    assert loaded is not None and "load average 4.0 on 2 cores before they ran; spread v0b" in loaded
    tight = [{**r, "spread_pct": 3.0} for r in run["results"]]
    assert busy_host_note(tight, {**run["env"], "host_load": 1.2}) is None
