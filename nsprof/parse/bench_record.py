"""Read what `nsprof bench --save-as` writes: {"nsprof_version", "created", "command", "env",
"results": one record per stage and size (median_ms, q1_ms, q3_ms, runs, ...)}."""

from __future__ import annotations

import math
from pathlib import Path

from nsprof.errors import ParseError
from nsprof.parse.json_document import read_json_object
from nsprof.printable import printable_json

SAVE_AGAIN = "save one with `nsprof bench --save-as FILE.json`"


def is_bench_record(path: Path) -> bool:
    """A .json file (`nsprof bench` saves JSON; no capture nsprof reads is JSON)."""
    return Path(path).is_file() and Path(path).suffix.lower() == ".json"


def load_bench_record(path: Path) -> dict:
    """The bench record at `path`, read through the one guarded reader and checked result by result."""
    document = read_json_object(Path(path), "bench record", SAVE_AGAIN)
    results = document.get("results")
    if not isinstance(results, list) or not all(isinstance(r, dict) and "median_ms" in r and "stage" in r
                                                for r in results):
        raise ParseError(f"{path}: not a record of `nsprof bench` (no \"results\" list of timed stages)", SAVE_AGAIN)
    runs = document.get("runs")
    if runs is not None and (isinstance(runs, bool) or not isinstance(runs, int) or runs < 1):
        raise ParseError(f"{path}: its \"runs\" is {printable_json(repr(runs))[:40]}, not a count of runs", SAVE_AGAIN)
    if "env" in document and not isinstance(document["env"], dict):
        raise ParseError(f"{path}: its \"env\" is {type(document['env']).__name__}, not the machine's description",
                         SAVE_AGAIN)
    seen: set[tuple] = set()
    for number, record in enumerate(results, 1):
        if problem := result_problem(record):
            raise ParseError(f"{path}: result {number} ({printable_json(str(record['stage']))[:40]}) {problem}", SAVE_AGAIN)
        key = (record["op"], record["stage"], record["size"])
        if key in seen:
            raise ParseError(f"{path}: {record['op']} {record['stage']} at {record['size']} is listed twice", SAVE_AGAIN)
        seen.add(key)
    return document


def result_problem(record: dict) -> str | None:
    """What makes one result unreadable, in words; None for a sound one."""
    for field in ("op", "stage", "size"):
        if not isinstance(record.get(field), str) or not record[field]:
            return f"has no {field} (a name is needed to compare it)"
    if record["median_ms"] is not None and not _positive_time(record["median_ms"]):
        return f"has median_ms {record['median_ms']!r}, not a positive time in milliseconds ({MIN_MS:g} to {MAX_MS:g})"
    runs = record.get("run_medians_ms")
    if runs is not None and not (isinstance(runs, list) and runs and all(_positive_time(value) for value in runs)):
        return f"has run_medians_ms that are not positive times in milliseconds ({MIN_MS:g} to {MAX_MS:g})"
    count = record.get("runs")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
        return f"has runs {count!r}, not a count of timed launches"
    return None


MAX_MS = 1e9  # 11.6 days: a median past it is no timing (1e305 ms became inf in nanoseconds)
MIN_MS = 1e-9  # a picosecond: below it, no GPU times anything


def _positive_time(value) -> bool:
    return (not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
            and MIN_MS <= value <= MAX_MS)
