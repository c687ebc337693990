"""Damaged and unusual inputs, third round: the surfaces added last (runs, history, noise records,
the Triton cache, the CPU rung), each case built from a committed capture and run as a user would."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nsprof.cli import app

DATA = Path(__file__).resolve().parent / "data"
ROOT_EXAMPLES = Path(__file__).resolve().parents[1] / "profiles" / "examples"


def invoke(*args):
    return CliRunner().invoke(app, [str(arg) for arg in args], env={"COLUMNS": "100"})


def without_kernels(source: Path, target: Path) -> Path:
    """`source`'s export with its kernel rows deleted: what nsys writes for a program whose GPU work
    is all CUDA graphs traced at graph level (its default), or that launched no kernel at all."""
    shutil.copyfile(source, target)
    with sqlite3.connect(target) as db:
        db.execute("DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL")
    return target


@pytest.mark.parametrize("source, graphs", [(DATA / "user-programs" / "graph.sqlite", 5),
                                            (DATA / "runs" / "ab-base" / "nsys.sqlite", 0)])
def test_an_export_with_no_kernel_rows_diffs_and_is_added_to_history(tmp_path, source, graphs):
    """Graphs alone (the graph program: 5 graph launches) or no kernel at all (ab_spin's copies and
    memsets): diff compares what there is and history keeps it, no traceback."""
    a, b = without_kernels(source, tmp_path / "a.sqlite"), without_kernels(source, tmp_path / "b.sqlite")
    diffed = invoke("diff", a, b, "--json")
    assert diffed.exit_code == 0, diffed.output
    rows = json.loads(diffed.stdout)["kernels"]
    assert all(row["kernel"].startswith("CUDA graph") for row in rows) and sum(row["a_count"] for row in rows) == graphs
    added = invoke("history", "add", a, "--db", tmp_path / "h.sqlite", "--commit", "c1", "--branch", "main")
    assert added.exit_code == 0, added.output
    assert "Traceback" not in diffed.output + added.output


def test_a_history_with_no_entries_is_named_as_empty(tmp_path):
    """What a first `history add` that failed leaves: a database with its tables and no entry.
    `check` compared nothing (exit 4, as with no baseline) and says what to do; `show` says so."""
    from nsprof.errors import NOTHING_COMPARED_EXIT_CODE
    from nsprof.history.store import opened

    db = tmp_path / "h.sqlite"
    with opened(db, create=True):
        pass
    checked = invoke("history", "check", "--db", db, "--fail-if-slower", 5)
    assert checked.exit_code == NOTHING_COMPARED_EXIT_CODE and "Traceback" not in checked.output
    [line] = checked.stderr.strip().splitlines()
    assert "holds no entries yet" in line and "nsprof history add RECORD --db" in line
    shown = invoke("history", "show", "--db", db)
    assert shown.exit_code == 0 and shown.stdout.startswith("History: no entries yet.")


FIFO_SAYS = "a FIFO (named pipe), not a regular file; a noise record is a JSON file"


@pytest.mark.parametrize("make, says, code", [
    (lambda d: d / "missing.json", "no such file or directory", 2),
    (lambda d: (os.mkfifo(d / "fifo.json"), d / "fifo.json")[1], FIFO_SAYS, 1),
    (lambda d: (os.mkfifo(d / "fifo"), d / "fifo")[1], FIFO_SAYS, 1),
    (lambda d: Path("/dev/zero"), "a character device, not a regular file; a noise record", 1),
    (lambda d: (d.joinpath("deep.json").write_text("[" * 200_000 + "]" * 200_000), d / "deep.json")[1],
     "not a noise record", 1),
    (lambda d: (d.joinpath("big.json").write_text(" " * (2 << 20) + "{}"), d / "big.json")[1],
     "a noise record of 2 MiB, larger than any nsprof writes", 1),
])
def test_a_noise_record_that_is_none_is_one_line_and_never_hangs(tmp_path, make, says, code):
    """diff --noise given a FIFO (read forever), /dev/zero (endless), JSON nested 200,000 deep, a
    2 MB file, or nothing: one line naming it, the fix, and nothing read that is not a file."""
    base = DATA / "runs" / "ab-base"
    result = invoke("diff", base / "nsys.sqlite", base / "runs" / "nsys-2.sqlite", "--noise", make(tmp_path))
    assert result.exit_code == code, result.output
    [line] = result.stderr.strip().splitlines()
    assert says in line and "nsprof noise" in line and "Traceback" not in result.output


def test_a_triton_cache_with_what_is_no_metadata_is_read_around_it(tmp_path):
    """The Triton program's capture with its cache salted: a FIFO named like metadata (read forever),
    one linked to /dev/zero (endless), JSON nested 200,000 deep, a kernel whose num_warps is NaN and
    shared memory Infinity: each is passed over, unread or as no metadata, and analyze reads the real
    kernels as before, no traceback."""
    from nsprof.parse.triton_cache import load_triton_cache

    profile = tmp_path / "triton"
    shutil.copytree(DATA / "real-programs" / "triton", profile, ignore=shutil.ignore_patterns("nsys.sqlite"))
    cache = profile / "triton-cache"
    before = load_triton_cache(cache)
    for name in ("fifo", "zero", "deep", "nan"):
        (cache / name).mkdir()
    os.mkfifo(cache / "fifo" / "kernel.json")
    (cache / "zero" / "kernel.json").symlink_to("/dev/zero")
    (cache / "deep" / "kernel.json").write_text("[" * 200_000 + "]" * 200_000)
    (cache / "nan" / "kernel.json").write_text('{"name": "nan_kernel", "num_warps": NaN, "shared": Infinity}')
    after = load_triton_cache(cache)
    assert after.reset_index(drop=True).equals(before.reset_index(drop=True)) and len(before) > 0
    result = invoke("analyze", profile)
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output[-2000:]


def test_a_history_database_is_never_written_into_a_capture_nor_taken_for_one(tmp_path):
    """history add --db inside a profile, and history show --out into one, are refused: a capture
    keeps only what the tools wrote. A database kept beside a directory of captures (a natural CI
    layout) is no capture of it: the directory still diffs and analyzes as its runs."""
    profile = tmp_path / "profile"
    shutil.copytree(DATA / "runs" / "ladder", profile, ignore=shutil.ignore_patterns("*.sqlite"))
    refused = invoke("history", "add", profile, "--db", profile / "history.sqlite")
    assert refused.exit_code == 2 and "nsprof writes nothing into a profile" in refused.stderr
    assert not (profile / "history.sqlite").exists()
    db = tmp_path / "h.sqlite"
    assert invoke("history", "add", profile, "--db", db, "--commit", "c1", "--branch", "main").exit_code == 0
    from nsprof import api

    name = str(api.history(db)["name"].iloc[0])
    charted = invoke("history", "show", "--db", db, "--name", name, "--out", profile)
    assert charted.exit_code == 2 and "nsprof writes nothing into a profile" in charted.stderr
    runs = tmp_path / "runs"
    runs.mkdir()
    for number, export in enumerate(sorted((DATA / "runs" / "ab-base" / "runs").glob("nsys-[2-4].sqlite")), 1):
        shutil.copyfile(export, runs / f"run{number}.sqlite")
    assert invoke("history", "add", runs, "--db", runs / "history.sqlite", "--commit", "c1", "--branch", "main").exit_code == 0
    diffed = invoke("diff", runs, runs, "--json")
    assert diffed.exit_code == 0, diffed.output
    assert json.loads(diffed.stdout)["runs"] == {"a": 3, "b": 3}  # the database is not a fourth run


def test_history_show_of_thousands_of_series_shows_those_that_moved_and_says_where_the_rest_are(tmp_path):
    """2,000 kernel families of 20 entries each, one of them stepping up 10% at entry 11: the table
    holds 50 rows, the one that shifted first, and names where every series is; its change points
    come from one vectorized test per series (the scipy call per window took minutes at this size)."""
    import numpy as np

    from nsprof.history.store import Measurement, add_entry, opened
    from nsprof.render.history import SHOWN_SERIES

    rng = np.random.default_rng(47)
    medians = 100_000 * np.exp(rng.normal(0, 0.002, (20, 2_000)))
    medians[10:, 7] *= 1.10
    with opened(tmp_path / "h.sqlite", create=True) as conn:
        for entry, row in enumerate(medians, 1):
            fields = {"added": f"2026-11-28T00:{entry:02d}:00", "commit_id": f"c{entry:02d}", "branch": "main",
                      "gpu": "NVIDIA H200", "source": "made by the test", "kind": "capture"}
            add_entry(conn, fields, [Measurement("kernel", f"kernel_{n:04d}", (float(value),)) for n, value in enumerate(row)])
    result = invoke("history", "show", "--db", tmp_path / "h.sqlite")
    assert result.exit_code == 0, result.output[-2000:]
    rows = [line for line in result.stdout.splitlines() if line.startswith("│")]
    assert len(rows) == SHOWN_SERIES and "kernel_0007" in rows[0] and rows[0].rstrip(" │").endswith("1")
    assert "of 2,000 (all of them: nsprof history show --json)" in " ".join(result.stdout.split())


def test_runs_of_an_h200_and_an_h100_in_one_side_are_named_not_pooled_silently(tmp_path):
    """A directory holding an H200's capture and an H100's, taken for the runs of one program: diff
    says its runs are pooled across two kinds of GPU, and history refuses to make them one entry."""
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copyfile(DATA / "runs" / "ab-base" / "nsys.sqlite", mixed / "a.sqlite")
    shutil.copyfile(ROOT_EXAMPLES / "h100-sgemm-cpu-1024" / "nsys.sqlite", mixed / "b.sqlite")
    diffed = invoke("diff", mixed, DATA / "runs" / "ab-slower", "--json")
    assert diffed.exit_code == 0, diffed.output
    warnings = json.loads(diffed.stdout)["warnings"]
    assert any(line.startswith("A's runs ran on 2 kinds of GPU (NVIDIA H100 80GB HBM3, NVIDIA H200)") for line in warnings)
    refused = invoke("history", "add", mixed, "--db", tmp_path / "h.sqlite")
    assert refused.exit_code == 2 and "a history entry is one GPU's" in refused.stderr


BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "records" / "2026-11-24-h200-sgemm" / "h200-sgemm.json"


def _drop(record: dict, field: str) -> dict:
    record["results"][0].pop(field)
    return record


@pytest.mark.parametrize("damage, says", [
    (lambda d: _drop(d, "op"), "has no op"),
    (lambda d: _drop(d, "size"), "has no size"),
    (lambda d: {**d, "env": "an H200"}, "\"env\" is str"),
    (lambda d: (d["results"][0].update(run_medians_ms=[1.0, "x"]), d)[1], "run_medians_ms that are not positive"),
    (lambda d: (d["results"][0].update(run_medians_ms=[]), d)[1], "run_medians_ms that are not positive"),
    (lambda d: (d["results"][0].update(runs="five"), d)[1], "has runs 'five'"),
    (lambda d: (d["results"][0].update(median_ms=-5.0), d)[1], "not a positive time"),
    (lambda d: {**d, "results": [*d["results"], d["results"][0]]}, "is listed twice"),
])
def test_a_damaged_bench_record_is_one_line_in_diff_and_history(tmp_path, damage, says):
    """A real bench record, one field damaged: diff and history add name the result and the field,
    and store nothing (before, each ended in a traceback, or was stored and blamed on the database)."""
    record = tmp_path / "bench.json"
    record.write_text(json.dumps(damage(json.loads(BENCH.read_text()))))
    for args in (("diff", record, BENCH), ("history", "add", record, "--db", tmp_path / "h.sqlite")):
        result = invoke(*args)
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output[-1500:]
        [line] = result.stderr.strip().splitlines()
        assert says in line and str(record) in line
    assert not (tmp_path / "h.sqlite").exists()


def _result(field, value):
    def damage(document):
        document["results"][0][field] = value
        return document
    return damage


def _roof(name, value):
    def damage(document):
        document["ceilings"][name]["value"] = value
        return document
    return damage


@pytest.mark.parametrize("file, damage, says", [
    ("bench-cpu.json", _result("size", "abc"), "not a size of sgemm"),
    ("bench-cpu.json", _result("size", ""), "has no size"),
    ("bench-cpu.json", _result("size", "1x2x3x4"), "not a size of sgemm"),
    ("bench-cpu.json", _result("median_ms", -5266.0), "not a positive time"),
    ("bench-cpu.json", _result("median_ms", 1e309), "not a finite number"),
    ("bench-cpu.json", _result("median_ms", 1e305), "not a positive time"),  # round 4: OverflowError before
    ("bench-cpu.json", _result("median_ms", 1e-300), "not a positive time"),
    ("bench-cpu.json", _result("size", "1" * 400 + "x1024x1024"), "not a size of sgemm"),
    ("ceilings-cpu.json", _roof("fp32_tflops", float("inf")), "not a finite number"),
    ("ceilings-cpu.json", _roof("dram_tbyte_per_s", "fast"), "not a measured roof"),
    ("ceilings-cpu.json", _roof("fp32_tflops", 1e30), "not a measured roof"),
])
@pytest.mark.parametrize("command", [("analyze",), ("roofline", "OUT", "--from"), ("report", "OUT", "--from"),
                                     ("explain", "gpu-vs-cpu", "--from")])
def test_a_damaged_cpu_rung_record_is_one_line_in_every_command(tmp_path, file, damage, says, command):
    """The H100 capture with the CPU rung, one record damaged: every command that reads it names the
    file and what is wrong in one line, and prints no time it cannot stand behind (-5,266,000 us)."""
    profile = tmp_path / "cpu"
    shutil.copytree(ROOT_EXAMPLES / "h100-sgemm-cpu-1024", profile, ignore=shutil.ignore_patterns("nsys.sqlite"))
    text = json.dumps(damage(json.loads((profile / file).read_text())))
    (profile / file).write_text(text.replace("Infinity", "1e999"))  # JSON's spelling, as Python reads it back
    result = invoke(*[str(tmp_path / "out") if part == "OUT" else part for part in command], profile)
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output[-1500:]
    [line] = result.stderr.strip().splitlines()
    assert says in line and file in line


@pytest.mark.parametrize("column, value", [("run_medians_ns", "not json"), ("run_medians_ns", "[]"),
                                           ("run_medians_ns", '["fast"]'), ("run_medians_ns", "[-1.0]"),
                                           ("median_ns", "quick"), ("median_ns", 1e12)])
def test_a_damaged_stored_row_is_one_line_naming_its_entry(tmp_path, column, value):
    """A history whose row was edited outside nsprof (text for a number, no runs, a median outside
    its runs): show and check name the entry and the measurement in one line."""
    db = tmp_path / "h.sqlite"
    runs = DATA / "runs" / "ab-base"
    for number, export in enumerate([runs / "nsys.sqlite", runs / "runs" / "nsys-2.sqlite"], 1):
        assert invoke("history", "add", export, "--db", db, "--commit", f"c{number}", "--branch", "main").exit_code == 0
    with sqlite3.connect(db) as conn:
        conn.execute(f"UPDATE measurements SET {column} = ? WHERE entry = 2 AND name = 'spin'", (value,))
    for args in (("show",), ("check", "--fail-if-slower", 5)):
        result = invoke("history", *args, "--db", db)
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output[-1500:]
        [line] = result.stderr.strip().splitlines()
        assert "entry 2's kernel spin is damaged" in line and "start a new one" in line


def test_control_characters_in_a_commit_or_branch_are_stored_spelled_out(tmp_path):
    db = tmp_path / "h.sqlite"
    added = invoke("history", "add", DATA / "runs" / "ab-base" / "nsys.sqlite", "--db", db,
                   "--commit", "abc\x1b[2J", "--branch", "main\x07\u202e")
    assert added.exit_code == 0, added.output
    shown = invoke("history", "show", "--db", db, "--name", "spin", "--out", tmp_path)
    assert "abc\\x1b" in shown.stdout and "\x1b" not in shown.stdout and "\x07" not in shown.stdout


def test_history_check_of_thousands_of_series_fails_on_the_one_that_moved(tmp_path):
    """2,000 kernel families, six entries of 1% noise, the newest with one family 10% slower: the
    gate fails on it alone, and its table shows the rows that moved most, not 2,000."""
    import numpy as np

    from nsprof.history.store import Measurement, add_entry, opened

    rng = np.random.default_rng(7)
    medians = 100_000 * np.exp(rng.normal(0, 0.01, (6, 2_000)))
    medians[-1, 7] *= 1.10
    with opened(tmp_path / "h.sqlite", create=True) as conn:
        for entry, row in enumerate(medians, 1):
            fields = {"added": f"2026-11-28T01:{entry:02d}:00", "commit_id": f"c{entry}", "branch": "main",
                      "gpu": "NVIDIA H200", "source": "made by the test", "kind": "capture"}
            add_entry(conn, fields, [Measurement("kernel", f"kernel_{n:04d}", (float(value),)) for n, value in enumerate(row)])
    result = invoke("history", "check", "--db", tmp_path / "h.sqlite", "--fail-if-slower", 5, "--json")
    assert result.exit_code == 1, result.output[-1500:]
    rows = json.loads(result.stdout)["rows"]
    assert [row["key"] for row in rows if row["status"] == "slower"] == ["kernel kernel_0007"] and len(rows) == 2_000
    table = invoke("history", "check", "--db", tmp_path / "h.sqlite", "--fail-if-slower", 5)
    assert sum(line.startswith("│") for line in table.stdout.splitlines()) <= 50 + 2  # rows, a name may wrap
    assert "kernel_0007" in table.stdout and "the 50 that moved most" in " ".join(table.stdout.split())


@pytest.mark.parametrize("make, says", [
    (lambda d: d, "a directory; a history database is an SQLite file"),
    (lambda d: (os.mkfifo(d / "fifo.sqlite"), d / "fifo.sqlite")[1], "a FIFO (named pipe), not a regular file"),
    (lambda d: ((d / "a").symlink_to(d / "b"), (d / "b").symlink_to(d / "a"), d / "a")[2], "symlink loop"),
])
@pytest.mark.parametrize("args", [("show",), ("add", DATA / "runs" / "ab-base" / "nsys.sqlite")])
def test_a_history_path_that_is_no_database_file_is_named_as_what_it_is(tmp_path, make, says, args):
    """--db naming a directory, a FIFO (never opened: it would wait forever) or a symlink loop: one
    line saying what it is, exit 2, where it once said "no history database"."""
    result = invoke("history", *args, "--db", make(tmp_path))
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    [line] = result.stderr.strip().splitlines()
    assert says in line and "--db history.sqlite" in line


def test_another_programs_database_with_tables_named_like_ours_is_left_unstamped(tmp_path):
    """A database of another program whose tables happen to be named entries and measurements:
    history add refuses it in one line and leaves it as it was (no schema, no user_version)."""
    db = tmp_path / "theirs.sqlite"
    with sqlite3.connect(db) as conn:
        conn.executescript("CREATE TABLE entries (id INTEGER, note TEXT); CREATE TABLE measurements (x REAL);")
    before = db.read_bytes()
    result = invoke("history", "add", DATA / "runs" / "ab-base" / "nsys.sqlite", "--db", db)
    assert result.exit_code == 1 and "an SQLite database, but not nsprof's history" in result.stderr
    assert db.read_bytes() == before


def test_a_history_whose_table_lost_a_column_is_named_by_its_file_not_by_sql(tmp_path):
    db = tmp_path / "h.sqlite"
    assert invoke("history", "add", DATA / "runs" / "ab-base" / "nsys.sqlite", "--db", db, "--commit", "c1",
                  "--branch", "main").exit_code == 0
    with sqlite3.connect(db) as conn:
        conn.execute("ALTER TABLE measurements DROP COLUMN run_medians_ns")
    result = invoke("history", "show", "--db", db)
    assert result.exit_code == 1 and "Traceback" not in result.output
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {db}: not a readable history database") and "SELECT" not in line


def test_the_chart_history_show_wrote_is_named_on_one_line_whatever_its_length(tmp_path):
    db = tmp_path / "h.sqlite"
    assert invoke("history", "add", DATA / "runs" / "ab-base" / "nsys.sqlite", "--db", db, "--commit", "c1",
                  "--branch", "main").exit_code == 0
    out = tmp_path / ("a-long-folder-name-" * 6) / "charts"
    result = invoke("history", "show", "--db", db, "--name", "spin", "--out", out)
    assert result.exit_code == 0, result.output
    assert f"wrote {out / 'history-spin.png'}" in result.stderr.splitlines()


def test_a_runs_folder_linked_back_to_its_profile_counts_no_run_twice(tmp_path):
    """runs/ as a symbolic link to the profile itself: the profile's own export is not taken for its
    second run; the manifest's five runs are named as missing instead, as for any partial copy."""
    profile = tmp_path / "ladder"
    shutil.copytree(DATA / "runs" / "ladder", profile, ignore=shutil.ignore_patterns("runs"))
    (profile / "runs").symlink_to(".")
    result = invoke("diff", profile, profile, "--stages", "v5,v6")
    assert result.exit_code == 1 and "Traceback" not in result.output
    [line] = result.stderr.strip().splitlines()
    assert "runs/nsys-2.sqlite" in line


def test_an_ncu_page_too_large_for_memory_is_one_line_with_what_to_do(tmp_path, monkeypatch):
    """A 1.5 GB ncu CSV read whole ran out of memory in a traceback; reading one is stood in for by
    a reader that runs out (building the file would take the memory the test is about)."""
    import nsprof.parse.readers as readers

    def exhausted(path):
        raise MemoryError

    monkeypatch.setattr(readers, "load_ncu_csv", exhausted)
    page = DATA / "user-programs" / "graph-full-raw.csv"
    result = invoke("analyze", page)
    assert result.exit_code == 1 and "Traceback" not in result.output
    [line] = result.stderr.strip().splitlines()
    assert "more than this machine's memory holds (ncu CSV page)" in line and "--launch-count" in line


def test_thousands_of_cpu_stage_records_show_the_first_and_say_where_the_rest_are(tmp_path):
    """2,000 CPU stage records at as many sizes (a sweep saved into one capture): analyze shows the
    first 60 stage rows and says how many more --json holds; roofline and report draw 8 of the sizes,
    spread from the smallest to the largest, and say so; every record stays in roofline.csv."""
    profile = tmp_path / "sweep"
    shutil.copytree(ROOT_EXAMPLES / "h100-sgemm-cpu-1024", profile, ignore=shutil.ignore_patterns("nsys.sqlite"))
    document = json.loads((profile / "bench-cpu.json").read_text())
    first = document["results"]
    document["results"] = [{**first[i % len(first)], "m": n, "n": n, "k": n, "size": f"{n}x{n}x{n}"}
                           for i, n in enumerate(range(64, 2064))]
    (profile / "bench-cpu.json").write_text(json.dumps(document))
    analyzed = invoke("analyze", profile)
    assert analyzed.exit_code == 0, analyzed.output
    assert "more stage rows in --json" in " ".join(analyzed.stdout.split())
    whole = json.loads(invoke("analyze", profile, "--json").stdout)
    assert len([row for row in whole["stages"] if row["stage"] == "v0"]) == 667
    drawn = invoke("roofline", tmp_path / "roofline", "--from", profile)
    assert drawn.exit_code == 0, drawn.output
    svg = (tmp_path / "roofline" / "roofline.svg").read_text()
    assert "8 of 2,000 sizes drawn, spread from 64x64x64 to 2063x2063x2063" in svg
    assert len((tmp_path / "roofline" / "roofline.csv").read_text().splitlines()) > 2000
    reported = invoke("report", tmp_path / "report", "--from", profile)
    assert reported.exit_code == 0, reported.output


def test_a_runs_link_that_loops_is_named_not_dropped(tmp_path):
    """A profile whose runs/ is a symlink to itself: its further runs cannot be read, and analyze and
    diff say so in one line instead of comparing fewer runs without a word."""
    profile = tmp_path / "train"
    shutil.copytree(Path(__file__).parent / "data" / "kineto" / "train", profile)
    (profile / "runs").symlink_to("runs")
    for command in (("analyze", profile), ("diff", profile, profile)):
        result = invoke(*command)
        assert result.exit_code != 0 and "runs: symlink loop" in result.output and "Traceback" not in result.output


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes any directory: no read-only directory to test")
def test_a_wal_history_in_a_read_only_directory_is_shown(tmp_path):
    """A history database in write-ahead-log mode, its directory read-only: show reads the file as it
    is (SQLite cannot make its -shm there), and writes nothing beside it."""
    folder = tmp_path / "ci"
    folder.mkdir()
    db = folder / "history.sqlite"
    assert invoke("history", "add", Path(__file__).parent / "data" / "kineto" / "train.json.gz", "--db", db,
                  "--commit", "abc").exit_code == 0
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    before = sorted(path.name for path in folder.iterdir())
    folder.chmod(0o555)
    try:
        shown = invoke("history", "show", "--db", db)
    finally:
        folder.chmod(0o755)
    assert shown.exit_code == 0, shown.output
    assert "1 entry" in shown.output and sorted(path.name for path in folder.iterdir()) == before
