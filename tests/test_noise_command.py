"""`nsprof noise RUNS --out FILE`: a user's noise floors from their own unchanged runs, written as the
record `nsprof diff --noise FILE` reads (the H200 runs of tests/data/runs: ab_spin.py ten times unchanged)."""

from __future__ import annotations

import json
import sqlite3
import statistics
from itertools import combinations
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nsprof.cli import app
from nsprof.diff.noise import CATEGORIES, SHORT_NS

DATA = Path(__file__).resolve().parent / "data"
BASE = DATA / "runs" / "ab-base"
H100 = Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h100-sgemm-cpu-1024" / "nsys.sqlite"


def noise(*argv: str):
    return CliRunner().invoke(app, ["noise", *argv], env={"COLUMNS": "100"})


def kernel_medians(export: Path) -> dict[str, tuple[int, float]]:
    """Per kernel name: launches and median duration, read with plain SQL."""
    with sqlite3.connect(export) as conn:
        rows = conn.execute("SELECT s.value, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
                            "JOIN StringIds AS s ON s.id = k.demangledName").fetchall()
    by_name: dict[str, list[int]] = {}
    for name, duration in rows:
        by_name.setdefault(name, []).append(duration)
    return {name: (len(durations), statistics.median(durations)) for name, durations in by_name.items()}


def test_the_record_holds_a_change_between_two_runs_per_duration_class(tmp_path):
    """Each class's floor is 0 or the change of one kernel or range tested between two of the ten runs
    (3 launches or more, the same count in both), and never above the largest such change, as plain
    SQL over the exports finds the kernels'; diff --noise reads the record back as written."""
    out = tmp_path / "noise.json"
    result = noise(str(BASE), "--out", str(out))
    assert result.exit_code == 0, result.output
    record = json.loads(out.read_text())
    exports = [BASE / "nsys.sqlite", *sorted((BASE / "runs").glob("nsys-*.sqlite"))]
    assert record["runs"] == len(exports) == 10 and record["gpu"] == "NVIDIA H200" and record["short_ns"] == SHORT_NS
    medians = [kernel_medians(export) for export in exports]
    changes = {"10-100 us": [], "over 100 us": []}
    for a, b in combinations(medians, 2):
        for name in a:
            if name in b and a[name][0] == b[name][0] >= 3 and max(a[name][1], b[name][1]) >= SHORT_NS:
                slower = max(a[name][1], b[name][1])
                changes["10-100 us" if slower < 100_000 else "over 100 us"].append(100 * abs(b[name][1] / a[name][1] - 1))
    assert set(record["floor_pct"]) <= set(CATEGORIES) and record["floor_pct"]
    for name, floor in record["floor_pct"].items():
        assert name in ("10-100 us", "over 100 us")
        if name == "10-100 us":  # ab_spin's ranges are all over 100 us: this class holds kernels alone
            assert floor == 0 or min(abs(floor - change) for change in changes[name]) < 1e-9
        assert floor <= max(changes[name], default=0) or name == "over 100 us"
    assert f"wrote {out}" in result.stdout and "Noise floors" in result.stdout
    diffed = CliRunner().invoke(app, ["diff", str(BASE / "nsys.sqlite"), str(DATA / "runs" / "ab-slower" / "nsys.sqlite"),
                                      "--noise", str(out), "--json"])
    assert diffed.exit_code == 0, diffed.output
    assert json.loads(diffed.stdout)["noise"]["floor_pct"] == record["floor_pct"]


def test_single_captures_together_are_the_runs(tmp_path):
    """Two single captures of the program are two runs: the same floors as the same two runs read from
    a directory of captures."""
    first, second = BASE / "nsys.sqlite", BASE / "runs" / "nsys-2.sqlite"
    pair = tmp_path / "pair"
    pair.mkdir()
    for index, export in enumerate((first, second)):
        (pair / f"run{index}.sqlite").write_bytes(export.read_bytes())
    apart = noise(str(first), str(second), "--out", str(tmp_path / "a.json"), "--json")
    together = noise(str(pair), "--out", str(tmp_path / "b.json"), "--json")
    assert apart.exit_code == together.exit_code == 0, apart.output + together.output
    assert json.loads(apart.stdout)["floor_pct"] == json.loads(together.stdout)["floor_pct"]
    assert json.loads(apart.stdout)["runs"] == 2


@pytest.mark.parametrize("argv, code, says", [
    (lambda tmp: [str(BASE / "nsys.sqlite"), "--out", str(tmp / "n.json")], 2, "a noise floor needs two or more"),
    (lambda tmp: [str(BASE), "--out", str(tmp / "n.txt")], 2, "a noise record is JSON"),
    (lambda tmp: [str(BASE), "--out", str(BASE / "noise.json")], 2, "nsprof writes nothing into a profile"),
    (lambda tmp: [str(BASE / "nsys.sqlite"), str(H100), "--out", str(tmp / "n.json")], 2, "a noise floor is one GPU's"),
    (lambda tmp: [str(tmp / "missing"), "--out", str(tmp / "n.json")], 2, "missing"),
])
def test_bad_input_is_one_line_and_writes_nothing(argv, code, says, tmp_path):
    result = noise(*argv(tmp_path))
    assert result.exit_code == code, result.output
    assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert not list(tmp_path.glob("n.*")) and not (BASE / "noise.json").exists()


def test_a_users_file_in_the_way_is_kept_and_nsprofs_own_is_replaced(tmp_path):
    mine = tmp_path / "noise.json"
    mine.write_text("my notes\n")
    kept = noise(str(BASE), "--out", str(mine))
    assert kept.exit_code == 2 and "--force" in kept.stderr and mine.read_text() == "my notes\n"
    assert noise(str(BASE), "--out", str(mine), "--force").exit_code == 0
    again = noise(str(BASE), "--out", str(mine))  # nsprof's own record now: replaced without --force
    assert again.exit_code == 0 and json.loads(mine.read_text())["runs"] == 10


def test_a_change_two_gpus_cannot_compare_is_undecided_and_says_what_decides_it():
    """One run a side, eager against torch.compile, captured on two H200s: the attention kernel's
    +2.4% (59 us) is a real change by its interval and passes --min-change 2%, but work of 10-100 us
    is not called across GPUs (a machine moves it by up to 14%): undecided, not same, and the diff
    says to capture both sides on one machine; across runs of one machine nothing is undecided."""
    pair = [str(DATA / "diff-pairs" / "compile-block-eager.sqlite"),
            str(Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h200-program-torch-compile" / "nsys.sqlite")]
    result = CliRunner().invoke(app, ["diff", *pair, "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    undecided = [row for row in doc["kernels"] if row["undecided"]]
    assert len(undecided) == 1 and undecided[0]["kernel"].startswith("cudnn_generated_fort_native_sdpa")
    row = undecided[0]
    assert row["floor"] == "10-100 us" and row["floor_pct"] is None  # no floor: not called across GPUs
    assert row["status"] == "same" and 2.0 <= row["change_pct"] < 5 and row["ci_low_pct"] > 0
    assert any(line.startswith("A and B ran on different GPUs") for line in doc["warnings"])
    text = " ".join(CliRunner().invoke(app, ["diff", *pair], env={"COLUMNS": "100"}).stdout.split())
    assert "1 kernel moved past --min-change within the noise floor of its category, or in work two GPUs cannot " \
           "compare: capture both sides on one machine" in text
    assert "│ undecided │" in CliRunner().invoke(app, ["diff", *pair], env={"COLUMNS": "200"}).stdout
    across = json.loads(CliRunner().invoke(app, ["diff", str(BASE), str(DATA / "runs" / "ab-slower"), "--json"]).stdout)
    assert all(row["floor_pct"] is None and not row["undecided"] for row in across["kernels"])


def test_a_history_database_keeps_one_record_per_gpu_and_diff_reads_the_diffs(tmp_path):
    """--db keeps the record as its GPU's; diff --noise DB uses the record of the diff's GPU, and a
    diff on another GPU is one line naming the GPUs the database holds and how to add its own."""
    db, out = tmp_path / "history.sqlite", tmp_path / "noise.json"
    result = noise(str(BASE), "--out", str(out), "--db", str(db))
    assert result.exit_code == 0, result.output
    assert f"wrote {db}" in result.stdout
    record = json.loads(out.read_text())
    diffed = CliRunner().invoke(app, ["diff", str(BASE / "nsys.sqlite"), str(DATA / "runs" / "ab-slower" / "nsys.sqlite"),
                                      "--noise", str(db), "--json"])
    assert diffed.exit_code == 0, diffed.output
    assert json.loads(diffed.stdout)["noise"]["floor_pct"] == record["floor_pct"]
    other = CliRunner().invoke(app, ["diff", str(H100), str(H100), "--noise", str(db)])
    assert other.exit_code == 2 and "Traceback" not in other.output
    assert "no noise record for NVIDIA H100 80GB HBM3 (it holds NVIDIA H200)" in " ".join(other.output.split())
    assert "--db" in other.output
    with sqlite3.connect(db) as conn:  # history's own tables are there too: history add and show still work
        assert {"entries", "measurements", "noise"} <= {name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
