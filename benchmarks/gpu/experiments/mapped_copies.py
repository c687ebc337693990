"""Issue 33's 1024^3 flow (host memory to host memory at <= 0.19 ms): can the SMs move the bytes over
the bus as fast as the copy engines? The flow's floor is set by the bus (8 MiB in, 4 MiB out), and the
copy engines' flows lose time between copies and to cross-stream waits. One persistent kernel that reads
A and B from mapped pinned host memory and writes C back would have neither, if its loads and stores
over PCIe keep the engines' rates. This measures that premise, nothing more:

- the copy engines: 8 MiB in, 4 MiB out, and both at once on two streams (cudaMemcpyAsync, pinned);
- the SMs: a grid-stride kernel of 16-byte loads from mapped pinned memory into device memory (in), and of
  16-byte stores from device memory into mapped pinned memory (out), at several grid sizes, and one
  kernel doing both at once (half its blocks each way).

Each case: the median of 50 launches between CUDA events, after 5 warm-up.

    python3 benchmarks/gpu/experiments/mapped_copies.py --out $OUT/mapped.jsonl
"""

from __future__ import annotations

import argparse
import json

SOURCE = r"""
extern "C" __global__ void copy16(const int4* __restrict__ src, int4* __restrict__ dst, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        dst[i] = src[i];
}
// Blocks [0, split) copy n_in from src_in to dst_in; the rest n_out from src_out to dst_out.
extern "C" __global__ void copy16_both(const int4* __restrict__ src_in, int4* __restrict__ dst_in, long long n_in,
                                       const int4* __restrict__ src_out, int4* __restrict__ dst_out, long long n_out,
                                       int split) {
    const bool in = blockIdx.x < split;
    const int4* src = in ? src_in : src_out;
    int4* dst = in ? dst_in : dst_out;
    const long long n = in ? n_in : n_out;
    const long long block = in ? blockIdx.x : blockIdx.x - split, blocks = in ? split : gridDim.x - split;
    for (long long i = block * blockDim.x + threadIdx.x; i < n; i += blocks * blockDim.x) dst[i] = src[i];
}
"""
IN_BYTES, OUT_BYTES = 8 << 20, 4 << 20
MAPPED = 0x02 | 0x01  # cudaHostAllocMapped | cudaHostAllocPortable


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import cupy as cp
    import numpy as np

    rt = cp.cuda.runtime
    module = cp.RawModule(code=SOURCE)
    copy16, both = module.get_function("copy16"), module.get_function("copy16_both")
    host_in, host_out = rt.hostAlloc(IN_BYTES, MAPPED), rt.hostAlloc(OUT_BYTES, MAPPED)
    np.frombuffer((ctypes_buffer(host_in, IN_BYTES)), dtype=np.uint8)[:] = 7
    mapped_in, mapped_out = host_in, host_out  # unified addressing: a kernel takes the host address as is
    dev_in, dev_out = cp.empty(IN_BYTES, dtype=cp.uint8), cp.ones(OUT_BYTES, dtype=cp.uint8)
    s1, s2 = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    card = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()

    def timed(run, stream=None) -> float:
        for _ in range(5):
            run()
        times = []
        for _ in range(50):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record(stream)
            run()
            end.record(stream)
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end))
        return float(np.median(times))

    def out(case: str, ms: float, in_bytes: int, out_bytes: int) -> None:
        record = {"card": card, "case": case, "ms": ms, "in_gb_s": in_bytes / ms / 1e6 if in_bytes else None,
                  "out_gb_s": out_bytes / ms / 1e6 if out_bytes else None}
        with open(args.out, "a") as sink:
            sink.write(json.dumps(record) + "\n")
        print(f"{case:42s} {ms:.4f} ms", flush=True)

    def engines_both() -> None:
        """Both copies on streams of their own, fenced by events to the stream the timing events are on."""
        current, go = cp.cuda.get_current_stream(), cp.cuda.Event()
        go.record(current)
        s1.wait_event(go)
        s2.wait_event(go)
        rt.memcpyAsync(dev_in.data.ptr, host_in, IN_BYTES, rt.memcpyHostToDevice, s1.ptr)
        rt.memcpyAsync(host_out, dev_out.data.ptr, OUT_BYTES, rt.memcpyDeviceToHost, s2.ptr)
        for side in (s1, s2):
            done = cp.cuda.Event()
            done.record(side)
            current.wait_event(done)

    stream = cp.cuda.get_current_stream()
    out("engines: 8 MiB in", timed(lambda: rt.memcpyAsync(dev_in.data.ptr, host_in, IN_BYTES, rt.memcpyHostToDevice,
                                                          stream.ptr)), IN_BYTES, 0)
    out("engines: 4 MiB out", timed(lambda: rt.memcpyAsync(host_out, dev_out.data.ptr, OUT_BYTES, rt.memcpyDeviceToHost,
                                                           stream.ptr)), 0, OUT_BYTES)
    out("engines: both at once (two streams)", timed(engines_both), IN_BYTES, OUT_BYTES)
    n_in, n_out = np.int64(IN_BYTES // 16), np.int64(OUT_BYTES // 16)
    for blocks in (66, 132, 264, 528, 1056):
        out(f"SMs: 8 MiB in, {blocks} blocks x 256", timed(lambda b=blocks: copy16((b,), (256,), (
            np.uint64(mapped_in), dev_in, n_in))), IN_BYTES, 0)
        out(f"SMs: 4 MiB out, {blocks} blocks x 256", timed(lambda b=blocks: copy16((b,), (256,), (
            dev_out, np.uint64(mapped_out), n_out))), 0, OUT_BYTES)
    for blocks, split in ((264, 176), (528, 352), (1056, 704)):
        out(f"SMs: both, {split} blocks in + {blocks - split} out", timed(lambda b=blocks, k=split: both((b,), (256,), (
            np.uint64(mapped_in), dev_in, n_in, dev_out, np.uint64(mapped_out), n_out, np.int32(k)))),
            IN_BYTES, OUT_BYTES)
    ok = bool((dev_in == 7).all()) and bool((np.frombuffer(ctypes_buffer(host_out, OUT_BYTES), dtype=np.uint8) == 1).all())
    out(f"checked: bytes arrived {'intact' if ok else 'WRONG'}", 0.0, 0, 0)


def ctypes_buffer(address: int, size: int):
    import ctypes

    return (ctypes.c_uint8 * size).from_address(address)


if __name__ == "__main__":
    main()
