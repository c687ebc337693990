"""The README's table of results is its records' (issue 59): each row's rate and both runs' `% of
the library` are read from the record it links, whose rows were measured on an H200 and paired
with the library (`pct_cublas_method: paired`), as the README's paragraph above the table says."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^\| (?P<ladder>SGEMM|HGEMM|SGEMV) \| (?P<stage>\w+), [^|]+\| (?P<size>\d+)(?P<power>[²³]) \| "
                 r"(?P<rate>[\d.]+)(?: \((?P<tb>[\d.]+) TB/s\))? \| (?P<run1>[\d.]+) / (?P<run2>[\d.]+) \| "
                 r"\[[^]]+\]\((?P<record>[^)]+)\) \|$")


def table_rows() -> list[re.Match]:
    return [match for line in (ROOT / "README.md").read_text().splitlines() if (match := ROW.match(line))]


def test_the_readme_has_its_four_rows():
    assert [(row["ladder"], row["stage"]) for row in table_rows()] == [
        ("SGEMM", "v8"), ("SGEMM", "v11"), ("HGEMM", "h6"), ("SGEMV", "s6")]


@pytest.mark.parametrize("row", table_rows(), ids=lambda row: row["stage"])
def test_a_readme_row_is_its_records_paired_h200_figure(row):
    record = ROOT / row["record"]
    runs = [json.loads(path.read_text()) for path in (record.with_suffix(".json"),
                                                      record.with_name(record.stem + "-run2.json"))]
    side = row["size"]
    size = "x".join([side] * (3 if row["power"] == "³" else 2))
    found = []
    for run in runs:
        assert run["env"]["device"] == "NVIDIA H200"
        (result,) = [r for r in run["results"] if r["stage"] == row["stage"] and r["size"] == size]
        assert result["status"] == "ok" and result["pct_cublas_method"] == "paired"
        found.append(result)
    assert f"{found[0]['tflops']:.{_decimals(row['rate'])}f}" == row["rate"]
    if row["tb"]:
        assert f"{found[0]['tbytes_per_s']:.2f}" == row["tb"]
    assert [f"{r['pct_cublas']:.1f}" for r in found] == [row["run1"], row["run2"]]


def _decimals(shown: str) -> int:
    return len(shown.split(".")[1]) if "." in shown else 0
