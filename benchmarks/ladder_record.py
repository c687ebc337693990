"""The two-run summary of a ladder record: for each stage and size, the rate of run 1 / run 2 (TFLOP/s, or
GB/s for a memory-bound op) and, for the GPU stages, its % of the faster library (paired), from two
`nsprof bench --save-as` files.
Prints the Markdown table of benchmarks/records/2026-11-26-h100-<op>/h100-<op>.md.

    python3 benchmarks/ladder_record.py benchmarks/records/2026-11-26-h100-sgemm/h100-sgemm{,-run2}.json
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


def _rate(record: dict, bandwidth: bool) -> str:
    if record["status"] != "ok":
        return record["status"]
    if bandwidth:
        return f"{record['tbytes_per_s'] * 1000:,.0f}"
    tflops = record["tflops"]
    return f"{tflops:.3g}" if tflops < 100 else f"{tflops:.0f}"


def _pct(record: dict) -> str:
    """Of the faster library, for the GPU stages (paired); the CPU stages' rates say enough."""
    pct = record.get("pct_cublas")
    if pct is None or record["status"] != "ok" or record.get("pct_cublas_method") != "paired":
        return "-"
    return f"{pct:.3g}" if pct < 100 else f"{pct:.0f}"


def table(*documents: dict) -> str:
    bandwidth = any("pct_dram" in r for r in documents[0]["results"])
    cells: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    sizes: list[str] = []
    for doc in documents:
        for r in doc["results"]:
            cells[r["stage"]][r["size"]].append(r)
            if r["size"] not in sizes:
                sizes.append(r["size"])
    unit = "GB/s" if bandwidth else "TFLOP/s"
    lines = [f"| stage | {' | '.join(sizes)} |", "| --- |" + " --- |" * len(sizes)]
    for stage, by_size in cells.items():
        row = []
        for size in sizes:
            records = by_size.get(size, [])
            if not records or all(r["status"] == "skipped" for r in records):
                row.append("-")
                continue
            rates = " / ".join(_rate(r, bandwidth) for r in records)
            pcts = " / ".join(_pct(r) for r in records)
            row.append(rates if pcts.replace(" / ", "").strip("-") == "" else f"{rates} ({pcts}%)")
        lines.append(f"| {stage} | {' | '.join(row)} |")
    return f"{unit}, run 1 / run 2 (% of the faster library, paired, run 1 / run 2):\n\n" + "\n".join(lines)


if __name__ == "__main__":
    print(table(*(json.loads(Path(path).read_text()) for path in sys.argv[1:])))
