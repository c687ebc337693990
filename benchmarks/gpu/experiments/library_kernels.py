"""The kernels the library runs for an fp16 product: torch.mm (cuBLAS, with cuBLASLt's heuristic) on each
size, under torch.profiler, named with their GPU time per call. Names what h7's torch.mm side ran at each
size of issue 60's record (the bench keeps the fastest of cuBLAS, cuBLASLt's candidates and torch.mm).

    python3 benchmarks/gpu/experiments/library_kernels.py --sizes 3072,16x4096x4096 --out $OUT/library-kernels.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import torch
    from torch.profiler import ProfilerActivity, profile

    from nsprof.sizes import parse_sizes, size_label

    found = []
    for m, n, k in parse_sizes([args.sizes], "MxNxK"):
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)
        for _ in range(3):
            torch.mm(a, b, out=c)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(args.calls):
                torch.mm(a, b, out=c)
            torch.cuda.synchronize()
        kernels = {}
        for event in prof.events():
            if event.device_type == torch.autograd.DeviceType.CUDA:
                entry = kernels.setdefault(event.name, [0, 0.0])
                entry[0] += 1
                entry[1] += event.device_time_total
        row = {"size": size_label((m, n, k)), "kernels": [
            {"name": name, "per_call": count / args.calls, "us_per_call": total / args.calls}
            for name, (count, total) in sorted(kernels.items(), key=lambda kv: -kv[1][1])]}
        found.append(row)
        print(row["size"], "; ".join(f"{x['name'][:90]} ({x['us_per_call']:.1f} us)" for x in row["kernels"]), flush=True)
    Path(args.out).write_text(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                                          "sizes": found}, indent=1))


if __name__ == "__main__":
    main()
