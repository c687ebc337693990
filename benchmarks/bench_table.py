"""Render a `nsprof bench --json` results file as the Markdown table used in benchmarks/h200.md.

    python3 benchmarks/bench_table.py benchmarks/h200-sgemm.json
"""

from __future__ import annotations

import json
import sys


def table(doc: dict) -> str:
    lines = [
        "| stage | title | size | tile | median ms | spread (IQR) | TFLOP/s | % cuBLAS | rel. error | runs |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in doc["results"]:
        if r["status"] != "ok":
            lines.append(f"| {r['stage']} | {r['title']} | {r['size']} | {r['tile'] or '-'} | **{r['status'].upper()}** "
                         f"| | | | {r['rel_error']} | |")
            continue
        lines.append(
            f"| {r['stage']} | {r['title']} | {r['size']} | {r['tile']} | {r['median_ms']:.4f} | {r['spread_pct']:.2f}% "
            f"| {r['tflops']:.2f} | {r['pct_cublas']:.1f} | {r['rel_error']:.1e} | {r['runs']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(json.load(open(sys.argv[1]))))
