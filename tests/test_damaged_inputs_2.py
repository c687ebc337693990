"""More damaged inputs (beside test_damaged_inputs.py): each built in tmp_path from a committed
capture and run as a user runs it, in a fresh process with a time limit and a memory limit, so that a
hang or a runaway allocation fails the test instead of stalling it or the machine. Each must end in
seconds with one line on stderr naming the real cause and a non-zero exit, or, where the damage is
harmless, give the same answer as the undamaged capture."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SGEMM = ROOT / "profiles" / "examples" / "h200-sgemm-1024"
LIMIT_S = 60
MEMORY_LIMIT = 2 << 30  # heap and mappings of each process (the JAX capture's analysis fits in it)


def _bounded_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_DATA, (MEMORY_LIMIT, MEMORY_LIMIT))  # a damaged input once took 8 GB


def nsprof(*args) -> tuple[subprocess.CompletedProcess, float]:
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "nsprof", *map(str, args)], capture_output=True, text=True,
                            timeout=LIMIT_S, cwd=ROOT, env={**os.environ, "COLUMNS": "100"},
                            preexec_fn=_bounded_memory if sys.platform == "linux" else None)
    return result, time.perf_counter() - start


def one_line_error(result: subprocess.CompletedProcess, *causes: str) -> str:
    assert result.returncode != 0, result.stdout[-500:]
    lines = result.stderr.splitlines()  # no blank line either (a progress bar's, once)
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert all(cause in lines[0] for cause in causes), lines[0]
    return lines[0]


def test_d01_a_sparse_rowid_reads_in_seconds_and_gives_the_same_answer(tmp_path):
    """One kernel's rowid set to 2^63 - 1 and one copy's to a negative number: the scan used to make a
    chunk per 250,000 rowids over the whole range and ran out of memory; now it reads the rows there are."""
    damaged = tmp_path / "nsys.sqlite"
    shutil.copy(SGEMM / "nsys.sqlite", damaged)
    with sqlite3.connect(damaged) as conn:
        conn.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET rowid = 9223372036854775807 WHERE rowid = 350")
        conn.execute("UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET rowid = -5 "
                     "WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_MEMCPY)")
    result, seconds = nsprof("analyze", damaged, "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    assert seconds < 30
    undamaged, _ = nsprof("analyze", SGEMM / "nsys.sqlite", "--json")
    doc, expected = json.loads(result.stdout), json.loads(undamaged.stdout)
    assert doc["kernel_summary"] == expected["kernel_summary"] and doc["memcpy_summary"] == expected["memcpy_summary"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
@pytest.mark.parametrize("name", ["x.csv", "x.sqlite", "x.ncu-rep", "x.json"])
def test_d02_a_fifo_is_named_as_one_instead_of_read_forever(tmp_path, name):
    fifo = tmp_path / name
    os.mkfifo(fifo)
    for args in (("analyze", fifo), ("diff", fifo, fifo), ("report", tmp_path / "out", "--from", fifo)):
        result, seconds = nsprof(*args)
        one_line_error(result, str(fifo), "a FIFO (named pipe), not a regular file")
        assert seconds < 20
    result, _ = nsprof("analyze", SGEMM, "--ceilings", fifo)
    one_line_error(result, "a FIFO (named pipe), not a regular file", "--ceilings")
    assert not (tmp_path / "out").exists()  # nothing written


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_d02_an_endless_device_linked_as_a_capture_is_named_as_one(tmp_path):
    link = tmp_path / "x.csv"
    link.symlink_to("/dev/zero")
    result, seconds = nsprof("analyze", link)
    one_line_error(result, str(link), "a character device, not a regular file")
    assert seconds < 20


@pytest.mark.parametrize("table", ["ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND"])
@pytest.mark.parametrize("damage", ["NULL", "duplicated"])
def test_d04_a_damaged_enum_label_is_read_around(tmp_path, table, damage):
    """A NULL label reads as an unknown kind, labels shared by several ids as one: the copies are still
    counted in full (the same count and bytes as the undamaged export)."""
    damaged = tmp_path / "nsys.sqlite"
    shutil.copy(SGEMM / "nsys.sqlite", damaged)
    with sqlite3.connect(damaged) as conn:
        value = "NULL" if damage == "NULL" else f"(SELECT label FROM {table} LIMIT 1)"
        where = f"WHERE rowid = (SELECT min(rowid) FROM {table})" if damage == "NULL" else ""
        conn.execute(f"UPDATE {table} SET label = {value} {where}")
    result, _ = nsprof("analyze", damaged, "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    undamaged, _ = nsprof("analyze", SGEMM / "nsys.sqlite", "--json")
    copies = [json.loads(out)["memcpy_summary"] for out in (result.stdout, undamaged.stdout)]
    assert len({(sum(row["count"] for row in summary), sum(row["bytes"] for row in summary)) for summary in copies}) == 1
    assert sum(row["count"] for row in json.loads(result.stdout)["kernel_summary"]) == \
        sum(row["count"] for row in json.loads(undamaged.stdout)["kernel_summary"])


DEEP = "[" * 200_000 + "]" * 200_000


def test_d04_json_nested_too_deeply_is_one_line_each(tmp_path):
    profile = tmp_path / "profile"
    shutil.copytree(SGEMM, profile)
    (profile / "manifest.json").write_text('{"a": ' + DEEP + "}")
    one_line_error(nsprof("analyze", profile)[0], "manifest.json: unreadable manifest (nested too deeply to read)")
    ceilings = tmp_path / "ceilings.json"
    ceilings.write_text('{"ceilings": ' + DEEP + "}")
    one_line_error(nsprof("analyze", SGEMM, "--ceilings", ceilings)[0], "nested too deeply to read", "nsprof ceilings")
    bench = tmp_path / "bench.json"
    bench.write_text('{"results": ' + DEEP + "}")
    one_line_error(nsprof("diff", bench, bench)[0], "nested too deeply to read", "nsprof bench --save-as")


@pytest.mark.parametrize("value", [float("inf"), True, 1e-300])
def test_d04_d18_a_ceiling_that_is_no_measurement_is_ignored(tmp_path, value):
    profile = tmp_path / "profile"
    shutil.copytree(SGEMM, profile)
    manifest = json.loads((profile / "manifest.json").read_text())
    manifest["ceilings"]["ceilings"]["dram_tbyte_per_s"]["value"] = value
    (profile / "manifest.json").write_text(json.dumps(manifest))
    result, _ = nsprof("analyze", profile, "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    ceiling = json.loads(result.stdout)["ceiling"]
    assert ceiling["dram_tbyte_per_s"] == 4.8 and ceiling["sources"].get("dram_tbyte_per_s") is None  # the datasheet's


@pytest.mark.parametrize("median", ["fast", -1.0, 0, True])
def test_d04_a_bench_median_that_is_no_time_is_named(tmp_path, median):
    record = {"results": [{"op": "sgemm", "stage": "v1", "size": "1024x1024x1024", "median_ms": median,
                           "status": "ok"}], "env": {}}
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(record))
    one_line_error(nsprof("diff", path, path)[0], f"result 1 (v1) has median_ms {median!r}, not a positive time")


@pytest.mark.parametrize("window", ["0:1e309", "0:1e300", "nan:5", "-inf:"])
def test_d04_a_window_past_any_time_is_a_usage_error(tmp_path, window):
    result, _ = nsprof("timeline", SGEMM, "--window", window, "--out", tmp_path / "t.png")
    assert result.returncode == 2
    one_line_error(result, f"--window '{window}' is not START:END in milliseconds")
    assert not (tmp_path / "t.png").exists()


def test_a_reader_that_goes_away_ends_the_output_quietly():
    """`nsprof analyze X | head -1`: exit 0 and nothing on stderr, as other tools end on a closed pipe."""
    process = subprocess.Popen([sys.executable, "-m", "nsprof", "analyze", str(SGEMM)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, cwd=ROOT, env={**os.environ, "COLUMNS": "100"})
    assert process.stdout is not None and process.stderr is not None
    process.stdout.readline()
    process.stdout.close()  # as head does after its lines
    assert process.wait(timeout=LIMIT_S) == 0
    assert process.stderr.read() == b""


def test_d17_a_gate_that_compared_nothing_fails_with_its_own_code(tmp_path):
    """Two bench records with no stage in common: --fail-if-slower must not pass (exit 0) having
    compared nothing, nor read as a regression (1): exit 4, saying so."""
    def record(stage: str) -> dict:
        return {"results": [{"op": "sgemm", "stage": stage, "size": "1024x1024x1024", "median_ms": 1.0, "status": "ok",
                             "runs": 10, "q1_ms": 1.0, "q3_ms": 1.0}], "env": {}}
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(record("v1")))
    b.write_text(json.dumps(record("v2")))
    result, _ = nsprof("diff", a, b, "--fail-if-slower", "5")
    assert result.returncode == 4
    one_line_error(result, "share no kernel, range or stage, so --fail-if-slower compared nothing")
    same, _ = nsprof("diff", a, a, "--fail-if-slower", "5")
    assert same.returncode == 0, same.stderr


def test_d19_a_trace_named_as_the_chart_is_refused_before_anything_is_written(tmp_path):
    target = tmp_path / "x.png"
    result, _ = nsprof("timeline", ROOT / "profiles" / "examples" / "h200-pipeline-1024", "--out", target, "--trace", target)
    assert result.returncode == 2
    one_line_error(result, "--out and --trace are the same file", "Give the trace a name of its own")
    assert not target.exists()


def test_d10_a_wal_mode_export_is_read_without_writing_beside_it(tmp_path):
    """SQLite opens a WAL-mode database read-only by creating -shm and -wal files beside it; nsprof
    opens exports immutable, so the profile directory is left as it was, and the answer is the same."""
    export = tmp_path / "nsys.sqlite"
    shutil.copy(SGEMM / "nsys.sqlite", export)
    with sqlite3.connect(export) as conn:
        assert conn.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    before = sorted(path.name for path in tmp_path.iterdir())
    result, _ = nsprof("analyze", export, "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    assert sorted(path.name for path in tmp_path.iterdir()) == before == ["nsys.sqlite"]
    undamaged, _ = nsprof("analyze", SGEMM / "nsys.sqlite", "--json")
    assert json.loads(result.stdout)["kernel_summary"] == json.loads(undamaged.stdout)["kernel_summary"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file: no permission to deny")
def test_d09_an_unreadable_export_says_permission_denied(tmp_path):
    export = tmp_path / "nsys.sqlite"
    shutil.copy(SGEMM / "nsys.sqlite", export)
    export.chmod(0)
    one_line_error(nsprof("analyze", export)[0], "permission denied", "Check the file's permissions")


def test_d15_a_view_in_place_of_an_event_table_is_named(tmp_path):
    damaged = tmp_path / "nsys.sqlite"
    shutil.copy(SGEMM / "nsys.sqlite", damaged)
    with sqlite3.connect(damaged) as conn:
        conn.execute("ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO kernels_elsewhere")
        conn.execute("CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS SELECT * FROM kernels_elsewhere")
    one_line_error(nsprof("analyze", damaged)[0], "CUPTI_ACTIVITY_KIND_KERNEL is a view, not the table nsys writes",
                   "nsys export")


def test_d15_nvtx_ranges_that_end_before_they_start_are_damage(tmp_path):
    damaged = tmp_path / "nsys.sqlite"
    shutil.copy(SGEMM / "nsys.sqlite", damaged)
    with sqlite3.connect(damaged) as conn:
        conn.execute("UPDATE NVTX_EVENTS SET end = start - 5 "
                     "WHERE rowid IN (SELECT rowid FROM NVTX_EVENTS WHERE end IS NOT NULL LIMIT 2)")
    one_line_error(nsprof("analyze", damaged)[0], "2 of the", "NVTX ranges end before they start", "damaged")


def test_d04_nvtx_ranges_without_a_start_are_damage(tmp_path):
    """nsys declares NVTX_EVENTS.start NOT NULL: the table is rebuilt without the constraint to
    hold the damage (a NULL end is a range still open, which stays legal)."""
    damaged = tmp_path / "nsys.sqlite"
    shutil.copy(SGEMM / "nsys.sqlite", damaged)
    with sqlite3.connect(damaged) as conn:
        conn.executescript("CREATE TABLE loose AS SELECT * FROM NVTX_EVENTS; DROP TABLE NVTX_EVENTS; "
                           "ALTER TABLE loose RENAME TO NVTX_EVENTS; UPDATE NVTX_EVENTS SET start = NULL "
                           "WHERE rowid IN (SELECT rowid FROM NVTX_EVENTS WHERE eventType = 59 LIMIT 3)")
    for command in (["analyze", damaged], ["timeline", damaged, "--out", tmp_path / "out"],
                    ["report", tmp_path / "out", "--from", damaged]):
        one_line_error(nsprof(*command)[0], "3 of the 140 NVTX ranges have no start time", "nsys export")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("damage, cause", [
    ("ALTER TABLE StringIds RENAME COLUMN value TO v2", "no such column: value"),
    ("ALTER TABLE NVTX_EVENTS RENAME COLUMN text TO t2", "no such column"),
    ("WITHOUT ROWID", "no such column: rowid"),
])
def test_d20_a_missing_column_or_rowid_names_the_fix(tmp_path, damage, cause):
    damaged = tmp_path / "nsys.sqlite"
    shutil.copy(SGEMM / "nsys.sqlite", damaged)
    with sqlite3.connect(damaged) as conn:
        if damage == "WITHOUT ROWID":  # the memset table rebuilt without rowids
            columns = ", ".join(f"{row[1]} INTEGER" for row in conn.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_MEMSET)"))
            conn.execute(f"CREATE TABLE m ({columns}, PRIMARY KEY (start, end, correlationId)) WITHOUT ROWID")
            conn.execute("INSERT INTO m SELECT * FROM CUPTI_ACTIVITY_KIND_MEMSET")
            conn.execute("DROP TABLE CUPTI_ACTIVITY_KIND_MEMSET")
            conn.execute("ALTER TABLE m RENAME TO CUPTI_ACTIVITY_KIND_MEMSET")
        else:
            conn.execute(damage)
    one_line_error(nsprof("analyze", damaged)[0], cause, "Export the report again: nsys export")


def test_d07_an_absurd_time_is_damage_not_a_negative_share(tmp_path):
    """A kernel ending at 2^63 - 1 ns: its duration overflowed the int64 sums into a "% time" of -4827.8."""
    damaged = tmp_path / "nsys.sqlite"
    shutil.copy(SGEMM / "nsys.sqlite", damaged)
    with sqlite3.connect(damaged) as conn:
        conn.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = 9223372036854775807 WHERE rowid = 5")
    one_line_error(nsprof("analyze", damaged)[0], "1 of the 350 rows of CUPTI_ACTIVITY_KIND_KERNEL last longer than a week",
                   "damaged")


def test_d14_write_errors_name_the_result_not_its_staging_folder():
    from nsprof.cli import user_path

    staged = OSError(13, "Permission denied", "/out/.nsprof-4242-ab12cd34/roofline.png")
    assert user_path(staged) == "/out/roofline.png"
    assert user_path(OSError(13, "Permission denied", "/out/.nsprof-ab12cd34/report.md")) == "/out/report.md"


def test_d14_a_full_disk_says_so_and_what_to_do(tmp_path, monkeypatch):
    import errno

    from typer.testing import CliRunner

    from nsprof import api
    from nsprof.cli import app

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "timeline.png"))

    monkeypatch.setattr(api, "write_timeline", full)
    result = CliRunner().invoke(app, ["timeline", str(ROOT / "profiles" / "examples" / "h200-pipeline-1024"),
                                      "--out", str(tmp_path / "timeline.png")])
    assert result.exit_code == 1
    assert result.output.strip() == (f"error: {tmp_path / 'timeline.png'}: No space left on device. Free space there, "
                                     "or write elsewhere.")


def test_d18_a_huge_manifest_is_refused_before_it_is_read(tmp_path):
    profile = tmp_path / "profile"
    shutil.copytree(SGEMM, profile)
    with open(profile / "manifest.json", "r+b") as manifest:
        manifest.truncate(80 * 2**20)  # sparse: 80 MiB on paper, nothing on disk
    result, seconds = nsprof("analyze", profile)
    one_line_error(result, "manifest.json: a manifest of 80 MiB, larger than any nsprof writes")
    assert seconds < 20


def test_d16_one_bad_capture_among_many_is_named_and_the_rest_analyzed(tmp_path):
    """On a real local cluster: two real ranks, a file that is no database and a truncated export.
    The two are analyzed and shown, both bad files are named on one line, and the exit is 1."""
    ranks = ROOT / "tests" / "data" / "ranks"
    for rank in (0, 1):
        shutil.copy(ranks / f"rank{rank}.sqlite", tmp_path / f"rank{rank}.sqlite")
    (tmp_path / "rank2.sqlite").write_text("not a database")
    (tmp_path / "rank3.sqlite").write_bytes((ranks / "rank0.sqlite").read_bytes()[:5000])
    result, _ = nsprof("analyze", tmp_path, "--workers", "2", "--json")
    line = one_line_error(result, "2 of the 4 captures could not be read", "rank2.sqlite: unreadable",
                          "rank3.sqlite: unreadable", "Re-export them")
    assert str(tmp_path / "rank2.sqlite") not in line  # each named once, by its name
    doc = json.loads(result.stdout)
    assert [row["file"] for row in doc["captures"]] == ["rank0.sqlite", "rank1.sqlite"]
    assert [entry.split(":")[0] for entry in doc["failed"]] == ["rank2.sqlite", "rank3.sqlite"]


def test_d04_a_tree_1200_directories_deep_is_walked_and_its_capture_named(tmp_path):
    """report --from walked the tree by recursion (RecursionError at 1,000 levels); now it finds the
    capture at the bottom, whose path SQLite cannot open, and says so in one line."""
    here = os.getcwd()
    try:
        os.chdir(tmp_path)
        for _ in range(1200):  # os.makedirs recurses too: one level at a time
            os.mkdir("d")
            os.chdir("d")
        shutil.copytree(SGEMM, "prof")
    finally:
        os.chdir(here)
    try:
        result, _ = nsprof("report", tmp_path / "out", "--from", tmp_path)
        one_line_error(result, "longer than SQLite opens (512)", "shorter path")
    finally:  # pytest's clean-up of old temporary folders (and os.walk) recurse: leave them no deep tree
        remove_deep(tmp_path / "d")


def remove_deep(top: Path) -> None:
    """Remove a directory tree of any depth without recursion: deepest folders first."""
    folders, stack = [], [str(top)]
    while stack:
        folder = stack.pop()
        folders.append(folder)
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    os.unlink(entry.path)
    for folder in reversed(folders):
        os.rmdir(folder)


@pytest.mark.parametrize("option, value, cause", [
    ("--scheduler", "MISSING", "no such scheduler file"),
    ("--scheduler", "", "--scheduler is empty"),
    ("--scheduler", "foo://", "is no scheduler address Dask can use (ValueError: unknown address scheme"),
    ("--scheduler", "GARBAGE", "is no scheduler file Dask can use"),
    ("--scheduler", "LIST", "is no scheduler file Dask can use (TypeError"),
    ("--worker-memory", "abc", "--worker-memory 'abc' is not a size"),
    ("--worker-memory", "1KiB", "--worker-memory 1KiB is too little for a worker to read a capture"),
])
def test_d05_d03_scheduler_and_worker_memory_values_are_checked_before_a_cluster_starts(tmp_path, option, value, cause):
    files = {"MISSING": tmp_path / "missing.json", "GARBAGE": tmp_path / "garbage.json", "LIST": tmp_path / "list.json"}
    files["GARBAGE"].write_text("garbage")
    files["LIST"].write_text("[1, 2]")
    result, seconds = nsprof("analyze", ROOT / "tests" / "data" / "ranks", option, str(files.get(value, value)))
    one_line_error(result, cause)
    assert seconds < 30


def test_d03_a_scheduler_that_never_answers_is_given_up_on(tmp_path):
    """A real listener on loopback that accepts and never speaks: distributed's own timeout did not
    bound the handshake (past 300 s); nsprof gives up after CONNECT_S, in one line."""
    import socket
    import threading

    from nsprof.many import CONNECT_S

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: [accepted.append(listener.accept()[0]) for _ in range(8)], daemon=True).start()
    try:
        address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
        result, seconds = nsprof("analyze", ROOT / "tests" / "data" / "ranks", "--scheduler", address)
        one_line_error(result, f"the Dask scheduler {address} did not answer within {CONNECT_S:.0f} s")
        assert CONNECT_S <= seconds < CONNECT_S + 20
    finally:
        listener.close()
        for connection in accepted:
            connection.close()


def test_d16_a_relative_directory_is_read_by_workers_that_run_elsewhere(tmp_path):
    """A real scheduler and a worker started in another directory (as on another host sharing the
    file system): `analyze ranks --scheduler FILE`, run from the directory holding `ranks`, reads
    every capture, where the worker once looked for `ranks/rank0.sqlite` in its own directory."""
    shutil.copytree(ROOT / "tests" / "data" / "ranks", tmp_path / "ranks")
    elsewhere = tmp_path / "worker-home"
    elsewhere.mkdir()
    scheduler_file = tmp_path / "scheduler.json"
    started = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                                 "--no-dashboard", "--scheduler-file", str(scheduler_file)], cwd=elsewhere,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + 30
        while not scheduler_file.is_file() and time.monotonic() < deadline:
            time.sleep(0.2)
        started.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file",
                                         str(scheduler_file), "--nthreads", "1", "--no-dashboard"], cwd=elsewhere,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        result = subprocess.run([sys.executable, "-m", "nsprof", "analyze", "ranks", "--json",
                                 "--scheduler", str(scheduler_file)], capture_output=True, text=True,
                                timeout=LIMIT_S, cwd=tmp_path)
        assert result.returncode == 0, result.stderr[-2000:]
        captures = json.loads(result.stdout)["captures"]
        assert sorted(row["file"] for row in captures) == [f"rank{n}.sqlite" for n in range(4)]
    finally:
        for process in reversed(started):
            process.terminate()
            process.wait(timeout=30)


def test_d05_a_worker_killed_under_a_capture_names_that_capture(tmp_path, real_program):
    """A real local cluster whose workers may hold 250 MiB: the JAX capture with its events
    repeated 8 times takes more, so the nanny kills each worker that reads it until Dask gives up
    (KilledWorker). The line names that capture and the cause; the small one is analyzed."""
    captures = tmp_path / "captures"
    captures.mkdir()
    shutil.copyfile(ROOT / "tests" / "data" / "ranks" / "rank0.sqlite", captures / "small.sqlite")
    shutil.copyfile(real_program("jax-a") / "nsys.sqlite", captures / "large.sqlite")
    with sqlite3.connect(captures / "large.sqlite") as conn:
        for _ in range(3):
            conn.execute("INSERT INTO NVTX_EVENTS SELECT * FROM NVTX_EVENTS")
            conn.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL")
    result, seconds = nsprof("analyze", captures, "--json", "--worker-memory", "250MiB", "--workers", "2")
    one_line_error(result, "1 of the 2 captures could not be read: large.sqlite: the worker analyzing it died "
                   "(out of memory? raise --worker-memory)")
    assert [row["file"] for row in json.loads(result.stdout)["captures"]] == ["small.sqlite"]
    assert result.returncode == 1 and seconds < LIMIT_S


def test_d05_an_error_that_is_not_nsprofs_names_its_capture_and_the_rest_go_on(monkeypatch):
    """A real (in-process) local cluster; reading one of the four ranks raises an error nsprof
    does not know: that rank is named with the error, the other three are analyzed, exit 1."""
    from distributed import LocalCluster
    from typer.testing import CliRunner

    from nsprof.analyze import captures
    from nsprof.cli import app

    row = captures.capture_row

    def fails_on_rank2(export, *args):
        if Path(export.path).name == "rank2.sqlite":
            raise KeyError("a column a library forgot")
        return row(export, *args)

    monkeypatch.setattr(captures, "capture_row", fails_on_rank2)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        result = CliRunner().invoke(app, ["analyze", str(ROOT / "tests" / "data" / "ranks"), "--json",
                                          "--scheduler", cluster.scheduler_address])
    assert result.exit_code == 1
    assert [row["file"] for row in json.loads(result.stdout)["captures"]] == ["rank0.sqlite", "rank1.sqlite",
                                                                            "rank3.sqlite"]
    assert result.stderr.strip() == ("error: 1 of the 4 captures could not be read: rank2.sqlite: KeyError: 'a column "
                                     "a library forgot'. Re-export them (nsys export --type sqlite), or move them out "
                                     f"of {ROOT / 'tests' / 'data' / 'ranks'}")


CONTROL = "\x1b[2J\x1b]0;pwned\x07\n\r\x00\u202e"  # clear screen, set the title, newline, NUL, RTL override
SPELLED = "\\x1b[2J\\x1b]0;pwned\\x07\\n\\r\\x00\\u202e"
RAW_CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e]")  # any but the newline ending a line


def test_d06_control_characters_in_names_are_spelled_out_everywhere(tmp_path):
    """A kernel, an NVTX range, the GPU and the manifest's device named with escape sequences, a
    newline, a NUL and a direction override: terminal tables, JSON, one-line errors and report.md
    show each spelled out (`\\x1b`), never obey it."""
    profile = tmp_path / "evil"
    shutil.copytree(SGEMM, profile)
    with sqlite3.connect(profile / "nsys.sqlite") as conn:
        conn.execute("UPDATE StringIds SET value = value || ? WHERE value = 'sgemm_v1'", (CONTROL,))
        conn.execute("UPDATE StringIds SET value = ? || value WHERE value LIKE 'sgemm/v2/%'", (CONTROL,))
        conn.execute("UPDATE TARGET_INFO_GPU SET name = name || ?", (CONTROL,))
    ncu = profile / "ncu-raw.csv"
    ncu.write_text(ncu.read_text().replace('"sgemm_v10_128x128_unchecked"', f'"sgemm_v10{CONTROL}"'))
    manifest = json.loads((profile / "manifest.json").read_text())
    manifest["device"]["name"] += CONTROL
    (profile / "manifest.json").write_text(json.dumps(manifest))

    analyzed, _ = nsprof("analyze", profile)
    assert analyzed.returncode == 0, analyzed.stderr[-2000:]
    assert f"sgemm_v1{SPELLED}" in analyzed.stdout and not RAW_CONTROLS.search(analyzed.stdout)
    assert "sgemm_v10\\x1b[2J" in analyzed.stdout  # the ncu name, in the hot kernels table
    as_json, _ = nsprof("analyze", profile, "--json")
    names = [row["kernel"] for row in json.loads(as_json.stdout)["kernel_summary"]]
    assert f"sgemm_v1{SPELLED}" in names and not RAW_CONTROLS.search(as_json.stdout)

    missing, _ = nsprof("timeline", profile, "--range", "sgemm/v2/nosuch", "--out", tmp_path / "t.png")
    line = one_line_error(missing, "no NVTX range named 'sgemm/v2/nosuch'", f"{SPELLED}sgemm/v2/")  # the nearest
    assert not RAW_CONTROLS.search(line)

    reported, _ = nsprof("report", tmp_path / "reports", "--from", profile)
    assert reported.returncode == 0, reported.stderr[-2000:]
    markdown = next((tmp_path / "reports").glob("*/report.md")).read_text()
    # Markdown escapes the spelling's backslashes and brackets in turn
    assert "sgemm_v1\\\\x1b\\[2J" in markdown and not RAW_CONTROLS.search(markdown)
    assert not RAW_CONTROLS.search(reported.stdout + reported.stderr)


def raw_page_with(tmp_path, change) -> Path:
    """SGEMM's raw ncu page with `change(header, units, rows)` applied to its rows of cells."""
    import csv
    header, units, *rows = list(csv.reader((SGEMM / "ncu-raw.csv").open(newline="")))
    change(header, units, rows)
    damaged = tmp_path / "ncu-raw.csv"
    with damaged.open("w", newline="") as file:
        csv.writer(file, quoting=csv.QUOTE_ALL).writerows([header, units, *rows])
    return damaged


def ncu_kernels(path: Path) -> list[dict]:
    result, _ = nsprof("analyze", path, "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)["kernels"]


def set_cell(column: str, value: str, row: int | None = None, units_row: bool = False):
    def change(header, units, rows):
        at = header.index(column)
        for cells in ([units] if units_row else rows if row is None else [rows[row]]):
            cells[at] = value
    return change


@pytest.mark.parametrize(("column", "unit", "scale"), [("gpu__time_duration.sum", "psecond", 1e-3),
                                                       ("gpu__time_duration.sum", "usecond", 1e3),
                                                       ("dram__bytes_read.sum", "KiB", 1024.0),
                                                       ("dram__bytes_read.sum", "Mbyte", 1e6)])
def test_d08_time_and_size_units_are_converted(tmp_path, column, unit, scale):
    """The page printed in another unit: the values nsprof computes with move by the unit's factor."""
    import csv
    header, _, *rows = list(csv.reader((SGEMM / "ncu-raw.csv").open(newline="")))
    printed = [float(row[header.index(column)].replace(",", "")) for row in rows]  # in bytes or ns
    undamaged = ncu_kernels(SGEMM / "ncu-raw.csv")
    scaled = ncu_kernels(raw_page_with(tmp_path, set_cell(column, unit, units_row=True)))
    assert len(scaled) == len(undamaged) == len(printed) == 33
    for before, after, value in zip(undamaged, scaled, printed):
        if column == "gpu__time_duration.sum":
            assert after["duration_ns"] == pytest.approx(value * scale) and before["duration_ns"] == value
        else:  # dram_bytes adds the bytes written, whose unit did not change
            assert after["dram_bytes"] - before["dram_bytes"] == pytest.approx(value * (scale - 1))


@pytest.mark.parametrize(("change", "causes"), [
    (set_cell("gpu__time_duration.sum", "cycle", units_row=True),
     ["gpu__time_duration.sum is in 'cycle', which nsprof cannot convert to ns"]),
    (set_cell("dram__bytes_read.sum", "sector", units_row=True),
     ["dram__bytes_read.sum is in 'sector', which nsprof cannot convert to byte"]),
    (set_cell("gpu__time_duration.sum", "-353,216", row=3), ["launch 3's gpu__time_duration.sum is -353216, below zero"]),
    (set_cell("gpu__time_duration.sum", "fast", row=7), ["launch 7's gpu__time_duration.sum is 'fast', not a number"]),
    (set_cell("ID", "4", row=5), ["launch id 4 names 2 rows", "two exports joined?"]),
    (lambda header, units, rows: header.__setitem__(header.index("dram__bytes_write.sum"), "dram__bytes_read.sum"),
     ["the column 'dram__bytes_read.sum' appears 2 times"]),
], ids=["cycle", "sector", "negative", "text", "duplicate-id", "duplicate-column"])
def test_d08_a_damaged_ncu_value_is_named_with_its_launch(tmp_path, change, causes):
    damaged = raw_page_with(tmp_path, change)
    for command in (["analyze", damaged], ["roofline", tmp_path / "out", "--from", damaged]):
        result, seconds = nsprof(*command)
        assert result.returncode == 1 and seconds < 30
        one_line_error(result, str(damaged), *causes, "Export it again" if "launch id" not in causes[0] and
                       "column" not in causes[0] else "ncu --csv --page raw")
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_d08_repeated_metric_rows_of_one_launch_in_a_details_page_are_named(tmp_path):
    details = (ROOT / "tests" / "data" / "h200" / "ncu-sgemm-ladder-1024-details.csv").read_text()
    lines = details.splitlines(keepends=True)
    duration = next(line for line in lines if '"gpu__time_duration.sum"' in line)
    damaged = tmp_path / "ncu-details.csv"
    damaged.write_text("".join(lines[:lines.index(duration) + 1]) + duration + "".join(lines[lines.index(duration) + 1:]))
    result, _ = nsprof("analyze", damaged)
    one_line_error(result, "launch 0 has two 'gpu__time_duration.sum' rows in section 'Command line profiler metrics'")


TORCH_COMPILE = ROOT / "profiles" / "examples" / "h200-program-torch-compile"


def block_ends(report: bytes) -> list[int]:
    """Where each block of an .ncu-rep ends (the layout nsprof.parse.ncu_rep_file walks), read here
    with struct alone: u32 length-prefixed file header, then u32-prefixed block headers, each
    followed by a payload of its field 5's bytes."""
    import struct

    from nsprof.parse.ncu_rep_file import _varint_fields
    (length,) = struct.unpack_from("<I", report, 4)
    at, ends = 8 + length, []
    while at < len(report):
        (length,) = struct.unpack_from("<I", report, at)
        header = _varint_fields(report[at + 4:at + 4 + length], Path("x"))
        at += 4 + length + header.get(5, 0)
        ends.append(at)
    return ends


def test_d11_a_report_cut_at_a_block_boundary_is_named_against_ncus_log(tmp_path):
    """The last launch's blocks cut off: the file reads as a whole report of 2 launches, but ncu.log
    beside it says ncu profiled 3."""
    profile = tmp_path / "torch-compile"
    shutil.copytree(TORCH_COMPILE, profile)
    (profile / "ncu-raw.csv").unlink()  # the pages exported from the report would stand in for it
    (profile / "ncu-details.csv").unlink()
    report = (profile / "ncu.ncu-rep").read_bytes()
    ends = block_ends(report)
    assert ends[-1] == len(report) and len(ends) == 14
    (profile / "ncu.ncu-rep").write_bytes(report[:ends[-3]])  # without the last launch's two blocks
    for command in (["analyze", profile], ["report", tmp_path / "reports", "--from", profile]):
        result, _ = nsprof(*command)
        assert result.returncode == 1
        one_line_error(result, "ncu.ncu-rep: cut short: it holds 2 kernel launches, and ncu.log beside it says ncu "
                       "profiled 3", "Capture it again")
    assert not (tmp_path / "reports").exists()


def test_d11_a_report_of_its_file_header_alone_is_truncated_not_filtered(tmp_path):
    import struct
    report = (TORCH_COMPILE / "ncu.ncu-rep").read_bytes()
    (length,) = struct.unpack_from("<I", report, 4)
    header_only = tmp_path / "x.ncu-rep"
    header_only.write_bytes(report[:8 + length])  # the signature, the header's length and the header
    line = one_line_error(nsprof("analyze", header_only)[0], "x.ncu-rep: truncated: it ends after ncu's file header")
    assert "filter" not in line


def test_d12_ctrl_c_between_the_moves_of_a_set_waits_for_the_last(tmp_path, monkeypatch):
    """Ctrl-C arrives right after the first file of a new roofline set is moved into place: the
    other two follow before the interrupt is taken, so the set is the new one whole, never a new
    PNG beside the old SVG and CSV."""
    import signal

    from typer.testing import CliRunner

    from nsprof.cli import app
    from nsprof.output import writing

    def roofline(out: Path, capture: str):
        return CliRunner().invoke(app, ["roofline", str(out), "--from", str(ROOT / "profiles" / "examples" / capture)])

    names = ("roofline.png", "roofline.svg", "roofline.csv")
    assert roofline(tmp_path / "out", "h200-sgemm-1024").exit_code == 0
    assert roofline(tmp_path / "expected", "h200-hgemm-1024").exit_code == 0
    old = {name: (tmp_path / "out" / name).read_bytes() for name in names}
    new = {name: (tmp_path / "expected" / name).read_bytes() for name in names}
    assert all(old[name] != new[name] for name in names)

    moved: list[str] = []
    replace = writing.os.replace

    def interrupted_after_the_first(source, target):
        replace(source, target)
        moved.append(Path(target).name)
        if Path(target).name in names and len([m for m in moved if m in names]) == 1:
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(writing.os, "replace", interrupted_after_the_first)
    result = roofline(tmp_path / "out", "h200-hgemm-1024")
    assert result.exit_code == 130 and "interrupted" in result.stderr
    assert [name for name in moved if name in names] == list(names)
    written = {name: (tmp_path / "out" / name).read_bytes() for name in names}
    # matplotlib names an SVG's clip paths afresh each time: that one is new if it is not the old
    assert written["roofline.png"] == new["roofline.png"] and written["roofline.csv"] == new["roofline.csv"]
    assert written["roofline.svg"] != old["roofline.svg"]


SGEMV = ROOT / "profiles" / "examples" / "h200-sgemv-4096"


def sgemv_with_last_check(tmp_path, field, value) -> tuple[Path, dict]:
    """The SGEMV example with its last verification entry (ncu's check of s7, a stage
    `explain float-sums` prints the error of) given `field` = `value`."""
    profile = tmp_path / "sgemv"
    shutil.copytree(SGEMV, profile)
    manifest = json.loads((profile / "manifest.json").read_text())
    assert (manifest["verification"][-1]["tool"], manifest["verification"][-1]["stage"]) == ("ncu", "s7")
    manifest["verification"][-1][field] = value
    (profile / "manifest.json").write_text(json.dumps(manifest))
    return profile, manifest


@pytest.mark.parametrize("field, value", [("rel_error", "5.7e-07"), ("tolerance", True), ("rel_error", [1])])
def test_d04_a_verification_error_that_is_no_number_is_named(tmp_path, field, value):
    profile, manifest = sgemv_with_last_check(tmp_path, field, value)
    result, _ = nsprof("explain", "float-sums", "--from", profile)
    one_line_error(result, f"verification entry {len(manifest['verification'])} has {field} {value!r}, not a number")


def test_d04_a_verification_without_a_tolerance_still_explains(tmp_path):
    profile, manifest = sgemv_with_last_check(tmp_path, "tolerance", None)
    result, _ = nsprof("explain", "float-sums", "--from", profile)
    assert result.returncode == 0, result.stderr[-2000:]
    last = manifest["verification"][-1]
    assert f"s7 at {last['size']}: relative error {last['rel_error']:.1e} against float64." in " ".join(result.stdout.split())
