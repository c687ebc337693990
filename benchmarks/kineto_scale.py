"""A torch.profiler trace of about 100 MB, modelled on a real one, for the Kineto reader's scale
record: a real trace's events (a Llama decode on an H200, 85,832 events in 30 MB) repeated until
the file is large enough, each copy's timestamps shifted past the last and its correlation and
External ids offset, so that the copies read as later decode steps of one program.

    python3 benchmarks/kineto_scale.py long-decode.json.gz big.json --megabytes 100
    /usr/bin/time -v python3 -c "from nsprof.parse.kineto import load_kineto; load_kineto('big.json')"
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

ID_KEYS = ("correlation", "External id")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("real", type=Path, help="a real torch.profiler trace (.json or .json.gz)")
    parser.add_argument("out", type=Path)
    parser.add_argument("--megabytes", type=float, default=100)
    args = parser.parse_args()
    opener = gzip.open if args.real.name.endswith(".gz") else open
    with opener(args.real, "rb") as raw:
        text = raw.read()
    document = json.loads(text)
    events = document.pop("traceEvents")
    timed = [e for e in events if isinstance(e.get("ts"), (int, float))]
    span = max(e["ts"] + e.get("dur", 0) for e in timed) - min(e["ts"] for e in timed)
    largest_id = max((e.get("args", {}).get(key, 0) for e in events for key in ID_KEYS
                      if isinstance(e.get("args", {}).get(key), int)), default=0)
    copies = max(1, round(args.megabytes * 2**20 / len(json.dumps(events))))  # as json.dump writes it below
    out = []
    for copy in range(copies):
        for event in events:
            if copy and event.get("ph") == "M":
                continue  # metadata once
            moved = dict(event)
            if copy and "ts" in moved:
                moved["ts"] = round(moved["ts"] + copy * (span + 1000), 3)
            if copy and isinstance(moved.get("args"), dict):
                moved["args"] = {key: value + copy * (largest_id + 1) if key in ID_KEYS and isinstance(value, int) else value
                                 for key, value in moved["args"].items()}
            if copy and moved.get("ph") in ("s", "f") and isinstance(moved.get("id"), int):
                moved["id"] += copy * (largest_id + 1)
            out.append(moved)
    with open(args.out, "w") as file:
        json.dump({**document, "traceEvents": out}, file)
    print(f"{args.out}: {args.out.stat().st_size / 2**20:,.1f} MiB, {len(out):,} events ({copies} copies)")


if __name__ == "__main__":
    main()
