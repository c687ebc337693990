"""nsprof history end to end on the committed H200 runs of tests/data/runs: ab_spin's
unchanged runs added one entry per commit, then its spin made 5% slower."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from nsprof.cli import app
from nsprof.errors import NOTHING_COMPARED_EXIT_CODE
from nsprof.history.trend import change_points

RUNS = Path(__file__).parent / "data" / "runs"
BASE = [RUNS / "ab-base" / "nsys.sqlite", *(RUNS / "ab-base" / "runs" / f"nsys-{k}.sqlite" for k in range(2, 11))]
SLOWER = [RUNS / "ab-slower" / "nsys.sqlite", *(RUNS / "ab-slower" / "runs" / f"nsys-{k}.sqlite" for k in range(2, 6))]
runner = CliRunner()


def history(db: Path, *args: str):
    return runner.invoke(app, ["history", *args, "--db", str(db)], env={"COLUMNS": "80"})


def add(db: Path, paths, first_commit: int = 1) -> None:
    for number, path in enumerate(paths, first_commit):
        result = history(db, "add", str(path), "--commit", f"c{number:02d}", "--branch", "main")
        assert result.exit_code == 0, result.output


def test_a_shift_is_marked_where_the_slower_spin_begins(tmp_path):
    db = tmp_path / "h.sqlite"
    add(db, BASE[:6])
    add(db, SLOWER, first_commit=7)
    shown = history(db, "show", "--name", "spin", "--out", str(tmp_path / "charts"))
    assert shown.exit_code == 0, shown.output
    rows = [line for line in shown.stdout.splitlines() if line.startswith("│")]
    assert [row.split("│")[-2].strip() for row in rows] == [""] * 6 + ["shift"] + [""] * 4
    assert (tmp_path / "charts" / "history-spin.png").read_bytes().startswith(b"\x89PNG")
    # the other kernels did not move: no shift anywhere else
    assert "1" not in [line.split("│")[-2].strip() for line in history(db, "show").stdout.splitlines()
                       if "│ kernel │ scale" in line or "│ kernel │ cupy_fill" in line]


def test_check_fails_naming_the_slower_kernel_and_range(tmp_path):
    db = tmp_path / "h.sqlite"
    add(db, BASE[:8])
    add(db, [RUNS / "ab-slower"], first_commit=9)  # a profile of 5 runs: the newest entry
    checked = history(db, "check", "--fail-if-slower", "2")
    assert checked.exit_code == 1
    assert checked.stderr.splitlines() == [line for line in checked.stderr.splitlines() if line.startswith("slower by")]
    named = [line.split(": ")[1] for line in checked.stderr.splitlines()]
    assert named == ["kernel spin", "range ab:compute"]
    as_json = json.loads(history(db, "check", "--fail-if-slower", "2", "--json").stdout)
    spin = next(row for row in as_json["rows"] if row["key"] == "kernel spin")
    assert as_json["baseline"] == [4, 5, 6, 7, 8] and spin["ci_low_pct"] <= 5.0 <= spin["ci_high_pct"]


def test_an_unchanged_newest_entry_passes(tmp_path):
    db = tmp_path / "h.sqlite"
    add(db, BASE)
    checked = history(db, "check", "--fail-if-slower", "2")
    assert checked.exit_code == 0, checked.output
    # 6 kernels and ranges, and the host side's 6 times per iteration of ab:step
    assert "0 slower, 0 faster, 0 unstable of 12 compared." in " ".join(checked.stdout.split())


def test_comparing_nothing_is_its_own_failure(tmp_path):
    db = tmp_path / "h.sqlite"
    add(db, BASE[:1])
    alone = history(db, "check", "--fail-if-slower", "2")
    assert alone.exit_code == NOTHING_COMPARED_EXIT_CODE and alone.stderr.startswith("error: entry 1 has no baseline")
    add(db, [RUNS / "bench-a.json"], first_commit=2)  # a bench record: never compared with captures
    other = history(db, "check", "--fail-if-slower", "2")
    assert other.exit_code == NOTHING_COMPARED_EXIT_CODE and "of kind bench" in other.stderr


def test_bench_records_on_cold_inputs_are_compared_only_with_each_other(tmp_path):
    """A record that rotated its buffers (`"inputs": "cold"`) is another kind of entry than one timed on one set:
    the first of them has no baseline among the warm ones, the second has the first."""
    db = tmp_path / "h.sqlite"
    record = json.loads((RUNS / "bench-a.json").read_text())
    warm, cold = tmp_path / "warm.json", tmp_path / "cold.json"
    warm.write_text(json.dumps(record))
    cold.write_text(json.dumps({**record, "inputs": "cold"}))
    add(db, [warm, warm, cold])
    first = history(db, "check", "--fail-if-slower", "2")
    assert first.exit_code == NOTHING_COMPARED_EXIT_CODE and "0 earlier entries" in first.stderr
    assert "of kind bench on cold inputs" in " ".join(first.stderr.split())
    add(db, [cold], first_commit=4)
    second = json.loads(history(db, "check", "--fail-if-slower", "2", "--json").stdout)
    assert second["kind"] == "bench on cold inputs" and second["baseline"] == [3] and second["rows"]


def test_a_record_that_rotated_before_files_named_their_inputs_is_a_cold_one(tmp_path):
    """The cold-inputs record's runs were written before the results file said `inputs`; their rows say they
    rotated among 2 to 7 sets (`input_sets`): history files them with the records that say "cold"."""
    db = tmp_path / "h.sqlite"
    unnamed = Path("benchmarks/records/2026-11-30-h200-hgemm-cold-inputs/models-run1.json")
    assert "inputs" not in json.loads(unnamed.read_text())
    add(db, [Path("benchmarks/records/2026-11-30-h200-hgemm-pairs-maps/models-run1.json"), unnamed])
    second = json.loads(history(db, "check", "--fail-if-slower", "50", "--json").stdout)
    assert second["kind"] == "bench on cold inputs" and second["baseline"] == [1]


def test_add_is_all_or_none(tmp_path):
    db = tmp_path / "h.sqlite"
    add(db, BASE[:1])
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    result = history(db, "add", str(BASE[1]), str(broken))
    assert result.exit_code == 1 and result.stderr.count("\n") == 1 and "broken.json" in result.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM entries").fetchone() == (1,)


@pytest.mark.parametrize("make, cause", [
    (lambda path: path.write_text("not a database"), "not a readable history database"),
    (lambda path: path.write_bytes(BASE[0].read_bytes()), "an SQLite database, but not nsprof's history"),
], ids=["text", "an nsys export"])
def test_a_db_that_is_not_a_history_is_one_line_and_left_alone(tmp_path, make, cause):
    db = tmp_path / "other.sqlite"
    make(db)
    before = db.read_bytes()
    result = history(db, "add", str(BASE[0]))
    assert result.exit_code == 1 and result.stderr.count("\n") == 1 and cause in result.stderr
    assert db.read_bytes() == before


def test_the_commit_and_branch_default_to_gits(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q", "-b", "topic"], ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q",
                                                 "--allow-empty", "-m", "x"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    monkeypatch.chdir(repo)
    assert runner.invoke(app, ["history", "add", str(RUNS / "bench-a.json"), "--db", "h.sqlite"]).exit_code == 0
    rows = json.loads(history(repo / "h.sqlite", "show", "--json").stdout)
    assert {(row["commit_id"], row["branch"]) for row in rows} == {(head, "topic")}
    assert {row["name"] for row in rows} == {"sgemm/v5/1024x1024x1024", "sgemm/v6/1024x1024x1024"}
    assert all(len(row["run_medians_ns"]) == 5 for row in rows)


def test_change_points_find_a_level_shift_and_no_shift_in_noise():
    rng = np.random.default_rng(3)
    flat = 100 * np.exp(rng.normal(0, 0.005, 30))
    assert change_points(flat) == []
    shifted = np.concatenate([flat[:12], flat[12:] * 1.05])
    assert change_points(shifted) == [12]
    assert change_points(shifted[:13]) == []  # one entry after the shift: too few to call it (2 are needed)


def test_show_and_check_count_what_the_history_holds_in_words_that_agree():
    """The titles count entries and series by kind, singular where there is one: a history of one
    bench entry holds bench stages, not "stages, kernels and ranges"."""
    import pandas as pd

    from nsprof.render.history import check_blocks, series_blocks

    one = pd.DataFrame({"entry": [1, 1, 1], "kind": ["bench", "bench", "kernel"], "name": ["a", "b", "k"],
                        "median_ns": [10.0, 20.0, 30.0]})
    assert series_blocks(one)[0].title == "History: 1 entry; 2 bench stages, 1 kernel"
    two = pd.concat([one, one.assign(entry=2)])
    assert series_blocks(two)[0].title == "History: 2 entries; 2 bench stages, 1 kernel"
    stats = pd.DataFrame({"ci_low_pct": [np.nan], "ci_high_pct": [np.nan], "a_median_ns": [1.0], "b_median_ns": [1.0],
                          "change_pct": [0.0], "status": ["same"]}, index=["bench a"])
    title = check_blocks(stats, {"newest": 2, "baseline": [1], "gpu": "G", "kind": "bench"}, 5.0)[0].title
    assert title == "Entry 2 against entry 1 (G, bench)"


def test_the_trend_chart_starts_at_zero_and_states_the_change():
    """A step from 100 to 120 us: the axis starts at 0, so the step reads as its size, and the title
    says the newest against the first and the level shift with the entry that starts it."""
    import pandas as pd

    from nsprof.render.history import trend_figure

    medians = [100e3, 101e3, 99e3, 100e3, 120e3, 121e3, 119e3, 120e3, 121e3]
    series = pd.DataFrame({"entry": range(11, 20), "commit_id": [None] * 9, "median_ns": medians,
                           "run_medians_ns": [[m * 0.99, m, m * 1.01] for m in medians]})
    axes = trend_figure("kernel", "k", series).axes[0]
    assert axes.get_ylim()[0] == 0
    assert axes.get_title().splitlines()[1] == "newest 121 µs against first 100 µs: +21.0%; level shift at entry 15, +20.0%"
