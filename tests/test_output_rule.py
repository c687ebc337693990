"""Re-running a command that writes: files nsprof wrote itself are replaced, anything else is kept
and named (nsprof.output); writers of one directory take turns; what a killed writer left behind
is removed by the next write. Real processes are started, raced and killed here."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_checks import one_line_error
from typer.testing import CliRunner

from nsprof import api
from nsprof.cli import app
from nsprof.errors import NsprofError, UsageError
from nsprof.output import write_set
from nsprof.output.ledger import LEDGER
from nsprof.output.staging import MARKER, STALE_AFTER_S, locked

REPO = Path(__file__).resolve().parent.parent
SGEMM = REPO / "profiles" / "examples" / "h200-sgemm-1024"
HGEMM = REPO / "profiles" / "examples" / "h200-hgemm-1024"
ROOFLINE = ("roofline.csv", "roofline.png", "roofline.svg")
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def hidden(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".") and p.name != LEDGER)


def test_a_rerun_replaces_what_nsprof_wrote_and_keeps_an_edited_file(tmp_path):
    assert invoke("roofline", tmp_path, "--from", SGEMM).exit_code == 0
    ledger = json.loads((tmp_path / LEDGER).read_text())["files"]
    assert {name: entry["sha256"] for name, entry in ledger.items()} == {name: sha256(tmp_path / name) for name in ROOFLINE}
    assert invoke("roofline", tmp_path, "--from", HGEMM).exit_code == 0  # nsprof's own: replaced, no --force
    assert ",hgemm," in (tmp_path / "roofline.csv").read_text() and ",sgemm," not in (tmp_path / "roofline.csv").read_text()
    assert invoke("roofline", tmp_path, "--from", SGEMM).exit_code == 0

    with (tmp_path / "roofline.csv").open("a") as table:  # the user adds a row
        table.write("mine,,,,,,,,,,,,,,,\n")
    edited = (tmp_path / "roofline.csv").read_bytes()
    line = one_line_error(invoke("roofline", tmp_path, "--from", SGEMM), 2)
    assert line == (f"error: {tmp_path}: kept roofline.csv (changed since nsprof wrote it). "
                    "Pass --force to replace it, or choose another output path")
    assert (tmp_path / "roofline.csv").read_bytes() == edited  # the whole set was kept, the table with it
    assert invoke("roofline", tmp_path, "--from", SGEMM, "--force").exit_code == 0
    assert (tmp_path / "roofline.csv").read_bytes() != edited and hidden(tmp_path) == []


def test_the_python_api_names_its_parameter_not_the_cli_flag(tmp_path):
    (tmp_path / "roofline.svg").write_text("<svg>the user's own</svg>")
    ladder = api.load_ladder([SGEMM])
    with pytest.raises(UsageError) as raised:
        api.write_roofline(ladder, tmp_path)
    assert str(raised.value) == (f"{tmp_path}: kept roofline.svg (not written by nsprof). "
                                 "Pass force=True to replace it, or choose another output path")
    assert not (tmp_path / "roofline.png").exists()  # refused before drawing
    assert api.write_roofline(ladder, tmp_path, force=True) == [tmp_path / name for name in
                                                                ("roofline.png", "roofline.svg", "roofline.csv")]


def test_files_of_a_user_in_two_directories_are_named_with_their_paths(tmp_path):
    chart, trace = tmp_path / "a" / "t.png", tmp_path / "b" / "t.json"
    for path in (chart, trace):
        path.parent.mkdir()
        path.write_text("mine")
    line = one_line_error(invoke("timeline", REPO / "profiles/examples/h200-pipeline-1024", "--out", chart,
                                 "--trace", trace), 2)
    assert line == (f"error: kept {chart} (not written by nsprof), {trace} (not written by nsprof). "
                    "Pass --force to replace them, or choose another output path")


# Two real processes, each a real `nsprof roofline` into one directory from a different capture.
# Both look at the directory before drawing; a barrier in the drawing makes sure each has looked
# before either writes: the race in which both found the directory free and mixed their sets.
RACER = """
import sys, time
from pathlib import Path
import nsprof.render.roofline as roofline
from nsprof.cli import app

barrier, me, profile, out = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
draw = roofline.roofline_figure

def after_both_looked(*args, **kwargs):
    (barrier / me).touch()
    while len(list(barrier.iterdir())) < 2:
        time.sleep(0.01)
    return draw(*args, **kwargs)

roofline.roofline_figure = after_both_looked
app(["roofline", out, "--from", profile])
"""


def test_two_writers_racing_into_one_directory_never_both_succeed_nor_mix_their_sets(tmp_path):
    barrier, out = tmp_path / "barrier", tmp_path / "out"
    barrier.mkdir()
    racers = {name: subprocess.Popen([sys.executable, "-c", RACER, str(barrier), name, str(profile), str(out)],
                                     env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for name, profile in (("sgemm", SGEMM), ("hgemm", HGEMM))}
    finished = {name: (racer.wait(120), racer.stderr.read()) for name, racer in racers.items()}
    assert sorted(code for code, _ in finished.values()) == [0, 1], finished
    [winner] = [name for name, (code, _) in finished.items() if code == 0]
    [(_, error)] = [outcome for outcome in finished.values() if outcome[0] == 1]
    assert error == (f"error: {out}: kept roofline.png, roofline.svg, roofline.csv (written by another nsprof run "
                     "while this one ran). Run again to replace them, or choose another output path\n")
    loser = "hgemm" if winner == "sgemm" else "sgemm"
    table = (out / "roofline.csv").read_text()
    assert f",{winner}," in table and f",{loser}," not in table  # the csv is the winner's...
    ledger = json.loads((out / LEDGER).read_text())["files"]
    assert {name: ledger[name]["sha256"] for name in ROOFLINE} == {name: sha256(out / name) for name in ROOFLINE}
    assert hidden(out) == []  # ...and so is every file beside it; no staging left


def test_a_second_writer_waits_for_the_first_and_says_so_when_it_waits_too_long(tmp_path):
    with locked(tmp_path):
        with (pytest.raises(NsprofError, match=f"^{tmp_path}: another nsprof process has been writing there for over 0 s"),
              locked(tmp_path, wait_s=0.2)):
            pass
        waiting = subprocess.Popen([sys.executable, "-c", "import sys; from nsprof.output import write_set; "
                                    "write_set(sys.argv[1], {'a.txt': b'after'})", str(tmp_path)], env=ENV)
        time.sleep(1.5)
        assert waiting.poll() is None and not (tmp_path / "a.txt").exists()  # it waits for the lock
    assert waiting.wait(60) == 0 and (tmp_path / "a.txt").read_bytes() == b"after"


# A real writer, SIGKILLed after the ledger went in and before its files did: the worst moment.
VICTIM = """
import os, sys, time
from pathlib import Path
from nsprof.output import write_set

ready, replace = Path(sys.argv[2]), os.replace

def stop_before_the_files(source, target):
    if not str(target).endswith(".nsprof-written.json"):
        ready.touch()
        time.sleep(600)
    replace(source, target)

os.replace = stop_before_the_files
write_set(sys.argv[1], {"a.png": b"second " * 1000, "a.csv": b"second"})
"""


def test_what_a_killed_writer_left_is_removed_by_the_next_write_which_still_replaces_the_set(tmp_path):
    out, ready = tmp_path / "out", tmp_path / "ready"
    write_set(out, {"a.png": b"first", "a.csv": b"first"})
    victim = subprocess.Popen([sys.executable, "-c", VICTIM, str(out), str(ready)], env=ENV)
    deadline = time.monotonic() + 60
    while not ready.exists() and victim.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ready.exists(), "the writer never reached its moves"
    victim.send_signal(signal.SIGKILL)
    victim.wait(10)
    [left] = hidden(out)
    assert left.startswith(f".nsprof-{victim.pid}-")
    assert (out / left / "a.png").read_bytes() == b"second " * 1000  # the staged set, never moved

    write_set(out, {"a.png": b"third", "a.csv": b"third"})  # no force: the files there are nsprof's
    assert hidden(out) == [] and (out / "a.png").read_bytes() == b"third"
    ledger = json.loads((out / LEDGER).read_text())["files"]
    assert all("replaces" not in entry for entry in ledger.values())


def test_staging_of_a_live_writer_is_left_alone_unless_older_than_a_day(tmp_path):
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        young, old = tmp_path / f".nsprof-{live.pid}-young123", tmp_path / f".nsprof-{live.pid}-old45678"
        earlier = tmp_path / ".t.json-ab12cd34"  # a temporary file of an nsprof before staging folders
        for path in (young, old):
            path.mkdir()
            (path / MARKER).touch()
        earlier.write_bytes(b"{" * 100)
        day_ago = time.time() - STALE_AFTER_S - 60
        for path in (old, earlier):
            os.utime(path, (day_ago, day_ago))
        write_set(tmp_path, {"t.json": b"{}"})
        assert hidden(tmp_path) == [young.name]
    finally:
        live.kill()
        live.wait()


def test_a_users_folder_that_looks_like_staging_is_never_removed(tmp_path):
    """Staging folders hold a marker: `.nsprof-2024-backup`, or one with an 8-character tail, of a
    process long gone and a day old, survives every write when it holds none."""
    mine = [tmp_path / ".nsprof-2024-backup", tmp_path / ".nsprof-99999999-keepthis"]
    day_ago = time.time() - STALE_AFTER_S - 60
    for path in mine:
        path.mkdir()
        (path / "notes.txt").write_text("mine")
        os.utime(path, (day_ago, day_ago))
    write_set(tmp_path, {"t.json": b"{}"})
    assert all((path / "notes.txt").read_text() == "mine" for path in mine)
