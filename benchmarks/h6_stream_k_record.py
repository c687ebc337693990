"""Assemble h100-h6-stream-k.json (benchmarks/records/2026-11-26-h100-h6-stream-k/) from what
benchmarks/gpu/h6_stream_k_h200.sh (the record) and the runs of benchmarks/gpu/experiments/h6_stream_k.py
before it (the forms tried on the way) wrote under $OUT on the GPU machine, and print the tables of the
.md beside it.

    python3 benchmarks/h6_stream_k_record.py --record DIR --tried NAME=FILE[,FILE] [NAME=FILE ...] [--tma FILE[,FILE]]

DIR: the unpacked results.tgz of the record (h6-sk-run*.jsonl, bench-hgemm-run*.json, host.txt); each
FILE: the JSON lines of one earlier form of the kernel, named for the form; --tma: the JSON lines of
benchmarks/gpu/experiments/h6_tma_store.py (C stored by TMA against the staged epilogue)."""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paired_record import lines, spread

OUT = Path(__file__).parent / "records" / "2026-11-26-h100-h6-stream-k" / "h100-h6-stream-k.json"
SIZES = ("3072x3072x3072", "4096x4096x4096", "5120x5120x5120", "6144x6144x6144", "8192x8192x8192")
SMS = 132  # the H100's: one persistent block each


def last_wave(size: str) -> tuple[int, int]:
    """(tiles of 128x256 in the last, partial wave; all the tiles) of an M x N x K product."""
    m, n, _ = map(int, size.split("x"))
    tiles = -(-m // 128) * -(-n // 256)
    return tiles % SMS, tiles


def gathered(records: list[dict], phase: str, key: str) -> dict[str, list[float]]:
    by_size = collections.defaultdict(list)
    for r in records:
        if r["phase"] == phase and key in r:
            by_size[r["size"]].append(r[key])
    return by_size


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--record", type=Path, required=True)
    ap.add_argument("--tried", nargs="+", default=[], metavar="NAME=FILE")
    ap.add_argument("--tma", default="", help="FILE[,FILE]")
    args = ap.parse_args()
    runs = {f"run {n}": lines(args.record / f"h6-sk-run{n}.jsonl") for n in (1, 2)}
    both = [r for records in runs.values() for r in records]
    tried = {name: [r for path in paths.split(",") for r in lines(Path(path))]
             for name, paths in (item.split("=", 1) for item in args.tried)}
    bench = {f"run {n}": json.loads((args.record / f"bench-hgemm-run{n}.json").read_text()) for n in (1, 2)}
    document = {
        "command": "bash benchmarks/gpu/h6_stream_k_h200.sh (benchmarks/gpu/experiments/h6_stream_k.py in two "
                   "processes of 3 rounds, the first with --every-tail; then nsprof bench --op hgemm twice)",
        "card": "NVIDIA H100 80GB HBM3 (lent as nvidia-h200: an H100 came)",
        "host": (args.record / "host.txt").read_text(),
        "gpu_tests": (args.record / "gpu-tests.txt").read_text().strip().splitlines()[-1],
        "runs": runs,
        "forms_tried": tried,
        "bench_hgemm": bench,
        "tma_store": [r for path in args.tma.split(",") if path for r in lines(Path(path))],
    }
    OUT.write_text(json.dumps(document, separators=(",", ":")) + "\n")

    paired = gathered(both, "paired", "ratio_torch")
    plain = gathered(both, "paired", "plain_ratio_torch")
    over = gathered(both, "paired", "sk_over_plain")
    every = gathered(both, "every tail", "over_plain")
    alone, alone_plain = gathered(both, "alone", "ratio_torch"), gathered(both, "alone", "plain_ratio_torch")
    tiles = {r["size"]: r["tile"] for r in both if r["phase"] == "paired"}
    print("| size | last wave | plan | h6 / torch.mm, paired | before (plain) | over plain | every last wave shared | "
          "alone: h6 / torch.mm (before) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for size in SIZES:
        tail, count = last_wave(size)
        print(f"| {size.split('x')[0]}³ | {tail} of {SMS} ({tail / SMS:.2f} full; {count} tiles) | {tiles[size]} "
              f"| {spread(paired[size])} | {spread(plain[size])} | {spread(over[size])} | {spread(every[size])} "
              f"| {spread(alone[size])} ({spread(alone_plain[size])}) |")
    print()
    print("| form | " + " | ".join(size.split("x")[0] + "³" for size in SIZES) + " |")
    print("| --- |" + " --- |" * len(SIZES))
    for name, records in tried.items():
        shared = gathered(records, "paired", "sk_over_plain")
        print(f"| {name} | " + " | ".join(spread(shared[size]) if size in shared else "-" for size in SIZES) + " |")
    for variant in ("no parking", "tail 0"):
        bound = collections.defaultdict(list)
        for r in (r for records in tried.values() for r in records):
            if r["phase"] == "diagnose" and r["variant"] == variant:
                bound[r["size"]].append(r["over_plain"])
        if bound:
            print(f"| ({variant}) | " + " | ".join(spread(bound[s]) if s in bound else "-" for s in SIZES) + " |")
    print()
    tma = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in document["tma_store"]:  # "declared": the same tile with the staged epilogue
        if r["phase"] == "paired":
            for key in ("over_declared", "ratio_torch", "declared_ratio_torch"):
                tma[(r["variant"], r["size"], r.get("entry", "hgemm_h6_sk_tma_128x256"))][key].append(r[key])
    if tma:
        print("| C stored by TMA | size | entry | over the staged epilogue | TMA / torch.mm | staged / torch.mm |")
        print("| --- | --- | --- | --- | --- | --- |")
        for (variant, size, entry), by in sorted(tma.items()):
            print(f"| {variant} | {size.split('x')[0]}³ | `{entry}` | {spread(by['over_declared'])} "
                  f"| {spread(by['ratio_torch'])} | {spread(by['declared_ratio_torch'])} |")
        print()
    for run, doc in bench.items():
        rows = [r for r in doc["results"] if r["stage"] in ("h6", "h7", "h8") and r["status"] == "ok"]
        print(run, "; ".join(f"{r['stage']} {r['size'].split('x')[0]} {r['tile']} {r['tflops']:.0f} TFLOP/s "
                             f"{r['pct_cublas']:.0f}%" for r in rows))


if __name__ == "__main__":
    main()
