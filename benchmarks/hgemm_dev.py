"""Development sweep for the HGEMM ladder on the GPU machine: every launch configuration of every
stage, through nsprof's own launcher (nsprof.ops.matmul), verified and then timed.

For each stage (in its own process, so a kernel that breaks the CUDA context costs only its own
results) and each of its tiles, forced: verify at square, ragged and tall/flat shapes with no
split and with the tile's largest split (fresh normal inputs, NaN-poisoned output, float64
reference, the op's tolerance), then time the tile at each size with its own split choice.
Also: cuBLAS, and the error of half against float accumulation as K grows (cuBLAS with an fp16
compute type against the float32 one). JSON lines go to --out; a table is printed last.

    python3 benchmarks/hgemm_dev.py --out $OUT/hgemm-dev.jsonl [--stages h5,h6] [--sizes 4096,8192]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CHECK = "1x1x1,17x33x9,1000x1200x808,4095x4097x4093,128x4096x1024,4096x128x1024,512x2048x1024,1024"
TIME = "512x2048x1024,1024,4096,8192"
ERROR_K = (256, 1024, 4096, 16384, 65536)


def sweep_stage(name: str, check: str, sizes: str, out) -> None:
    from nsprof.launch.gpu import launch_tools
    from nsprof.launch.measure import time_launches, verify
    from nsprof.registry import get_op, get_stage
    from nsprof.sizes import parse_sizes, size_label

    op, tools = get_op("hgemm"), launch_tools()
    stage = get_stage("hgemm", name)
    tiles = [t for t in stage.tiles if tools.runs(t)] or [None]
    if stage.tiles and tiles == [None]:
        out({"stage": name, "phase": "available", "status": "not available"})
        return
    for tile in tiles:
        shape = tile.shape if tile else None
        label = f"{name} {tile.entry if tile else 'cuBLAS'}"
        passed = True
        for size in parse_sizes([check], op.dims):
            for split in sorted({1, tile.max_split_k}) if tile else [None]:
                rec = {"stage": name, "entry": label, "phase": "verify", "size": size_label(size), "split": split}
                try:
                    problem = op.workload.problem(tools.xp, size, seed=hash((name, size, split)) % 10_000)
                    launcher = op.workload.launcher(stage, problem, tools, tile_shape=shape, split_k=split)
                    err = verify(launcher, problem)
                    ok = err <= stage.tolerance(size)
                    rec.update(rel_error=err, tolerance=stage.tolerance(size), status="ok" if ok else "FAILED")
                    passed &= ok
                except Exception as exc:  # a build error or a broken context: record, stop this stage
                    out({**rec, "status": "error", "message": f"{type(exc).__name__}: {str(exc)[:1500]}"})
                    return
                out(rec)
                del problem
        if not passed:
            continue
        for size in parse_sizes([sizes], op.dims):
            problem = op.workload.problem(tools.xp, size)
            launcher = op.workload.launcher(stage, problem, tools, tile_shape=shape)
            timing = time_launches(launcher.run).summary()
            out({"stage": name, "entry": label, "phase": "time", "size": size_label(size), "tile": launcher.tile_label,
                 "median_ms": timing["median_ms"], "spread_pct": timing["spread_pct"], "runs": timing["runs"],
                 "tflops": op.flops(size) / timing["median_ms"] / 1e9})
            del problem, launcher
            tools.xp.get_default_memory_pool().free_all_blocks()


def half_accumulation_error(out) -> None:
    """Relative error against float64 of cuBLAS HGEMM with fp16 and with float32 compute, per K."""
    import cupy as cp
    from cupy._core import _routines_linalg as linalg

    m = n = 1024
    for k in ERROR_K:
        rng = cp.random.default_rng(k)
        a = rng.standard_normal((m, k), dtype=cp.float32).astype(cp.float16)
        b = rng.standard_normal((k, n), dtype=cp.float32).astype(cp.float16)
        ref = a.astype(cp.float64) @ b.astype(cp.float64)
        rec = {"phase": "accumulation", "size": f"{m}x{n}x{k}"}
        for name, compute in (("fp32_accumulation", linalg.COMPUTE_TYPE_FP32), ("fp16_accumulation", linalg.COMPUTE_TYPE_FP16)):
            linalg.set_compute_type(cp.float16, compute)
            c = a @ b
            rec[name] = float(cp.linalg.norm(c.astype(cp.float64) - ref) / cp.linalg.norm(ref))
        linalg.set_compute_type(cp.float16, linalg.COMPUTE_TYPE_DEFAULT)
        out(rec)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/hgemm-dev.jsonl")
    ap.add_argument("--stages", default="")
    ap.add_argument("--check", default=CHECK)
    ap.add_argument("--sizes", default=TIME)
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    sink = open(args.out, "a")

    def out(rec):
        sink.write(json.dumps(rec) + "\n")
        sink.flush()
        print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()), flush=True)

    if args.one == "accumulation":
        half_accumulation_error(out)
        return
    if args.one:
        sweep_stage(args.one, args.check, args.sizes, out)
        return
    from nsprof.registry import stages_for

    names = [s.stage for s in stages_for("hgemm")]
    wanted = [w for w in args.stages.split(",") if w] or names
    for target in [*wanted, "accumulation"]:
        subprocess.run([sys.executable, __file__, "--one", target, "--out", args.out, "--check", args.check,
                        "--sizes", args.sizes], timeout=500)
    sink.close()
    rows = [json.loads(line) for line in open(args.out)]
    sizes = args.sizes.split(",")
    print(f"\n{'TFLOP/s (median)':<28}" + "".join(f"{s:>22}" for s in sizes))
    for entry in dict.fromkeys(r["entry"] for r in rows if "entry" in r):
        timed = {r["size"].split("x")[0] if r["size"].count("x") == 2 and len(set(r["size"].split("x"))) == 1
                 else r["size"]: r for r in rows if r.get("entry") == entry and r["phase"] == "time"}
        bad = [r for r in rows if r.get("entry") == entry and r.get("status") in ("FAILED", "error")]
        cells = "".join(f"{timed[s]['tflops']:>10.1f} {timed[s]['tile']:>11}" if s in timed else f"{'-':>22}" for s in sizes)
        print(f"{entry[:28]:<28}{cells}" + (f"  ({len(bad)} failed)" if bad else ""))


if __name__ == "__main__":
    main()
