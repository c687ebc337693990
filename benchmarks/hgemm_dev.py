"""Development harness for the HGEMM kernels, run on the GPU machine while the op is built.

Reads the `// launch:` lines of kernels/hgemm/h*.cu, compiles each file to a cubin with NVRTC
(sm_90 or sm_90a as declared), verifies every entry against a float64 reference at square,
ragged and tall/flat shapes (fresh normal inputs, NaN-poisoned output) and times each verified
entry with CUDA events. Each kernel file runs in its own process, so a kernel that corrupts the
CUDA context costs only its own results. Prints a table; writes JSON lines to --out.

    python3 benchmarks/hgemm_dev.py --out $OUT/hgemm-dev.jsonl [--files h5,h6] [--sizes 4096,8192]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "kernels" / "hgemm"
CHECK_SHAPES = ["1x1x1", "17x33x9", "1000x1200x808", "4095x4097x4093", "128x4096x1024", "4096x128x1024",
                "512x2048x1024", "1024x1024x1024"]
TIME_SHAPES = ["512x2048x1024", "1024x1024x1024", "4096x4096x4096", "8192x8192x8192"]
U16, U32 = 2.0**-11, 2.0**-24


def tolerance(k: int) -> float:
    """fp16 rounding of C (at most 2^-11 relative) plus float32 accumulation over K terms."""
    return U16 + 4 * math.sqrt(k) * U32


def parse_launch_lines(path: Path) -> list[dict]:
    entries = []
    for line in path.read_text().splitlines():
        m = re.match(r"^\s*//\s*launch:\s*(.*)$", line)
        if not m:
            continue
        kv = dict(tok.split("=", 1) for tok in m.group(1).split())
        e = {"entry": kv["entry"], "bm": int(kv["bm"]), "bn": int(kv["bn"]), "bk": int(kv["bk"]),
             "threads": int(kv["threads"]), "smem": int(kv.get("smem", 0)), "split": int(kv.get("split", 1)),
             "arch": kv.get("arch", "sm_90"), "grid": kv.get("grid", "tiles"), "swizzle": int(kv.get("swizzle", 128))}
        for key in ("tmaA", "tmaB"):
            if key in kv:
                r, c = kv[key].lower().split("x")
                e[key] = (int(r), int(c))
        entries.append(e)
    return entries


def shape(text: str) -> tuple[int, int, int]:
    d = [int(x) for x in text.split("x")]
    return tuple(d * 3) if len(d) == 1 else tuple(d)


def compile_cubin(path: Path, arch: str) -> Path:
    import cupy
    from cupy_backends.cuda.libs import nvrtc
    include = Path(cupy.cuda.get_cuda_path() or "/usr/local/cuda") / "include"
    opts = [f"-arch={arch}", "-std=c++17", f"-I{include}", "--use_fast_math"]
    prog = nvrtc.createProgram(path.read_text(), path.name, [], [])
    try:
        nvrtc.compileProgram(prog, opts)
    except nvrtc.NVRTCError:
        raise RuntimeError(f"NVRTC failed on {path.name}:\n{nvrtc.getProgramLog(prog)}") from None
    log = nvrtc.getProgramLog(prog)
    if log.strip():
        print(f"[{path.name}] nvrtc log: {log.strip()[:2000]}", flush=True)
    out = Path("/tmp") / f"{path.stem}-{arch}.cubin"
    out.write_bytes(nvrtc.getCUBIN(prog))
    nvrtc.destroyProgram(prog)
    return out


class Launch:
    def __init__(self, cp, e, module, reduce_kernel, sms, m, n, k, split=None):
        self.cp, self.e, self.m, self.n, self.k = cp, e, m, n, k
        self.kernel = module.get_function(e["entry"])
        if e["smem"] > 48 * 1024:
            self.kernel.max_dynamic_shared_size_bytes = e["smem"]
        blocks = math.ceil(m / e["bm"]) * math.ceil(n / e["bn"])
        if split is None:
            split = 1
            while blocks * split < sms and split * 2 <= e["split"] and k >= split * 2 * 4 * e["bk"]:
                split *= 2
        self.split = split
        self.mp = -(-m // e["bm"]) * e["bm"]
        self.np_ = -(-n // e["bn"]) * e["bn"]
        self.kp = -(-k // (e["bk"] * split)) * e["bk"] * split
        self.padded = (self.mp, self.np_, self.kp) != (m, n, k)
        f16 = cp.float16
        self.a = cp.zeros((self.mp, self.kp), f16)
        self.b = cp.zeros((self.kp, self.np_), f16)
        self.c = cp.full((self.mp, self.np_), cp.nan, f16)
        self.partials = cp.empty((split, self.mp, self.np_), cp.float32) if split > 1 else None
        self.reduce = reduce_kernel
        self.grid = (sms, 1, 1) if e["grid"] == "persistent" else (self.np_ // e["bn"], self.mp // e["bm"], split)
        self.tmaps = {}  # (A, B addresses) -> device copy of the two encoded tensor maps

    def tensor_maps(self, a, b):
        import numpy as np
        key = (a.data.ptr, b.data.ptr)
        if key not in self.tmaps:
            sys.path.insert(0, str(ROOT))
            from nsprof.launch.tensor_map import encode_2d
            e = self.e
            ta = encode_2d(a.data.ptr, self.mp, self.kp, self.kp * 2, *e["tmaA"], e["swizzle"])
            tb = encode_2d(b.data.ptr, self.kp, self.np_, self.np_ * 2, *e["tmaB"], e["swizzle"])
            maps = self.cp.asarray(np.frombuffer(ta + tb, dtype=np.uint8))
            assert maps.data.ptr % 128 == 0
            self.tmaps[key] = maps
        ptr = self.tmaps[key].data.ptr
        return np.uint64(ptr), np.uint64(ptr + 128)

    def run(self, A, B, C):
        import numpy as np_
        if self.padded:
            self.a[: self.m, : self.k] = A
            self.b[: self.k, : self.n] = B
            a, b, c = self.a, self.b, self.c
        else:
            a, b, c = A, B, C
        args_ab = self.tensor_maps(a, b) if "tmaA" in self.e else (a, b)
        part = self.partials if self.partials is not None else np_.uint64(0)
        self.kernel(self.grid, (self.e["threads"], 1, 1),
                    (np_.int32(self.mp), np_.int32(self.np_), np_.int32(self.kp), *args_ab, c, part),
                    shared_mem=self.e["smem"])
        if self.split > 1:
            mn = self.mp * self.np_
            self.reduce((min(1024, -(-mn // 1024)),), (256,), (np_.int32(mn), np_.int32(self.split), self.partials, c))
        if self.padded:
            C[...] = c[: self.m, : self.n]


def time_it(cp, fn, target_s=0.2):
    import numpy as np
    for _ in range(3):
        fn()
    cp.cuda.Device().synchronize()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    s.record(); fn(); e.record(); e.synchronize()
    one = max(cp.cuda.get_elapsed_time(s, e) / 1e3, 1e-6)
    reps = int(min(200, max(10, target_s / one)))
    starts = [cp.cuda.Event() for _ in range(reps)]
    ends = [cp.cuda.Event() for _ in range(reps)]
    for a, b in zip(starts, ends):
        a.record(); fn(); b.record()
    ends[-1].synchronize()
    t = np.array([cp.cuda.get_elapsed_time(a, b) for a, b in zip(starts, ends)])
    q1, med, q3 = np.percentile(t, [25, 50, 75])
    return float(med), float(100 * (q3 - q1) / med), reps


def inputs(cp, m, n, k, seed):
    rng = cp.random.default_rng(seed)
    A = rng.standard_normal((m, k), dtype=cp.float32).astype(cp.float16)
    B = rng.standard_normal((k, n), dtype=cp.float32).astype(cp.float16)
    return A, B


def rel_error(cp, C, A, B):
    ref = A.astype(cp.float64) @ B.astype(cp.float64)
    return float(cp.linalg.norm(C.astype(cp.float64) - ref) / cp.linalg.norm(ref))


def run_file(path: Path, check_shapes, time_shapes, out) -> None:
    import cupy as cp
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    entries = parse_launch_lines(path)
    if not entries:
        print(f"{path.name}: no launch lines", flush=True)
        return
    reduce_mod = cp.RawModule(path=str(compile_cubin(KERNELS / "splitk_reduce.cu", "sm_90")))
    reduce_kernel = reduce_mod.get_function("hgemm_splitk_reduce")
    modules = {}
    seed = 1
    for e in entries:
        rec_base = {"file": path.name, "entry": e["entry"]}
        try:
            if e["arch"] not in modules:
                t0 = time.perf_counter()
                modules[e["arch"]] = cp.RawModule(path=str(compile_cubin(path, e["arch"])))
                print(f"{path.name}: compiled for {e['arch']} in {time.perf_counter() - t0:.1f} s", flush=True)
            module = modules[e["arch"]]
        except Exception as err:
            out({**rec_base, "phase": "compile", "status": "error", "message": str(err)[:3000]})
            return
        ok_all = True
        for text in check_shapes:
            m, n, k = shape(text)
            for split in sorted({1, e["split"]}):
                try:
                    L = Launch(cp, e, module, reduce_kernel, sms, m, n, k, split=split)
                    A, B = inputs(cp, m, n, k, seed); seed += 1
                    C = cp.full((m, n), cp.nan, cp.float16)
                    L.run(A, B, C)
                    cp.cuda.Device().synchronize()
                    err = rel_error(cp, C, A, B)
                    ok = err <= tolerance(k)
                    ok_all &= ok
                    out({**rec_base, "phase": "verify", "size": text, "split": split,
                         "rel_error": err, "tolerance": tolerance(k), "status": "ok" if ok else "FAILED"})
                except Exception as err:
                    out({**rec_base, "phase": "verify", "size": text, "split": split, "status": "error",
                         "message": f"{type(err).__name__}: {str(err)[:500]}"})
                    if "CUDA" in type(err).__name__ or "cuda" in str(err).lower():
                        return  # the context is gone
                    ok_all = False
        if not ok_all:
            continue
        for text in time_shapes:
            m, n, k = shape(text)
            L = Launch(cp, e, module, reduce_kernel, sms, m, n, k)
            A, B = inputs(cp, m, n, k, seed); seed += 1
            C = cp.empty((m, n), cp.float16)
            med, spread, reps = time_it(cp, lambda: L.run(A, B, C))
            out({**rec_base, "phase": "time", "size": text, "split": L.split, "median_ms": med,
                 "spread_pct": spread, "runs": reps, "tflops": 2 * m * n * k / med / 1e9})
            del L, A, B, C
            cp.get_default_memory_pool().free_all_blocks()


def run_cublas(time_shapes, check_shapes, out) -> None:
    import cupy as cp
    for i, text in enumerate(check_shapes):
        m, n, k = shape(text)
        A, B = inputs(cp, m, n, k, 1000 + i)
        C = A @ B
        err = rel_error(cp, C, A, B)
        out({"file": "cublas", "entry": "cupy.matmul", "phase": "verify", "size": text, "rel_error": err,
             "tolerance": tolerance(k), "status": "ok" if err <= tolerance(k) else "FAILED"})
    for text in time_shapes:
        m, n, k = shape(text)
        A, B = inputs(cp, m, n, k, 7)
        C = cp.empty((m, n), cp.float16)
        med, spread, reps = time_it(cp, lambda: cp.matmul(A, B, out=C))
        out({"file": "cublas", "entry": "cupy.matmul", "phase": "time", "size": text, "median_ms": med,
             "spread_pct": spread, "runs": reps, "tflops": 2 * m * n * k / med / 1e9})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/hgemm-dev.jsonl")
    ap.add_argument("--files", default="")
    ap.add_argument("--check", default=",".join(CHECK_SHAPES))
    ap.add_argument("--sizes", default=",".join(TIME_SHAPES))
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    check, sizes = args.check.split(","), args.sizes.split(",")
    sink = open(args.out, "a")

    def out(rec):
        sink.write(json.dumps(rec) + "\n"); sink.flush()
        keys = ("file", "entry", "phase", "size", "split", "status", "rel_error", "median_ms", "tflops", "message")
        print("  ".join(f"{k}={rec[k]:.4g}" if isinstance(rec.get(k), float) else f"{k}={rec[k]}"
                        for k in keys if k in rec), flush=True)

    if args.one == "cublas":
        run_cublas(sizes, check, out)
        return
    if args.one:
        run_file(Path(args.one), check, sizes, out)
        return
    wanted = [w.strip() for w in args.files.split(",") if w.strip()]
    files = [p for p in sorted(KERNELS.glob("h*.cu")) if not wanted or any(p.name.startswith(w) for w in wanted)]
    for target in ["cublas", *map(str, files)]:
        subprocess.run([sys.executable, __file__, "--one", target, "--out", args.out,
                        "--check", args.check, "--sizes", args.sizes], timeout=400)
    sink.close()
    rows = [json.loads(l) for l in open(args.out)]
    print("\nTFLOP/s (median)           " + "  ".join(f"{s:>16}" for s in sizes))
    for key in dict.fromkeys((r["file"], r["entry"]) for r in rows):
        t = {r["size"]: r for r in rows if (r["file"], r["entry"]) == key and r["phase"] == "time"}
        bad = [r for r in rows if (r["file"], r["entry"]) == key and r.get("status") in ("FAILED", "error")]
        cells = "  ".join(f"{t[s]['tflops']:>11.1f}/s{t[s].get('split', 1)}" if s in t else f"{'-':>16}" for s in sizes)
        print(f"{key[1][:26]:<26} {cells}" + (f"  ({len(bad)} failed checks)" if bad else ""))


if __name__ == "__main__":
    main()
