"""A program's loop (nsprof.analyze.iterations) and its phases (nsprof.analyze.phases), on real
captures: the loop found in the GPU work is checked against the NVTX ranges the same capture marks
each iteration with, and against the verdict the marked capture gets; with the markers taken away,
the found loop gives the same steady state and verdict. No loop is invented where none runs, and
start-up's parts equal the CUDA calls behind them, summed by plain SQL."""

from __future__ import annotations

import itertools
import json
import re
import sqlite3
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from nsprof.analyze.capture_analysis import CaptureAnalysis
from nsprof.analyze.host_calls import API_KINDS, LOADING
from nsprof.analyze.host_side import host_side
from nsprof.analyze.iterations import FOUND, HIGH, MARKERS, MIN_ITERATIONS, capture_loop, find_loop, steady_part
from nsprof.analyze.phases import LOOP, OUTSIDE, STARTUP, TAIL, phases
from nsprof.cli import app
from nsprof.parse.nsys_sqlite import load_nsys
from nsprof.parse.profile import Capture

DATA = Path(__file__).resolve().parent / "data"
HOST = DATA / "host-side"
# real captures whose programs mark each iteration with an NVTX range (tests/programs/host_*.py,
# torch_train_step.py; README files beside them say how each was captured)
MARKED = {name: HOST / f"{name}.sqlite" for name in
          ("train-sync", "train-nosync", "decode-eager", "decode-graph", "gpu-bound", "copies-pinned", "copies-pageable")}
MARKED |= {name: DATA / "diff-pairs" / f"{name}.sqlite" for name in ("train-a", "train-b")}


def unmarked(export):
    """The export as a capture without markers (nsys's defaults on a program that marks nothing)."""
    return replace(export, nvtx=export.nvtx.iloc[0:0])


@pytest.mark.parametrize("name", sorted(MARKED))
def test_the_loop_found_is_the_marked_one(name):
    """Found without reading the markers, the iterations are the marked ones: as many (the first one
    or two fall to start-up), each starting inside its own marked instance, each as long."""
    export = load_nsys(MARKED[name])
    loop = capture_loop(export)
    marked, found = loop.iterations, loop.found
    assert marked is not None and marked.source == MARKERS
    assert found is not None and found.source == FOUND and found.confidence == HIGH
    assert marked.count - 2 <= found.count <= marked.count
    assert found.check is None and marked.check is not None
    assert marked.check.matched == found.count  # every found start in a marked instance of its own
    assert found.median_ns == pytest.approx(marked.median_ns, rel=0.1)
    # found without markers at all: the same loop
    alone, why, _, _ = find_loop(unmarked(export))
    assert alone is not None and why is None and np.array_equal(alone.starts_ns, found.starts_ns)


@pytest.mark.parametrize("name", sorted(MARKED))
def test_without_markers_the_verdict_is_the_marked_ones(name):
    """The host side judged over the found loop's steady state gives the marked capture's verdict,
    over nearly the same window."""
    export = load_nsys(MARKED[name])
    plain = unmarked(export)
    with_marks = host_side(export, steady_part([export])[1])
    without = host_side(plain, steady_part([plain])[1])
    assert with_marks is not None and without is not None
    assert without["verdict"]["verdict"] == with_marks["verdict"]["verdict"]
    assert without["iterations"]["source"] == FOUND and with_marks["iterations"]["source"] == MARKERS
    span, found_span = with_marks["window"]["span_ns"], without["window"]["span_ns"]
    assert abs(found_span - span) <= 0.15 * span


def test_a_loop_inside_a_few_marked_calls_is_its_decode_steps():
    """Three marked `generate` calls (the first a warm-up) are too few to judge a steady state: the
    decode steps found inside them decide, the first call's slow tokens are start-up, and an
    iteration takes what a token took in the later calls (their marked span over 32 tokens each)."""
    export = load_nsys(HOST / "llama-generate.sqlite")
    loop = capture_loop(export)
    iterations = loop.iterations
    assert iterations is not None and iterations.source == FOUND
    assert any("fewer than" in note for note in loop.notes)
    calls = export.nvtx.sort_values("start_ns")
    starts = np.asarray(iterations.starts_ns)
    first_call_end = int(calls["end_ns"].iloc[0])
    assert iterations.starts_ns[iterations.steady_from] >= first_call_end - iterations.median_ns
    assert (starts < first_call_end).sum() == pytest.approx(iterations.steady_from, abs=1)
    per_token = float((calls["end_ns"] - calls["start_ns"]).iloc[1:].median()) / 32
    assert iterations.median_ns == pytest.approx(per_token, rel=0.1)
    assert iterations.drift  # a kernel changes with the sequence's length


def test_a_capture_with_no_loop_gets_none_and_says_why(real_program):
    """XLA's start-up (autotuning, many small programs) before three marked steps holds no loop: none
    is found, the reason is given, and the three markers decide."""
    export = load_nsys(real_program("jax-a") / "nsys.sqlite")
    loop = capture_loop(export)
    assert loop.found is None and loop.not_found
    assert loop.iterations is not None and loop.iterations.source == MARKERS and loop.iterations.count == 3


def test_a_run_of_unrelated_work_is_no_loop():
    """A capture's start-up alone (each kernel's first launches, allocations, copies) repeats no
    sequence of work: the train-sync capture cut before its loop has none."""
    export = load_nsys(HOST / "train-sync.sqlite")
    loop = capture_loop(export)
    before = loop.found.starts_ns[0]
    cut = replace(unmarked(export), **{table: frame[frame["start_ns"] < before] for table, frame in (
        ("kernels", export.kernels), ("memcpys", export.memcpys), ("memsets", export.memsets), ("graphs", export.graphs))})
    found, why, operations, _ = find_loop(cut)
    assert found is None and operations > 50 and why


def test_the_outermost_period_not_a_layer_inside_it():
    """The eager decode runs several identical decoder layers a token: the iteration is the token
    (as many as the markers), not the layer, whose repetitions a step holds several of."""
    export = load_nsys(HOST / "decode-eager.sqlite")
    found = capture_loop(export).found
    marked = capture_loop(export).iterations
    assert found.count >= marked.count - 1
    per_step = len(export.kernels) / marked.count
    assert found.operations == pytest.approx(per_step, rel=0.1)


def test_drifting_launch_sizes_are_found_by_names():
    """The real training step repeated with one kernel's grid growing each iteration (a KV cache
    growing) is still found, by kernel names, and said to drift."""
    export = unmarked(load_nsys(HOST / "train-sync.sqlite"))
    loop = capture_loop(export)
    kernels = export.kernels.copy()
    grows = kernels["kernel"].astype(str).str.contains("multi_tensor_apply").to_numpy()
    steps = np.searchsorted(np.asarray(loop.found.starts_ns), kernels["start_ns"].to_numpy())
    kernels["grid_x"] = kernels["grid_x"].to_numpy() + np.where(grows, steps, 0).astype(kernels["grid_x"].dtype)
    drifting = capture_loop(replace(export, kernels=kernels)).found
    assert drifting is not None and drifting.drift and "names" in drifting.drift
    assert abs(drifting.count - loop.found.count) <= 1


def test_a_loop_needs_enough_repeats():
    """Fewer than MIN_ITERATIONS repetitions of the step are no loop."""
    export = unmarked(load_nsys(HOST / "train-sync.sqlite"))
    starts = capture_loop(export).found.starts_ns
    keep_until = starts[MIN_ITERATIONS - 2]
    cut = replace(export, **{table: frame[frame["start_ns"] < keep_until] for table, frame in (
        ("kernels", export.kernels), ("memcpys", export.memcpys), ("memsets", export.memsets))})
    assert find_loop(cut)[0] is None


def _loading_ns(sqlite: Path, low: int, high: int) -> int:
    """The module loading calls' time in [low, high) by plain SQL, the kind told by its own reading
    of the API names (nsprof.analyze.host_calls.API_KINDS's pattern for module loading)."""
    pattern = dict(API_KINDS)[LOADING]
    with sqlite3.connect(sqlite) as conn:
        rows = conn.execute("SELECT s.value, r.start, r.end FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                            "JOIN StringIds s ON s.id = r.nameId WHERE r.start >= ? AND r.start < ?",
                            (low, high)).fetchall()
    return sum(min(end, high) - start for name, start, end in rows if pattern.search(re.sub(r"_v\d+$", "", name)))


@pytest.mark.parametrize("name", ["train-sync", "decode-eager", "llama-generate"])
def test_phases_tile_the_capture_and_their_parts_are_the_calls(name):
    """Start-up, loop and tail follow each other; the loop is the steady state's iterations; each
    phase's host parts are within its span; start-up's module loading is the calls SQL sums."""
    sqlite = HOST / f"{name}.sqlite"
    export = load_nsys(sqlite)
    loop = capture_loop(export)
    found = phases(export, loop)
    assert [phase.name for phase in found] == [STARTUP, LOOP, TAIL]
    assert all(a.end_ns == b.start_ns for a, b in itertools.pairwise(found))
    iterations = loop.iterations
    assert found[1].start_ns == iterations.starts_ns[iterations.steady_from] and found[1].end_ns == iterations.end_ns
    for phase in found:
        parts = dict(phase.parts)
        assert phase.name == LOOP or OUTSIDE in parts
        assert all(ns >= 0 for ns in parts.values()) and 0 <= phase.gpu_busy_ns <= phase.span_ns
    startup = found[0]
    assert dict(startup.parts)["module loading"] == _loading_ns(sqlite, startup.start_ns, startup.end_ns)
    assert startup.operations + found[1].operations + found[2].operations == \
        len(export.kernels) + len(export.memcpys) + len(export.memsets) + len(export.graphs)


def test_analyze_json_holds_iterations_and_phases():
    """`analyze --json` of a capture without markers: its iterations (found) and phases, and the
    steady state of the hot kernels and host side is theirs."""
    result = CliRunner().invoke(app, ["analyze", str(DATA / "loops" / "cupy-heat.sqlite"), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    iterations = doc["iterations"]
    assert {"count", "start_ns", "median_ns", "spread_pct", "source", "confidence"} <= set(iterations)
    assert iterations["source"] == FOUND and iterations["count"] >= MIN_ITERATIONS
    assert [phase["name"] for phase in doc["phases"]] == [STARTUP, LOOP, TAIL]
    assert doc["host"]["iterations"]["source"] == FOUND
    assert doc["harness"]["steady_state"]["source"] == FOUND
    listed = iterations["listed"]
    assert len(listed) == iterations["count"] and listed[0]["start_ns"] == iterations["start_ns"]


def test_a_step_range_closed_before_the_last_launch_still_marks_the_loop():
    """torch_compile_block.py marks each step, then reads a checksum outside any step: its steps
    still decide (fewer launches follow the last than a step holds), and the loop found in the GPU
    work starts one iteration in each of them."""
    export = load_nsys(DATA / "diff-pairs" / "compile-block-eager.sqlite")
    steps = export.nvtx[export.nvtx["range"].astype(str).str.endswith("step")]
    assert steps["end_ns"].max() < export.runtime["start_ns"].max()  # the checksum's calls come after
    loop = capture_loop(export)
    assert loop.iterations.source == MARKERS and loop.iterations.count == len(steps) == 20
    assert loop.found.count >= 18 and loop.iterations.check.matched == loop.found.count


def test_analyze_says_what_the_loop_is():
    """The terminal's loop line: found, how many, how long, and the phases."""
    result = CliRunner().invoke(app, ["analyze", str(HOST / "train-sync.sqlite")], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "Loop: 27 iterations marked by train_step; found in the GPU work too, 26 iterations" in text
    assert re.search(r"Phases: start-up [\d,.]+ ms \(GPU busy \d+%\), loop", text)


def test_a_ladder_capture_has_no_program_loop():
    export = load_nsys(DATA / "diff-pairs" / "sgemm-ladder-1024-before-v8-cp-async.sqlite")
    analysis = CaptureAnalysis(Capture(timelines=[export]))
    assert analysis.loop is None and analysis.phases == ()


def test_listed_iterations_are_capped(real_program):
    """--json lists at most 1,000 iterations one by one: the first and last 500."""
    export = load_nsys(real_program("triton") / "nsys.sqlite")
    iterations = capture_loop(export).iterations
    assert iterations is not None and iterations.count > 1000
    listed = iterations.to_json()["listed"]
    assert len(listed) == 1000 and listed[-1]["index"] == iterations.count - 1
    assert pd.Series([row["index"] for row in listed]).is_monotonic_increasing
