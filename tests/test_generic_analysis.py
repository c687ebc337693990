"""A program's capture is analyzed by the generic analysis alone (issue 58): the front door sends a
capture to the ladder's analysis only where it holds a ladder's stages (nsprof.parse.ladder_stages).
The calls each command makes are recorded, as tests/test_layers.py records the imports: analyzing,
diffing or explaining a program's capture runs no code of the ladder's analysis, and no function
of the generic analysis calls into the ladders' packages."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nsprof.analyze.capture_analysis import ANALYSIS_COLUMNS, CaptureAnalysis
from nsprof.cli import app
from nsprof.ladder_analysis.capture import LadderCaptureAnalysis
from nsprof.parse import load_profile
from nsprof.parse.ladder_stages import holds_stages
from nsprof.profile_analysis import capture_analysis, ladder_analysis
from nsprof.render.analysis_tables import analysis_json

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "nsprof"
LADDER_PACKAGES = tuple(str(PACKAGE / name) + "/" for name in ("ladder", "ladder_analysis", "ladder_runs"))
GENERIC_ANALYSIS = str(PACKAGE / "analyze") + "/"
EXAMPLES = ROOT / "profiles" / "examples"
DATA = Path(__file__).parent / "data"

# Captures of programs nsprof did not write: nsys with its defaults, torch.profiler, jax.profiler,
# and a profile directory of a PyTorch training step (nsys and ncu).
PROGRAMS = {
    "nsys": DATA / "host-side" / "train-sync.sqlite",
    "torch.profiler": DATA / "kineto" / "compile-block.json.gz",
    "jax.profiler": DATA / "jax" / "mlp-workers1.trace.json.gz",
    "profile directory": EXAMPLES / "h200-program-torch-train",
}
# Captures of a ladder: a profile directory (nsys and ncu), with CPU stages, and its ncu file alone.
LADDERS = {
    "profile directory": EXAMPLES / "h200-sgemm-1024",
    "with CPU stages": EXAMPLES / "h100-sgemm-cpu-1024",
    "ncu file": EXAMPLES / "h200-sgemm-1024" / "ncu-raw.csv",
}


@contextmanager
def recorded_calls():
    """Every Python call made meanwhile, as (caller's file, callee's file, callee's name), but those
    made while a module loads: what a module imports is the import contract's (tests/test_layers.py)."""
    calls: set[tuple[str, str, str]] = set()
    loading = [0]  # how many modules are loading now

    def record(frame, event, _arg):
        if frame.f_code.co_name == "<module>":
            loading[0] += {"call": 1, "return": -1}.get(event, 0)
        elif event == "call" and not loading[0] and frame.f_back is not None:
            calls.add((frame.f_back.f_code.co_filename, frame.f_code.co_filename, frame.f_code.co_name))

    sys.setprofile(record)
    try:
        yield calls
    finally:
        sys.setprofile(None)


# What a page asks of any analysis: whether it holds stages. It answers a program's without computing.
ASKED = {"nsprof/ladder_analysis/capture.py:stages_of"}


def ladder_calls(calls: set[tuple[str, str, str]]) -> set[str]:
    """The ladders' functions that ran, as file:name, but the question every page asks (ASKED)."""
    return {f"{Path(callee).relative_to(ROOT)}:{name}" for _, callee, name in calls
            if callee.startswith(LADDER_PACKAGES)} - ASKED


def calls_out_of_the_generic_analysis(calls: set[tuple[str, str, str]]) -> set[str]:
    return {f"{Path(caller).name} -> {Path(callee).relative_to(ROOT)}:{name}" for caller, callee, name in calls
            if caller.startswith(GENERIC_ANALYSIS) and callee.startswith(LADDER_PACKAGES)}


def invoked(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("kind", PROGRAMS)
def test_a_programs_capture_runs_no_code_of_the_ladders(kind):
    with recorded_calls() as calls:
        invoked("analyze", str(PROGRAMS[kind]))
        invoked("analyze", str(PROGRAMS[kind]), "--json")
    assert ladder_calls(calls) == set()


def test_diff_and_explain_of_programs_run_no_code_of_the_ladders():
    pairs = DATA / "diff-pairs"
    with recorded_calls() as calls:
        invoked("diff", str(pairs / "train-a.sqlite"), str(pairs / "train-b.sqlite"))
        invoked("explain", "gpu-idle", "--from", str(PROGRAMS["nsys"]))
    assert ladder_calls(calls) == set()


def test_a_ladders_capture_is_the_ladders_and_the_generic_analysis_never_calls_into_it():
    """The recorder sees the ladder's analysis where it runs (so the tests above can fail), and even
    there no call starts in the generic analysis: the ladder builds on it, never the reverse."""
    with recorded_calls() as calls:
        document = json.loads(invoked("analyze", str(LADDERS["profile directory"]), "--json"))
    assert "nsprof/ladder_analysis/work.py:work_records" in ladder_calls(calls)
    assert calls_out_of_the_generic_analysis(calls) == set()
    assert {row["stage"] for row in document["stages"]} >= {"v1", "v6"}


@pytest.mark.parametrize("kind", PROGRAMS)
def test_the_front_door_finds_no_stage_where_the_ladder_would_find_none(kind):
    """What the generic analysis answers is what the ladder's would: it finds no stage in a program's
    capture, and the documents `analyze --json` writes of both are the same, stages included."""
    profile = load_profile(PROGRAMS[kind], ANALYSIS_COLUMNS)
    assert not holds_stages(profile)
    generic, ladder = capture_analysis(profile), ladder_analysis(profile)
    assert type(generic) is CaptureAnalysis
    assert ladder.stages.empty
    assert analysis_json(generic, profile.is_directory) == analysis_json(ladder, profile.is_directory)


@pytest.mark.parametrize("kind", LADDERS)
def test_a_capture_with_stages_is_analyzed_as_a_ladders(kind):
    profile = load_profile(LADDERS[kind], ANALYSIS_COLUMNS)
    assert holds_stages(profile)
    analysis = capture_analysis(profile)
    assert isinstance(analysis, LadderCaptureAnalysis) and not analysis.stages.empty
    assert analysis.host is None  # a ladder's harness is no program
