"""Captures kept xz-packed (nsprof.parse.packed) read as the files inside them, from a copy that holds
only the packed files, as a fresh clone of this repository does: the same diff, nothing written into
the profile, and a damaged packed file named in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from nsprof.cli import app

DATA = Path(__file__).resolve().parent / "data"


def packed_copy(source: Path, target: Path) -> Path:
    """`source` copied without its unpacked files (those a .xz beside them holds)."""
    shutil.copytree(source, target, ignore=lambda folder, names: [name for name in names if f"{name}.xz" in names])
    return target


def test_a_packed_profile_with_runs_diffs_as_the_unpacked_one(tmp_path, monkeypatch):
    monkeypatch.setenv("NSPROF_DATA_DIR", str(tmp_path / "data"))
    base, slower = (packed_copy(DATA / "runs" / name, tmp_path / name) for name in ("ab-base", "ab-slower"))
    assert not list(base.rglob("*.sqlite")) and list(base.rglob("*.sqlite.xz"))
    before = sorted(path.name for path in base.rglob("*"))
    packed = json.loads(CliRunner().invoke(app, ["diff", str(base), str(slower), "--json"]).stdout)
    plain = json.loads(CliRunner().invoke(app, ["diff", str(DATA / "runs" / "ab-base"), str(DATA / "runs" / "ab-slower"),
                                               "--json"]).stdout)
    assert packed["runs"] == plain["runs"] == {"a": 10, "b": 5}
    assert [(row["kernel"], row["change_pct"], row["status"]) for row in packed["kernels"]] == \
        [(row["kernel"], row["change_pct"], row["status"]) for row in plain["kernels"]]
    assert sorted(path.name for path in base.rglob("*")) == before  # nothing written into the profile
    assert len(list((tmp_path / "data" / "unpacked").iterdir())) == 15  # each run unpacked once


def test_a_packed_file_named_without_xz_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("NSPROF_DATA_DIR", str(tmp_path / "data"))
    shutil.copy(DATA / "diff-pairs" / "train-a.sqlite.xz", tmp_path)
    result = CliRunner().invoke(app, ["analyze", str(tmp_path / "train-a.sqlite"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["kernel_summary"]


def test_a_damaged_packed_file_is_one_line_naming_it(tmp_path, monkeypatch):
    monkeypatch.setenv("NSPROF_DATA_DIR", str(tmp_path / "data"))
    damaged = tmp_path / "nsys.sqlite.xz"
    damaged.write_bytes((DATA / "diff-pairs" / "train-a.sqlite.xz").read_bytes()[:5000])
    result = CliRunner().invoke(app, ["analyze", str(damaged)])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert f"{damaged}: not a whole xz file" in " ".join(result.output.split())
    assert not list((tmp_path / "data" / "unpacked").glob("*.sqlite"))  # no half file left behind
