"""A capture holding thousands of CPU stage records, modelled on a real one: the H100 SGEMM example
with its CPU rung (profiles/examples/h100-sgemm-cpu-1024: v0, v0b, v0blas timed on the host at
1024^3), its three records repeated at as many sizes as asked (64^3, 65^3, ...), as a sweep saved
into one capture would hold them. For the scale record of analyze, roofline, report and explain.

    python3 benchmarks/cpu_stage_records.py /tmp/sweep --records 20000
    nsprof analyze /tmp/sweep
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h100-sgemm-cpu-1024"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--records", type=int, default=20_000)
    args = parser.parse_args()
    shutil.copytree(EXAMPLE, args.out, ignore=shutil.ignore_patterns("nsys.sqlite"))  # the packed export serves
    document = json.loads((args.out / "bench-cpu.json").read_text())
    first = document["results"]
    document["results"] = [{**first[i % len(first)], "m": n, "n": n, "k": n, "size": f"{n}x{n}x{n}"}
                           for i, n in enumerate(range(64, 64 + args.records))]
    (args.out / "bench-cpu.json").write_text(json.dumps(document))
    print(f"{args.out}: {args.records:,} CPU stage records")


if __name__ == "__main__":
    main()
