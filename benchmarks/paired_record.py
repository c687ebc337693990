"""Assemble h100-paired-library.json (benchmarks/records/2026-11-26-h100-paired-library/) from what
benchmarks/gpu/paired_h200.sh and the h6 and flow experiments wrote under $OUT on the GPU machine, and
print the tables of the .md beside it.

    python3 benchmarks/paired_record.py --paired DIR --sweep DIR [DIR ...] --flow DIR [--bench DIR] [--bursts DIR ...] > /dev/null

DIR: the folders the device tool copied back (paired-run*.jsonl and host.txt; hgemm-vs-torch.jsonl;
wc-pipeline.jsonl)."""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

OUT = Path(__file__).parent / "records" / "2026-11-26-h100-paired-library" / "h100-paired-library.json"


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def spread(values: list[float]) -> str:
    return f"{min(values):.3f}-{max(values):.3f}" if min(values) != max(values) else f"{values[0]:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--paired", type=Path, required=True)
    ap.add_argument("--sweep", type=Path, nargs="+", required=True)
    ap.add_argument("--flow", type=Path, required=True)
    ap.add_argument("--bench", type=Path, default=None,
                    help="the folder of benchmarks/gpu/paired_bench_h200.sh (bench-hgemm.json, bench-sgemm.json)")
    ap.add_argument("--bursts", type=Path, nargs="*", default=[],
                    help="folders of the same sweep timed in bursts (hgemm-vs-torch.jsonl without --paired)")
    args = ap.parse_args()
    runs = {f"run {n}": lines(args.paired / f"paired-run{n}.jsonl") for n in (1, 2)}
    summary = collections.defaultdict(lambda: collections.defaultdict(list))
    for run, records in runs.items():
        for r in records:
            if r["phase"] == "paired":
                key = f"{r['op']} {r['stage']} {r['size']} ({r['tile']})"
                summary[key][run].append(r["ratio"])
                summary[key]["ms"].append(r["median_ms"])
                summary[key]["torch_ms"].append(r["torch_ms"])
    sweep = collections.defaultdict(list)
    for r in (r for folder in args.sweep for r in lines(folder / "hgemm-vs-torch.jsonl")):
        if r["phase"] == "paired":
            sweep[f"{r['size']} {r['variant']}"].append(r["ratio"])
    flow = lines(args.flow / "wc-pipeline.jsonl")
    document = {
        "command": "bash benchmarks/gpu/paired_h200.sh (benchmarks/gpu/paired_vs_torch.py, two runs of 5 rounds); "
                   "PAIRED=1 HGEMM_ONLY='^h6 128x256' bash benchmarks/gpu/cpu_rung_capture_h200.sh (the h6 sweep); "
                   "benchmarks/gpu/experiments/wc_pipeline.py (write-combined inputs)",
        "card": "NVIDIA H100 80GB HBM3 (lent as nvidia-h200: an H100 came)",
        "host": (args.paired / "host.txt").read_text(),
        "summary": {key: {"ratio_" + run.replace(" ", ""): values for run, values in by.items() if run.startswith("run")}
                    | {"median_ms": by["ms"], "torch_ms": by["torch_ms"]} for key, by in summary.items()},
        "runs": runs,
        "h6_sweep_paired": dict(sweep),
        "write_combined_flow": flow,
        "bench_paired": {name: json.loads((args.bench / f"bench-{name}.json").read_text()) for name in ("hgemm", "sgemm")}
        if args.bench else None,
        "h6_sweep_bursts": [[r for r in lines(folder / "hgemm-vs-torch.jsonl") if r["phase"] == "time"]
                            for folder in args.bursts],
    }
    OUT.write_text(json.dumps(document, indent=1) + "\n")
    print("| stage | size | tile | torch.mm / stage, run 1 | run 2 | stage ms | torch.mm ms |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for key, by in summary.items():
        op_stage, size, tile = key.rsplit(" (", 1)[0].rsplit(" ", 1)[0], key.split()[2], key.rsplit("(", 1)[1][:-1]
        print(f"| {op_stage} | {size} | {tile} | {spread(by['run 1'])} | {spread(by['run 2'])} | "
              f"{min(by['ms']):.4f}-{max(by['ms']):.4f} | {min(by['torch_ms']):.4f}-{max(by['torch_ms']):.4f} |")
    print()
    for key, values in sweep.items():
        print(f"| {key} | {spread(values)} |")
    print()
    for r in flow:
        print(r)


if __name__ == "__main__":
    main()
