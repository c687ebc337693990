"""Programs captured as users capture them: `nsys profile python3 PROG.py` with nsys's defaults and
no NVTX range (tests/programs/loop_*.py, benchmarks/gpu/loops_h200.sh; the record with the plain
timings of each program and its fixed variant is
benchmarks/records/2026-11-29-h200-found-loops/h200-found-loops.md). nsprof finds each program's
loop in its GPU work: as many iterations as the program ran (its first may fall to start-up), the
verdict the same program gets with its steps marked, and a first fix that its fixed variant, which
applies it, confirms: faster per iteration in its own capture. A capture nsys failed to process is
refused in every command."""

from __future__ import annotations

import itertools
import json
import re
import shlex
import sqlite3
import statistics
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nsprof.analyze.host_idle import HOST_WORK, LAUNCHING
from nsprof.analyze.host_verdict import GPU_BOUND, HOST_BOUND, HOST_WORK_BOUND
from nsprof.analyze.iterations import FOUND, HIGH, MARKERS
from nsprof.analyze.phases import NOT_RUNNING, SAMPLED_PARTS
from nsprof.cli import app
from nsprof.parse.nsys_sqlite import load_nsys

LOOPS = Path(__file__).resolve().parent / "data" / "loops"
# capture -> (iterations the program ran, the verdict, the first fix's cause); the programs' own counts
PROGRAMS = {
    "transformer-train": (60, HOST_BOUND, LAUNCHING),  # 60 training steps, .item() each: many tiny kernels
    "transformer-train-graphs": (60, GPU_BOUND, None),  # the same step replayed as one CUDA graph
    "dataloader": (30, HOST_WORK_BOUND, HOST_WORK),  # DataLoader(num_workers=0), numpy augmentation
    "cupy-heat": (300, HOST_BOUND, LAUNCHING),  # 14 small CuPy kernels a step
    "cupy-heat-fused": (300, None, None),  # the step as one kernel
    "llm-generate": (256, HOST_BOUND, LAUNCHING),  # 4 generate calls of 64 forward passes, eager
}
# the fixed variant of each program, and the cause of idle time the fix removes
FIXES = {"transformer-train": ("transformer-train-graphs", LAUNCHING), "dataloader": ("dataloader-w8", HOST_WORK),
         "cupy-heat": ("cupy-heat-fused", LAUNCHING), "llm-generate": ("llm-generate-static", LAUNCHING)}


def analyzed(name: str) -> dict:
    """`analyze --json` of tests/data/loops/NAME.sqlite (or of NAME, a file there with its suffix)."""
    result = CliRunner().invoke(app, ["analyze", str(LOOPS / (name if "." in name else f"{name}.sqlite")), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_loop_is_found_without_markers(name):
    ran, verdict, first_fix = PROGRAMS[name]
    doc = analyzed(name)
    iterations = doc["iterations"]
    assert iterations["source"] == FOUND and iterations["confidence"] == HIGH
    assert ran - 2 <= iterations["count"] <= ran
    assert doc["host"]["iterations"]["source"] == FOUND  # the host side judged the loop's steady state
    assert [phase["name"] for phase in doc["phases"]][:2] == ["start-up", "loop"]
    if verdict:
        assert doc["host"]["verdict"]["verdict"] == verdict
    if first_fix:
        assert doc["host"]["fixes"][0]["cause"] == first_fix


@pytest.mark.parametrize("name", ["transformer-train", "dataloader", "cupy-heat", "llm-generate"])
def test_marked_and_unmarked_runs_agree(name):
    """The same program run with a `step` range around each iteration: the markers decide there, the
    loop found in its GPU work holds one start in each marked step and takes as long an iteration,
    and the unmarked run's found loop gets the marked run's verdict and nearly its iteration time
    (another run, on another lease of the machine for some: a host-bound step varies more)."""
    marked, unmarked = analyzed(f"{name}-marked"), analyzed(name)
    iterations = marked["iterations"]
    assert iterations["source"] == MARKERS and iterations["count"] == PROGRAMS[name][0]
    check = iterations["check"]
    assert check["found"] == check["matched"] >= check["markers"] - 1
    assert marked["loop"]["found"]["median_ns"] == pytest.approx(iterations["median_ns"], rel=0.05)
    assert unmarked["host"]["verdict"]["verdict"] == marked["host"]["verdict"]["verdict"]
    assert unmarked["iterations"]["median_ns"] == pytest.approx(iterations["median_ns"], rel=0.25)


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_fix_named_first_is_the_one_that_made_it_faster(name):
    """The first fix for each program is the cause its fixed variant removes, and that variant's
    iterations take less than half as long in its own capture (the plain runs in the record agree)."""
    fixed, cause = FIXES[name]
    slow, fast = analyzed(name), analyzed(fixed)
    assert slow["host"]["fixes"][0]["cause"] == cause
    assert fast["iterations"]["median_ns"] < 0.5 * slow["iterations"]["median_ns"]
    idle = {doc_name: doc["host"]["devices"][0]["idle_causes"].get(cause, 0) / doc["iterations"]["count"]
            for doc_name, doc in (("slow", slow), ("fast", fast))}
    assert idle["fast"] < idle["slow"]


def test_a_decode_compiled_to_cuda_graphs_is_found_across_its_calls():
    """transformers' static cache, generate compiling the decode step (torch.compile, reduce-overhead):
    each decode step replays a CUDA graph, traced whole by nsys's defaults, and torch.compile's graph
    trees alternate two graphs from one generate call to the next. The loop is found over all four
    calls, one iteration per graph launch (the last call's last two fold into its last iteration),
    and the compilation before it is start-up, its host time told apart by the samples (inductor's
    compile workers are other processes: the main thread waits, not running)."""
    doc = analyzed("llm-generate-static")
    launches = len(load_nsys(LOOPS / "llm-generate-static.sqlite").graphs)
    iterations = doc["iterations"]
    assert iterations["source"] == FOUND and iterations["confidence"] == HIGH
    assert launches - 3 <= iterations["count"] <= launches
    startup = doc["phases"][0]
    parts = {part["part"]: part["host_ns"] for part in startup["parts"]}
    assert startup["name"] == "start-up" and parts["compiling"] > 0 and parts[NOT_RUNNING] > 0
    assert startup["span_ns"] > 5 * doc["phases"][1]["span_ns"]  # seconds of compiling before a 0.5 s loop


def test_a_jax_loop_is_marked_by_its_xla_module_executions():
    """The JAX loop under `nsprof profile`'s nsys options (-t cuda,nvtx: its kernels kept, though nsys
    reported an error), with no range of the program's own: XLA's range around each execution of the
    jitted step marks the 30 steps, and the loop found in the GPU work starts one in each. The run
    with the program's own `step` ranges gets the same verdict."""
    unmarked, marked = analyzed("jax-mlp"), analyzed("jax-mlp-marked")
    iterations = unmarked["iterations"]
    assert iterations["source"] == MARKERS and "XlaModule" in iterations["marker"] and iterations["count"] == 30
    assert iterations["check"]["matched"] == iterations["check"]["found"] >= 29
    assert marked["iterations"]["marker"] == "train:step" and marked["iterations"]["count"] == 30
    assert unmarked["host"]["verdict"]["verdict"] == marked["host"]["verdict"]["verdict"]
    assert unmarked["processing_errors"]  # said, not hidden


def test_a_torch_profiler_trace_of_the_loop_gets_the_nsys_capture_s_verdict():
    """The transformer's loop traced by torch.profiler (30 steps; the optimizer's step marks each)
    and captured by nsys with its defaults and no markers: one verdict and one first fix."""
    trace, capture = analyzed("transformer-train-kineto.json.gz"), analyzed("transformer-train")
    assert trace["iterations"]["source"] == MARKERS and trace["iterations"]["count"] == 30
    assert trace["loop"]["found"]["count"] >= 28
    assert trace["host"]["verdict"]["verdict"] == capture["host"]["verdict"]["verdict"] == HOST_BOUND
    assert trace["host"]["fixes"][0]["cause"] == capture["host"]["fixes"][0]["cause"] == LAUNCHING


SAMPLED = ("transformer-train", "transformer-train-graphs", "dataloader", "dataloader-w8", "cupy-heat", "cupy-heat-fused",
           "softmax-bench", "llm-generate", "llm-generate-static", "jax-mlp")  # the captures that hold CPU samples


@pytest.mark.parametrize("name", SAMPLED)
def test_start_up_parts_are_the_samples_behind_them(name):
    """Start-up's host time outside CUDA calls is told apart by the main thread's CPU samples: here
    counted by plain SQL over nsys's tables, each part is its samples times the sampling interval
    (compiling: chains in or through Triton, nvrtc, LLVM or XLA's compiler; importing: through Python's import or the
    dynamic loader), and all sampled parts together are that thread's samples but those in CUDA
    calls."""
    sqlite = LOOPS / f"{name}.sqlite"
    startup = next(phase for phase in analyzed(name)["phases"] if phase["name"] == "start-up")
    parts = {part["part"]: part["host_ns"] for part in startup["parts"]}
    low, high = startup["start_ns"], startup["end_ns"]
    with sqlite3.connect(sqlite) as conn:
        pid = conn.execute("SELECT globalPid / 16777216 % 16777216 FROM CUPTI_ACTIVITY_KIND_KERNEL "
                           "GROUP BY 1 ORDER BY count(*) DESC LIMIT 1").fetchone()[0]
        thread, count = conn.execute(
            "SELECT globalTid, count(*) FROM COMPOSITE_EVENTS WHERE start >= ? AND start < ? "
            "AND globalTid / 16777216 % 16777216 = ? GROUP BY 1 ORDER BY 2 DESC LIMIT 1", (low, high, pid)).fetchone()
        times = [row[0] for row in conn.execute("SELECT start FROM COMPOSITE_EVENTS WHERE globalTid = ? ORDER BY 1",
                                                (thread,))]

        def through(condition: str) -> int:
            return conn.execute(
                "SELECT count(DISTINCT e.id) FROM COMPOSITE_EVENTS e JOIN SAMPLING_CALLCHAINS c ON c.id = e.id "
                "JOIN StringIds m ON m.id = c.module JOIN StringIds f ON f.id = c.symbol "
                f"WHERE e.globalTid = ? AND e.start >= ? AND e.start < ? AND ({condition})",
                (thread, low, high)).fetchone()[0]

        compiler = ("(m.value LIKE '%libtriton%' OR m.value LIKE '%nvrtc%' OR f.value LIKE '%llvm::%' OR "
                    "f.value LIKE '%mlir::%' OR f.value LIKE '%xla::gpu::Compile%')")  # XLA's compiler is in jaxlib
        in_compiler, through_compiler = through(f"c.stackDepth = 0 AND {compiler}"), through(compiler)
        importing = through("f.value LIKE 'PyImport_ImportModule%' OR f.value = 'import_find_and_load' OR "
                            "f.value LIKE '_imp_create_dynamic%' OR f.value LIKE 'dlopen%' OR "
                            "f.value LIKE '_dl_map_object%'")
        cuda = "(m.value LIKE '%libcuda.%' OR m.value LIKE '%libcudart%' OR m.value LIKE '%libcupti%')"
        in_cuda, through_cuda = through(f"c.stackDepth = 0 AND {cuda}"), through(cuda)
    interval = statistics.median(b - a for a, b in itertools.pairwise(times))
    sampled = sum(ns for part, ns in parts.items() if part in SAMPLED_PARTS.values())
    # a sample whose leaf is in CUDA is in a call; one with CUDA deeper in its chain may be (the rules decide)
    assert (count - through_cuda) * interval <= sampled <= (count - in_cuda) * interval
    # compiling: at least the samples in a compiler's own code, at most those with one anywhere in the chain
    assert in_compiler * interval <= parts.get("compiling", 0) <= through_compiler * interval
    # importing: every chain through an import, but those in CUDA calls (timed as calls)
    assert parts.get("importing modules", 0) == pytest.approx(importing * interval, rel=0.1, abs=2 * interval)
    calls = sum(ns for part, ns in parts.items() if part not in SAMPLED_PARTS.values() and part != NOT_RUNNING)
    assert sum(parts.values()) == max(startup["span_ns"], calls)  # the calls, then the rest told apart


def test_a_benchmark_under_do_bench_is_gpu_bound_while_timing():
    """Triton's fused softmax against torch.softmax under do_bench at four sizes, compiling between
    them: the loop found is one size's timed calls (a cache flush, then the kernel), GPU-bound."""
    doc = analyzed("softmax-bench")
    assert doc["iterations"]["operations"] == 2 and doc["iterations"]["count"] >= 500
    assert doc["host"]["verdict"]["verdict"] == GPU_BOUND


@pytest.mark.parametrize("argv", [["analyze", "{}"], ["analyze", "{}", "--json"], ["explain", "gpu-idle", "--from", "{}"],
                                  ["diff", "{}", "{}"], ["timeline", "{}", "--out", "{out}/t.png"],
                                  ["history", "add", "{}", "--db", "{out}/h.sqlite"],
                                  ["noise", "{}", "{}", "--out", "{out}/n.json"]])
def test_a_capture_nsys_failed_to_process_is_refused(argv, tmp_path):
    """A JAX program under nsys 2025.3.1's defaults: nsys logged ProcessEventsError rows and kept no
    kernel. Every command refuses it in one line that says so and how to capture again."""
    lost = str(LOOPS / "jax-mlp-lost.sqlite")
    result = CliRunner().invoke(app, [arg.format(lost, out=tmp_path) for arg in argv], env={"COLUMNS": "100"})
    assert result.exit_code == 1, result.output
    said = " ".join(result.output.split())
    assert "lost its GPU work" in said and "ProcessEventsError" in said and "-t cuda,nvtx" in said
    assert "Traceback" not in result.output
    assert not any((tmp_path / name).exists() for name in ("t.png", "h.sqlite", "n.json"))


def test_the_manual_shows_what_analyze_prints():
    """docs/loops.md's outputs are the commands' own at 100 columns: the verdict's first lines, the
    loop's lines further down the same output, and the refusal of the capture nsys failed to process."""
    from manual import page

    blocks = re.findall(r"```\n(.*?)\n```", page("loops.md"), re.DOTALL)
    (verdict, loop, refusal) = blocks
    for block, starts in ((verdict, True), (refusal, False)):
        command, shown = block.split("\n", 1)
        result = CliRunner().invoke(app, shlex.split(command.removeprefix("$ nsprof ")), env={"COLUMNS": "100"})
        if starts:
            assert result.stdout.startswith(shown + "\n")
            assert loop + "\n" in result.stdout
        else:
            assert result.exit_code == 1 and result.output.strip() == shown


def test_the_readme_shows_what_analyze_prints_of_a_capture_with_no_markers():
    from manual import README

    command, shown = re.search(r"```\n(\$ nsprof analyze tests/data/loops/[^\n]*)\n(.*?)\n```", README, re.DOTALL).groups()
    result = CliRunner().invoke(app, shlex.split(command.removeprefix("$ nsprof ")), env={"COLUMNS": "100"})
    assert result.exit_code == 0 and result.stdout.startswith(shown + "\n")


def test_diff_leads_with_the_loop():
    """A slow program against its fix: the diff's first sentence is the loop, an iteration's time A ->
    B with its interval over the iterations; one run a side, it is shown and not called (iteration
    times move more between runs than within one: see the next test)."""
    result = CliRunner().invoke(app, ["diff", str(LOOPS / "dataloader.sqlite"), str(LOOPS / "dataloader-w8.sqlite"),
                                      "--json"])
    assert result.exit_code == 0, result.output
    loop = json.loads(result.stdout)["loop"]
    assert loop["a_source"] == loop["b_source"] == FOUND and loop["status"] == "not called"
    assert loop["change_pct"] < -70 and loop["ci_high_pct"] < 0
    assert loop["b_median_ns"] == pytest.approx(analyzed("dataloader-w8")["iterations"]["median_ns"], rel=0.01)
    assert loop["a_startup_ns"] == analyzed("dataloader")["phases"][0]["span_ns"]
    shown = CliRunner().invoke(app, ["diff", str(LOOPS / "dataloader.sqlite"), str(LOOPS / "dataloader-w8.sqlite")],
                               env={"COLUMNS": "100"})
    first = " ".join(shown.stdout.split("\n", 1)[1].split())
    assert first.startswith("Loop: an iteration 46.4 ms -> 8.88 ms (-80.9%, 95% interval")


def test_an_unchanged_loop_is_not_called_from_one_run_a_side():
    """Two unchanged runs of a training step: their iterations differ by 12.7% with an interval that
    excludes 0, so one run a side cannot call a loop's change."""
    data = Path(__file__).resolve().parent / "data" / "diff-pairs"
    result = CliRunner().invoke(app, ["diff", str(data / "train-a.sqlite"), str(data / "train-b.sqlite"), "--json"])
    loop = json.loads(result.stdout)["loop"]
    assert loop["ci_low_pct"] > 0 and loop["status"] == "not called"


def test_across_runs_the_loop_is_called_by_its_runs():
    """Runs a side (nsprof profile --runs): each run's median iteration compared; the capture's
    planted change (one kernel 5% slower in a step mostly of host work) leaves the loop the same."""
    runs = Path(__file__).resolve().parent / "data" / "runs"
    result = CliRunner().invoke(app, ["diff", str(runs / "ab-base"), str(runs / "ab-slower"), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    loop = doc["loop"]
    assert loop["status"] in ("same", "faster", "slower") and loop["a_source"] == MARKERS
    assert (loop["status"] == "same") == (loop["ci_low_pct"] <= 0 <= loop["ci_high_pct"] or abs(loop["change_pct"]) < 2)


def test_the_timeline_draws_the_phases_and_iterations():
    """`timeline` of a capture with no markers: a lane of the iterations found (the warm-up ones
    apart) and a lane of the phases, from the loop analyze finds."""
    from nsprof.render.timeline import timeline_figure
    from nsprof.timeline import load_timeline

    timeline = load_timeline(LOOPS / "transformer-train.sqlite", None, "all")
    assert timeline.loop is not None and timeline.loop.iterations.count == analyzed("transformer-train")["iterations"]["count"]
    assert [phase.name for phase in timeline.phases] == ["start-up", "loop", "tail"]
    figure = timeline_figure(timeline.events, timeline.ranges, timeline.window, timeline.capture[0], "t",
                             iterations=timeline.loop.iterations, phases=timeline.phases)
    lanes = [label.get_text() for label in figure.axes[0].get_yticklabels()]
    assert lanes[:2] == ["phases", "iterations (found)"]


def test_a_capture_that_kept_its_kernels_through_processing_errors_says_so_first(tmp_path):
    """nsys logged errors while processing a capture but kept its kernels (as `-t cuda,nvtx` does a
    JAX program's): analyze opens with a warning naming them and how to capture again, and --json
    lists them."""
    import shutil
    import sqlite3

    damaged = tmp_path / "errors.sqlite"
    shutil.copyfile(LOOPS / "cupy-heat.sqlite", damaged)
    error = ("Error when processing events: Source ID=\nType=ErrorInformation (18)\n ProcessEventsError (4005)\n"
             "std::exception::what: unordered_map::at\n")
    with sqlite3.connect(damaged) as conn:
        conn.execute("INSERT INTO DIAGNOSTIC_EVENT (timestamp, timestampType, source, severity, text, globalPid) "
                     "VALUES (0, 0, 3, 2, ?, 0)", (error,))
    shown = CliRunner().invoke(app, ["analyze", str(damaged)], env={"COLUMNS": "100"})
    assert shown.exit_code == 0, shown.output
    first = " ".join(shown.stdout.split("Verdict:", 1)[0].split())
    assert first.startswith("Warning: nsys reported 1 error while processing this capture (ProcessEventsError: "
                            "unordered_map::at)") and "-t cuda,nvtx" in first
    doc = json.loads(CliRunner().invoke(app, ["analyze", str(damaged), "--json"]).stdout)
    assert doc["processing_errors"] == ["ProcessEventsError: unordered_map::at"]
    assert json.loads(CliRunner().invoke(app, ["analyze", str(LOOPS / "cupy-heat.sqlite"), "--json"]).stdout)[
        "processing_errors"] == []


def test_history_keeps_the_time_per_iteration_of_a_loop_found(tmp_path):
    """`history add` of the unmarked transformer and its graphed fix: each entry keeps the time per
    iteration of the loop found in its capture, analyze's own figure (its window over its steady
    iterations)."""
    from nsprof.history.store import measurements, opened

    db = tmp_path / "history.sqlite"
    for name, commit in (("transformer-train", "a1"), ("transformer-train-graphs", "b2")):
        result = CliRunner().invoke(app, ["history", "add", str(LOOPS / f"{name}.sqlite"), "--db", str(db),
                                          "--commit", commit, "--branch", "main"])
        assert result.exit_code == 0, result.output
    with opened(db) as conn:
        stored = measurements(conn)
    kept = stored[(stored["kind"] == "host") & (stored["name"] == "time per iteration")].set_index("entry")["median_ns"]
    for entry, name in ((1, "transformer-train"), (2, "transformer-train-graphs")):
        host = analyzed(name)["host"]
        assert host["iterations"]["source"] == FOUND
        assert kept[entry] == host["window"]["span_ns"] / host["iterations"]["count"]
    assert kept[2] < 0.5 * kept[1]


def test_explain_and_the_report_tell_the_loop(tmp_path):
    """`explain gpu-idle` and the report of a capture with no markers say what analyze says of its
    loop, phases and host, and give each fix's saving per iteration."""
    capture = str(LOOPS / "cupy-heat.sqlite")
    said = CliRunner().invoke(app, ["explain", "gpu-idle", "--from", capture], env={"COLUMNS": "100"})
    assert said.exit_code == 0, said.output
    text = " ".join(said.stdout.split())
    host = analyzed("cupy-heat")["host"]
    first = host["fixes"][0]
    each = first["saving_ns"] / host["iterations"]["count"] / 1e6
    assert "Loop: 299 iterations found in the GPU work" in text and "Phases: start-up" in text
    assert f"Fix {first['cause']} (saves at most {first['saving_ns'] / 1e6:,.2f} ms, {each:,.3f} ms an iteration" in text
    assert "Host in the GPU's idle time (" in text
    written = CliRunner().invoke(app, ["report", str(tmp_path), "--from", capture])
    assert written.exit_code == 0, written.output
    report = (tmp_path / "cupy-heat" / "report.md").read_text()
    assert "## Why the GPU waits: cupy-heat" in report and "Loop: 299 iterations found in the GPU work" in report
    assert "| # | what to fix | saving us | us an iteration |" in report
