"""`nsprof explain cold-inputs`: the sets of buffers nsprof bench rotates among at each size, counted from the
L2 of the profile's GPU, checked against the sets the H200 bench recorded (`input_sets`, written while it ran)
and against the bytes counted by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nsprof.cli import app
from nsprof.explain.cold_inputs import H200_L2_MIB, SIZES
from nsprof.sizes import size_label

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "benchmarks" / "records" / "2026-11-30-h200-hgemm-cold-inputs"


def explained(*options: str) -> dict:
    result = CliRunner().invoke(app, ["explain", "cold-inputs", *options, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_sets_are_those_the_h200_bench_rotated_among():
    """The committed H200 profile names its L2 (60 MiB); every size the record's runs share with the table got
    the sets the page counts."""
    page = explained()
    assert page["l2_mib"] == 60.0 and "from the profile's manifest" in page["l2_source"]
    recorded = {row["size"]: row["input_sets"] for half in ("squares", "models")
                for row in json.loads((RECORD / f"{half}-run1.json").read_text())["results"] if row["stage"] == "h6"}
    shared = [row for row in page["inputs"] if row["size"] in recorded]
    assert len(shared) >= 10
    assert {row["size"]: row["sets"] for row in shared} == {row["size"]: recorded[row["size"]] for row in shared}


def test_the_bytes_and_the_verdicts_are_counted_by_hand():
    rows = {row["size"]: row for row in explained()["inputs"]}
    square = rows["1024x1024x1024"]  # A, B and C: 3 x 1024^2 halves
    assert square["footprint_mib"] == pytest.approx(6.0) and square["one_set"] == "all of it"
    assert square["sets"] == 1 + -(-3 * 60 // 6)  # three L2s of others' traffic between two uses: 31
    assert rows["4096x4096x4096"]["one_set"] == "its partner's last reads" and rows["4096x4096x4096"]["sets"] == 3
    assert rows["8192x8192x8192"]["sets"] == 1 and rows["8192x8192x8192"]["apart_mib"] == 0
    assert [row["size"] for row in explained()["inputs"]] == [size_label(size) for size in SIZES["hgemm"]]


def test_another_ladder_reads_its_own_profile_s_l2_and_the_text_fits_80_columns():
    """SGEMV's committed example ran on an H100 (50 MiB); 1024 x 1024 floats (4 MiB) get as many sets as keep
    150 MiB between uses."""
    page = explained("--op", "sgemv")
    assert page["l2_mib"] == 50.0 and page["l2_mib"] != H200_L2_MIB
    row = next(row for row in page["inputs"] if row["size"] == "1024x1024")
    assert row["sets"] == 39 and row["apart_mib"] >= 150
    shown = CliRunner().invoke(app, ["explain", "cold-inputs"], env={"COLUMNS": "80"}).stdout
    assert "What a timed launch finds in the L2" in shown and max(map(len, shown.splitlines())) <= 80
