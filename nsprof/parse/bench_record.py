"""Read what `nsprof bench --save-as` writes: {"nsprof_version", "created", "command", "env",
"results": one record per stage and size (median_ms, q1_ms, q3_ms, runs, ...)}."""

from __future__ import annotations

import json
import math
from pathlib import Path

from nsprof.errors import ParseError
from nsprof.printable import printable_json

SAVE_AGAIN = "save one with `nsprof bench --save-as FILE.json`"


def is_bench_record(path: Path) -> bool:
    """A .json file (`nsprof bench` saves JSON; no capture nsprof reads is JSON)."""
    return Path(path).is_file() and Path(path).suffix.lower() == ".json"


def load_bench_record(path: Path) -> dict:
    try:
        document = json.loads(printable_json(Path(path).read_text(encoding="utf-8")))
    except RecursionError:
        raise ParseError(f"{path}: unreadable JSON (nested too deeply to read)", SAVE_AGAIN) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ParseError(f"{path}: unreadable JSON ({err})", SAVE_AGAIN) from None
    results = document.get("results") if isinstance(document, dict) else None
    if not isinstance(results, list) or not all(isinstance(r, dict) and "median_ms" in r and "stage" in r
                                                for r in results):
        raise ParseError(f"{path}: not a record of `nsprof bench` (no \"results\" list of timed stages)", SAVE_AGAIN)
    for number, record in enumerate(results, 1):
        median = record["median_ms"]
        if median is not None and (isinstance(median, bool) or not isinstance(median, (int, float))
                                   or not math.isfinite(median) or median <= 0):
            raise ParseError(f"{path}: result {number} ({record['stage']}) has median_ms {median!r}, not a positive "
                             "time in milliseconds", SAVE_AGAIN)
    return document
