"""The CPU rung inside a capture: `nsprof profile` times the CPU stages chosen with the GPU ones on the
host, without a profiler, and measures the host's roofs beside them (bench-cpu.json,
ceilings-cpu.json); the parser reads them and analyze shows them as work timed on the wall clock,
with every stage's speed-up over the CPU's loop and BLAS. Checked on the committed H100 capture
(profiles/examples/h100-*) and on captures made here against the fake nsys and ncu of test_capture."""

import json
import shutil
from pathlib import Path

import pytest
from cli_checks import one_line_error
from test_capture import FAKE_ENV, make_tool
from typer.testing import CliRunner

from nsprof.capture.commands import build_commands
from nsprof.capture.request import build_request
from nsprof.cli import app
from nsprof.errors import ParseError, UsageError
from nsprof.ladder.registry import stages_for
from nsprof.ladder.stage_kinds import CPU
from nsprof.parse import load_profile
from nsprof.parse.documents import read_cpu_rung
from nsprof.profile_analysis import analyzed_profile
from nsprof.profile_layout import CPU_CEILINGS, CPU_TOOL

REPO_ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = REPO_ROOT / "profiles" / "examples"
SGEMM, SGEMV = EXAMPLES / "h100-sgemm-cpu-1024", EXAMPLES / "h100-sgemv-cpu-4096"
runner = CliRunner()


def invoke(*args, **kwargs):
    return runner.invoke(app, [str(a) for a in args], **kwargs)


def records(capture):
    return {(r["stage"], r["size"]): r for r in json.loads((capture / "bench-cpu.json").read_text())["results"]}


# --- what a capture runs ----------------------------------------------------------------------------

def test_the_cpu_stages_chosen_ride_along_and_gpu_stages_alone_run_none():
    everything = build_request("sgemm", None, ["1024"])
    assert [s.stage for s in everything.cpu_stages] == [s.stage for s in stages_for("sgemm") if s.kind is CPU]
    assert all(s.kind is not CPU for s in everything.stages)
    assert build_request("sgemm", ["v1", "v6"], ["1024"]).cpu_stages == ()
    assert [s.stage for s in build_request("sgemv", ["s0blas", "s6"], ["4096"]).cpu_stages] == ["s0blas"]
    with pytest.raises(UsageError, match="CPU stages run no GPU work"):
        build_request("sgemm", ["v0", "v0blas"], ["1024"])


def test_the_cpu_steps_come_last_and_write_the_two_files(tmp_path):
    request = build_request("sgemm", ["v0blas", "v1"], ["512"])
    commands = build_commands(request, {"nsys": "nsys", "ncu": "ncu"}, tmp_path)
    assert [c.tool for c in commands][-2:] == [CPU_TOOL, CPU_TOOL] and commands[0].tool == "nsys"
    bench, ceilings = commands[-2:]
    argv = list(bench.argv)
    assert argv[argv.index("--stage") + 1] == "v0blas" and argv[argv.index("--size") + 1] == "512"
    assert argv[argv.index("--save-as") + 1] == str(tmp_path / "bench-cpu.json") and "--repeat" not in argv
    assert list(ceilings.argv[-4:]) == ["ceilings", "--cpu", "--json", "--no-save"]
    assert ceilings.stdout == tmp_path / CPU_CEILINGS and ceilings.outputs == (tmp_path / CPU_CEILINGS,)


def test_dry_run_prints_the_cpu_steps():
    result = invoke("profile", "--stage", "v0,v0b,v1", "--size", "256", "--dry-run")
    assert result.exit_code == 0, result.output
    last = result.stdout.strip().splitlines()[-2:]
    assert "bench --op sgemm --stage v0,v0b --size 256 --no-baseline --save-as" in last[0]
    assert last[0].endswith("/bench-cpu.json")
    assert " ceilings --cpu --json --no-save > " in last[1] and last[1].endswith("/ceilings-cpu.json")


@pytest.fixture
def fake_tools(tmp_path, monkeypatch):
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setattr("nsprof.launch.gpu.device_info", lambda: dict(FAKE_ENV))
    for name in ("nsys", "ncu"):
        monkeypatch.setenv(f"NSPROF_{name.upper()}", str(make_tool(tmp_path / "bin", name)))
    monkeypatch.setattr("nsprof.capture.layout.timestamp", lambda: "20261126-000000")


def test_a_capture_keeps_the_cpu_stages_beside_the_tools_output(tmp_path, fake_tools):
    """The CPU half runs for real here (NumPy's BLAS needs no compiler; the host's roofs do)."""
    result = invoke("profile", "--stage", "v0blas,v1", "--size", "128", "--out", tmp_path / "caps")
    assert result.exit_code == 0, result.output
    directory = tmp_path / "caps" / "sgemm-v1-128-20261126-000000"
    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["cpu_stages"] == ["v0blas"] and manifest["status"] == "ok"
    cpu_checks = [v for v in manifest["verification"] if v["tool"] == CPU_TOOL]
    assert [(v["stage"], v["status"]) for v in cpu_checks] == [("v0blas", "ok")]
    assert "bench-cpu.json" in manifest["outputs"]
    assert "CPU stages (v0blas) and the host's roofs, timed without a profiler" in result.stdout
    blas = records(directory)[("v0blas", "128x128x128")]
    assert blas["status"] == "ok" and blas["median_ms"] > 0
    if shutil.which("cc") or shutil.which("gcc"):  # the stream copy of the host's roofs is compiled C
        roofs = json.loads((directory / CPU_CEILINGS).read_text())
        assert roofs["kind"] == "cpu" and roofs["ceilings"]["fp32_tflops"]["value"] > 0


def test_a_failed_cpu_step_never_fails_the_capture_and_leaves_no_half_file(tmp_path, fake_tools, monkeypatch):
    """Without a C compiler the host's stream copy cannot be built: the capture is still whole, the
    manifest says what failed, and no empty ceilings-cpu.json is left for a reader to trip on."""
    monkeypatch.setenv("NSPROF_DATA_DIR", str(tmp_path / "data"))  # no compiled copy cached by another test
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-path"))
    result = invoke("profile", "--stage", "v0blas,v1", "--size", "64", "--out", tmp_path / "caps")
    assert result.exit_code == 0, result.output
    directory = tmp_path / "caps" / "sgemm-v1-64-20261126-000000"
    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["status"] == "ok"
    assert [p for p in manifest["cpu_problems"] if p.startswith("ceilings exited with code 1")]
    assert not (directory / CPU_CEILINGS).exists() and (directory / "bench-cpu.json").is_file()
    assert "CPU: ceilings exited with code 1: see cpu-ceilings.log" in result.stdout
    cpu = read_cpu_rung(directory / "bench-cpu.json", directory / CPU_CEILINGS)  # (the fake tools' files are not)
    assert cpu.ceilings is None and [r["stage"] for r in cpu.results] == ["v0blas"]


# --- what the parser and analyze make of it ----------------------------------------------------------

def test_the_parser_reads_the_cpu_stages_and_the_host_roofs():
    cpu = load_profile(SGEMM).cpu
    assert [(r["stage"], r["status"]) for r in cpu.results] == [("v0", "ok"), ("v0b", "ok"), ("v0blas", "ok")]
    assert cpu.env["cpu"] == cpu.ceilings["device"]["cpu"] and cpu.ceilings["kind"] == "cpu"
    assert load_profile(REPO_ROOT / "profiles" / "examples" / "h200-sgemm-1024").cpu is None


@pytest.mark.parametrize("damage, named", [
    (lambda d: d["results"][1].pop("stage"), "record 2 has no stage"),
    (lambda d: d["results"][0].update(median_ms="fast"), "record 1's median_ms is a string, not a number"),
    (lambda d: d.pop("results"), 'no "results" list'),
])
def test_a_damaged_cpu_record_is_one_error_naming_the_file_and_field(tmp_path, damage, named):
    capture = tmp_path / "capture"
    shutil.copytree(SGEMM, capture)
    document = json.loads((capture / "bench-cpu.json").read_text())
    damage(document)
    (capture / "bench-cpu.json").write_text(json.dumps(document))
    with pytest.raises(ParseError, match=r"bench-cpu\.json") as raised:
        load_profile(capture)
    assert named in str(raised.value)
    line = one_line_error(invoke("analyze", capture), 1)
    assert "bench-cpu.json" in line and named in line


def test_cpu_stages_are_work_timed_on_the_wall_clock_with_speedups_from_the_same_times():
    _, analysis = analyzed_profile(SGEMM)
    stages = analysis.stages.set_index("label")
    timed = records(SGEMM)
    roofs = json.loads((SGEMM / CPU_CEILINGS).read_text())["ceilings"]
    for name in ("v0", "v0b", "v0blas"):
        row, record = stages.loc[name], timed[(name, "1024x1024x1024")]
        assert row["time_source"] == "wall clock" and row["time_per_launch_ns"] == pytest.approx(record["median_ms"] * 1e6)
        assert row["compute_roof"] == "CPU FP32"
        assert row["pct_of_compute_peak"] == pytest.approx(100 * record["tflops"] / roofs["fp32_tflops"]["value"], rel=1e-6)
    loop, blas = (timed[(name, "1024x1024x1024")]["median_ms"] * 1e6 for name in ("v0", "v0blas"))
    for name in ("v1", "v8", "v11"):
        gpu_time = stages.loc[name, "time_per_launch_ns"]
        assert stages.loc[name, "time_source"] == "nsys"
        assert stages.loc[name, "speedup_vs_cpu_loop"] == pytest.approx(loop / gpu_time)
        assert stages.loc[name, "speedup_vs_cpu_blas"] == pytest.approx(blas / gpu_time)
    assert stages.loc["v11", "speedup_vs_cpu_blas"] > stages.loc["v1", "speedup_vs_cpu_blas"] > 1


def test_analyze_shows_the_speedups_and_says_where_the_cpu_times_come_from():
    result = invoke("analyze", SGEMM, env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    table = result.stdout[:result.stdout.index("Where the time goes")]
    assert "x CPU" in table and "loop" in table and "BLAS" in table and "wall clock" in table
    v0 = next(line for line in table.splitlines() if line.startswith("│ v0 "))
    assert "1.0x" in v0  # the loop against itself
    assert "wall clock: a CPU stage's median run on the host" in " ".join(table.split())


def test_a_skipped_cpu_stage_says_why_in_the_note(tmp_path):
    capture = tmp_path / "capture"
    shutil.copytree(SGEMV, capture)
    document = json.loads((capture / "bench-cpu.json").read_text())
    loop = next(r for r in document["results"] if r["stage"] == "s0")
    loop.update(status="skipped", median_ms=None, message="skipped: would take about 101 s a run")
    (capture / "bench-cpu.json").write_text(json.dumps(document))
    _, analysis = analyzed_profile(capture)
    stages = analysis.stages.set_index("label")
    assert stages.loc["s0", "cpu_message"] == "skipped: would take about 101 s a run"
    assert stages["speedup_vs_cpu_loop"].isna().all() and stages.drop("s0")["speedup_vs_cpu_blas"].notna().all()
    result = invoke("analyze", capture, env={"COLUMNS": "100"})
    assert "s0 at 4096x4096: skipped: would take about 101 s a run" in " ".join(result.stdout.split())
