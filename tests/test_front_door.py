"""The front door for captures (nsprof.parse.captures.open_captures) on the committed data of each
kind: what is at a path is answered once; diff, history and noise read their sides through it, and
the report commands and `nsprof explain` the profiles they search for."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nsprof.errors import MissingPathError
from nsprof.parse.captures import BENCH, FILE, PROFILE, RANKS, TREE, open_captures

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


def test_a_bench_record_is_its_record_and_no_capture():
    record = ROOT / "benchmarks" / "records" / "2026-11-24-h200-sgemm" / "h200-sgemm.json"
    found = open_captures(record)
    assert found.kind == BENCH and found.runs == () and found.bench_record() == json.loads(record.read_text())


def test_a_directory_of_captures_is_one_run_each_in_name_order():
    found = open_captures(DATA / "ranks")
    assert found.kind == RANKS and [run.name for run in found.runs] == [f"rank{n}.sqlite" for n in range(4)]


def test_a_profile_taken_with_runs_is_its_directory_then_its_further_runs():
    found = open_captures(DATA / "runs" / "ladder")
    assert found.kind == PROFILE and found.first == DATA / "runs" / "ladder"
    assert [run.name for run in found.further] == [f"nsys-{n}.sqlite" for n in range(2, 6)]


def test_one_file_is_one_run_and_a_packed_one_is_found_beside_its_name(tmp_path):
    export = DATA / "diff-pairs" / "train-a.sqlite"
    assert open_captures(export).runs == (export,) and open_captures(export).kind == FILE
    shutil.copyfile(export.with_name("train-a.sqlite.xz"), tmp_path / "train-a.sqlite.xz")
    assert open_captures(tmp_path / "train-a.sqlite").kind == FILE  # read packed by its reader


def test_nothing_there_is_a_bad_argument_naming_what_to_pass(tmp_path):
    with pytest.raises(MissingPathError) as raised:
        open_captures(tmp_path / "nowhere")
    assert raised.value.exit_code == 2 and "no such file or directory" in str(raised.value)
    assert "bench record" in str(raised.value)


def test_diff_and_history_read_a_side_the_same_way(tmp_path):
    """The ladder profile's five runs: diff compares five a side, and history keeps five run medians
    of each stage, both from the one CaptureSet."""
    from nsprof import api

    result = api.diff(DATA / "runs" / "ladder", stages=("v5", "v6"))
    assert result.runs == {"a": 5, "b": 5}
    [added] = api.history_add([DATA / "runs" / "ladder"], db=tmp_path / "h.sqlite", commit="c1", branch="main")
    stages = api.history(tmp_path / "h.sqlite")
    stages = stages[stages["kind"] == "stage"]
    assert added["measurements"] > 0 and set(stages["runs"]) == {5}


def test_analyze_of_a_bench_record_says_what_reads_one():
    from typer.testing import CliRunner

    from nsprof.cli import app

    record = ROOT / "benchmarks" / "records" / "2026-11-24-h200-sgemm" / "h200-sgemm.json"
    result = CliRunner().invoke(app, ["analyze", str(record)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    [line] = result.stderr.strip().splitlines()
    assert "not a profile: nsprof reads a .json file as a bench record, which holds times but no capture" in line
    assert "nsprof diff" in line


def test_a_directory_of_profiles_is_a_tree_of_the_profiles_below_it(tmp_path):
    """profiles/examples holds the committed captures one level down; a tree nested deeper, with a
    failed capture (a manifest and no output) and a hidden directory, finds the same profiles."""
    examples = ROOT / "profiles" / "examples"
    found = open_captures(examples)
    assert found.kind == TREE and found.runs == tuple(sorted(p for p in examples.iterdir() if p.is_dir()))
    (tmp_path / "deep" / "deeper").mkdir(parents=True)
    for profile in found.runs[:2]:
        (tmp_path / "deep" / "deeper" / profile.name).symlink_to(profile, target_is_directory=True)
    (tmp_path / "failed").mkdir()
    (tmp_path / "failed" / "manifest.json").write_text("{}")
    (tmp_path / ".hidden").symlink_to(found.runs[2], target_is_directory=True)
    assert [p.name for p in open_captures(tmp_path).runs] == [p.name for p in found.runs[:2]]


def test_analyze_and_diff_of_a_tree_say_it_holds_profiles_not_one(tmp_path):
    """A tree is no one capture: analyze and diff name how many profiles it holds and one to pass; an
    empty directory holds none."""
    from cli_checks import one_line_error
    from typer.testing import CliRunner

    from nsprof.cli import app

    examples = ROOT / "profiles" / "examples"
    count = len(open_captures(examples).runs)
    for args in (["analyze", str(examples)], ["diff", str(examples), str(examples)]):
        line = one_line_error(CliRunner().invoke(app, args))
        assert f"a directory of {count} profiles, not one capture" in line and "nsprof report --from" in line
    line = one_line_error(CliRunner().invoke(app, ["analyze", str(tmp_path)]))
    assert f"{tmp_path}: no profile here" in line and "nsprof profile" in line


def test_many_captures_are_a_directory_of_captures_and_nothing_else():
    """api.analyze_many opens its directory through the front door: a profile directory (one
    capture with its runs) is refused, saying what it is, before any Dask worker starts."""
    from nsprof import api
    from nsprof.errors import UsageError

    with pytest.raises(UsageError) as raised:
        api.analyze_many(DATA / "runs" / "ladder")
    assert "a profile directory, not a directory of several nsys captures" in str(raised.value)
