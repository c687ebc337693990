"""A program that runs under nsys but dies under ncu (JAX's ResNet-50 on the H200 exits with SIGSEGV
under ncu): `nsprof profile` keeps the nsys half, says how the program died and what to try, and
exits 3; `nsprof analyze` reads the nsys half. On the CPU, against stand-in nsys and ncu (shell
scripts) that write the real jax-a capture's nsys export and print its real ncu log
(tests/data/real-programs/jax-a), then die the way it did."""

import json
import re
import shlex
import sys

import pytest
from cli_checks import one_line_error
from conftest import REAL_PROGRAMS
from typer.testing import CliRunner

from nsprof.capture.partial import TRY_INSTEAD, partial_status, signal_name
from nsprof.cli import app
from nsprof.commands.profile import partial_line
from nsprof.errors import PARTIAL_EXIT_CODE
from nsprof.ncu_log import last_profiled_kernel

STAMP = "20261126-003733"
TRIES = "Try --tool nsys (the timeline alone), or --kernel REGEX or --launch-count N to profile fewer launches"

# nsys runs the program and exits with its status, as the real one does, leaving the jax-a export.
FAKE_NSYS = """#!/bin/sh
[ "$1" = "--version" ] && { echo "NVIDIA Nsight Systems version 2025.3.1.90"; exit 0; }
while [ "$1" != "--force-overwrite=false" ]; do [ "$1" = "-o" ] && out=$2; shift; done
shift
"$@"
code=$?
cp {sqlite} "$out.sqlite" && echo report > "$out.nsys-rep"
exit $code
"""
# ncu prints what the real one printed (its log without nsprof's "$ command" line), then {ending}.
FAKE_NCU = """#!/bin/sh
[ "$1" = "--version" ] && { echo "Version 2025.3.1.0 (build 1)"; exit 0; }
while [ "$1" != "-o" ]; do shift; done
out=$2
tail -n +2 {log}
{ending}
"""
SEGFAULT = "ulimit -c 0; kill -SEGV $$"  # the shell dies of the signal: a negative return code
HALF_REPORT_THEN_ABORT = 'echo half > "$out.ncu-rep"; exit 134'  # 128+6: SIGABRT, as ncu passes it on


@pytest.fixture
def tools(tmp_path, monkeypatch, real_program):
    """Stand-in nsys (the jax-a export) and ncu (the jax-a log, then SIGSEGV); `tools(ncu_log, ending)`
    rewrites ncu."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()

    def write(name: str, text: str) -> None:
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
        monkeypatch.setenv(f"NSPROF_{name.upper()}", str(bin_dir / name))

    def ncu(log=REAL_PROGRAMS / "jax-a" / "ncu.log", ending=SEGFAULT) -> None:
        write("ncu", FAKE_NCU.replace("{log}", shlex.quote(str(log))).replace("{ending}", ending))

    write("nsys", FAKE_NSYS.replace("{sqlite}", shlex.quote(str(real_program("jax-a") / "nsys.sqlite"))))
    ncu()
    monkeypatch.setattr("nsprof.capture.layout.timestamp", lambda: STAMP)
    monkeypatch.setattr("nsprof.launch.gpu.device_info", _no_gpu)
    return ncu


def _no_gpu():
    from nsprof.errors import GpuUnavailableError
    raise GpuUnavailableError("CuPy is not installed")


def program(tmp_path, body: str = "") -> list[str]:
    script = tmp_path / "train.py"
    script.write_text(f"import os, signal, sys\nprint('step 1')\n{body}\n")
    return [sys.executable, str(script), "--steps", "30"]


def profile(tmp_path, *args):
    return CliRunner().invoke(app, ["profile", "--out", str(tmp_path / "out"), *args, "--", *program(tmp_path)])


def manifest_of(tmp_path) -> dict:
    return json.loads((tmp_path / "out" / f"train-{STAMP}" / "manifest.json").read_text())


def test_a_crash_under_ncu_keeps_the_nsys_half_says_what_to_try_and_analyzes(tmp_path, tools):
    result = profile(tmp_path)
    directory = tmp_path / "out" / f"train-{STAMP}"
    assert result.exit_code == PARTIAL_EXIT_CODE == 3, result.output
    assert "Traceback" not in result.output and not result.stderr.strip()  # the spinner leaves a blank line
    manifest = manifest_of(tmp_path)
    assert manifest["status"] == "partial: the program crashed under ncu (SIGSEGV)"
    assert manifest["partial"] == {"tool": "ncu", "signal": "SIGSEGV", "exit_code": -11, "last_kernel": None,
                                   "incomplete": [], "try": ["--tool nsys", "--kernel REGEX", "--launch-count N"]}
    assert manifest["program"]["exit_codes"] == {"nsys": 0, "ncu": -11}
    assert manifest["outputs"] == ["ncu.log", "nsys.log", "nsys.nsys-rep", "nsys.sqlite"]  # no ncu report
    ran = [(c["tool"], c["step"], c["exit_code"]) for c in manifest["commands"]]
    assert ran == [("nsys", "profile", 0), ("ncu", "profile", -11), ("ncu", "export", None), ("ncu", "export", None)]
    # The fake nsys copies a real export: how many seconds that takes is the machine's business.
    lines = [re.sub(r" in \d+ s$", " in N s", line) for line in result.stdout.splitlines()]
    assert lines == [
        f"profile written to {directory} (status: partial: the program crashed under ncu (SIGSEGV))",
        "  nsys 2025.3.1.90: nsys.nsys-rep, nsys.sqlite in N s",
        "  ncu 2025.3.1.0: no report in N s",
        lines[3],  # what the guide chose from the jax-a export (nsprof.analyze's business)
        "partial: the program crashed under ncu (SIGSEGV) before ncu profiled any kernel, so the profile holds "
        f"nsys's timeline only. {TRIES}",
        f"next: nsprof analyze {directory}",
    ]
    assert result.stdout.splitlines()[3].startswith("  ncu chose ")
    analyzed = CliRunner().invoke(app, ["analyze", str(directory)])
    assert analyzed.exit_code == 0, analyzed.output
    for table in ("Kernels by total time (nsys)", "Memory transfers (nsys)", "GPU utilization (nsys)", "NVTX ranges (nsys)"):
        assert table in analyzed.stdout
    assert "RedzoneAllocatorKernelImpl" in analyzed.stdout


def test_a_report_ncu_left_half_written_is_named_incomplete(tmp_path, tools):
    """ncu died mid-run (SIGABRT passed on as 134) after profiling kernels: the last one its log names
    is reported, and the report it had begun is set aside under a name nothing reads as a report."""
    tools(REAL_PROGRAMS / "triton" / "ncu.log", HALF_REPORT_THEN_ABORT)
    result = profile(tmp_path)
    assert result.exit_code == 3, result.output
    manifest = manifest_of(tmp_path)
    assert manifest["status"] == "partial: the program crashed under ncu (SIGABRT)"
    assert manifest["partial"]["exit_code"] == 134 and manifest["partial"]["incomplete"] == ["ncu.ncu-rep.incomplete"]
    assert manifest["partial"]["last_kernel"] == "nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT"
    assert "ncu.ncu-rep" not in manifest["outputs"] and "ncu.ncu-rep.incomplete" in manifest["outputs"]
    assert ('partial: the program crashed under ncu (SIGABRT) after ncu reported kernel '
            '"nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT", so the profile holds nsys\'s timeline only. '
            f"{TRIES}") in result.stdout.splitlines()


@pytest.mark.parametrize("body, problem", [
    ("sys.exit(3)", "the program exited with code 3 under nsys"),
    ("os.kill(os.getpid(), signal.SIGSEGV)", "the program exited with code 139 (SIGSEGV) under nsys"),
])
def test_a_program_that_fails_under_nsys_is_still_a_failure(tmp_path, tools, body, problem):
    script = program(tmp_path, body)
    result = CliRunner().invoke(app, ["profile", "--out", str(tmp_path / "out"), "--", *script])
    line = one_line_error(result, exit_code=1)
    assert line.startswith(f"error: {problem}. Its output is in ")
    manifest = manifest_of(tmp_path)
    assert manifest["status"] == f"failed: {problem}" and "partial" not in manifest
    assert [c["tool"] for c in manifest["commands"]] == ["nsys"]  # ncu never ran


def test_the_last_kernel_ncus_log_reports():
    assert last_profiled_kernel((REAL_PROGRAMS / "jax-a" / "ncu.log").read_text()) is None  # crashed before any
    triton = (REAL_PROGRAMS / "triton" / "ncu.log").read_text()
    assert last_profiled_kernel(triton) == "nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT"
    assert last_profiled_kernel('==PROF== Profiling "cut_short" - 4: 0%....50%') == "cut_short"  # died mid-replay


@pytest.mark.parametrize("code, name", [(139, "SIGSEGV"), (-11, "SIGSEGV"), (134, "SIGABRT"), (-6, "SIGABRT"),
                                        (137, "SIGKILL"), (1, None), (3, None), (128, None), (255, None)])
def test_signal_names_from_exit_codes(code, name):
    assert signal_name(code) == name


def test_a_plain_exit_under_ncu_is_named_by_its_code():
    record = {"tool": "ncu", "signal": None, "exit_code": 3, "last_kernel": "gemm", "incomplete": [],
              "try": list(TRY_INSTEAD)}
    assert partial_status(record) == "partial: the program exited with code 3 under ncu"
    assert partial_line(record) == ('partial: the program exited with code 3 under ncu after ncu reported kernel "gemm", '
                                    f"so the profile holds nsys's timeline only. {TRIES}")
