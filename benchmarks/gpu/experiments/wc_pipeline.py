"""Issue 33's 1024^3 flow: does write-combined pinned memory (cudaHostAllocWriteCombined, which the
CUDA programming guide says can cross PCIe faster because the host does not snoop it) shorten the
copies in, and so the whole flow? The host never reads A or B back, so they may be write-combined;
C, which the host reads, stays plain pinned memory.

    python3 benchmarks/gpu/experiments/wc_pipeline.py --out $OUT/wc-pipeline.jsonl

Records: the copy rates (8 MiB in, 4 MiB out, both at once) from plain and write-combined pinned
memory, and the whole streamed flow as a CUDA graph with each kind of input buffer, at 4 and 5 row
blocks, for v9t (cuBLAS TF32) and v11, in alternating rounds.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

WRITE_COMBINED = 4  # cudaHostAllocWriteCombined


def host_array(cp, shape, dtype, flags: int) -> np.ndarray:
    """A NumPy array over cudaHostAlloc'd memory (kept alive by the array's base)."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    memory = cp.cuda.PinnedMemoryPointer(cp.cuda.PinnedMemory(nbytes, flags), 0)
    return np.frombuffer(memory, dtype, int(np.prod(shape))).reshape(shape)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    import cupy as cp

    from nsprof.ladder.registry import get_stage
    from nsprof.ladder_runs.pipeline import GRAPH, Pipeline, host_inputs, relative_error
    from nsprof.launch.measure import time_launches
    from nsprof.launch.tools import launch_tools

    def out(rec):
        with open(args.out, "a") as sink:
            sink.write(json.dumps(rec) + "\n")
        print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()), flush=True)

    # copies alone
    stream_in, stream_out = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    device_in, device_out = cp.empty(8 << 20, cp.uint8), cp.empty(4 << 20, cp.uint8)
    plain_out = host_array(cp, (4 << 20,), np.uint8, 0)
    runtime = cp.cuda.runtime
    for round_ in range(args.rounds):
        for kind, flags in (("pinned", 0), ("write-combined", WRITE_COMBINED)):
            host_in = host_array(cp, (8 << 20,), np.uint8, flags)
            host_in[...] = 1

            def copy_in(host_in=host_in):
                runtime.memcpyAsync(device_in.data.ptr, host_in.ctypes.data, host_in.nbytes, runtime.memcpyHostToDevice,
                                    stream_in.ptr)

            def both():
                start = cp.cuda.Event()
                start.record(stream_in)
                stream_out.wait_event(start)
                copy_in()
                runtime.memcpyAsync(plain_out.ctypes.data, device_out.data.ptr, plain_out.nbytes,
                                    runtime.memcpyDeviceToHost, stream_out.ptr)
                done = cp.cuda.Event()
                done.record(stream_out)
                stream_in.wait_event(done)

            with stream_in:
                alone = time_launches(copy_in, repeat=200).median_ms
                duplex = time_launches(both, repeat=200).median_ms
            out({"phase": "copies", "round": round_, "host_memory": kind, "in_8mib_ms": alone,
                 "in_gbyte_per_s": host_in.nbytes / alone / 1e6, "in_8mib_with_4mib_out_ms": duplex})
    # the whole flow
    tools = launch_tools()
    size = (1024, 1024, 1024)
    for name in ("v9t", "v11"):
        stage = get_stage("sgemm", name)
        a, b = host_inputs(size, "float32", seed=1)
        for chunks in (4, 5):
            for round_ in range(args.rounds):
                for kind, flags in (("pinned", 0), ("write-combined", WRITE_COMBINED)):
                    pipeline = Pipeline(stage, size, tools, a, b, chunks)
                    if flags:
                        for key, values in (("A", a), ("B", b)):
                            buffer = host_array(cp, values.shape, values.dtype, flags)
                            buffer[...] = values
                            pipeline.pinned[key] = buffer
                    pipeline.capture(GRAPH)
                    pipeline.pinned["C"][...] = np.nan
                    with pipeline.main:
                        pipeline.replay(GRAPH)
                    pipeline.main.synchronize()
                    error = relative_error(pipeline.pinned["C"], a, b)
                    ok = error <= stage.tolerance(size)
                    with pipeline.main:
                        timing = time_launches(pipeline.flows[GRAPH], repeat=300).summary() if ok else None
                    out({"phase": "flow", "stage": name, "chunks": chunks, "round": round_, "host_memory": kind,
                         "rel_error": error, "ok": ok, **({"median_ms": timing["median_ms"],
                                                          "spread_pct": timing["spread_pct"]} if timing else {})})
                    del pipeline


if __name__ == "__main__":
    main()
