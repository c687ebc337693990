"""The fastest-library record (issue 33) from `nsprof bench` runs: per op and size, what the library
stage kept of its candidates (CuPy's call, cuBLASLt's algorithms), its median and PyTorch's, and
each hand-written stage's % of the faster, run by run. Writes the combined JSON and prints the
Markdown tables of benchmarks/records/2026-11-26-h100-fastest-library/h100-fastest-library.md.

    python3 benchmarks/library_record.py OUT.json RUN1-SGEMM.json RUN2-SGEMM.json ... > tables.md
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

LIBRARY = {"v9", "v9t", "h7", "s7"}
SHOWN = {"sgemm": ("v8", "v11", "v12", "v12t"), "hgemm": ("h6", "h8"), "sgemv": ("s6", "s8")}


def main(out: str, *runs: str) -> None:
    documents = [json.loads(Path(path).read_text()) for path in runs]
    combined = {"runs": [{"file": Path(path).name, **doc} for path, doc in zip(runs, documents)]}
    Path(out).write_text(json.dumps(combined, separators=(",", ":")) + "\n")
    rows: dict[tuple, list[dict]] = defaultdict(list)
    for doc in documents:
        for record in doc["results"]:
            rows[(record["op"], record["stage"], record["size"])].append(record)
    print("| op | library | size | kept | median ms | torch ms | gemmEx trial ms | best cuBLASLt trial ms | % of |")
    print("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |")
    for (op, stage, size), records in rows.items():
        if stage not in LIBRARY:
            continue
        cells = [" / ".join(part) for part in zip(*(_library_cells(record) for record in records))]
        print(f"| {op} | {stage} | {size} | {' | '.join(cells)} |")
    print()
    print("| op | stage | size | % of the faster library (run 1 / run 2) | of |")
    print("| --- | --- | --- | ---: | --- |")
    for (op, stage, size), records in rows.items():
        if stage in SHOWN.get(op, ()) and all(r["status"] == "ok" for r in records):
            pct = " / ".join(f"{r['pct_cublas']:.1f}" for r in records)
            print(f"| {op} | {stage} | {size} | {pct} | {' / '.join(r['pct_cublas_of'] for r in records)} |")


def _library_cells(record: dict) -> tuple[str, ...]:
    trials = record["details"]["autotune"]["trials"]
    cupy = next(trial for trial in trials if not trial["config"].startswith("cuBLASLt"))
    lt = [trial for trial in trials if trial["config"].startswith("cuBLASLt") and trial["median_ms"] is not None]
    best = min(lt, key=lambda trial: trial["median_ms"]) if lt else None
    return (record["tile"], f"{record['median_ms']:.4f}", f"{record['torch_ms']:.4f}" if record.get("torch_ms") else "-",
            f"{cupy['median_ms']:.4f}", f"{best['median_ms']:.4f} ({best['config'][9:]})" if best else "-",
            record["pct_cublas_of"])


if __name__ == "__main__":
    main(*sys.argv[1:])
