"""Programs captured as users capture them: `nsys profile python3 PROG.py` with nsys's defaults and
no NVTX range (tests/programs/loop_*.py, benchmarks/gpu/loops_h200.sh; the record with the plain
timings of each program and its fixed variant is
benchmarks/records/2026-11-29-h200-found-loops/h200-found-loops.md). nsprof finds each program's
loop in its GPU work: as many iterations as the program ran (its first may fall to start-up), the
verdict the same program gets with its steps marked, and a first fix that its fixed variant, which
applies it, confirms: faster per iteration in its own capture. A capture nsys failed to process is
refused in every command."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nsprof.analyze.host_idle import HOST_WORK, LAUNCHING
from nsprof.analyze.host_verdict import GPU_BOUND, HOST_BOUND, HOST_WORK_BOUND
from nsprof.analyze.iterations import FOUND, HIGH, MARKERS
from nsprof.cli import app

LOOPS = Path(__file__).resolve().parent / "data" / "loops"
# capture -> (iterations the program ran, the verdict, the first fix's cause); the programs' own counts
PROGRAMS = {
    "transformer-train": (60, HOST_BOUND, LAUNCHING),  # 60 training steps, .item() each: many tiny kernels
    "transformer-train-graphs": (60, GPU_BOUND, None),  # the same step replayed as one CUDA graph
    "dataloader": (30, HOST_WORK_BOUND, HOST_WORK),  # DataLoader(num_workers=0), numpy augmentation
    "cupy-heat": (300, HOST_BOUND, LAUNCHING),  # 14 small CuPy kernels a step
    "cupy-heat-fused": (300, None, None),  # the step as one kernel
}
# the fixed variant of each program, and the cause of idle time the fix removes
FIXES = {"transformer-train": ("transformer-train-graphs", LAUNCHING), "dataloader": ("dataloader-w8", HOST_WORK),
         "cupy-heat": ("cupy-heat-fused", LAUNCHING)}


def analyzed(name: str) -> dict:
    result = CliRunner().invoke(app, ["analyze", str(LOOPS / f"{name}.sqlite"), "--json"])
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


@pytest.mark.parametrize("name", ["transformer-train"])
def test_marked_and_unmarked_runs_agree(name):
    """The same program run with a `step` range around each iteration: the markers decide there, the
    loop found in its GPU work holds one start in each marked step, and the unmarked run's found
    loop gets the marked run's verdict and iteration time."""
    marked, unmarked = analyzed(f"{name}-marked"), analyzed(name)
    iterations = marked["iterations"]
    assert iterations["source"] == MARKERS and iterations["count"] == PROGRAMS[name][0]
    check = iterations["check"]
    assert check["found"] == check["matched"] >= check["markers"] - 1
    assert unmarked["host"]["verdict"]["verdict"] == marked["host"]["verdict"]["verdict"]
    assert unmarked["iterations"]["median_ns"] == pytest.approx(iterations["median_ns"], rel=0.1)


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


def test_a_benchmark_under_do_bench_is_gpu_bound_while_timing():
    """Triton's fused softmax against torch.softmax under do_bench at four sizes, compiling between
    them: the loop found is one size's timed calls (a cache flush, then the kernel), GPU-bound."""
    doc = analyzed("softmax-bench")
    assert doc["iterations"]["operations"] == 2 and doc["iterations"]["count"] >= 500
    assert doc["host"]["verdict"]["verdict"] == GPU_BOUND


@pytest.mark.parametrize("argv", [["analyze", "{}"], ["analyze", "{}", "--json"], ["explain", "gpu-idle", "--from", "{}"],
                                  ["diff", "{}", "{}"], ["timeline", "{}", "--out", "{out}/t.png"],
                                  ["history", "add", "{}", "--db", "{out}/h.sqlite"]])
def test_a_capture_nsys_failed_to_process_is_refused(argv, tmp_path):
    """A JAX program under nsys 2025.3.1's defaults: nsys logged ProcessEventsError rows and kept no
    kernel. Every command refuses it in one line that says so and how to capture again."""
    lost = str(LOOPS / "jax-mlp-lost.sqlite")
    result = CliRunner().invoke(app, [arg.format(lost, out=tmp_path) for arg in argv], env={"COLUMNS": "100"})
    assert result.exit_code == 1, result.output
    said = " ".join(result.output.split())
    assert "lost its GPU work" in said and "ProcessEventsError" in said and "-t cuda,nvtx" in said
    assert "Traceback" not in result.output
    assert not (tmp_path / "t.png").exists() and not (tmp_path / "h.sqlite").exists()


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
