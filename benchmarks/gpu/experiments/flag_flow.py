"""Issue 33's 1024^3 flow (host memory to host memory at <= 0.19 ms): products and copies handed over by
words in device memory instead of events between streams (flag_flow.cu says how).

The flows of `nsprof pipeline` lose time between copies, products and cross-stream waits, and their
products slow down on small row blocks (one cuBLAS launch per block). Here one persistent kernel takes
64x64 tiles as A's rows land, and the copy-out stream waits (cuStreamWaitValue32) on the count of leading
64-row units of C the kernel has finished. A's arrival is known either from flags the copy-in stream
raises after each block of A (cuStreamWriteValue32), or with A copied whole onto rows that hold a
sentinel NaN, which the kernel reads until it is gone. Every flow is verified first on poisoned buffers
(NaN in B and C on the device and in C on the host, NaN or the sentinel in A: a tile computed before its
bytes land fails), then timed as a CUDA graph and issued call by call, in interleaved rounds, beside:

- the bus alone: 8 MiB in and 4 MiB out at once, on two streams (the flow's floor on this card);
- cuBLAS row-block flows as `nsprof pipeline` streams them (B whole, then 4 or 5 row blocks, one
  stream per role linked by events), FP32 (v9) and TF32 (v9t);
- the product alone, its flag raised in advance (no copies), and the flows with no product (C left
  unwritten: the schedule's own cost, not verified).

    python3 benchmarks/gpu/experiments/flag_flow.py --out $OUT/flag-flow.jsonl [--rounds 3] [--only REGEX]
"""

from __future__ import annotations

import argparse
import ctypes
import itertools
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

M = N = K = 1024
F32 = 4
WAIT_GEQ = 0x0  # CU_STREAM_WAIT_VALUE_GEQ
SMEM = 3 * (64 * 36 + 32 * 68) * F32  # the kernel's 3-stage ring (FF_STAGES x FF_STAGE_FLOATS)
SENTINEL = 0x7FF1A95E  # FF_SENTINEL: the NaN that marks rows of A not landed yet


class MemOps:
    """cuStreamWriteValue32 / cuStreamWaitValue32 (the driver API; CuPy does not wrap them)."""

    def __init__(self) -> None:
        cuda = ctypes.CDLL("libcuda.so.1")
        self.write, self.wait = cuda.cuStreamWriteValue32_v2, cuda.cuStreamWaitValue32_v2
        for fn in (self.write, self.wait):
            fn.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint]
            fn.restype = ctypes.c_int

    def raise_flag(self, stream, address: int, value: int) -> None:
        self._check(self.write(stream.ptr, address, value, 0), "cuStreamWriteValue32")

    def wait_flag(self, stream, address: int, at_least: int = 1) -> None:
        self._check(self.wait(stream.ptr, address, at_least, WAIT_GEQ), "cuStreamWaitValue32")

    @staticmethod
    def _check(code: int, what: str) -> None:
        if code != 0:
            raise RuntimeError(f"{what} failed: CUresult {code}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=300)
    ap.add_argument("--only", default="", help="a regular expression: only the flows it finds")
    args = ap.parse_args()
    import cupy as cp
    import cupyx
    import numpy as np

    from nsprof.ladder.op_model import find_kernel
    from nsprof.ladder_runs import pipeline as P
    from nsprof.launch.capturable_cublas import RowMajorGemm
    from nsprof.launch.compile import load_kernel
    from nsprof.launch.measure import time_launches

    rt = cp.cuda.runtime
    ops = MemOps()
    card = rt.getDeviceProperties(0)["name"].decode()
    sms = rt.getDeviceProperties(0)["multiProcessorCount"]
    source = Path(__file__).with_suffix(".cu")
    kernel = load_kernel(source, "flag_flow_gemm", dynamic_smem_bytes=SMEM)
    watched_source = find_kernel("kernels/common/watch_rows.cu")  # the watched flows' kernels, now nsprof pipeline's
    watch_rows, fill_sentinel = load_kernel(watched_source, "watch_rows"), load_kernel(watched_source, "fill_sentinel")

    def out(rec):
        rec = {"card": card, **rec}
        with open(args.out, "a") as sink:
            sink.write(json.dumps(rec) + "\n")
        print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()), flush=True)

    a, b = P.host_inputs((M, N, K), "float32")
    hA, hB, hC = (cupyx.empty_pinned(s, np.float32) for s in ((M, K), (K, N), (M, N)))
    hA[...], hB[...] = a, b
    dA, dB, dC = (cp.empty(s, np.float32) for s in ((M, K), (K, N), (M, N)))
    main_s = cp.cuda.Stream(non_blocking=True)
    s_in, s_mm, s_out = (cp.cuda.Stream(non_blocking=True) for _ in range(3))

    def event():
        return cp.cuda.Event(disable_timing=True)

    def forked(body):
        """body() issues on s_in, s_mm, s_out after main_s; main_s then waits for all three."""
        fork, joins = event(), [event() for _ in range(3)]

        def flow():
            fork.record(main_s)
            for s in (s_in, s_mm, s_out):
                s.wait_event(fork)
            body()
            for s, j in zip((s_in, s_mm, s_out), joins):
                j.record(s)
                main_s.wait_event(j)
        return flow

    def copy_in(r0: int, r1: int) -> None:
        rt.memcpyAsync(dA.data.ptr + r0 * K * F32, hA.ctypes.data + r0 * K * F32, (r1 - r0) * K * F32, 1, s_in.ptr)

    def copy_out(r0: int, r1: int) -> None:
        rt.memcpyAsync(hC.ctypes.data + r0 * N * F32, dC.data.ptr + r0 * N * F32, (r1 - r0) * N * F32, 2, s_out.ptr)

    def cublas_flow(chunks: int, precision: str):
        blocks = P.row_blocks(M, chunks)
        gemms = [RowMajorGemm(r1 - r0, N, K, dA.data.ptr + r0 * K * F32, dB.data.ptr, dC.data.ptr + r0 * N * F32,
                              "float32", precision=precision) for r0, r1 in blocks]
        links = [(event(), event()) for _ in blocks]

        def body():
            rt.memcpyAsync(dB.data.ptr, hB.ctypes.data, K * N * F32, 1, s_in.ptr)
            for (r0, r1), gemm, (landed, done) in zip(blocks, gemms, links):
                copy_in(r0, r1)
                landed.record(s_in)
                s_mm.wait_event(landed)
                gemm.run(s_mm.ptr)
                done.record(s_mm)
                s_out.wait_event(done)
                copy_out(r0, r1)
        return forked(body)

    dA_sentinel = cp.empty((M, K), np.float32)  # the sentinel flows' own A: it must hold the sentinel between flows
    dA_sentinel.view(np.uint32).fill(SENTINEL)

    def flag_flow(arrival: str, copy_rows: int, out_rows: list[int], grid: int, compute: int = 1):
        """A in blocks of copy_rows (arrival "flags"), or whole onto sentinel rows ("sentinel"), or not at all
        with its flag raised in advance ("none": the product and schedule alone); C back in blocks of out_rows."""
        units = M // 64
        words = cp.zeros(3 * units + 3, np.uint32)  # in_flag, unit_done, done [units]; whole_units; counter[2]
        in_flag, whole = words.data.ptr, words.data.ptr + 3 * units * F32
        a_dev = dA_sentinel if arrival == "sentinel" else dA
        kargs = (dB, a_dev, dC, np.int32(M), np.int32(N), np.int32(K), np.int32(arrival == "sentinel"),
                 np.int32(copy_rows), words[:units], words[units:2 * units], words[2 * units:3 * units],
                 words[3 * units:3 * units + 1], words[3 * units + 1:], np.int32(compute))
        bounds = np.cumsum([0, *out_rows]).tolist()

        def body():
            if arrival == "none":
                ops.raise_flag(s_mm, in_flag, 1)
            kernel((grid,), (128,), kargs, shared_mem=SMEM, stream=s_mm)
            if arrival != "none":
                rt.memcpyAsync(dB.data.ptr, hB.ctypes.data, K * N * F32, 1, s_in.ptr)
            if arrival == "sentinel":
                rt.memcpyAsync(a_dev.data.ptr, hA.ctypes.data, M * K * F32, 1, s_in.ptr)
            elif arrival == "flags":
                for i, r0 in enumerate(range(0, M, copy_rows)):
                    copy_in(r0, r0 + copy_rows)
                    ops.raise_flag(s_in, in_flag + i * F32, 1)
            if arrival != "none":
                for r0, r1 in itertools.pairwise(bounds):
                    ops.wait_flag(s_out, whole, r1 // 64)
                    copy_out(r0, r1)

        flow = forked(body)

        def then_reset():  # whole_units back to 0 once every stream has joined (flag_flow.cu says why here)
            flow()
            ops.raise_flag(main_s, whole, 0)
        return then_reset

    dA_watched = cp.empty((M, K), np.float32)  # the watched flows' A: the sentinel between flows
    dA_watched.view(np.uint32).fill(SENTINEL)

    def watched_flow(rows: list[int], precision: str):
        """B, then A whole, at the bus's full rate; on the product stream, per row block, watch_rows until the
        block has landed, then cuBLAS's product of it; C's block back after an event; A refilled at the end."""
        bounds = np.cumsum([0, *rows]).tolist()
        blocks = list(itertools.pairwise(bounds))
        gemms = [RowMajorGemm(r1 - r0, N, K, dA_watched.data.ptr + r0 * K * F32, dB.data.ptr,
                              dC.data.ptr + r0 * N * F32, "float32", precision=precision) for r0, r1 in blocks]
        done = [event() for _ in blocks]

        def body():
            rt.memcpyAsync(dB.data.ptr, hB.ctypes.data, K * N * F32, 1, s_in.ptr)
            rt.memcpyAsync(dA_watched.data.ptr, hA.ctypes.data, M * K * F32, 1, s_in.ptr)
            for (r0, r1), gemm, finished in zip(blocks, gemms, done):
                watch_rows((64,), (256,), (dA_watched[r0:r1], np.int64((r1 - r0) * K)), stream=s_mm)
                gemm.run(s_mm.ptr)
                finished.record(s_mm)
                s_out.wait_event(finished)
                copy_out(r0, r1)
            fill_sentinel((264,), (256,), (dA_watched, np.int64(M * K)), stream=s_mm)
        return forked(body)

    def bus():
        def body():
            rt.memcpyAsync(dA.data.ptr, hA.ctypes.data, M * K * F32, 1, s_in.ptr)
            rt.memcpyAsync(dB.data.ptr, hB.ctypes.data, K * N * F32, 1, s_in.ptr)
            rt.memcpyAsync(hC.ctypes.data, dC.data.ptr, M * N * F32, 2, s_out.ptr)
        return forked(body)

    def poison() -> None:  # the sentinel flows' A already holds its poison, the sentinel
        for d in (dA, dB, dC):
            d.fill(np.nan)
        hC[...] = np.nan
        cp.cuda.Device().synchronize()

    def captured(flow):
        main_s.begin_capture()
        try:
            with main_s:
                flow()
        finally:
            graph = main_s.end_capture()
        return lambda: graph.launch(main_s)

    flows = {"bus: 8 MiB in + 4 MiB out at once": (bus(), None)}
    for chunks in (4, 5):
        for precision, stage in (("fp32", "v9"), ("tf32", "v9t")):
            flows[f"cuBLAS {stage}, {chunks} row blocks, events"] = (cublas_flow(chunks, precision), precision)
    for rows in ([256] * 4, [256, 256, 256, 128, 64, 64], [128, 256, 256, 192, 128, 64], [128] * 8):
        for precision, stage in (("tf32", "v9t"), ("fp32", "v9")):
            flows[f"watched A, cuBLAS {stage}, C {'-'.join(map(str, rows))}"] = (watched_flow(rows, precision), precision)
    outs = {"4x256": [256] * 4, "taper": [256, 256, 256, 128, 64, 64], "8x128": [128] * 8}
    for grid in (sms, 2 * sms):
        flows[f"product alone (flag raised), grid {grid}"] = (flag_flow("none", M, [], grid), None)
        for name, out_rows in outs.items():
            flows[f"sentinel, C {name}, grid {grid}"] = (flag_flow("sentinel", M, out_rows, grid), "tf32")
        for copy_rows in (256, 128):
            flows[f"flags, A {M // copy_rows}x{copy_rows}, C taper, grid {grid}"] = (
                flag_flow("flags", copy_rows, outs["taper"], grid), "tf32")
    flows[f"sentinel, no product, C taper, grid {2 * sms}"] = (flag_flow("sentinel", M, outs["taper"], 2 * sms, 0), None)
    flows[f"flags, no product, A 8x128, C taper, grid {2 * sms}"] = (
        flag_flow("flags", 128, outs["taper"], 2 * sms, 0), None)

    launches = {}
    for name, (flow, precision) in flows.items():
        if not re.search(args.only, name):
            continue
        for kind, launch in (("streams", flow), ("graph", None)):
            try:
                if kind == "graph":
                    launch = captured(flow)
                if precision:
                    poison()
                    with main_s:
                        launch()
                    main_s.synchronize()
                    error = P.relative_error(hC, a, b)
                    tolerance = 5e-3 if precision == "tf32" else 1e-4
                    out({"phase": "verify", "flow": name, "kind": kind, "rel_error": error, "tolerance": tolerance,
                         "ok": bool(error <= tolerance)})
                    if not error <= tolerance:
                        continue
                with main_s:
                    for _ in range(5):
                        launch()
                    main_s.synchronize()
                    t0 = time.perf_counter()
                    launch()
                    host_ms = (time.perf_counter() - t0) * 1e3
                main_s.synchronize()
                launches[(name, kind)] = (launch, host_ms)
            except Exception as exc:  # a flow that fails to build, capture or run: recorded, skipped
                out({"phase": "verify", "flow": name, "kind": kind, "ok": False,
                     "message": f"{type(exc).__name__}: {exc}"[:300]})
                cp.cuda.Device().synchronize()
    for round_ in range(1, args.rounds + 1):
        for (name, kind), (launch, host_ms) in launches.items():
            with main_s:
                summary = time_launches(launch, args.repeat, None).summary()
            out({"phase": "time", "round": round_, "flow": name, "kind": kind, "median_ms": summary["median_ms"],
                 "spread_pct": summary["spread_pct"], "host_issue_ms": host_ms})


if __name__ == "__main__":
    main()
