"""Issue 33's 1024^3 flow: does one host-to-device copy fill its buffer front to back? If it did, a
kernel could start on A's first rows while the rest is still in flight, with A sent as one copy at the
bus's full rate. The flag_flow experiment's sentinel flows saw the first 64 rows of A whole only as the
4 MiB copy ended. This asks the question directly.

The device buffer is filled with a sentinel word; one probe block per 64 KiB piece reads its piece until
no word is the sentinel and writes the %globaltimer of that moment. A pinned copy then runs on another
stream: 4 MiB whole, 8 MiB whole, and 4 MiB as four 1 MiB copies in a row. Per case: when each piece was
whole, relative to the first piece (microseconds), and the copy's own time between CUDA events.

    python3 benchmarks/gpu/experiments/copy_landing.py --out $OUT/copy-landing.jsonl
"""

from __future__ import annotations

import argparse
import json

SOURCE = r"""
extern "C" __global__ void probe(const unsigned* buf, unsigned long long* landed, unsigned sentinel, int words) {
    const unsigned* piece = buf + (size_t)blockIdx.x * words;
    for (int i = threadIdx.x; i < words;) {
        unsigned v;
        asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(piece + i) : "memory");
        if (v != sentinel) i += blockDim.x;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        landed[blockIdx.x] = t;
    }
}
"""
PIECE = 64 << 10
SENTINEL = 0x7FF1A95E


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    import cupy as cp
    import cupyx
    import numpy as np

    rt = cp.cuda.runtime
    probe = cp.RawModule(code=SOURCE).get_function("probe")
    card = rt.getDeviceProperties(0)["name"].decode()
    host = cupyx.empty_pinned(8 << 20, np.uint8)
    host.view(np.uint32)[:] = np.arange(host.size // 4, dtype=np.uint32) % 1000
    dev = cp.empty(8 << 20, np.uint8)
    s_probe, s_copy = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    cases = {"4 MiB, one copy": [4 << 20], "8 MiB, one copy": [8 << 20], "4 MiB, four 1 MiB copies": [1 << 20] * 4}
    for name, sizes in cases.items():
        total = sum(sizes)
        pieces = total // PIECE
        for repeat in range(args.repeats):
            dev.view(np.uint32)[: total // 4].fill(SENTINEL)
            landed = cp.zeros(pieces, np.uint64)
            cp.cuda.Device().synchronize()
            probe((pieces,), (256,), (dev, landed, np.uint32(SENTINEL), np.int32(PIECE // 4)), stream=s_probe)
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record(s_copy)
            offset = 0
            for size in sizes:
                rt.memcpyAsync(dev.data.ptr + offset, host.ctypes.data + offset, size, 1, s_copy.ptr)
                offset += size
            end.record(s_copy)
            cp.cuda.Device().synchronize()
            assert (dev[:total].get() == host[:total]).all()
            t = (landed.get() - int(landed.min().get())) / 1e3
            line = {"card": card, "case": name, "repeat": repeat, "copy_ms": cp.cuda.get_elapsed_time(start, end),
                    "first_256k_whole_us": float(t[: (256 << 10) // PIECE].max()),
                    "first_1m_whole_us": float(t[: (1 << 20) // PIECE].max()), "last_us": float(t.max()),
                    "landed_us": [round(float(x), 2) for x in t]}
            with open(args.out, "a") as sink:
                sink.write(json.dumps(line) + "\n")
            print({k: v for k, v in line.items() if k != "landed_us"}, flush=True)


if __name__ == "__main__":
    main()
