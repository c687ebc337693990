"""Development sweep for the HGEMM ladder on the GPU machine: every launch configuration of every
stage, through nsprof's own launcher (nsprof.ladder.ops.matmul), verified and then timed.

For each stage (in its own process, so a kernel that breaks the CUDA context costs only its own
results) and each of its tiles, forced: verify at square, ragged and tall/flat shapes with no
split and with the tile's largest split (fresh normal inputs, NaN-poisoned output, float64
reference, the op's tolerance), then time the tile at each size with its own split choice.
Also: cuBLAS, and the error of half against float accumulation as K grows (h1 with the seed's
half accumulators against h1 as the ladder has it). JSON lines go to --out; a table is printed last.

    python3 benchmarks/gpu/hgemm_dev.py --out $OUT/hgemm-dev.jsonl [--stages h5,h6] [--sizes 4096,8192]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

CHECK = "1x1x1,17x33x9,1000x1200x808,4095x4097x4093,128x4096x1024,4096x128x1024,512x2048x1024,1024"
TIME = "512x2048x1024,1024,4096,8192"
ERROR_K = (256, 1024, 4096, 16384, 65536)


def variants_of(name: str, path: str | None) -> list[tuple]:
    """(stage, tile, defines, label) for the stage's own tiles, then for the variants in `path`:
    a JSON list of {"stage", "label", "entry", "bm", "bn", "bk", "threads", "smem", "split",
    "defines", "arch", "tma_boxes", "swizzle", "persistent"} (a tuning candidate, compiled with its
    -D defines)."""
    import dataclasses

    from nsprof.ladder.registry import Tile, get_stage

    stage = get_stage("hgemm", name)
    found = [(stage, tile, (), f"{name} {tile.entry}") for tile in stage.tiles] or [(stage, None, (), f"{name} cuBLAS")]
    for v in json.loads(Path(path).read_text()) if path else []:
        if v["stage"] != name:
            continue
        boxes = tuple(tuple(box) for box in v["tma_boxes"]) if v.get("tma_boxes") else None
        tile = Tile(v["bm"], v["bn"], v["bk"], (v["threads"], 1), v["entry"], v.get("smem", 0), v.get("split", 1),
                    v.get("arch"), boxes, v.get("swizzle", 0), v.get("persistent", False))
        found.append((dataclasses.replace(stage, tiles=(tile,)), tile, tuple(v.get("defines", ())), v["label"]))
    return found


def sweep_stage(name: str, check: str, sizes: str, out, variants: str | None = None) -> None:
    from nsprof.ladder.registry import get_op
    from nsprof.launch.measure import time_launches, verify
    from nsprof.launch.tools import launch_tools
    from nsprof.sizes import parse_sizes, size_label

    op, tools = get_op("hgemm"), launch_tools()
    for stage, tile, defines, label in variants_of(name, variants):
        if tile is not None and not tools.runs(tile):
            out({"stage": name, "entry": label, "phase": "available", "status": "not available"})
            continue
        shape = tile.shape if tile else None
        passed = True
        for size in parse_sizes([check], op.dims):
            for split in sorted({1, tile.max_split_k}) if tile else [None]:
                rec = {"stage": name, "entry": label, "phase": "verify", "size": size_label(size), "split": split}
                try:
                    problem = op.workload.problem(tools.xp, size, seed=hash((name, size, split)) % 10_000)
                    launcher = op.workload.launcher(stage, problem, tools, tile_shape=shape, split_k=split,
                                                    defines=defines)
                    err = verify(launcher, problem)
                    ok = err <= stage.tolerance(size)
                    rec.update(rel_error=err, tolerance=stage.tolerance(size), status="ok" if ok else "FAILED")
                    passed &= ok
                except Exception as exc:  # a build error or a broken context: record, stop this stage
                    out({**rec, "status": "error", "message": f"{type(exc).__name__}: {str(exc)[:1500]}"})
                    if "CUDA" in type(exc).__name__:
                        return
                    passed = False
                    break
                out(rec)
                del problem
        if not passed:
            continue
        for size in parse_sizes([sizes], op.dims):
            problem = op.workload.problem(tools.xp, size)
            launcher = op.workload.launcher(stage, problem, tools, tile_shape=shape, defines=defines)
            timing = time_launches(launcher.run).summary()
            out({"stage": name, "entry": label, "phase": "time", "size": size_label(size), "tile": launcher.tile_label,
                 "median_ms": timing["median_ms"], "spread_pct": timing["spread_pct"], "runs": timing["runs"],
                 "tflops": op.flops(size) / timing["median_ms"] / 1e9})
            del problem, launcher
            tools.xp.get_default_memory_pool().free_all_blocks()


def half_accumulation_error(out) -> None:
    """Relative error against float64 as K grows: h1 as the seed wrote it (half accumulators,
    -DH1_HALF_ACCUMULATOR=1) against h1 as the ladder has it (float32 accumulators)."""
    from nsprof.ladder.registry import get_op, get_stage
    from nsprof.launch.measure import verify
    from nsprof.launch.tools import launch_tools

    op, tools, h1 = get_op("hgemm"), launch_tools(), get_stage("hgemm", "h1")
    for k in ERROR_K:
        size = (1024, 1024, k)
        rec = {"phase": "accumulation", "size": "x".join(map(str, size)), "tolerance": h1.tolerance(size)}
        for name, defines in (("fp32_accumulation", ()), ("fp16_accumulation", ("H1_HALF_ACCUMULATOR=1",))):
            problem = op.workload.problem(tools.xp, size, seed=k)
            rec[name] = verify(op.workload.launcher(h1, problem, tools, defines=defines), problem)
        out(rec)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/hgemm-dev.jsonl")
    ap.add_argument("--stages", default="")
    ap.add_argument("--check", default=CHECK)
    ap.add_argument("--sizes", default=TIME)
    ap.add_argument("--variants", default=None, help="JSON list of extra tiles to sweep (see variants_of)")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    def out(rec):  # opened per record: the --one subprocesses append to the same file
        with open(args.out, "a") as sink:
            sink.write(json.dumps(rec) + "\n")
        print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()), flush=True)

    if args.one == "accumulation":
        half_accumulation_error(out)
        return
    if args.one:
        sweep_stage(args.one, args.check, args.sizes, out, args.variants)
        return
    from nsprof.ladder.registry import stages_for

    names = [s.stage for s in stages_for("hgemm")]
    wanted = [w for w in args.stages.split(",") if w] or names
    for target in [*wanted, "accumulation"]:
        try:  # a kernel that hangs is killed with its process; the sweep goes on
            subprocess.run([sys.executable, __file__, "--one", target, "--out", args.out, "--check", args.check,
                            "--sizes", args.sizes, *(["--variants", args.variants] if args.variants else [])],
                           timeout=int(os.environ.get("HGEMM_TIMEOUT", "400")))
        except subprocess.TimeoutExpired:
            out({"stage": target, "phase": "sweep", "status": "error", "message": "timed out (a hang?)"})
    rows = [json.loads(line) for line in Path(args.out).read_text().splitlines()]
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
