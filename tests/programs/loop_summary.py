"""The one JSON line each tests/programs/loop_*.py prints last: what it ran and how long an
iteration took by its own clock (benchmarks/gpu/loops_h200.sh collects them)."""

from __future__ import annotations

import json
import statistics


def summary(program: str, variant: str, times: list[float], warmup: int, **extra) -> str:
    """The JSON line: the timed iterations' median, min and max in milliseconds, and `extra`."""
    timed = [1e3 * t for t in times[warmup:]]
    return json.dumps({"program": program, "variant": variant, "iterations": len(times), "warmup": warmup,
                       "median_ms": round(statistics.median(timed), 4), "min_ms": round(min(timed), 4),
                       "max_ms": round(max(timed), 4), **extra})
