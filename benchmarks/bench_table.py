"""Render a `nsprof bench --json` results file as the Markdown table used in benchmarks/records/2026-11-21-h200-sgemm/h200.md.

    python3 benchmarks/bench_table.py benchmarks/records/2026-11-24-h200-sgemm/h200-sgemm.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def table(doc: dict) -> str:
    if doc["results"] and "pct_dram" in doc["results"][0]:
        return bandwidth_table(doc)
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


def bandwidth_table(doc: dict) -> str:
    """For a memory-bound op: TB/s and % of the DRAM ceiling first, the preparatory step apart."""
    lines = [
        "| stage | title | size | median ms | spread (IQR) | TB/s | % DRAM | TFLOP/s | % cuBLAS | timed apart | rel. error |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |",
    ]
    for r in doc["results"]:
        if r["status"] != "ok":
            lines.append(f"| {r['stage']} | {r['title']} | {r['size']} | **{r['status'].upper()}** | | | | | | | |")
            continue
        apart = f"{r['prepare']} {r['prepare_ms']:.4f} ms" if r.get("prepare_ms") is not None else ""
        lines.append(
            f"| {r['stage']} | {r['title']} | {r['size']} | {r['median_ms']:.4f} | {r['spread_pct']:.2f}% "
            f"| {r['tbytes_per_s']:.2f} | {r['pct_dram']:.0f} | {r['tflops']:.3f} | {r['pct_cublas']:.0f} | {apart} "
            f"| {r['rel_error']:.1e} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(json.loads(Path(sys.argv[1]).read_text())))
