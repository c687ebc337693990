"""Issue 60's HGEMM records: each page shows the tables benchmarks/hgemm_sizes_record.py prints from the record's
runs, and every row of those runs was verified, paired with the library and measured on an H200."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from script_files import script

ROOT = Path(__file__).resolve().parents[1]
RECORDS = [ROOT / "benchmarks" / "records" / name for name in (
    "2026-11-29-h200-hgemm-sizes", "2026-11-29-h200-hgemm-rows-overlap", "2026-11-30-h200-hgemm-evict-first",
    "2026-11-30-h200-hgemm-look-ahead", "2026-11-30-h200-hgemm-multicast", "2026-11-30-h200-hgemm-energy",
    "2026-11-30-h200-hgemm-pp64", "2026-11-30-h200-hgemm-group-rows", "2026-11-30-h200-hgemm-ring-depth",
    "2026-11-30-h200-hgemm-cold-inputs", "2026-11-30-h200-hgemm-pairs-maps", "2026-11-30-h200-hgemm-dependent-launch",
    "2026-12-01-h200-hgemm-early-maps", "2026-12-01-h200-hgemm-block-start")]
RUNS = [path for record in RECORDS for pattern in ("*-run[12].json", "*-call*-[12].json")  # a record's earlier runs too
        for path in sorted(record.glob(pattern))]


def _record_script():
    return script("benchmarks/hgemm_sizes_record.py")


@pytest.mark.parametrize("record", RECORDS, ids=lambda path: path.name)
@pytest.mark.parametrize("half", ["squares", "models"])
def test_the_page_shows_the_tables_the_runs_give(record, half):
    text, past = _record_script().table(record, half)
    (page,) = record.glob("*.md")
    assert text in page.read_text()
    assert f"At or past the library in both runs: {len(past)} of {text.count(chr(10)) - 1}" in page.read_text()


@pytest.mark.parametrize("record", RECORDS, ids=lambda path: path.name)
def test_the_record_holds_two_runs_of_each_half(record):
    assert [path.name for path in sorted(record.glob("*-run[12].json"))] == [
        "models-run1.json", "models-run2.json", "squares-run1.json", "squares-run2.json"]


@pytest.mark.parametrize("path", RUNS, ids=lambda path: path.name)
def test_every_gpu_row_was_verified_paired_and_ran_on_an_h200(path):
    document = json.loads(path.read_text())
    assert document["env"]["device"] == "NVIDIA H200" and document["env"]["sm_count"] == 132
    for row in document["results"]:
        assert row["status"] == "ok" and row["rel_error"] <= row["tolerance"], (row["stage"], row["size"])
        assert row["pct_cublas_method"] == "paired", (row["stage"], row["size"])
