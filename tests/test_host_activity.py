"""What the host did while the GPU waited (nsprof.analyze.host_activity), read from nsys's default
capture of real programs (tests/data/loops: CPU samples with their call chains, OS runtime calls):
the activity each program was built to show, counted as plain SQL over the export counts it, and
a fix that follows it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from nsprof.analyze.gpu_events import gpu_events
from nsprof.analyze.host_activity import ACTIVITY_FIXES, INTERPRETER, NO_SAMPLES, NUMERICAL, idle_stretches
from nsprof.analyze.host_idle import HOST_WORK, LAUNCHING
from nsprof.analyze.host_verdict import FRAMEWORK_ACTIVITY_FIXES
from nsprof.cli import app
from nsprof.parse.nsys_sqlite import load_nsys

DATA = Path(__file__).resolve().parent / "data"
LOOPS = DATA / "loops"
# capture -> (what the host did most in the GPU's idle time, the first fix's cause)
PROGRAMS = {"dataloader": (NUMERICAL, HOST_WORK),  # numpy augmentation in the main process
            "transformer-train": (INTERPRETER, LAUNCHING),  # hundreds of small operations from Python
            "cupy-heat": (INTERPRETER, LAUNCHING)}  # 14 CuPy operations a step


def host_of(name: str) -> dict:
    result = CliRunner().invoke(app, ["analyze", str(LOOPS / f"{name}.sqlite"), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["host"]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_host_did_what_the_program_does_and_the_fix_follows(name):
    activity, cause = PROGRAMS[name]
    host = host_of(name)
    found = host["activity"]
    assert found["activities"][0]["activity"] == activity and found["activities"][0]["pct"] > 50
    first = host["fixes"][0]
    # in the program's framework's words where nsprof has them (CuPy's), else the activity's own fix
    fix = FRAMEWORK_ACTIVITY_FIXES.get(host["framework"], {}).get(activity, ACTIVITY_FIXES[activity])
    assert first["cause"] == cause and first["fix"] == fix
    assert activity in first["evidence"]


def test_the_samples_counted_are_those_plain_sql_finds_in_the_gpus_idle_time():
    """The launching threads' samples in the window's idle stretches: as many as SQL counts of the
    export's samples of those threads between the same stretches."""
    name = "dataloader"
    host = host_of(name)
    export = load_nsys(LOOPS / f"{name}.sqlite")
    window = (host["window"]["start_ns"], host["window"]["end_ns"])
    events = gpu_events([export], ("start_ns", "end_ns"))
    starts, ends = events["start_ns"].to_numpy(np.int64), events["end_ns"].to_numpy(np.int64)
    overlapping = (ends > window[0]) & (starts < window[1])
    gaps = idle_stretches(starts[overlapping], ends[overlapping], window)
    with sqlite3.connect(LOOPS / f"{name}.sqlite") as conn:
        launching = [tid for (tid,) in conn.execute(
            "SELECT DISTINCT r.globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
            "WHERE s.value LIKE 'cu%Launch%' AND r.start >= ? AND r.start < ?", window)]
        times = np.array([start for (start,) in conn.execute(
            f"SELECT start FROM COMPOSITE_EVENTS WHERE globalTid IN ({','.join('?' * len(launching))})", launching)])
    inside = sum(int(((times >= low) & (times < high)).sum()) for low, high in zip(*gaps))
    assert host["activity"]["samples"] == inside
    assert sum(row["samples"] for row in host["activity"]["activities"]) == inside


def test_a_capture_without_samples_says_what_gives_them():
    """The host-side captures were taken with -t cuda,nvtx,osrt (no CPU sampling): analyze says so
    and how to capture with samples, and the fixes keep their general text."""
    result = CliRunner().invoke(app, ["analyze", str(DATA / "host-side" / "train-sync.sqlite")], env={"COLUMNS": "100"})
    text = " ".join(result.stdout.split())
    assert "Host in the GPU's idle time: not sampled" in text and " ".join(NO_SAMPLES.split()) in text


def test_analyze_says_what_the_host_did():
    result = CliRunner().invoke(app, ["analyze", str(LOOPS / "dataloader.sqlite")], env={"COLUMNS": "100"})
    text = " ".join(result.stdout.split())
    assert "Host in the GPU's idle time (" in text and f"{NUMERICAL} 7" in text
