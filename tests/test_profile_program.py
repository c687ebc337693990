"""`nsprof profile -- CMD`: capturing the user's own program. The exact command lines, and whole
captures against stand-in nsys and ncu that run the program for real and write the reports those
tools wrote for the PyTorch training step on the H200 (tests/data/user-programs), so that the
directory they leave is analyzed as a real one. The run on the GPU is test_real_program_capture."""

import json
import re
import shlex
import shutil
import sys
import textwrap
from pathlib import Path

import pytest
from cli_checks import one_line_error
from typer.testing import CliRunner

from nsprof.capture.metrics import PRESETS
from nsprof.capture.program import DEFAULT_LAUNCH_COUNT, DEFAULT_TOP, NCU_SECTIONS, build_program_request, program_commands
from nsprof.cli import app

USER = Path(__file__).resolve().parent / "data" / "user-programs"
PROGRAMS = Path(__file__).resolve().parent / "programs"
STAMP = "20261122-120000"

# Runs the program it is given (its output goes where the tool's goes), then writes what the real
# tool wrote for the training step, and exits with the program's status, as nsys and ncu do.
STAND_IN = textwrap.dedent('''
    import shutil, subprocess, sys
    tool, args = sys.argv[1], sys.argv[2:]
    if args == ["--version"]:
        print("NVIDIA Nsight Systems version 2025.3.1.90" if tool == "nsys" else "Version 2025.3.1.0 (build 1)")
        sys.exit(0)
    if "--import" in args:
        page = args[args.index("--page") + 1]
        sys.stdout.write(open(f"{USER}/train-{page}.csv").read())
        sys.exit(0)
    out = args[args.index("-o") + 1]
    program = args[args.index("-o") + 2:] if tool == "ncu" else args[args.index("--force-overwrite=false") + 1:]
    print("==PROF== Connected to process 7" if tool == "ncu" else "Collecting data...", flush=True)
    code = subprocess.call(program)
    if tool == "nsys":
        shutil.copy(f"{USER}/train.nsys-rep", out + ".nsys-rep"); shutil.copy(f"{USER}/train.sqlite", out + ".sqlite")
    else:
        shutil.copy(f"{USER}/graph-full.ncu-rep", out + ".ncu-rep")
    sys.exit(code)
''').replace("{USER}", str(USER))


@pytest.fixture
def stand_ins(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "stand_in.py").write_text(STAND_IN)
    for name in ("nsys", "ncu"):
        exe = bin_dir / name
        exe.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} {bin_dir / 'stand_in.py'} {name} \"$@\"\n")
        exe.chmod(0o755)
        monkeypatch.setenv(f"NSPROF_{name.upper()}", str(exe))
    monkeypatch.setattr("nsprof.capture.layout.timestamp", lambda: STAMP)
    monkeypatch.setattr("nsprof.launch.gpu.device_info", _no_gpu)


def _no_gpu():
    from nsprof.errors import GpuUnavailableError
    raise GpuUnavailableError("CuPy is not installed")  # the program brings its own CUDA: no CuPy needed


def program(tmp_path, code=0) -> list[str]:
    script = tmp_path / "train.py"
    script.write_text(f"import sys\nprint('epoch 1 loss 0.25')\nsys.exit({code})\n")
    return [sys.executable, str(script), "--epochs", "1"]


def invoke(*args):
    return CliRunner().invoke(app, ["profile", *map(str, args)])


def test_command_lines_collect_the_default_preset_and_the_sol_sections(tmp_path):
    request = build_program_request(["python3", "train.py", "--epochs", "1"], ranges=["step"], kernel="gemm|nvjet",
                                    launch_count=8)
    nsys, ncu, raw, details = program_commands(request, {"nsys": "nsys", "ncu": "ncu"}, tmp_path)
    assert list(nsys.argv) == ["nsys", "profile", "-t", "cuda,nvtx", "--cuda-graph-trace=node", "--export=sqlite",
                               "-o", str(tmp_path / "nsys"),
                               "--force-overwrite=false", "python3", "train.py", "--epochs", "1"]
    assert list(ncu.argv) == ["ncu", "--clock-control", "none", "--nvtx", "--nvtx-include", "step/",
                              "--kernel-name", "regex:gemm|nvjet", "--launch-count", "8",
                              *[a for s in NCU_SECTIONS for a in ("--section", s)],
                              "--metrics", ",".join(PRESETS["default"]), "-o", str(tmp_path / "ncu"),
                              "python3", "train.py", "--epochs", "1"]
    # the program's Triton compiles into the profile during the nsys run, so its metadata travels with it
    assert nsys.env == (("TRITON_CACHE_DIR", str(tmp_path / "triton-cache")),) and not ncu.env
    assert nsys.shell.startswith(f"TRITON_CACHE_DIR={tmp_path}/triton-cache nsys profile")
    assert raw.shell.endswith(f"--page raw --print-units base > {tmp_path}/ncu-raw.csv")
    assert details.shell.endswith(f"--page details > {tmp_path}/ncu-details.csv")
    assert build_program_request(["./a.out"]).launch_count == DEFAULT_LAUNCH_COUNT
    assert build_program_request(["x"], ranges=["dom@outer/inner/"]).ranges == ("dom@outer/inner/",)


def test_dry_run_names_the_directory_after_the_script(tmp_path, monkeypatch):
    monkeypatch.setattr("nsprof.capture.layout.timestamp", lambda: STAMP)
    result = invoke("--dry-run", "--tool", "nsys", "--out", tmp_path, "--", "python3", "train.py", "--epochs", "1")
    assert result.exit_code == 0, result.output
    assert f"-o {tmp_path}/train-{STAMP}/nsys " in result.stdout and result.stdout.rstrip().endswith("train.py --epochs 1")
    assert not tmp_path.joinpath(f"train-{STAMP}").exists()


@pytest.mark.parametrize("args, message", [
    (["--stage", "v6", "--", "python3", "x.py"], "--stage is for the ladder's stages, not for a program"),
    (["--range", "step"], "--range, --kernel, --launch-count and --top select launches of your own program"),
    (["--top", "0", "--", "x"], "--top 0: ncu must profile at least one kernel"),
    (["--top", "3", "--kernel", "gemm", "--", "x"], "--top picks the hot kernels nsys finds"),
    (["--tool", "nsys", "--kernel", "gemm", "--", "x"], "apply to ncu only"),
    (["--launch-count", "0", "--", "x"], "--launch-count 0: ncu must profile at least one launch"),
    (["--kernel", "(", "--", "x"], "is not a regular expression"),
])
def test_bad_program_options_are_usage_errors(args, message):
    line = one_line_error(invoke(*args), exit_code=2)
    assert message in line


def test_capture_keeps_reports_logs_exit_status_and_analyzes(tmp_path, stand_ins):
    result = invoke("--out", tmp_path, "--", *program(tmp_path))
    assert result.exit_code == 0, result.output
    directory = tmp_path / f"train-{STAMP}"
    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["status"] == "ok" and manifest["program"]["argv"][1:] == [str(tmp_path / "train.py"), "--epochs", "1"]
    assert manifest["program"]["exit_codes"] == {"nsys": 0, "ncu": 0}
    assert manifest["ncu_filters"] == {"guided": True, "top": DEFAULT_TOP}  # no --range, --kernel or --launch-count
    # the stand-in nsys wrote the training step's export: its hot kernels, chosen by their mangled names
    chosen = manifest["guided"]["kernels"]
    assert 1 <= len(chosen) <= DEFAULT_TOP and all(k["mangled_name"] for k in chosen)
    assert manifest["guided"]["covered_pct"] == pytest.approx(sum(k["pct"] for k in chosen), abs=0.1)
    ncu = next(c["argv"] for c in manifest["commands"] if c["tool"] == "ncu" and c["step"] == "profile")
    pattern = ncu[ncu.index("--kernel-name") + 1]
    assert all(re.search(pattern.removeprefix("regex:"), k["mangled_name"]) for k in chosen)
    assert ncu[ncu.index("--filter-mode") + 1] == "per-launch-config" and "--nvtx-include" not in ncu
    assert manifest["device"]["name"] is None  # no CuPy: nsys and ncu name the GPU
    for log in ("nsys.log", "ncu.log"):
        assert "epoch 1 loss 0.25" in (directory / log).read_text()  # the program's own output
    assert sorted(manifest["outputs"]) == ["ncu-details.csv", "ncu-raw.csv", "ncu.log", "ncu.ncu-rep", "nsys.log",
                                           "nsys.nsys-rep", "nsys.sqlite"]
    assert result.stdout.strip().splitlines()[-1] == f"next: nsprof analyze {directory}"
    doc = json.loads(CliRunner().invoke(app, ["analyze", str(directory), "--json"]).stdout)
    assert doc["gpu"] == "NVIDIA H200" and doc["kernel_summary"] and doc["ranges"]
    assert doc["kernels"][0]["bound"] == "compute" and doc["kernels"][0]["rules"]


def test_a_failing_program_is_one_line_and_keeps_what_was_captured(tmp_path, stand_ins):
    line = one_line_error(invoke("--out", tmp_path, "--", *program(tmp_path, code=3)))
    directory = tmp_path / f"train-{STAMP}"
    assert line == (f"error: the program exited with code 3 under nsys. Its output is in {directory / 'nsys.log'}; "
                    "what was captured is kept beside it")
    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["program"]["exit_codes"] == {"nsys": 3} and manifest["status"].startswith("failed: the program exited")
    assert (directory / "nsys.sqlite").is_file()


def test_without_the_reader_the_csv_pages_serve(tmp_path, stand_ins, monkeypatch):
    """Where NVIDIA's ncu-report cannot be installed, the CSV pages exported beside the report are read."""
    invoke("--out", tmp_path, "--", *program(tmp_path))
    monkeypatch.setitem(sys.modules, "ncu_report", None)
    result = CliRunner().invoke(app, ["analyze", str(tmp_path / f"train-{STAMP}"), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert len(doc["kernels"]) == 8 and doc["kernels"][0]["rules"]  # the training step's details page


@pytest.mark.gpu
def test_real_program_capture_of_a_pytorch_training_step(tmp_path):
    """The PyTorch training step under real nsys and ncu: every range is there, the kernel summary
    and the ncu findings hold real numbers, and the program's status and output are kept."""
    pytest.importorskip("torch")
    if not (shutil.which("nsys") and shutil.which("ncu")):
        pytest.skip("needs nsys and ncu on PATH")
    result = invoke("--launch-count", "3", "--out", tmp_path, "--", sys.executable,
                    str(PROGRAMS / "torch_train_step.py"), "--steps", "2")
    assert result.exit_code == 0, result.output
    [directory] = tmp_path.iterdir()
    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["status"] == "ok" and manifest["program"]["exit_codes"] == {"nsys": 0, "ncu": 0}
    assert "step 1: loss" in (directory / "nsys.log").read_text()
    doc = json.loads(CliRunner().invoke(app, ["analyze", str(directory), "--json", "--attribution", "process"]).stdout)
    ranges = {row["range"]: row for row in doc["ranges"]}
    assert {"step", "forward", "backward", "optimizer"} <= set(ranges)
    assert ranges["backward"]["kernels"] > ranges["backward"]["count"]  # the autograd thread's kernels, by process
    assert len(doc["kernels"]) == 3 and all(k["sm_throughput_pct"] is not None and k["bound"] for k in doc["kernels"])
    assert all(k["duration_ns"] > 0 and k["dram_bytes"] is not None for k in doc["kernels"])
    assert doc["missing_metrics"]["metrics"] == []  # nsprof's default preset was collected


EXAMPLE = Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h200-program-torch-train"


def test_the_committed_program_capture_analyzes_completely():
    """The H200 capture of the training step made by `nsprof profile -- CMD`: nsys and both ncu pages
    (its .ncu-rep is left out), with nothing missing from nsprof's metric set of its day: the FP16
    CUDA-core counters joined the default preset after it, the every-path TF32 counter took the
    HMMA-only one's place, and the BF16, FP8 and INT8 tensor counters joined it, so only they are
    missing, and its FP16 FLOPs are unknown (null), not 0."""
    manifest = json.loads((EXAMPLE / "manifest.json").read_text())
    assert manifest["status"] == "ok" and manifest["program"]["exit_codes"] == {"nsys": 0, "ncu": 0}
    assert manifest["program"]["argv"] == ["python3", "tests/programs/torch_train_step.py", "--steps", "4"]
    result = CliRunner().invoke(app, ["analyze", str(EXAMPLE), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    fp16 = [f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in ("hadd", "hmul", "hfma")]
    tf32 = "sm__ops_path_tensor_src_tf32_dst_fp32.sum"
    newer = [f"sm__ops_path_tensor_src_{source}.sum" for source in ("bf16_dst_fp32", "fp8", "int8")]  # joined later
    assert doc["gpu"] == "NVIDIA H200" and doc["missing_metrics"]["metrics"] == [*fp16, *newer, tf32]
    assert list(doc["missing_metrics"]["partial"]) == ["sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32.sum"]
    assert all(k["fp16_flops"] is None for k in doc["kernels"]) and all(k["flops"] is not None for k in doc["kernels"])
    assert len(doc["kernels"]) == manifest["ncu_filters"]["launch_count"] == 12
    gemm = next(k for k in doc["kernels"] if k["kernel"].startswith("nvjet"))
    assert gemm["tensor_flops"] > 0 and gemm["registers_per_thread"] == 168 and gemm["rules"]
    assert {row["range"] for row in doc["ranges"]} == {"step", "forward", "backward", "optimizer"}
    assert "Stages" not in CliRunner().invoke(app, ["analyze", str(EXAMPLE)]).stdout


@pytest.mark.gpu
def test_real_guided_capture_profiles_every_hot_kernel(tmp_path):
    """Without --range, --kernel or --launch-count, ncu profiles the hot kernels nsys found: every
    kernel and configuration the guide chose has a launch in ncu's report."""
    pytest.importorskip("torch")
    if not (shutil.which("nsys") and shutil.which("ncu")):
        pytest.skip("needs nsys and ncu on PATH")
    result = invoke("--top", "4", "--out", tmp_path, "--", sys.executable, str(PROGRAMS / "torch_train_step.py"),
                    "--steps", "4")
    assert result.exit_code == 0, result.output
    [directory] = tmp_path.iterdir()
    manifest = json.loads((directory / "manifest.json").read_text())
    chosen = manifest["guided"]["kernels"]
    assert 1 <= len(chosen) <= 4 and manifest["ncu_filters"] == {"guided": True, "top": 4}
    doc = json.loads(CliRunner().invoke(app, ["analyze", str(directory), "--json"]).stdout)
    profiled = {(row["kernel"], row["grid"], row["block"]): row["ncu_launches"] for row in doc["hot_kernels"]}
    missed = [(k["kernel"][:80], k["grid"], k["block"], k["launches"]) for k in chosen
              if profiled.get((k["kernel"], k["grid"], k["block"]), 0) < 1]
    # (it failed once of three runs on an H200, in the whole GPU suite only: what ncu said is the first clue)
    ncu_log = (directory / "ncu.log").read_text(errors="replace").splitlines() if (directory / "ncu.log").exists() else []
    assert not missed, (missed, manifest["guided"]["skip_per_configuration"], [line for line in ncu_log if "==" in line][-15:])


def test_a_guided_capture_with_nothing_to_hand_ncu_says_so(tmp_path, stand_ins, monkeypatch):
    """An export that names no kernel by its mangled symbol leaves the guide nothing to choose: ncu
    does not run, and the summary says why and how to choose by hand."""
    from nsprof.capture.program import GuidedChoice

    monkeypatch.setattr("nsprof.verbs.capture.choose_hot_kernels", lambda export, top: GuidedChoice((), 0.0, 0, "none"))
    result = invoke("--out", tmp_path, "--", *program(tmp_path))
    assert result.exit_code == 0, result.output
    assert "ncu did not run: nsys saw no kernel to hand it" in result.output
    manifest = json.loads((tmp_path / f"train-{STAMP}" / "manifest.json").read_text())
    assert [c["tool"] for c in manifest["commands"]] == ["nsys"] and manifest["guided"]["kernels"] == []
