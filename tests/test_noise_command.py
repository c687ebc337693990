"""`nsprof noise RUNS --out FILE`: a user's noise floors from their own unchanged runs, written as the
record `nsprof diff --noise FILE` reads (the H200 runs of tests/data/runs: ab_spin.py ten times
unchanged, a torch.compile block five times)."""

from __future__ import annotations

import json
import sqlite3
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from noise_rule import floors_by_rule
from typer.testing import CliRunner

from nsprof.cli import app
from nsprof.diff.noise import SHORT_NS

DATA = Path(__file__).resolve().parent / "data"
RUNS = DATA / "runs"
BASE = RUNS / "ab-base"
H100 = Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h100-sgemm-cpu-1024" / "nsys.sqlite"


def noise(*argv: str):
    return CliRunner().invoke(app, ["noise", *argv], env={"COLUMNS": "100"})


# Per NVTX push/pop range instance: its domain-qualified name, and the time of the kernels, memcpys
# and memsets whose runtime call its thread made while it was open (NVTX's own rule), copies apart
RANGE_WORK = """
WITH work AS (SELECT correlationId, globalPid, end - start AS ns, 0 AS copy FROM CUPTI_ACTIVITY_KIND_KERNEL
              UNION ALL SELECT correlationId, globalPid, end - start, 1 FROM CUPTI_ACTIVITY_KIND_MEMCPY
              UNION ALL SELECT correlationId, globalPid, end - start, 1 FROM CUPTI_ACTIVITY_KIND_MEMSET),
     calls AS (SELECT r.globalTid AS tid, r.start AS start, w.ns AS ns, w.copy AS copy
               FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r JOIN work AS w
               ON w.correlationId = r.correlationId AND w.globalPid = r.globalTid / 16777216 * 16777216)
SELECT COALESCE(d.text || ':', '') || COALESCE(n.text, s.value), COALESCE(SUM(c.ns), 0), COALESCE(SUM(c.ns * c.copy), 0)
FROM NVTX_EVENTS AS n
LEFT JOIN StringIds AS s ON s.id = n.textId
LEFT JOIN NVTX_EVENTS AS d ON d.eventType = 75 AND d.domainId = n.domainId
LEFT JOIN calls AS c ON c.tid = n.globalTid AND c.start >= n.start AND c.start < n.end
WHERE n.eventType = 59
GROUP BY n.rowid"""


def durations_by_sql(export: Path) -> dict[tuple[str, str], np.ndarray]:
    """One run's tested rows, read with plain SQL: per kernel name its launches' durations
    ("kernels"), per range name its instances' GPU time, as "copies" where copies are more than
    half of it, else "ranges"."""
    with sqlite3.connect(export) as conn:
        kernels = conn.execute("SELECT s.value, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
                               "JOIN StringIds AS s ON s.id = k.demangledName").fetchall()
        ranges = conn.execute(RANGE_WORK).fetchall()
    rows: dict[tuple[str, str], list[int]] = {}
    for name, duration in kernels:
        rows.setdefault(("kernels", name), []).append(duration)
    for name, gpu_ns, copy_ns in ranges:
        rows.setdefault(("copies" if gpu_ns and copy_ns / gpu_ns > 0.5 else "ranges", name), []).append(gpu_ns)
    return {key: np.array(durations, dtype=float) for key, durations in rows.items()}


def floors_by_sql_and_scipy(exports: list[Path]) -> dict[str, float]:
    """The documented rule written out: over every pair of runs, each row with 3 or more launches or
    instances on both sides is a change of medians (B's over A's, minus 1) in the class of its slower
    median; the row is significant when scipy's percentile bootstrap of the ratio of medians (95%)
    excludes 1; a class's floor is 1.5 times its largest significant |change|, 0 where none was.
    Under 10 us and copy ranges under 100 us are never called: no floor. These runs hold no waiting
    kernels (NCCL, XLA's DelayKernel: never called), so that rule is not written out, nor the one
    that leaves untested a kernel whose mix of launch configurations moves its median: torch's
    Triton kernels run in two configurations, and no floor here depends on them."""
    runs = [durations_by_sql(export) for export in exports]
    assert not any("nccl" in name.lower() or "DelayKernel" in name for run in runs for _, name in run)
    changes: dict[str, list[tuple[float, np.ndarray, np.ndarray]]] = {"10-100 us": [], "over 100 us": []}
    for a, b in combinations(runs, 2):
        for key in a.keys() & b.keys():
            if min(len(a[key]), len(b[key])) >= 3:
                slower = max(np.median(a[key]), np.median(b[key]))
                if slower >= 10_000 and not (key[0] == "copies" and slower < 100_000):
                    change = 100 * (np.median(b[key]) / np.median(a[key]) - 1)
                    changes["10-100 us" if slower < 100_000 else "over 100 us"].append((change, a[key], b[key]))
    return floors_by_rule(changes)


@pytest.mark.parametrize("runs, count", [(RUNS / "torch", 5), (BASE, 10)], ids=["torch-compile", "ab-spin"])
def test_each_floor_is_one_and_a_half_times_the_largest_significant_change_between_two_runs(runs, count, tmp_path):
    """Each class's floor is 1.5 times the largest |change| between two of the runs among the rows
    significant by the one-run comparison (the bootstrap interval of the ratio of medians excludes a
    change of 0), 0 where no row of the class was; recomputed from plain SQL over the exports and
    scipy.stats.bootstrap (floors_by_sql_and_scipy). The torch.compile block's five runs give both
    classes a floor (10-100 us 3.8%: a Triton layer norm's +2.55%; over 100 us 0.61%: the step
    range's +0.41%); ab_spin's ten, a kernel's 0.35% over 100 us and no significant row of
    10-100 us. diff --noise reads the record back as written."""
    out = tmp_path / "noise.json"
    result = noise(str(runs), "--out", str(out))
    assert result.exit_code == 0, result.output
    record = json.loads(out.read_text())
    exports = [runs / "nsys.sqlite", *sorted((runs / "runs").glob("nsys-*.sqlite"), key=lambda path: int(path.stem[5:]))]
    assert record["runs"] == len(exports) == count and record["gpu"] == "NVIDIA H200" and record["short_ns"] == SHORT_NS
    expected = floors_by_sql_and_scipy(exports)
    assert record["floor_pct"] == pytest.approx(expected, rel=1e-9, abs=1e-12)
    if runs == BASE:
        assert expected["10-100 us"] == 0 < expected["over 100 us"]
    else:
        assert min(expected.values()) > 0.5
    assert f"wrote {out}" in result.stdout and "Noise floors" in result.stdout
    diffed = CliRunner().invoke(app, ["diff", str(BASE / "nsys.sqlite"), str(RUNS / "ab-slower" / "nsys.sqlite"),
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
