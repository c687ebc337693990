"""Make a jax.profiler trace small enough to commit as a test fixture: the same JSON with the Python
tracer's events left out (names starting `$`: one per Python call, over 95% of a training loop's
events, none of which nsprof reads), everything else byte for byte as parsed and written back.

    python3 benchmarks/trim_jax_trace.py TRACE.trace.json.gz OUT.trace.json.gz
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path


def trim(source: Path, target: Path) -> tuple[int, int]:
    """Write `source` without its Python tracer's events to `target`; (events kept, events left out)."""
    with gzip.open(source, "rt") as stream:
        document = json.load(stream)
    events = document["traceEvents"]
    kept = [event for event in events if not str(event.get("name", "")).startswith("$")]
    document["traceEvents"] = kept
    with gzip.open(target, "wt", compresslevel=9) as stream:
        json.dump(document, stream, separators=(",", ":"))
    return len(kept), len(events) - len(kept)


if __name__ == "__main__":
    kept, dropped = trim(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"{sys.argv[2]}: {kept:,} events kept, {dropped:,} of the Python tracer's left out")
