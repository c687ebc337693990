"""Issue 33's 1024^3 flow (host memory to host memory at <= 0.19 ms): products and copies handed over by
flags in device memory instead of events between streams (flag_flow.cu says how).

The flows of `nsprof pipeline` lose time between copies, products and cross-stream waits, and their
products slow down on small row blocks (one cuBLAS launch per block). Here one persistent kernel takes
64x64 tiles in the order A's row blocks land, the copy-in stream raises a flag after each block
(cuStreamWriteValue32) and the copy-out stream waits on the flag the kernel raises when a row block of C
is whole (cuStreamWaitValue32). Every flow, baselines included, is verified first on poisoned buffers
(NaN in A, B and C on the device and in C on the host: a tile computed before its bytes land fails), then
timed as a CUDA graph, and issued call by call, in interleaved rounds beside:

- the bus alone: 8 MiB in and 4 MiB out at once, on two streams (the flow's floor on this card);
- cuBLAS row-block flows as `nsprof pipeline` streams them (B whole, then 4 or 5 row blocks, one
  stream per role linked by events), FP32 (v9) and TF32 (v9t);
- the flag flow with no product (`compute` 0, C unwritten: the schedule's own cost, not verified).

    python3 benchmarks/gpu/experiments/flag_flow.py --out $OUT/flag-flow.jsonl [--rounds 3]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

M = N = K = 1024
F32 = 4
WAIT_GEQ = 0x0  # CU_STREAM_WAIT_VALUE_GEQ
SMEM = 3 * (64 * 36 + 32 * 68) * F32  # the kernel's 3-stage ring (FF_STAGES x FF_STAGE_FLOATS)


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

    def wait_flag(self, stream, address: int) -> None:
        self._check(self.wait(stream.ptr, address, 1, WAIT_GEQ), "cuStreamWaitValue32")

    @staticmethod
    def _check(code: int, what: str) -> None:
        if code != 0:
            raise RuntimeError(f"{what} failed: CUresult {code}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=300)
    args = ap.parse_args()
    import cupy as cp
    import cupyx
    import numpy as np

    from nsprof.launch import pipeline as P
    from nsprof.launch.capturable_cublas import RowMajorGemm
    from nsprof.launch.compile import load_kernel
    from nsprof.launch.measure import time_launches

    rt = cp.cuda.runtime
    ops = MemOps()
    card = rt.getDeviceProperties(0)["name"].decode()
    sms = rt.getDeviceProperties(0)["multiProcessorCount"]
    kernel = load_kernel(Path(__file__).with_suffix(".cu"), "flag_flow_gemm", dynamic_smem_bytes=SMEM)

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

    def flag_flow(block_rows: int, grid: int, compute: int = 1):
        blocks = [(r, r + block_rows) for r in range(0, M, block_rows)]
        n = len(blocks)
        flags = cp.zeros(3 * n + 2, np.uint32)  # in_flag[n], out_flag[n], done[n], counter[2]
        in_flag, out_flag = flags.data.ptr, flags.data.ptr + n * F32
        kargs = (dA, dB, dC, np.int32(M), np.int32(N), np.int32(K), np.int32(block_rows), flags[:n], flags[n:2 * n],
                 flags[2 * n:3 * n], flags[3 * n:], np.int32(compute))

        def body():
            kernel((grid,), (128,), kargs, shared_mem=SMEM, stream=s_mm)
            rt.memcpyAsync(dB.data.ptr, hB.ctypes.data, K * N * F32, 1, s_in.ptr)
            for r, (r0, r1) in enumerate(blocks):
                copy_in(r0, r1)
                ops.raise_flag(s_in, in_flag + r * F32, 1)
                ops.wait_flag(s_out, out_flag + r * F32)
                copy_out(r0, r1)
                ops.raise_flag(s_out, out_flag + r * F32, 0)
        return forked(body)

    def bus():
        def body():
            rt.memcpyAsync(dA.data.ptr, hA.ctypes.data, M * K * F32, 1, s_in.ptr)
            rt.memcpyAsync(dB.data.ptr, hB.ctypes.data, K * N * F32, 1, s_in.ptr)
            rt.memcpyAsync(hC.ctypes.data, dC.data.ptr, M * N * F32, 2, s_out.ptr)
        return forked(body)

    def poison() -> None:
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
    for block_rows in (64, 128, 256):
        for grid in (sms, 2 * sms):
            flows[f"flags, {M // block_rows} row blocks, grid {grid}"] = (flag_flow(block_rows, grid), "tf32")
    flows[f"flags, no product, 16 row blocks, grid {2 * sms}"] = (flag_flow(64, 2 * sms, compute=0), None)

    launches = {}
    for name, (flow, precision) in flows.items():
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
