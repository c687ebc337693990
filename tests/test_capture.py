"""nsprof.capture on the CPU: exact command lines, tool discovery, the profile directory and its
manifest, reading tool output, and whole captures run against fake `nsys`/`ncu` scripts (real
child processes that write the files the real tools write and print what they print)."""

import json
import shlex
import sys
import textwrap
import time
from pathlib import Path

import pytest

from nsprof import __version__, api
from nsprof.capture.commands import Command, build_commands, ncu_commands, nsys_commands, nvtx_include, workload_argv
from nsprof.capture.layout import create_directory, directory_name
from nsprof.capture.manifest import finish_manifest, new_manifest, verification_records, write_manifest
from nsprof.capture.metrics import PRESETS, resolve_metrics
from nsprof.capture.output import ToolOutput
from nsprof.capture.request import build_request
from nsprof.capture.run import run_command
from nsprof.capture.session import ProfileInterrupted, run_capture
from nsprof.capture.tools import FoundTool, find_tool, locate_tool, tool_version
from nsprof.errors import NsprofError, ToolNotFoundError, UsageError
from nsprof.ladder.registry import get_stage
from nsprof.ncu_log import parse_profiling_line

PY = sys.executable
DEFAULT_METRICS = [
    "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum",
    "l1tex__t_bytes.sum", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum", "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum",  # FP16 on CUDA cores
    "sm__ops_path_tensor_src_fp16.sum",
    # BF16, FP8 and INT8 sources
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum", "sm__ops_path_tensor_src_fp8.sum", "sm__ops_path_tensor_src_int8.sum",
    "sm__ops_path_tensor_src_tf32_dst_fp32.sum",  # every TF32 path, wgmma's too
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum",
    "smsp__sass_inst_executed_op_ldsm.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active", "launch__registers_per_thread", "launch__shared_mem_per_block_static",
    "launch__shared_mem_per_block_dynamic",
]
FAKE_ENV = {
    "device": "NVIDIA H200", "compute_capability": "9.0", "sm_count": 132, "sm_clock_max_mhz": 1980,
    "memory_gib": 139.8, "l2_mib": 60.0, "driver": "580.159.03", "driver_cuda": "13.0", "runtime_cuda": "13.0",
    "cupy": "14.2.0", "python": "3.11.7", "host": "gpu-box",
}

# A stand-in for nsys and ncu. Its behaviour is chosen with FAKE_MODE: ok, fail, permission,
# interrupt (sends SIGINT to nsprof, as a Ctrl-C would), verify-fail, no-kernels. Under `ncu --import`
# it prints a CSV; under doctor's `ncu --launch-count 1` probe, one ==PROF== line.
FAKE_TOOL = textwrap.dedent('''
    import json, os, signal, sys, time
    tool, args = sys.argv[1], sys.argv[2:]
    mode = os.environ.get("FAKE_MODE", "ok")
    def say(text):
        print(text, flush=True)
    def value(flag):
        return args[args.index(flag) + 1]
    if args == ["--version"]:
        say("NVIDIA Nsight Systems version 2025.3.1.90-253135822008v0" if tool == "nsys" else
            "NVIDIA (R) Nsight Compute Command Line Profiler\\nCopyright (c) 2018-2025 NVIDIA Corporation\\n"
            "Version 2025.3.1.0 (build 36398880) (public-release)")
        sys.exit(0)
    if "--launch-count" in args:  # nsprof doctor's counter probe (ncu 2025.3 adds "(1/1)" here)
        say("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission" if mode == "permission" else
            '==PROF== Profiling "cupy_fill" - 0 (1/1): 0%....50%....100% - 1 pass')
        sys.exit(0)
    if "--import" in args:
        if not os.path.exists(value("--import")):
            print("==ERROR== cannot open the report", file=sys.stderr)
            sys.exit(1)
        say('"ID","Kernel Name","gpu__time_duration.sum"')
        say('"","","ns"')
        say('"0","sgemm_v6","1,234"')
        sys.exit(0)
    workload = args[args.index("-m") - 1:]
    stages = value("--stage").split(",")
    sizes = [s if "x" in s else f"{s}x{s}x{s}" for s in value("--size").split(",")]
    if mode == "permission":
        say("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters "
            "on the target device 0.")
        time.sleep(60)
    if mode == "fail":
        say("fatal: something broke")
        sys.exit(3)
    say("==PROF== Connected to process 4242 (python)")
    launch = 0
    for stage in stages:
        for size in sizes:
            for _ in range(int(value("--repeat"))):
                if tool == "ncu" and not (mode == "verify-fail" and stage == stages[0]) and mode != "no-kernels":
                    sys.stdout.write(f'==PROF== Profiling "sgemm_{stage}" - {launch}: 0%....50%')
                    sys.stdout.flush()
                    say(f"....100% - {9 + launch} passes")
                    launch += 1
            if mode == "interrupt":
                os.kill(os.getppid(), signal.SIGINT)
                time.sleep(30)
    failed = mode == "verify-fail"
    results = [{"stage": st, "size": sz, "status": "failed" if failed and st == stages[0] else "ok",
                "rel_error": 0.5 if failed and st == stages[0] else 1.5e-7, "tolerance": 1e-5,
                "message": "relative error 0.5 exceeds 1e-05" if failed and st == stages[0] else None}
               for sz in sizes for st in stages]
    with open(value("--save-as"), "w") as f:
        json.dump({"results": results, "workload": workload}, f)
    if mode == "no-kernels":
        say("==WARNING== No kernels were profiled.")
        sys.exit(0)
    report = value("-o")
    for ext in ([".nsys-rep", ".sqlite"] if tool == "nsys" else [".ncu-rep"]):
        with open(report + ext, "w") as f:
            f.write("report")
    say("==PROF== Disconnected from process 4242")
    sys.exit(1 if failed else 0)
''')


def make_tool(directory: Path, name: str) -> Path:
    """An executable `name` in `directory` that runs FAKE_TOOL as that tool."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "fake_tool.py"
    script.write_text(FAKE_TOOL)
    exe = directory / name
    exe.write_text(f"#!/bin/sh\nexec {shlex.quote(PY)} {shlex.quote(str(script))} {name} \"$@\"\n")
    exe.chmod(0o755)
    return exe


def fake_tools(tmp_path: Path, *names: str) -> dict[str, FoundTool]:
    bin_dir = tmp_path / "bin"
    return {name: locate_tool(name, str(make_tool(bin_dir, name)), environ={}) for name in names}


def request(**kw):
    kw.setdefault("stages", ["v1,v6"])
    return build_request(**kw)


# --- exact command lines ----------------------------------------------------------------------

def test_workload_is_nsprof_bench_with_the_tools_repeat(tmp_path):
    req = request()
    assert workload_argv(req, "ncu", tmp_path) == [
        PY, "-m", "nsprof", "bench", "--op", "sgemm", "--stage", "v1,v6", "--size", "4096",
        "--repeat", "3", "--warmup", "3", "--no-paired", "--no-baseline", "--save-as", str(tmp_path / "bench-ncu.json"),
    ]
    assert workload_argv(req, "nsys", tmp_path)[11] == "10"


def test_the_ncu_pass_reuses_the_triton_configurations_the_nsys_pass_kept(tmp_path):
    both = request(stages=["v11,v12t"], tool="both")
    assert workload_argv(both, "ncu", tmp_path)[-2:] == ["--tuned", str(tmp_path / "bench-nsys.json")]
    assert "--tuned" not in workload_argv(both, "nsys", tmp_path)
    assert "--tuned" not in workload_argv(request(stages=["v12t"], tool="ncu"), "ncu", tmp_path)  # no nsys pass
    assert "--tuned" not in workload_argv(request(tool="both"), "ncu", tmp_path)  # no Triton stage


def test_kept_configurations_are_read_from_a_bench_record(tmp_path):
    from nsprof.ladder_runs.bench import kept_configurations

    tuning = {"autotune": {"kept": "128x256x64 w8 s3", "trials": []}, "compiled": {}}
    records = [{"op": "hgemm", "stage": "h8", "size": "1024x1024x1024", "status": "ok", "details": tuning},
               {"op": "hgemm", "stage": "h6", "size": "1024x1024x1024", "status": "ok", "details": None},
               {"op": "hgemm", "stage": "h8", "size": "4096x4096x4096", "status": "failed", "details": tuning}]
    path = tmp_path / "bench-nsys.json"
    path.write_text(json.dumps({"results": records}))
    assert kept_configurations(path) == {("hgemm", "h8", "1024x1024x1024"): "128x256x64 w8 s3"}
    path.write_text("[1, 2]")
    with pytest.raises(UsageError, match=r"cannot read the kept configurations of .*bench-nsys\.json"):
        kept_configurations(path)


def test_nsys_command_line(tmp_path):
    [cmd] = nsys_commands(request(tool="nsys"), "/opt/nsys", tmp_path)
    assert list(cmd.argv) == [
        "/opt/nsys", "profile", "-t", "cuda,nvtx", "--export=sqlite", "-o", str(tmp_path / "nsys"),
        "--force-overwrite=false", *workload_argv(request(tool="nsys"), "nsys", tmp_path),
    ]
    assert [p.name for p in cmd.outputs] == ["nsys.nsys-rep", "nsys.sqlite"]
    assert cmd.log == tmp_path / "nsys.log" and cmd.stdout is None


def test_ncu_command_lines(tmp_path):
    req = request(tool="ncu")
    profile, export = ncu_commands(req, "/opt/ncu", tmp_path)
    assert list(profile.argv) == [
        "/opt/ncu", "--clock-control", "none", "--nvtx",
        "--nvtx-include", r"nsprof@sgemm\/v1\/4096x4096x4096/",
        "--nvtx-include", r"nsprof@sgemm\/v6\/4096x4096x4096/",
        "--metrics", ",".join(DEFAULT_METRICS), "-o", str(tmp_path / "ncu"),
        *workload_argv(req, "ncu", tmp_path),
    ]
    assert list(export.argv) == ["/opt/ncu", "--import", str(tmp_path / "ncu.ncu-rep"), "--csv", "--page", "raw",
                                 "--print-units", "base"]
    assert export.stdout == tmp_path / "ncu-raw.csv"
    assert export.shell == (f"/opt/ncu --import {tmp_path}/ncu.ncu-rep --csv --page raw --print-units base "
                            f"> {tmp_path}/ncu-raw.csv")
    assert profile.log == export.log == tmp_path / "ncu.log"


def test_nvtx_include_escapes_the_slashes_of_our_range_names():
    include = nvtx_include(get_stage("sgemm", "v6"), (4096, 4096, 4096))
    assert include == "nsprof@sgemm\\/v6\\/4096x4096x4096/"
    assert shlex.quote(include) == "'nsprof@sgemm\\/v6\\/4096x4096x4096/'"


def test_several_stages_and_sizes_give_one_include_each(tmp_path):
    profile, _ = ncu_commands(request(tool="ncu", stages=["v6", "v1"], sizes=["1024,1000x1200x800"]), "ncu", tmp_path)
    argv = list(profile.argv)
    includes = [argv[i + 1] for i, a in enumerate(argv) if a == "--nvtx-include"]
    assert includes == [
        r"nsprof@sgemm\/v1\/1024x1024x1024/", r"nsprof@sgemm\/v1\/1000x1200x800/",
        r"nsprof@sgemm\/v6\/1024x1024x1024/", r"nsprof@sgemm\/v6\/1000x1200x800/",
    ]
    assert argv[argv.index("--size") + 1] == "1024,1000x1200x800"


def test_clock_control_and_metrics_reach_the_ncu_command(tmp_path):
    req = request(tool="ncu", clock_control="base", metrics=["smem,dram__bytes_read.sum", "launch__grid_size"])
    argv = list(ncu_commands(req, "ncu", tmp_path)[0].argv)
    assert argv[1:3] == ["--clock-control", "base"]
    assert argv[argv.index("--metrics") + 1].split(",") == [*PRESETS["smem"], "dram__bytes_read.sum", "launch__grid_size"]


def test_both_runs_nsys_first_then_ncu_and_its_export(tmp_path):
    cmds = build_commands(request(), {"nsys": "nsys", "ncu": "ncu"}, tmp_path)
    assert [(c.tool, c.step) for c in cmds] == [("nsys", "profile"), ("ncu", "profile"), ("ncu", "export")]
    assert [c.argv[0] for c in cmds] == ["nsys", "ncu", "ncu"]


def test_repeat_applies_to_every_tool(tmp_path):
    req = request(repeat=5)
    assert req.repeat == {"nsys": 5, "ncu": 5}


# --- metrics and request validation -------------------------------------------------------------

def test_default_preset_is_the_documented_metric_set():
    assert resolve_metrics(None) == DEFAULT_METRICS
    assert resolve_metrics(["default"]) == DEFAULT_METRICS


def test_presets_and_raw_names_combine_in_order_without_repeats():
    assert resolve_metrics(["smem,gpu__time_duration.sum", "smem"]) == PRESETS["smem"]
    assert resolve_metrics(["dram__bytes_read.sum", "memory"])[:2] == ["dram__bytes_read.sum", "gpu__time_duration.sum"]
    for preset in PRESETS.values():
        assert preset[0] == "gpu__time_duration.sum" and len(set(preset)) == len(preset)


@pytest.mark.parametrize("kw, message", [
    ({"metrics": ["fast"]}, "unknown metric preset 'fast'"),
    ({"metrics": [" , "]}, "no metric given"),
    ({"tool": "nsys", "metrics": ["smem"]}, "--metrics and --clock-control apply to ncu only"),
    ({"tool": "nsys", "clock_control": "base"}, "--metrics and --clock-control apply to ncu only"),
    ({"tool": "perf"}, "unknown tool 'perf'"),
    ({"clock_control": "boost"}, "unknown clock control 'boost'"),
    ({"repeat": 0}, "--repeat 0"),
    ({"stages": ["v13"]}, "unknown stage 'v13'"),
])
def test_bad_requests_are_usage_errors(kw, message):
    with pytest.raises(UsageError) as err:
        request(**kw)
    assert str(err.value).startswith(message)


# --- finding the tools ----------------------------------------------------------------------

@pytest.fixture
def three_ncus(tmp_path):
    return {where: make_tool(tmp_path / where, "ncu") for where in ("on_path", "from_env", "from_option")}


def test_tool_on_path_is_found(three_ncus):
    found = find_tool("ncu", environ={"PATH": str(three_ncus["on_path"].parent)})
    assert (found.path, found.found_by) == (str(three_ncus["on_path"]), "PATH")


def test_environment_variable_beats_path(three_ncus):
    env = {"PATH": str(three_ncus["on_path"].parent), "NSPROF_NCU": str(three_ncus["from_env"])}
    found = find_tool("ncu", environ=env)
    assert (found.path, found.found_by) == (str(three_ncus["from_env"]), "NSPROF_NCU")


def test_option_beats_environment_variable_and_path(three_ncus):
    env = {"PATH": str(three_ncus["on_path"].parent), "NSPROF_NCU": str(three_ncus["from_env"])}
    found = find_tool("ncu", str(three_ncus["from_option"]), environ=env)
    assert (found.path, found.found_by) == (str(three_ncus["from_option"]), "--ncu")


def test_a_command_name_in_the_option_is_looked_up_on_path(three_ncus):
    found = find_tool("ncu", "ncu", environ={"PATH": str(three_ncus["on_path"].parent)})
    assert found.path == str(three_ncus["on_path"])


def test_missing_tool_says_where_it_looked_and_how_to_point_at_it(tmp_path):
    with pytest.raises(ToolNotFoundError) as err:
        find_tool("nsys", environ={"PATH": str(tmp_path)})
    message = str(err.value)
    assert message.startswith("nsys (Nsight Systems) not found: not on PATH and NSPROF_NSYS is not set.")
    assert "--nsys /path/to/nsys" in message and "NSPROF_NSYS=/path/to/nsys" in message
    assert "\n" not in message


def test_bad_environment_variable_is_named(tmp_path):
    with pytest.raises(ToolNotFoundError, match="NSPROF_NCU names '/nowhere/ncu', which is not an executable"):
        find_tool("ncu", environ={"PATH": "", "NSPROF_NCU": "/nowhere/ncu"})


def test_versions_are_read_from_both_tools(tmp_path):
    tools = fake_tools(tmp_path, "nsys", "ncu")
    assert tools["nsys"].version == "2025.3.1.90"
    assert tools["ncu"].version == "2025.3.1.0"


def test_a_tool_that_does_not_run_is_reported(tmp_path):
    broken = tmp_path / "ncu"
    broken.write_text("#!/bin/sh\nexit 4\n")
    broken.chmod(0o755)
    with pytest.raises(ToolNotFoundError, match="--version exited with code 4"):
        tool_version(FoundTool("ncu", str(broken), "--ncu"))


# --- the profile directory and its manifest -------------------------------------------------------

def test_directory_names():
    assert directory_name(request(), "20261121-010203") == "sgemm-v1-v6-4096-20261121-010203"
    assert directory_name(request(stages=["all"]), "20261121-010203") == "sgemm-all-4096-20261121-010203"
    assert directory_name(request(stages=["v6"], sizes=["1000x1200x800,512"]), "X") == "sgemm-v6-1000x1200x800-512-X"


def test_an_existing_directory_is_kept_unless_forced(tmp_path):
    target = tmp_path / "sgemm-v6-4096-X"
    target.mkdir()
    (target / "old.txt").write_text("old")
    with pytest.raises(NsprofError, match=r"already exists\. Pass --force"):
        create_directory(target)
    assert (target / "old.txt").exists()
    create_directory(target, force=True)
    assert target.is_dir() and list(target.iterdir()) == []


def test_manifest_describes_the_run(tmp_path):
    req = request(stages=["v1,v6"], sizes=["4096"])
    tools = {"nsys": FoundTool("nsys", "/opt/nsys", "PATH", "2025.3.1.90"),
             "ncu": FoundTool("ncu", "/opt/ncu", "--ncu", "2025.3.1.0")}
    cmds = build_commands(req, {"nsys": "/opt/nsys", "ncu": "/opt/ncu"}, tmp_path)
    m = new_manifest(req, FAKE_ENV, tools, cmds)
    assert m["status"] == "running" and m["nsprof_version"] == __version__ and m["finished"] is None
    assert (m["op"], m["dtype"], m["stages"], m["sizes"]) == ("sgemm", "float32", ["v1", "v6"], ["4096x4096x4096"])
    assert m["device"] == {"name": "NVIDIA H200", "compute_capability": "9.0", "sm_count": 132,
                           "sm_clock_max_mhz": 1980, "memory_gib": 139.8, "l2_mib": 60.0}
    assert m["software"] == {"driver": "580.159.03", "driver_cuda": "13.0", "runtime_cuda": "13.0",
                             "cupy": "14.2.0", "python": "3.11.7"}
    assert m["tools"]["ncu"] == {"path": "/opt/ncu", "version": "2025.3.1.0", "found_by": "--ncu"}
    assert m["metrics"] == DEFAULT_METRICS and m["clock_control"] == "none"
    assert m["repeat"] == {"nsys": 10, "ncu": 3} and m["warmup"] == 3
    assert m["nvtx"] == {"domain": "nsprof", "ranges": ["sgemm/v1/4096x4096x4096", "sgemm/v6/4096x4096x4096"]}
    assert [c["argv"] for c in m["commands"]] == [list(c.argv) for c in cmds]
    assert m["commands"][2]["shell"] == cmds[2].shell and m["commands"][2]["stdout"] == "ncu-raw.csv"
    assert all(c["exit_code"] is None for c in m["commands"])
    json.dumps(m)  # plain JSON all the way down
    write_manifest(m, tmp_path)
    (tmp_path / "nsys.log").write_text("log")
    finish_manifest(m, tmp_path)
    saved = json.loads((tmp_path / "manifest.json").read_text())
    assert saved["outputs"] == ["nsys.log"] and saved["finished"] is not None


def test_verification_records_come_from_the_bench_results(tmp_path):
    (tmp_path / "bench-ncu.json").write_text(json.dumps({"results": [
        {"stage": "v6", "size": "4096x4096x4096", "status": "ok", "rel_error": 2e-7, "tolerance": 1e-5,
         "message": None, "median_ms": 3.0}]}))
    assert verification_records(tmp_path, "ncu") == [{"tool": "ncu", "stage": "v6", "size": "4096x4096x4096",
                                                      "status": "ok", "rel_error": 2e-7, "tolerance": 1e-5, "message": None}]
    assert verification_records(tmp_path, "nsys") == []
    (tmp_path / "bench-nsys.json").write_text('{"results": [')  # cut short by an interrupt
    assert verification_records(tmp_path, "nsys") == []


# --- what the tools print ---------------------------------------------------------------------

NCU_LOG = """\
==PROF== Connected to process 1234 (/usr/bin/python3.11)
sgemm v1 4096x4096x4096
==PROF== Profiling "sgemm_v1" - 0: 0%....50%....100% - 9 passes
==PROF== Profiling "sgemm_v1" - 1: 0%....50%....100% - 9 passes
==PROF== Profiling "void cutlass::Kernel<foo>(T1::Params)" - 2: 0%....50%....100% - 1 pass
==PROF== Profiling "sgemm_v6" - 3: 0%....50%
==PROF== Disconnected from process 1234
"""


NCU_PASSES = [
    {"kernel": "sgemm_v1", "launch": 0, "passes": 9},
    {"kernel": "sgemm_v1", "launch": 1, "passes": 9},
    {"kernel": "void cutlass::Kernel<foo>(T1::Params)", "launch": 2, "passes": 1},
]


def test_replay_passes_are_read_from_the_log():
    out = ToolOutput("ncu")
    out.feed(NCU_LOG)
    out.close()
    assert out.replay_passes == NCU_PASSES  # the unfinished launch 3 has no pass count yet
    assert out.activity == "==PROF== Disconnected from process 1234"
    assert parse_profiling_line('==PROF== Profiling "sgemm_v6" - 3: 0%....50%') == {
        "kernel": "sgemm_v6", "launch": 3, "passes": None}
    assert parse_profiling_line("==PROF== Connected to process 1234") is None


def test_tool_output_follows_chunks_that_split_lines():
    out = ToolOutput("ncu")
    for i in range(0, len(NCU_LOG), 7):  # arbitrary chunk boundaries
        out.feed(NCU_LOG[i:i + 7])
        if "- 3: 0%....50%" in NCU_LOG[:i + 7] and "Disconnected" not in NCU_LOG[:i + 7]:
            assert out.activity.startswith("sgemm_v6 (launch 3)")
    out.close()
    assert out.replay_passes == NCU_PASSES
    assert not out.permission_denied and not out.no_kernels_profiled


def test_counter_permission_error_and_empty_profile_are_recognised():
    out = ToolOutput("ncu")
    out.feed("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
             "Performance Counters on the target device 0.")
    assert out.permission_denied
    out = ToolOutput("ncu")
    out.feed("==WARNING== No kernels were profiled.\n")
    assert out.no_kernels_profiled


def test_nsys_progress_redrawn_with_carriage_returns_shows_the_latest():
    out = ToolOutput("nsys")
    out.feed("Generating '/tmp/nsys-report-1.qdstrm'\r[1/8] [=====50%   ] nsys.nsys-rep\r[1/8] [100%] nsys.nsys-rep\n")
    assert out.activity == "[1/8] [100%] nsys.nsys-rep"


# --- running a command ---------------------------------------------------------------------------

def _command(tmp_path, argv, stdout=None):
    return Command("ncu", "export" if stdout else "profile", tuple(argv), tmp_path / "t.log", (), stdout)


def test_run_command_streams_output_to_the_log_and_returns_the_exit_code(tmp_path):
    script = ("import sys; print('==PROF== Profiling \"k\" - 0: 0%....100% - 4 passes'); "
              "print('bye', file=sys.stderr); sys.exit(5)")
    out = ToolOutput("ncu")
    seen = []
    code = run_command(_command(tmp_path, [PY, "-c", script]), out, lambda: seen.append(out.activity))
    assert code == 5
    log = (tmp_path / "t.log").read_text()
    assert log.startswith(f"$ {shlex.quote(PY)} -c ") and "4 passes" in log and "bye" in log
    assert out.replay_passes == [{"kernel": "k", "launch": 0, "passes": 4}] and seen


def test_run_command_sends_stdout_to_a_file_when_asked(tmp_path):
    script = "import sys; print('a,b'); print('note', file=sys.stderr)"
    code = run_command(_command(tmp_path, [PY, "-c", script], stdout=tmp_path / "out.csv"), ToolOutput("ncu"))
    assert code == 0
    assert (tmp_path / "out.csv").read_text() == "a,b\n"
    assert "note" in (tmp_path / "t.log").read_text()


# --- whole captures against fake tools --------------------------------------------------------------

def _capture(tmp_path, monkeypatch, mode="ok", names=("nsys", "ncu"), **kw):
    monkeypatch.setenv("FAKE_MODE", mode)
    tools = fake_tools(tmp_path, *names)
    directory = create_directory(tmp_path / "profile")
    tool = "both" if len(names) == 2 else names[0]
    req = request(tool=tool, **kw)
    return directory, lambda: run_capture(req, tools, directory, FAKE_ENV)


def _manifest(directory):
    return json.loads((directory / "manifest.json").read_text())


def test_a_capture_with_both_tools(tmp_path, monkeypatch):
    directory, go = _capture(tmp_path, monkeypatch)
    returned = go()
    m = _manifest(directory)
    assert returned == m
    assert m["status"] == "ok" and m["finished"]
    assert [c["exit_code"] for c in m["commands"]] == [0, 0, 0]
    assert m["replay_passes"] == [{"kernel": "sgemm_v1", "launch": i, "passes": 9 + i} for i in range(3)] + \
        [{"kernel": "sgemm_v6", "launch": i, "passes": 9 + i} for i in range(3, 6)]
    assert [(v["tool"], v["stage"], v["status"]) for v in m["verification"]] == [
        ("nsys", "v1", "ok"), ("nsys", "v6", "ok"), ("ncu", "v1", "ok"), ("ncu", "v6", "ok")]
    assert m["outputs"] == ["bench-ncu.json", "bench-nsys.json", "ncu-raw.csv", "ncu.log", "ncu.ncu-rep",
                            "nsys.log", "nsys.nsys-rep", "nsys.sqlite"]
    assert (directory / "ncu-raw.csv").read_text().startswith('"ID","Kernel Name"')
    # the workload the tool was given is exactly nsprof bench
    bench = json.loads((directory / "bench-ncu.json").read_text())
    assert bench["workload"] == workload_argv(request(tool="both"), "ncu", directory)


def test_a_failing_tool_stops_the_capture_and_names_its_log(tmp_path, monkeypatch):
    directory, go = _capture(tmp_path, monkeypatch, mode="fail")
    with pytest.raises(NsprofError) as err:
        go()
    assert str(err.value) == f"nsys exited with code 3. See {directory / 'nsys.log'}"
    m = _manifest(directory)
    assert m["status"] == "failed: nsys exited with code 3"
    assert [c["exit_code"] for c in m["commands"]] == [3, None, None]  # ncu never ran
    assert "fatal: something broke" in (directory / "nsys.log").read_text()


def test_counter_permission_error_stops_ncu_at_once(tmp_path, monkeypatch):
    directory, go = _capture(tmp_path, monkeypatch, mode="permission", names=("ncu",))
    start = time.monotonic()
    with pytest.raises(NsprofError) as err:
        go()
    assert time.monotonic() - start < 20  # not the fake's 60 s sleep
    message = str(err.value)
    assert message.startswith("ncu cannot read the GPU performance counters (ERR_NVGPUCTRPERM). Run as root (sudo)")
    assert "NVreg_RestrictProfilingToAdminUsers=0" in message
    assert _manifest(directory)["status"] == "failed: ncu cannot read the GPU performance counters (ERR_NVGPUCTRPERM)"


def test_ctrl_c_stops_the_tool_and_keeps_what_was_captured(tmp_path, monkeypatch):
    directory, go = _capture(tmp_path, monkeypatch, mode="interrupt", names=("ncu",))
    start = time.monotonic()
    with pytest.raises(ProfileInterrupted) as err:
        go()
    assert time.monotonic() - start < 20  # the fake's 30 s sleep was cut short
    assert err.value.exit_code == 130
    m = _manifest(directory)
    assert m["status"] == "interrupted" and m["finished"]
    assert m["commands"][0]["exit_code"] is None and m["commands"][0]["finished"]
    assert len(m["replay_passes"]) == 3  # the launches profiled before Ctrl-C
    assert "ncu.log" in m["outputs"]


def test_a_stage_that_fails_verification_is_recorded(tmp_path, monkeypatch):
    _directory, go = _capture(tmp_path, monkeypatch, mode="verify-fail")
    m = go()
    assert m["status"] == "verification failed"
    assert [c["exit_code"] for c in m["commands"]] == [1, 1, 0]  # bench's own exit code passes through
    failed = [v for v in m["verification"] if v["status"] == "failed"]
    assert [(v["tool"], v["stage"], v["rel_error"]) for v in failed] == [("nsys", "v1", 0.5), ("ncu", "v1", 0.5)]


def test_ncu_profiling_nothing_is_explained(tmp_path, monkeypatch):
    directory, go = _capture(tmp_path, monkeypatch, mode="no-kernels", names=("ncu",))
    with pytest.raises(NsprofError, match="ncu profiled no kernels: no launch matched its NVTX filter"):
        go()
    assert _manifest(directory)["status"] == "failed: ncu profiled no kernels: no launch matched its NVTX filter"


def test_progress_lines_of_every_ncu_filter_mode_are_read():
    """ncu numbers each launch it profiles, except under --filter-mode per-launch-config (the guided
    capture), whose lines name the kernel alone: the H200 torch.compile capture's log holds three."""
    from nsprof.capture.output import ToolOutput
    from nsprof.ncu_log import parse_profiling_line

    assert parse_profiling_line('==PROF== Profiling "sgemm_v6" - 0: 0%....50%....100% - 9 passes') == \
        {"kernel": "sgemm_v6", "launch": 0, "passes": 9}
    log = (Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h200-program-torch-compile" / "ncu.log")
    output = ToolOutput("ncu")
    output.feed(log.read_text())
    output.close()
    assert [(p["kernel"][:13], p["launch"], p["passes"]) for p in output.replay_passes] == [
        ("nvjet_sm90_hs", None, 13), ("cudnn_generat", None, 13), ("triton_poi_fu", None, 13)]


def test_runs_take_nsys_again_in_fresh_processes_and_ncu_once(tmp_path, monkeypatch):
    """--runs 3: nsys runs the same workload three times, each a process of its own writing runs/
    (and its own bench record), then ncu once; only the first run's verification is recorded."""
    from dataclasses import replace

    monkeypatch.setenv("FAKE_MODE", "ok")
    tools = fake_tools(tmp_path, "nsys", "ncu")
    directory = create_directory(tmp_path / "profile")
    m = run_capture(replace(request(tool="both"), runs=3), tools, directory, FAKE_ENV)
    assert m["status"] == "ok" and m["runs"] == 3
    assert [(c["tool"], c["step"], c["exit_code"]) for c in m["commands"]] == [
        ("nsys", "profile", 0), ("nsys", "run", 0), ("nsys", "run", 0), ("ncu", "profile", 0), ("ncu", "export", 0)]
    assert [(v["tool"], v["stage"]) for v in m["verification"]] == [("nsys", "v1"), ("nsys", "v6"), ("ncu", "v1"), ("ncu", "v6")]
    assert {"runs/nsys-2.sqlite", "runs/nsys-3.nsys-rep", "runs/bench-nsys-3.json"} <= set(m["outputs"])
    for run in (2, 3):
        assert (directory / "runs" / f"nsys-{run}.sqlite").is_file() and (directory / "runs" / f"nsys-{run}.log").is_file()
        workload = json.loads((directory / "runs" / f"bench-nsys-{run}.json").read_text())["workload"]
        first = json.loads((directory / "bench-nsys.json").read_text())["workload"]
        assert workload[:-2] == first[:-2] and workload[-1].endswith(f"runs/bench-nsys-{run}.json")  # but --save-as


@pytest.mark.parametrize("runs, tool, cause", [(0, "both", "--runs 0: need 1 to 100 runs"),
                                              (101, "both", "--runs 101: need 1 to 100 runs"),
                                              (2, "ncu", "--runs repeats the nsys run, and --tool ncu takes none")])
def test_runs_out_of_range_or_without_nsys_are_usage_errors(runs, tool, cause):
    with pytest.raises(UsageError) as err:
        api.profile_request(stages=["v1"], tool=tool, runs=runs)
    assert str(err.value).startswith(cause)
