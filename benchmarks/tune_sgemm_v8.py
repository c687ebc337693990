"""Tuning sweep for v8 (GPU): every block tile x register cap at several sizes.

Used to choose the tile rule in nsprof.launch.sgemm.choose_tile and the V8_MIN_BLOCKS
default in kernels/sgemm/v08_double_buffering.cu. Prints one JSON line per point and a table.

    python3 benchmarks/tune_sgemm_v8.py --sizes 1024,2048,4096
"""

from __future__ import annotations

import argparse
import json

from nsprof.launch.gpu import device_info
from nsprof.launch.measure import time_launches, verify
from nsprof.launch.sgemm import SgemmProblem, make_launcher
from nsprof.registry import OPS, get_stage
from nsprof.sizes import parse_sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1024,2048,4096")
    parser.add_argument("--min-blocks", default="1,2")
    args = parser.parse_args()
    sm_count = device_info()["sm_count"]
    v8, cublas = get_stage("sgemm", "v8"), get_stage("sgemm", "v9")
    rows = []
    for size in parse_sizes([args.sizes]):
        problem = SgemmProblem(*size)
        base = time_launches(make_launcher(cublas, problem, sm_count).run).median_ms
        for tile in v8.tiles:
            for mb in args.min_blocks.split(","):
                launcher = make_launcher(v8, problem, sm_count, tile_shape=f"{tile.bm}x{tile.bn}",
                                         defines=(f"V8_MIN_BLOCKS={mb}",))
                problem.refresh()
                err = verify(launcher, problem)
                ms = time_launches(launcher.run).median_ms
                row = {"size": size[0], "tile": f"{tile.bm}x{tile.bn}", "min_blocks": int(mb),
                       "err": err, "ms": ms, "tflops": OPS["sgemm"].flops(*size) / ms / 1e9,
                       "pct_cublas": 100 * base / ms}
                rows.append(row)
                print(json.dumps(row), flush=True)
    print(f"{'size':>6} {'tile':>8} {'minB':>4} {'TFLOP/s':>8} {'%cuBLAS':>8} {'err':>9}")
    for r in rows:
        print(f"{r['size']:>6} {r['tile']:>8} {r['min_blocks']:>4} {r['tflops']:>8.2f} {r['pct_cublas']:>8.1f} {r['err']:>9.1e}")


if __name__ == "__main__":
    main()
