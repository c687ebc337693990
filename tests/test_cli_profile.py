"""`nsprof profile` and `nsprof doctor` through Typer's CliRunner, on the CPU: dry runs without
tools, one-line errors, and whole captures against the fake nsys/ncu of test_capture. The last test
runs the real tools and is skipped without a GPU."""

import json
import re
import shutil
import sys
import types

import pytest
from cli_checks import one_line_error
from test_capture import FAKE_ENV, make_tool
from typer.testing import CliRunner

from nsprof.capture.metrics import PRESETS
from nsprof.cli import app
from nsprof.ladder.registry import stages_for

runner = CliRunner()
STAMP = "20261121-010203"


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])



@pytest.fixture
def no_tools(tmp_path, monkeypatch):
    """Neither tool on PATH nor named by the environment."""
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("NSPROF_NSYS", raising=False)
    monkeypatch.delenv("NSPROF_NCU", raising=False)


@pytest.fixture
def fake_gpu(monkeypatch):
    monkeypatch.setattr("nsprof.launch.gpu.device_info", lambda: dict(FAKE_ENV))


@pytest.fixture
def tools(tmp_path, monkeypatch, no_tools):
    """Fake nsys and ncu, found through NSPROF_NSYS and NSPROF_NCU; FAKE_MODE picks their behaviour."""
    found = {name: make_tool(tmp_path / "bin", name) for name in ("nsys", "ncu")}
    monkeypatch.setenv("NSPROF_NSYS", str(found["nsys"]))
    monkeypatch.setenv("NSPROF_NCU", str(found["ncu"]))
    monkeypatch.setattr("nsprof.capture.layout.timestamp", lambda: STAMP)
    return found


def manifest_of(directory):
    return json.loads((directory / "manifest.json").read_text())


@pytest.mark.parametrize("command", ["profile", "doctor"])
def test_help(command):
    result = invoke(command, "--help")
    assert result.exit_code == 0 and "Usage" in result.stdout


def test_profile_help_lists_its_options():
    result = invoke("profile", "--help")
    for option in ("--stage", "--op", "--size", "--tool", "--out", "--force", "--dry-run", "--metrics",
                   "--clock-control", "--repeat", "--nsys", "--ncu"):
        assert option in result.stdout
    for preset in PRESETS:
        assert preset in result.stdout


# --- dry run -----------------------------------------------------------------------------

def test_dry_run_needs_no_gpu_and_no_tools_and_creates_nothing(tmp_path, monkeypatch, no_tools):
    monkeypatch.setitem(sys.modules, "cupy", None)
    out = tmp_path / "profiles"
    result = invoke("profile", "--stage", "v1,v6", "--out", out, "--dry-run")
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 3
    directory = re.search(r"-o (\S+)/nsys ", lines[0]).group(1)
    assert re.fullmatch(rf"{re.escape(str(out))}/sgemm-v1-v6-4096-\d{{8}}-\d{{6}}", directory)
    # the workload's timed launches unheld (NSPROF_HOLD=0): the profilers see only the launches asked for
    assert lines[0].startswith("NSPROF_HOLD=0 nsys profile -t cuda,nvtx --export=sqlite -o ")
    assert lines[0].endswith(f"--no-baseline --save-as {directory}/bench-nsys.json")
    assert lines[1].startswith("NSPROF_HOLD=0 ncu --clock-control none --nvtx "
                               "--nvtx-include 'nsprof@sgemm\\/v1\\/4096x4096x4096/' "
                               "--nvtx-include 'nsprof@sgemm\\/v6\\/4096x4096x4096/' --metrics gpu__time_duration.sum,")
    assert " --repeat 3 --warmup 3 " in lines[1]
    assert lines[2] == f"ncu --import {directory}/ncu.ncu-rep --csv --page raw --print-units base > {directory}/ncu-raw.csv"
    assert not out.exists()


def test_dry_run_shows_a_found_tool_by_its_path(tools, tmp_path):
    result = invoke("profile", "--tool", "ncu", "--stage", "v6", "--metrics", "smem", "--clock-control", "base",
                    "--out", tmp_path / "p", "--dry-run")
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert [line.removeprefix("NSPROF_HOLD=0 ").split()[0] for line in lines] == [str(tools["ncu"])] * 2
    assert (f"--clock-control base --nvtx --nvtx-include 'nsprof@sgemm\\/v6\\/4096x4096x4096/' "
            f"--metrics {','.join(PRESETS['smem'])} -o") in lines[0]


# --- errors before anything is created -----------------------------------------------------------

def test_no_gpu_is_one_line(tmp_path, monkeypatch, tools):
    monkeypatch.setitem(sys.modules, "cupy", None)
    monkeypatch.setattr("nsprof.launch.gpu.DRIVER_FILE", str(tmp_path / "no-driver"))
    line = one_line_error(invoke("profile", "--stage", "v6", "--out", tmp_path / "p"), 1)
    assert line.startswith("error: this command needs an NVIDIA GPU") and "profiles/examples" in line
    assert not (tmp_path / "p").exists()


def test_missing_tool_is_one_line(tmp_path, fake_gpu, no_tools):
    line = one_line_error(invoke("profile", "--tool", "ncu", "--out", tmp_path / "p"), 1)
    assert line == ("error: ncu (Nsight Compute) not found: not on PATH and NSPROF_NCU is not set. Install Nsight Compute "
                    "(the CUDA toolkit ships it) or point nsprof at it with --ncu /path/to/ncu or NSPROF_NCU=/path/to/ncu")
    assert not (tmp_path / "p").exists()


def test_a_bad_tool_option_is_named(tmp_path, fake_gpu, no_tools):
    line = one_line_error(invoke("profile", "--tool", "nsys", "--nsys", tmp_path / "nope", "--out", tmp_path / "p"), 1)
    assert line.startswith(f"error: nsys not found: --nsys names '{tmp_path / 'nope'}', which is not an executable.")


def test_missing_nvtx_is_one_line(tmp_path, monkeypatch, fake_gpu, tools):
    monkeypatch.setitem(sys.modules, "nvtx", None)
    line = one_line_error(invoke("profile", "--out", tmp_path / "p"), 1)
    assert line.startswith("error: the Python package nvtx is not installed. Install it with pip install nvtx")


@pytest.mark.parametrize("args, message", [
    (["--tool", "perf"], "Invalid value for '--tool'"),
    (["--clock-control", "fast"], "Invalid value for '--clock-control'"),
    (["--repeat", "0"], "Invalid value for '--repeat'"),
    (["--metrics", "bogus"], "error: unknown metric preset 'bogus'"),
    (["--tool", "nsys", "--metrics", "smem"], "error: --metrics and --clock-control apply to ncu only"),
    (["--stage", "v13"], "error: unknown stage 'v13' for sgemm"),
])
def test_bad_options_are_usage_errors(args, message, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    result = invoke("profile", *args, "--dry-run")
    assert result.exit_code == 2
    assert message in result.stderr and "Traceback" not in result.output


# --- whole captures against fake tools -----------------------------------------------------------

def test_profile_with_both_tools(tmp_path, fake_gpu, tools):
    result = invoke("profile", "--stage", "v1,v6", "--out", tmp_path / "profiles")
    assert result.exit_code == 0, result.output
    directory = tmp_path / "profiles" / f"sgemm-v1-v6-4096-{STAMP}"
    m = manifest_of(directory)
    assert m["status"] == "ok"
    assert {name: t["found_by"] for name, t in m["tools"].items()} == {"nsys": "NSPROF_NSYS", "ncu": "NSPROF_NCU"}
    assert m["device"]["name"] == "NVIDIA H200"
    lines = result.stdout.strip().splitlines()
    assert lines[0] == f"profile written to {directory} (status: ok)"
    assert lines[1].startswith("  nsys 2025.3.1.90: nsys.nsys-rep, nsys.sqlite in ")
    assert lines[2].startswith("  ncu 2025.3.1.0: ncu.ncu-rep, ncu-raw.csv in ")
    assert lines[2].endswith("; 6 launches profiled, 9-14 replay passes each")
    assert lines[3] == "  verification: v1 4096x4096x4096 ok (1.5e-07), v6 4096x4096x4096 ok (1.5e-07)"
    assert lines[4] == f"next: nsprof analyze {directory}"


def test_profile_with_ncu_alone_needs_no_nsys(tmp_path, monkeypatch, fake_gpu, tools):
    monkeypatch.delenv("NSPROF_NSYS")
    result = invoke("profile", "--tool", "ncu", "--stage", "all", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    m = manifest_of(tmp_path / f"sgemm-all-4096-{STAMP}")
    assert list(m["tools"]) == ["ncu"] and m["status"] == "ok"
    assert len(m["replay_passes"]) == len([s for s in stages_for("sgemm") if s.kind.name != "cpu"]) * 3


def test_an_existing_directory_is_not_overwritten_without_force(tmp_path, fake_gpu, tools):
    directory = tmp_path / f"sgemm-v6-4096-{STAMP}"
    directory.mkdir()
    (directory / "keep.txt").write_text("earlier work")
    line = one_line_error(invoke("profile", "--stage", "v6", "--out", tmp_path), 1)
    assert line == f"error: profile directory {directory} already exists. Pass --force to replace it, or choose another --out"
    assert (directory / "keep.txt").exists()
    result = invoke("profile", "--stage", "v6", "--out", tmp_path, "--force")
    assert result.exit_code == 0, result.output
    assert not (directory / "keep.txt").exists() and manifest_of(directory)["status"] == "ok"


def test_a_failing_tool_is_one_line_pointing_at_its_log(tmp_path, monkeypatch, fake_gpu, tools):
    monkeypatch.setenv("FAKE_MODE", "fail")
    line = one_line_error(invoke("profile", "--stage", "v6", "--out", tmp_path), 1)
    directory = tmp_path / f"sgemm-v6-4096-{STAMP}"
    assert line == f"error: nsys exited with code 3. See {directory / 'nsys.log'}"
    assert manifest_of(directory)["status"] == "failed: nsys exited with code 3"


def test_counter_permission_error_gives_the_fix(tmp_path, monkeypatch, fake_gpu, tools):
    monkeypatch.setenv("FAKE_MODE", "permission")
    line = one_line_error(invoke("profile", "--tool", "ncu", "--stage", "v6", "--out", tmp_path), 1)
    assert line.startswith("error: ncu cannot read the GPU performance counters (ERR_NVGPUCTRPERM). Run as root (sudo)")
    assert "options nvidia NVreg_RestrictProfilingToAdminUsers=0" in line


def test_ctrl_c_exits_130_and_leaves_an_interrupted_manifest(tmp_path, monkeypatch, fake_gpu, tools):
    monkeypatch.setenv("FAKE_MODE", "interrupt")
    line = one_line_error(invoke("profile", "--tool", "ncu", "--stage", "v6", "--out", tmp_path), 130)
    directory = tmp_path / f"sgemm-v6-4096-{STAMP}"
    assert line == f"error: interrupted; what was captured is kept in {directory}. See {directory / 'manifest.json'}"
    assert manifest_of(directory)["status"] == "interrupted"


def test_a_stage_failing_verification_exits_1_after_the_summary(tmp_path, monkeypatch, fake_gpu, tools):
    monkeypatch.setenv("FAKE_MODE", "verify-fail")
    result = invoke("profile", "--stage", "v1,v6", "--out", tmp_path)
    line = one_line_error(result, 1)
    assert line.startswith("error: v1 4096x4096x4096 failed verification (relative error 0.5 exceeds 1e-05). "
                           "Its launches were not measured")
    assert "verification: v1 4096x4096x4096 failed (5.0e-01), v6 4096x4096x4096 ok" in result.stdout
    assert manifest_of(tmp_path / f"sgemm-v1-v6-4096-{STAMP}")["status"] == "verification failed"


# --- doctor ------------------------------------------------------------------------------------

def _statuses(result):
    return {c["check"]: c["status"] for c in json.loads(result.stdout)}


def test_doctor_without_cupy_gpu_or_tools(monkeypatch, no_tools):
    monkeypatch.setitem(sys.modules, "cupy", None)
    monkeypatch.setattr("nsprof.launch.gpu.nvidia_driver_version", lambda: None)
    result = invoke("doctor", "--json")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert _statuses(result) == {"CuPy": "missing", "GPU": "skipped", "driver / CUDA": "missing", "nvtx": "ok",
                                 "nsys": "missing", "ncu": "missing", "GPU counters": "skipped"}
    checks = {c["check"]: c for c in json.loads(result.stdout)}
    assert "pip install cupy-cuda13x" in checks["CuPy"]["fix"]
    assert "--ncu /path/to/ncu" in checks["ncu"]["fix"]
    table = invoke("doctor")
    assert table.exit_code == 1 and "missing" in table.stdout and "NSPROF_NSYS" in table.stdout
    # at 80 columns every fix is still there, whole, under the table
    narrow = CliRunner().invoke(app, ["doctor"], env={"COLUMNS": "80"})
    joined = " ".join(narrow.stdout.split())
    assert all(f"{name}: {checks[name]['fix']}" in joined for name in ("CuPy", "nsys", "ncu"))


def test_doctor_all_ok(monkeypatch, fake_gpu, tools):
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(__version__="14.2.0"))
    result = invoke("doctor", "--json")
    assert result.exit_code == 0, result.output
    assert set(_statuses(result).values()) == {"ok"}
    checks = {c["check"]: c for c in json.loads(result.stdout)}
    assert checks["GPU"]["detail"] == "NVIDIA H200, compute capability 9.0, 132 SMs"
    assert checks["ncu"]["detail"] == f"2025.3.1.0 at {tools['ncu']} (from NSPROF_NCU)"


def test_doctor_reports_counters_it_may_not_read(monkeypatch, fake_gpu, tools):
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(__version__="14.2.0"))
    monkeypatch.setenv("FAKE_MODE", "permission")
    result = invoke("doctor", "--json")
    assert result.exit_code == 1
    counters = json.loads(result.stdout)[-1]
    assert counters["check"] == "GPU counters" and counters["status"] == "missing"
    assert "NVreg_RestrictProfilingToAdminUsers=0" in counters["fix"]


# --- on a GPU ------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_real_capture_on_the_gpu(tmp_path):
    """v1, v5, v6 and v9 under both tools: the ncu CSV holds one row per measured launch of each
    stage (and nothing else), and the nsys export holds every measured NVTX range."""
    from nsprof.parse.ncu_csv import load_ncu_csv
    from nsprof.parse.nsys_sqlite import load_nsys

    if not (shutil.which("nsys") and shutil.which("ncu")):
        pytest.skip("needs nsys and ncu on PATH")
    stages = ["v1", "v5", "v6", "v9"]
    result = invoke("profile", "--stage", ",".join(stages), "--size", "512", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    [directory] = tmp_path.iterdir()
    m = manifest_of(directory)
    assert m["status"] == "ok"
    for name in ("nsys.nsys-rep", "nsys.sqlite", "ncu.ncu-rep", "ncu-raw.csv"):
        assert (directory / name).stat().st_size > 0
    ranges = [f"nsprof:sgemm/{stage}/512x512x512" for stage in stages]
    kernels = load_ncu_csv(directory / "ncu-raw.csv").kernels
    innermost = [nvtx[-1] if nvtx else None for nvtx in kernels["nvtx"]]
    assert set(innermost) == set(ranges)  # no warm-up or verification launch was profiled
    repeat = m["repeat"]["ncu"]
    for stage, name in zip(stages, ranges):
        rows = innermost.count(name)
        if stage == "v9":  # one cuBLAS call may run several kernels (at 512^3: a GEMM and a reduction)
            assert rows >= repeat and rows % repeat == 0, (name, rows)
        else:
            assert rows == repeat, (name, rows)
    names = load_nsys(directory / "nsys.sqlite").nvtx["range"].tolist()
    for name in ranges:
        assert names.count(name) == m["repeat"]["nsys"], name


def test_dry_run_refuses_a_tool_path_that_does_not_work(tmp_path, no_tools):
    result = invoke("profile", "--stage", "v6", "--dry-run", "--nsys", str(tmp_path / "nope" / "nsys"))
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ") and len(result.stderr.strip().splitlines()) == 1
