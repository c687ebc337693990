"""Schedules for the streamed 1024^3 flow beyond `nsprof pipeline`'s equal row blocks, with cuBLAS
called through ctypes (capturable in a graph), on the GPU; the numbers are in benchmarks/records/2026-11-22-h200-pipeline/h200-pipeline.md.

- default: B whole, then row blocks (equal, or with a short last block);
- lead: a first row block multiplied against B's column pieces as they arrive (2D copies), so the
  copy back starts before all of B is in;
- `direct`: the bus alone (8 MiB in, 4 MiB out, and both at once), and C written by cuBLAS straight
  into mapped pinned host memory, with no copy back at all."""
import itertools
import json
import sys
import time
import traceback

import cupy as cp
import cupyx
import numpy as np

from nsprof.ladder_runs import pipeline as P
from nsprof.launch.capturable_cublas import RowMajorGemm
from nsprof.launch.measure import time_launches

rt = cp.cuda.runtime

def gemm(stream, m, n, k, a_ptr, lda, b_ptr, ldb, c_ptr, ldc):
    """row-major C(m x n) = A(m x k) B(k x n); B and C rows ldb apart (a column block of both)"""
    assert lda == k and ldb == ldc
    key = (m, n, k, a_ptr, b_ptr, c_ptr, ldb)
    if key not in GEMMS:  # made once: the flows are timed for their issue cost too
        GEMMS[key] = RowMajorGemm(m, n, k, a_ptr, b_ptr, c_ptr, "float32", row_pitch=ldb)
    GEMMS[key].run(stream.ptr)

GEMMS = {}

M = N = K = 1024
it = 4
a, b = P.host_inputs((M, N, K), "float32")
hA, hB, hC = (cupyx.empty_pinned(s, np.float32) for s in ((M, K), (K, N), (M, N)))
hA[...] = a; hB[...] = b
dA, dB, dC = cp.empty((M, K), np.float32), cp.empty((K, N), np.float32), cp.empty((M, N), np.float32)
main = cp.cuda.Stream(non_blocking=True)
s_in, s_mm, s_out = (cp.cuda.Stream(non_blocking=True) for _ in range(3))
def ev():
    return cp.cuda.Event(disable_timing=True)

def schedule(lead, pieces, rest):
    assert lead + sum(rest) == M
    cols = np.linspace(0, N, pieces + 1).astype(int)
    bounds = np.cumsum([lead, *rest]) if lead else np.cumsum([0, *rest])
    blocks = list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))
    nev = 2 * pieces + 2 * len(blocks) + 4
    evs = [ev() for _ in range(nev)]
    def flow():
        e = iter(evs)
        fork = next(e); fork.record(main)
        for s in (s_in, s_mm, s_out): s.wait_event(fork)
        if lead:
            rt.memcpyAsync(dA.data.ptr, hA.ctypes.data, lead * K * it, 1, s_in.ptr)
            for c0, c1 in itertools.pairwise(cols):
                w = int(c1 - c0) * it
                if pieces == 1:
                    rt.memcpyAsync(dB.data.ptr, hB.ctypes.data, K * N * it, 1, s_in.ptr)
                else:
                    rt.memcpy2DAsync(dB.data.ptr + int(c0) * it, N * it, hB.ctypes.data + int(c0) * it, N * it, w, K, 1, s_in.ptr)
                x = next(e); x.record(s_in); s_mm.wait_event(x)
                gemm(s_mm, lead, int(c1 - c0), K, dA.data.ptr, K, dB.data.ptr + int(c0) * it, N, dC.data.ptr + int(c0) * it, N)
                y = next(e); y.record(s_mm); s_out.wait_event(y)
                if pieces == 1:
                    rt.memcpyAsync(hC.ctypes.data, dC.data.ptr, lead * N * it, 2, s_out.ptr)
                else:
                    rt.memcpy2DAsync(hC.ctypes.data + int(c0) * it, N * it, dC.data.ptr + int(c0) * it, N * it, w, lead, 2, s_out.ptr)
        else:
            rt.memcpyAsync(dB.data.ptr, hB.ctypes.data, K * N * it, 1, s_in.ptr)
        for r0, r1 in blocks:
            rt.memcpyAsync(dA.data.ptr + r0 * K * it, hA.ctypes.data + r0 * K * it, (r1 - r0) * K * it, 1, s_in.ptr)
            x = next(e); x.record(s_in); s_mm.wait_event(x)
            gemm(s_mm, r1 - r0, N, K, dA.data.ptr + r0 * K * it, K, dB.data.ptr, N, dC.data.ptr + r0 * N * it, N)
            y = next(e); y.record(s_mm); s_out.wait_event(y)
            rt.memcpyAsync(hC.ctypes.data + r0 * N * it, dC.data.ptr + r0 * N * it, (r1 - r0) * N * it, 2, s_out.ptr)
        for s in (s_in, s_mm, s_out):
            j = next(e); j.record(s); main.wait_event(j)
    return flow

def run(name, lead, pieces, rest):
    try:
        run_flow(name, schedule(lead, pieces, rest), {"lead": lead, "pieces": pieces, "rest": rest})
    except Exception as e:
        traceback.print_exc()
        print(json.dumps({"name": name, "error": f"{type(e).__name__}: {e}"[:160]}), flush=True)


def direct(rest):
    """C written by cuBLAS straight into mapped pinned host memory: no copy-out at all."""
    hc_dev = hC.ctypes.data  # pinned memory is mapped at the same address under UVA
    bounds = np.cumsum([0, *rest])
    blocks = list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))
    evs = [ev() for _ in range(len(blocks) + 4)]
    def flow():
        e = iter(evs)
        fork = next(e); fork.record(main)
        for s in (s_in, s_mm): s.wait_event(fork)
        rt.memcpyAsync(dB.data.ptr, hB.ctypes.data, K * N * it, 1, s_in.ptr)
        for r0, r1 in blocks:
            rt.memcpyAsync(dA.data.ptr + r0 * K * it, hA.ctypes.data + r0 * K * it, (r1 - r0) * K * it, 1, s_in.ptr)
            x = next(e); x.record(s_in); s_mm.wait_event(x)
            gemm(s_mm, r1 - r0, N, K, dA.data.ptr + r0 * K * it, K, dB.data.ptr, N, hc_dev + r0 * N * it, N)
        for s in (s_in, s_mm):
            j = next(e); j.record(s); main.wait_event(j)
    return flow

def bus():
    out = {}
    for name, fn in (("h2d_8MiB", lambda: rt.memcpyAsync(dA.data.ptr, hA.ctypes.data, 2 * M * K * it // 2, 1, main.ptr) or rt.memcpyAsync(dB.data.ptr, hB.ctypes.data, K * N * it, 1, main.ptr)),
                     ("d2h_4MiB", lambda: rt.memcpyAsync(hC.ctypes.data, dC.data.ptr, M * N * it, 2, main.ptr))):
        with main:
            out[name] = round(time_launches(fn, 200, None).median_ms, 4)
    f0 = ev()
    def both():
        f0.record(main); s_in.wait_event(f0); s_out.wait_event(f0)
        rt.memcpyAsync(dA.data.ptr, hA.ctypes.data, M * K * it, 1, s_in.ptr)
        rt.memcpyAsync(dB.data.ptr, hB.ctypes.data, K * N * it, 1, s_in.ptr)
        rt.memcpyAsync(hC.ctypes.data, dC.data.ptr, M * N * it, 2, s_out.ptr)
        for s in (s_in, s_out):
            j = ev(); j.record(s); main.wait_event(j)
    with main:
        out["both_8in_4out"] = round(time_launches(both, 200, None).median_ms, 4)
    print(json.dumps({"bus": out}), flush=True)

def run_flow(name, flow, described=None):
    """Verified on a poisoned C, then timed issued call by call (with the host's issue time) and as a graph."""
    line = {"name": name, **(described or {})}
    hC[...] = np.nan
    with main:
        flow()
    main.synchronize()
    line["err"] = P.relative_error(hC, a, b)
    with main:
        for _ in range(10): flow()
        main.synchronize()
        t = time.perf_counter(); flow(); line["host_ms"] = round((time.perf_counter() - t) * 1e3, 4)
        line["streams_ms"] = round(time_launches(flow, 300, None).median_ms, 4)
    main.begin_capture()
    try:
        with main:
            flow()
    finally:
        g = main.end_capture()
    hC[...] = np.nan
    g.launch(main); main.synchronize()
    line["graph_err"] = P.relative_error(hC, a, b)
    with main:
        timing = time_launches(lambda: g.launch(main), 400, None)
    line["graph_ms"], line["graph_spread"] = round(timing.median_ms, 4), round(timing.summary()["spread_pct"], 1)
    print(json.dumps(line), flush=True)

if sys.argv[1:] == ["direct"]:
    bus()
    for rest in ([1024], [512, 512], [256] * 4, [128] * 8, [256, 256, 256, 192, 64], [64] * 16):
        try:
            run_flow(f"direct {rest}", direct(rest))
        except Exception:
            traceback.print_exc()
    sys.exit()
run("equal4", 0, 1, [256] * 4)
run("equal8", 0, 1, [128] * 8)
run("equal4-taper", 0, 1, [256, 256, 256, 192, 64])
for lead in (128, 256):
    for pieces in (2, 4, 8):
        for rest in ([256] * 3 if lead == 256 else [256, 256, 256, 128],
                     [256, 256, 192, 64] if lead == 256 else [256, 256, 256, 64, 64],
                     [192, 192, 192, 128, 64] if lead == 256 else [192, 192, 192, 192, 64, 64]):
            if lead + sum(rest) != M:
                continue
            run(f"lead{lead}-b{pieces}", lead, pieces, rest)
run("lead64-b4", 64, 4, [192, 256, 256, 192, 64])
run("lead128-b4-r128", 128, 4, [128] * 7)
