"""jax.profiler's traces (nsprof.parse.jax_trace), on real ones: tests/programs/jax_host_batches.py
traced on an H200 (tests/data/jax/README.md says how), read against the JSON as the standard library
reads it, their steps found, analyzed, and compared."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nsprof.analyze.host_idle import HOST_WORK
from nsprof.analyze.host_verdict import HOST_WORK_BOUND
from nsprof.analyze.iterations import MARKERS, capture_loop
from nsprof.cli import app
from nsprof.parse.jax_trace import TOOL, XLA_MODULE_RANGE, load_jax_trace
from nsprof.parse.readers import reader_for

JAX = Path(__file__).resolve().parent / "data" / "jax"
KINETO = Path(__file__).resolve().parent / "data" / "kineto" / "train.json.gz"
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


@pytest.mark.parametrize("name", ["mlp-a1", "mlp-wider1"])
def test_every_kernel_copy_and_memset_is_read(name):
    """Counts, nanoseconds, sizes and launch configurations equal the JSON's, table by table."""
    timeline = load_jax_trace(JAX / f"{name}.trace.json.gz")
    devices, complete = events(name)
    gpu = [e for e in complete if e["pid"] in devices]
    memsets = [e for e in gpu if e["name"].startswith("Memset") and "Memset_details" in e["args"]]
    memcpys = [e for e in gpu if e["name"].startswith("Memcpy") and "memcpy_details" in e["args"]]
    kernels = [e for e in gpu if e not in memsets and e not in memcpys]
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


def test_the_host_s_own_work_is_the_verdict():
    """The program makes each batch with numpy while the GPU waits (about 1 ms of GPU work in a
    42 ms step, by its plain runs): host-bound by the host's own work; the variant that overlaps the
    GPU's millisecond with that work ran no faster in plain runs (the record), as the verdict says."""
    doc = analyzed(str(JAX / "mlp-a1.trace.json.gz"))
    host = doc["host"]
    assert host["tool"] == TOOL and host["verdict"]["verdict"] == HOST_WORK_BOUND
    assert host["fixes"][0]["cause"] == HOST_WORK and host["verdict"]["evidence"]["busy_pct"] < 10
    assert doc["iterations"]["median_ns"] == pytest.approx(42e6, rel=0.15)


def test_a_trace_is_told_apart_from_torch_profiler_s_by_its_start():
    """A .trace.json.gz named by the user goes to the reader its contents call for."""
    assert reader_for(JAX / "mlp-a1.trace.json.gz", sniff=False).tool == TOOL
    assert reader_for(KINETO, sniff=False).tool == "torch.profiler"


def test_unchanged_runs_call_nothing_and_a_planted_change_is_found(tmp_path):
    """Two unchanged runs, one a side and three a side: no kernel faster or slower. The first layer
    made twice the work (--wider-input): its products are slower, with their intervals."""
    one = CliRunner().invoke(app, ["diff", str(JAX / "mlp-a1.trace.json.gz"), str(JAX / "mlp-b1.trace.json.gz"),
                                   "--json"])
    assert one.exit_code == 0, one.output
    sides = {}
    for side in "ab":
        sides[side] = tmp_path / side
        sides[side].mkdir()
        for run in (1, 2, 3):
            shutil.copy(JAX / f"mlp-{side}{run}.trace.json.gz", sides[side])
    three = CliRunner().invoke(app, ["diff", str(sides["a"]), str(sides["b"]), "--json"])
    assert three.exit_code == 0, three.output
    for result in (one, three):
        kernels = json.loads(result.stdout)["kernels"]
        assert kernels and not [row for row in kernels if row["status"] in ("faster", "slower")]
    planted = CliRunner().invoke(app, ["diff", str(JAX / "mlp-a1.trace.json.gz"), str(JAX / "mlp-wider1.trace.json.gz"),
                                       "--json"])
    slower = [row for row in json.loads(planted.stdout)["kernels"] if row["status"] == "slower"]
    assert slower and all(row["ci_low_pct"] > 0 for row in slower)
    assert any("gemm" in row["kernel"] for row in slower)


def test_a_chrome_trace_of_neither_profiler_is_refused(tmp_path):
    other = tmp_path / "other.trace.json.gz"
    with gzip.open(other, "wt") as stream:
        json.dump({"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 1, "name": "x"}]}, stream)
    result = CliRunner().invoke(app, ["analyze", str(other)])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "a Chrome trace, but not" in " ".join(result.output.split())


def test_the_manual_shows_what_the_commands_print():
    """docs/jax.md's blocks are the start of the commands' real output at 100 columns."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "jax.md").read_text()
    for block in page.split("```\n$ nsprof ")[1:]:
        command, shown = block.split("\n```", 1)[0].split("\n", 1)
        argv = command.split()
        printed = CliRunner().invoke(app, argv, env={"COLUMNS": "100"}).stdout
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


@pytest.mark.parametrize("damage", ["truncated", "no work", "negative duration"])
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
        else:
            next(event for event in trace["traceEvents"] if event.get("ph") == "X")["dur"] = -1
        damaged.write_bytes(gzip.compress(json.dumps(trace).encode()))
    result = CliRunner().invoke(app, ["analyze", str(damaged)])
    said = " ".join(result.output.split())
    assert result.exit_code == 1 and "Traceback" not in result.output and said.startswith(f"error: {damaged}: ")
    assert "Trace again with jax.profiler" in said
