"""jax.profiler's traces (nsprof.parse.jax_trace), on real ones: tests/programs/jax_host_batches.py
traced on an H200 (tests/data/jax/README.md says how), read against the JSON as the standard library
reads it, their steps found, analyzed, and compared."""

from __future__ import annotations

import gzip
import json
import shutil
import statistics
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from nsprof.analyze.host_idle import HOST_WORK
from nsprof.analyze.host_verdict import GPU_BOUND, HOST_WORK_BOUND
from nsprof.analyze.iterations import MARKERS, capture_loop
from nsprof.cli import app
from nsprof.diff.compiled import COMPILED
from nsprof.parse.jax_trace import PERFETTO_NAME, TOOL, XLA_MODULE_RANGE, load_jax_trace
from nsprof.parse.profile import load_file
from nsprof.parse.readers import reader_for

JAX = Path(__file__).resolve().parent / "data" / "jax"
KINETO = Path(__file__).resolve().parent / "data" / "kineto" / "train.json.gz"
RECORD = Path(__file__).resolve().parent.parent / "benchmarks" / "records" / "2026-11-29-h200-jax-fix"
STEPS = 30  # each trace's program ran 30 steps


def events(name: str) -> tuple[dict[int, int], list[dict]]:
    """The trace's GPU processes (pid -> device) and its complete events, by the standard library."""
    with gzip.open(JAX / f"{name}.trace.json.gz", "rt") as stream:
        trace = json.load(stream)["traceEvents"]
    devices = {e["pid"]: int(e["args"]["name"].rsplit(":", 1)[1]) for e in trace
               if e.get("ph") == "M" and e.get("name") == "process_name" and e["args"]["name"].startswith("/device:GPU:")}
    return devices, [e for e in trace if e.get("ph") == "X"]


def analyzed(*args: str) -> dict:
    result = CliRunner().invoke(app, ["analyze", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def sides(tmp_path: Path, **names: str) -> dict[str, Path]:
    """Directories of three runs a side: `a="mlp-a"` holds mlp-a1, mlp-a2 and mlp-a3."""
    made = {}
    for side, stem in names.items():
        made[side] = tmp_path / side
        made[side].mkdir()
        for run in (1, 2, 3):
            shutil.copy(JAX / f"{stem}{run}.trace.json.gz", made[side])
    return made


def diffed(a: Path | str, b: Path | str) -> dict:
    result = CliRunner().invoke(app, ["diff", str(a), str(b), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("name", ["mlp-a1", "mlp-wider1", "resnet50-1"])
def test_every_kernel_copy_and_memset_is_read(name):
    """Counts, nanoseconds, sizes and launch configurations equal the JSON's, table by table."""
    timeline = load_jax_trace(JAX / f"{name}.trace.json.gz")
    devices, complete = events(name)
    gpu = [e for e in complete if e["pid"] in devices]
    memsets = [e for e in gpu if e["name"].startswith("Memset") and "Memset_details" in e["args"]]
    memcpys = [e for e in gpu if e["name"].startswith("Memcpy") and "memcpy_details" in e["args"]]
    copied = {id(e) for e in memsets + memcpys}
    kernels = [e for e in gpu if id(e) not in copied]
    for table, expected in ((timeline.kernels, kernels), (timeline.memcpys, memcpys), (timeline.memsets, memsets)):
        assert len(table) == len(expected)
        assert table["duration_ns"].sum() == sum(round(e["dur"] * 1000) for e in expected)
        assert sorted(table["start_ns"]) == sorted(round(e["ts"] * 1000) for e in expected)
    assert timeline.memcpys["bytes"].sum() == sum(int(e["args"]["memcpy_details"].split("size:")[1].split()[0])
                                                  for e in memcpys)
    gemm = next(e for e in kernels if "kernel_details" in e["args"] and "gemm" in e["name"])
    row = timeline.kernels[timeline.kernels["start_ns"] == round(gemm["ts"] * 1000)].iloc[0]
    details = dict(part.split(":") for part in gemm["args"]["kernel_details"].split())
    assert f"{row['grid_x']},{row['grid_y']},{row['grid_z']}" == details["grid"]
    assert f"{row['block_x']},{row['block_y']},{row['block_z']}" == details["block"]
    assert row["registers_per_thread"] == int(details["regs"])
    assert row["operator"] == f"{gemm['args']['hlo_module']}:{gemm['args']['hlo_op']}"
    assert timeline.tool == TOOL and not any(e["name"].startswith("$") for e in complete)  # trimmed: README


def test_each_execution_of_the_jitted_step_is_an_iteration():
    """XLA's executions of the program's one jitted step are its 30 steps; the loop found in the GPU
    work starts one in each; the program's own StepTraceAnnotation marks the same 30."""
    loop = capture_loop(load_jax_trace(JAX / "mlp-a1.trace.json.gz"))
    assert loop.iterations.source == MARKERS and loop.iterations.count == STEPS
    assert loop.iterations.marker == XLA_MODULE_RANGE.format("jit_train_step")
    assert loop.found is not None and loop.iterations.check.matched == loop.found.count >= STEPS - 1
    marked = capture_loop(load_jax_trace(JAX / "mlp-marked.trace.json.gz")).iterations
    assert marked.marker == "train" and marked.count == STEPS


def test_a_convolutional_network_s_steps_and_verdict_agree_with_its_own_timing():
    """ResNet-50 (8 steps): its 8 executions are the iterations; the steady ones take what the
    program timed itself (24.3 ms a step after the first, the record's resnet.txt), and the GPU,
    busy most of that time, is the bound."""
    timed = [line for line in (RECORD / "resnet.txt").read_text().splitlines() if line.startswith("8 steps")]
    own_ms = float(timed[0].split(": ")[1].split(" ms")[0])
    doc = analyzed(str(JAX / "resnet50-1.trace.json.gz"))
    assert doc["iterations"]["count"] == 8
    assert doc["iterations"]["median_ns"] / 1e6 == pytest.approx(own_ms, rel=0.05)
    assert doc["host"]["verdict"]["verdict"] == GPU_BOUND


def test_the_host_s_own_work_is_the_verdict():
    """The program makes each batch with numpy while the GPU waits (about 1 ms of GPU work in a
    42 ms step, by its plain runs): host-bound by the host's own work; the variant that overlaps the
    GPU's millisecond with that work ran no faster in plain runs (the jax-traces record), as the
    verdict says: the batch, not the wait, holds the GPU up."""
    doc = analyzed(str(JAX / "mlp-a1.trace.json.gz"))
    host = doc["host"]
    assert host["tool"] == TOOL and host["verdict"]["verdict"] == HOST_WORK_BOUND
    assert host["fixes"][0]["cause"] == HOST_WORK and host["verdict"]["evidence"]["busy_pct"] < 10
    assert doc["iterations"]["median_ns"] == pytest.approx(42e6, rel=0.15)


def test_the_fix_the_verdict_names_is_faster_in_plain_runs_and_in_the_diff(tmp_path):
    """The first fix names worker threads (JAX's words, not torch's). The variant that makes its
    batches in 8 threads ran faster in plain runs on the H200 (the record, alternated with the
    program), and `nsprof diff` of three traced runs a side calls the loop faster, by about what
    the plain runs say."""
    fix = analyzed(str(JAX / "mlp-a1.trace.json.gz"))["host"]["fixes"][0]["fix"]
    assert "worker threads" in fix and "torch" not in fix
    plain = [json.loads(line) for line in (RECORD / "runs.jsonl").read_text().splitlines()]
    medians = {variant: statistics.median(run["median_ms"] for run in plain if run["trace"] == "-"
                                          and run["variant"] == variant) for variant in ("sync", "workers")}
    assert medians["workers"] < medians["sync"] / 5
    runs = sides(tmp_path, a="mlp-a", b="mlp-workers")
    loop = diffed(runs["a"], runs["b"])["loop"]
    assert loop["status"] == "faster" and loop["ci_high_pct"] < 0
    assert 100 * (medians["workers"] / medians["sync"] - 1) == pytest.approx(loop["change_pct"], abs=10)


def test_each_read_of_a_value_is_a_wait():
    """float(loss) each step: jax.profiler writes np.asarray(jax.Array) on the main thread for it,
    one per step by the standard library; the host side counts one wait per steady iteration."""
    _, complete = events("mlp-a1")
    reads = [e for e in complete if e["name"] == "np.asarray(jax.Array)"]
    assert len(reads) == STEPS
    host = analyzed(str(JAX / "mlp-a1.trace.json.gz"))["host"]
    assert host["waits"]["count"] == STEPS - 1  # the steady state: from the second step
    assert host["verdict"]["verdict"] == HOST_WORK_BOUND  # a ~1 ms wait each step; the 40 ms batch decides


def test_an_nsys_capture_of_the_program_pairs_kernel_by_kernel():
    """nsprof profile --tool nsys of the same program (another run, -t cuda,nvtx): each steady
    execution of the step runs the same 63 kernels in the same order as in the trace, at about
    the same times, and both say host-bound by the host's own work."""
    sequences, durations = {}, {}
    for name, timeline in (("trace", load_jax_trace(JAX / "mlp-a1.trace.json.gz")),
                           ("nsys", load_file(JAX / "mlp-nsys.sqlite.xz"))):
        steps = timeline.nvtx[timeline.nvtx["range"].astype(str).str.match(r"TSL:XlaModule:#hlo_module=jit_train_step[#,]")]
        starts = np.sort(steps["start_ns"].to_numpy())
        kernels = timeline.kernels.sort_values("start_ns")
        step = np.searchsorted(starts, kernels["start_ns"].to_numpy(), side="right") - 1
        kernels = kernels.assign(step=step)[step >= 1]
        sequences[name] = {tuple(group["kernel"].astype(str)) for _, group in kernels.groupby("step")}
        durations[name] = kernels.assign(position=kernels.groupby("step").cumcount()).groupby("position")["duration_ns"].median()
    assert len(sequences["trace"]) == len(sequences["nsys"]) == 1 and sequences["trace"] == sequences["nsys"]
    assert len(next(iter(sequences["trace"]))) == 63
    assert float((durations["nsys"] / durations["trace"]).median()) == pytest.approx(1.0, abs=0.05)
    verdicts = {analyzed(str(JAX / name))["host"]["verdict"]["verdict"]
                for name in ("mlp-a1.trace.json.gz", "mlp-nsys.sqlite.xz")}
    assert verdicts == {HOST_WORK_BOUND}


def test_the_perfetto_trace_reads_as_the_trace_beside_it(tmp_path):
    """perfetto_trace.json.gz, named by the user, reads as the Chrome-format trace does; in a
    profile directory beside that trace, the directory is still one capture."""
    perfetto = tmp_path / PERFETTO_NAME
    shutil.copy(JAX / "mlp-workers1.trace.json.gz", perfetto)
    assert len(load_file(perfetto).kernels) == len(load_jax_trace(JAX / "mlp-workers1.trace.json.gz").kernels)
    shutil.copy(JAX / "mlp-workers1.trace.json.gz", tmp_path / "vm.trace.json.gz")
    assert analyzed(str(tmp_path))["iterations"]["count"] == STEPS


def test_a_trace_taken_under_nsys_is_refused_naming_why():
    """A trace jax.profiler took while nsys held CUPTI (the H200, nsprof profile --tool nsys of the
    program with its --trace) holds the host's events and no GPU work: refused in one line."""
    result = CliRunner().invoke(app, ["analyze", str(JAX / "mlp-under-nsys.trace.json.gz")])
    said = " ".join(result.output.split())
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "ran its compiled modules 30 times" in said and "CUPTI" in said and "outside nsys and ncu" in said


def test_a_trace_is_told_apart_from_torch_profiler_s_by_its_start():
    """A .trace.json.gz named by the user goes to the reader its contents call for."""
    assert reader_for(JAX / "mlp-a1.trace.json.gz", sniff=False).tool == TOOL
    assert reader_for(KINETO, sniff=False).tool == "torch.profiler"


def test_unchanged_runs_call_nothing_and_a_planted_change_is_found(tmp_path):
    """Two unchanged runs, one a side and three a side: no kernel faster or slower. The first layer
    made twice the work (--wider-input): its kernels run in other launch configurations (compiled
    differently, never called), and the executions of the step take more GPU time, found with
    their interval, one run a side and three."""
    runs = sides(tmp_path, a="mlp-a", b="mlp-b", wider="mlp-wider")
    for a, b in ((JAX / "mlp-a1.trace.json.gz", JAX / "mlp-b1.trace.json.gz"), (runs["a"], runs["b"])):
        kernels = diffed(a, b)["kernels"]
        assert kernels and not [row for row in kernels if row["status"] in ("faster", "slower")]
    for a, b in ((JAX / "mlp-a1.trace.json.gz", JAX / "mlp-wider1.trace.json.gz"), (runs["a"], runs["wider"])):
        doc = diffed(a, b)
        step = next(row for row in doc["ranges"] if row["range"] == XLA_MODULE_RANGE.format("jit_train_step"))
        assert step["status"] == "slower" and step["ci_low_pct"] > 0
        assert not [row for row in doc["kernels"] if row["status"] in ("faster", "slower")]
        assert any(row["status"] == COMPILED and row["compiled"].startswith("other launch configurations")
                   for row in doc["kernels"])


def ops_by_kernel(name: str) -> dict[str, set[str]]:
    """Per kernel name, the ops of the program's step that launched it, by the standard library."""
    devices, complete = events(name)
    ops: dict[str, set[str]] = {}
    for event in complete:
        if event["pid"] in devices and event["args"].get("hlo_module") == "jit_train_step" and event["args"].get("hlo_op"):
            ops.setdefault(event["name"], set()).add(event["args"]["hlo_op"])
    return ops


def test_two_runs_that_compiled_differently_are_said_so_not_called():
    """Two unchanged runs of a JAX ResNet-50 on one H200: XLA's autotuner kept other convolution
    algorithms in each (cuDNN's implicit GEMM for an op in one, cuBLAS's GEMM in the other). Every
    kernel the two traces launch from other ops (read by the standard library) is `compiled
    differently`, naming what differed; none is faster or slower; the autotuner's own launches are
    left out and counted."""
    doc = diffed(JAX / "resnet50-1.trace.json.gz", JAX / "resnet50-2.trace.json.gz")
    rows = {row["kernel"]: row for row in doc["kernels"]}
    a, b = ops_by_kernel("resnet50-1"), ops_by_kernel("resnet50-2")
    moved = {name for name in a.keys() & b.keys() if a[name] != b[name]}
    assert len(moved) >= 3
    for name in moved:
        assert rows[name]["status"] == COMPILED and "other ops" in rows[name]["compiled"]
    assert not [row for row in doc["kernels"] if row["status"] in ("faster", "slower")]
    assert any("XLA's autotuning" in warning for warning in doc["warnings"])
    summary = CliRunner().invoke(app, ["diff", str(JAX / "resnet50-1.trace.json.gz"), str(JAX / "resnet50-2.trace.json.gz")])
    assert "compiled differently" in " ".join(summary.output.split()[:200])


def test_a_chrome_trace_of_neither_profiler_is_refused(tmp_path):
    other = tmp_path / "other.trace.json.gz"
    with gzip.open(other, "wt") as stream:
        json.dump({"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 1, "name": "x"}]}, stream)
    result = CliRunner().invoke(app, ["analyze", str(other)])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "a Chrome trace, but not" in " ".join(result.output.split())


def test_the_manual_shows_what_the_commands_print():
    """docs/jax.md's blocks are the start of the commands' real output at 100 columns (an error's
    line, on stderr, too)."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "jax.md").read_text()
    for block in page.split("```\n$ nsprof ")[1:]:
        command, shown = block.split("\n```", 1)[0].split("\n", 1)
        argv = command.split()
        printed = CliRunner().invoke(app, argv, env={"COLUMNS": "100"}).output
        assert printed.startswith(shown + "\n"), command


def test_the_profile_directory_jax_writes_is_one_capture(tmp_path):
    """DIR/plugins/profile/<time>/ as jax.profiler leaves it (the trace, the Perfetto trace, XPlane)
    is read as the one capture it holds; DIR itself says which to pass."""
    run = tmp_path / "plugins" / "profile" / "2026_11_29_06_54_33"
    run.mkdir(parents=True)
    shutil.copy(JAX / "mlp-a1.trace.json.gz", run / "vm.trace.json.gz")
    shutil.copy(JAX / "mlp-a1.trace.json.gz", run / "perfetto_trace.json.gz")  # read by neither reader's sniff
    (run / "vm.xplane.pb").write_bytes(b"\x0a\x00")
    assert analyzed(str(run))["iterations"]["count"] == STEPS
    whole = CliRunner().invoke(app, ["analyze", str(tmp_path)])
    assert whole.exit_code != 0 and str(run) in "".join(whole.output.split())  # named, however the line wrapped


@pytest.mark.parametrize("damage", ["truncated", "no work", "negative duration", "start at 1e300", "grid past 32 bits"])
def test_a_damaged_trace_is_one_line(damage, tmp_path):
    """Cut short, stripped of every event but its metadata, or with an event that ends before it
    starts: one line that names the problem and how to trace again, exit 1, no traceback."""
    data = gzip.decompress((JAX / "mlp-a1.trace.json.gz").read_bytes())
    damaged = tmp_path / "damaged.trace.json.gz"
    if damage == "truncated":
        damaged.write_bytes(gzip.compress(data[: len(data) // 2]))
    else:
        trace = json.loads(data)
        if damage == "no work":
            trace["traceEvents"] = [event for event in trace["traceEvents"] if event.get("ph") == "M"]
        elif damage == "negative duration":
            next(event for event in trace["traceEvents"] if event.get("ph") == "X")["dur"] = -1
        elif damage == "start at 1e300":
            next(event for event in trace["traceEvents"] if event.get("ph") == "X")["ts"] = 1e300
        else:
            kernel = next(event for event in trace["traceEvents"] if "kernel_details" in event.get("args", {}))
            kernel["args"]["kernel_details"] = kernel["args"]["kernel_details"].replace("grid:", "grid:4294967296")
        damaged.write_bytes(gzip.compress(json.dumps(trace).encode()))
    result = CliRunner().invoke(app, ["analyze", str(damaged)])
    said = " ".join(result.output.split())
    assert result.exit_code == 1 and "Traceback" not in result.output and said.startswith(f"error: {damaged}: ")
    assert "Trace again with jax.profiler" in said
