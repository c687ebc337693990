"""Scale benchmark (CPU only): `nsprof analyze DIR` on N synthetic captures of K kernels each, one
Dask task per capture on a local cluster of W worker processes.

    python benchmarks/analyze_many_scale.py [--captures 8] [--kernels 200000] [--workers 2] [--record]
    python benchmarks/analyze_many_scale.py --captures 256 --kernels 200000 --workers 16   # the 16-core target

One export is built by benchmarks/synthetic_export.py (with 2% memcpys and NVTX ranges as many) and
copied to rank0.sqlite ... rank{N-1}.sqlite. The command runs in a fresh process
(`python -m nsprof analyze DIR --json --workers W`): its wall time (cluster start included) is
timed; with --record it is stored in benchmarks/records/2026-11-24-cpu-analyze-scale/analyze_many_scale.json under
"<captures>x<kernels> on <workers> workers". Target: 256 captures of 200k kernels in at most 2
minutes on 16 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from analyze_scale import run_command  # noqa: E402
from synthetic_export import write_export  # noqa: E402

RESULTS = ROOT / "benchmarks/records/2026-11-24-cpu-analyze-scale/analyze_many_scale.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--captures", type=int, default=8)
    parser.add_argument("--kernels", type=int, default=200_000)
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--worker-memory", default="4GiB")
    parser.add_argument("--record", action="store_true", help=f"store the result in {RESULTS.name}")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "ranks"
        directory.mkdir()
        first = directory / "rank0.sqlite"
        write_export(first, args.kernels, args.kernels // 50, args.kernels // 50)
        for rank in range(1, args.captures):
            shutil.copyfile(first, directory / f"rank{rank}.sqlite")
        argv = [sys.executable, "-m", "nsprof", "analyze", str(directory), "--json", "--workers", str(args.workers),
                "--worker-memory", args.worker_memory]
        seconds, peak_mb, out = run_command(argv)
    doc = json.loads(out)
    kernels = sum(row["count"] for row in doc["kernels"])
    assert len(doc["captures"]) == args.captures and kernels == args.captures * args.kernels, (len(doc["captures"]), kernels)
    print(f"{args.captures} captures x {args.kernels:,} kernels on {args.workers} workers: {seconds:.1f} s "
          f"(client process peak {peak_mb:,.0f} MB; {len(doc['stragglers'])} steps compared)")
    if args.record:
        recorded = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        recorded[f"{args.captures}x{args.kernels} on {args.workers} workers"] = {
            "cores": os.cpu_count(), "seconds": round(seconds, 1), "captures": args.captures, "kernels": args.kernels,
            "workers": args.workers}
        RESULTS.write_text(json.dumps(recorded, indent=2) + "\n")


if __name__ == "__main__":
    main()
