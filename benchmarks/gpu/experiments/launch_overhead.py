"""How much of a kernel's time does no block run, and what sets it? h6's kernels run 0.74-0.80 us with no block on
the GPU at every size (benchmarks/records/2026-12-02-h200-hgemm-kernel-time, section 3). Here kernels that do
nothing but stamp the global timer as each block starts and ends are launched in h6's configuration and in
smaller ones, plainly (as CuPy launches) and as programmatic dependent launches (as h6 is launched), each launch
between its own CUDA events as nsprof bench times: first with the kernels' code and data left in the L2 ("warm"),
then each launch after a write that evicts the L2 ("cold", outside the events, as the bench's rotated inputs
leave a kernel's code cold). Under nsys the export gives each launch's duration; with the stamps (--out) each
launch's time with no block running is its duration minus its blocks' span.

    nsys profile -t cuda --export sqlite -o /tmp/lo python3 benchmarks/gpu/experiments/launch_overhead.py \\
        --out $OUT/launch-overhead.json
    python3 benchmarks/gpu/experiments/launch_overhead.py --read /tmp/lo.sqlite --out $OUT/launch-overhead.json

Each variant is a kernel of its own name, so that the export tells them apart: the grid, the block, the dynamic
shared memory, clusters of two, and the stores of a 128 x 128 tile of halves a block (what h6 writes last), by
the threads or, as h6 stores them, by the async proxy from shared memory, the block then waiting for the writes
(h6's end) or only for the reads.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

SOURCE = r"""
__device__ __forceinline__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
// stamps[2 * launch]: the first block's start (atomicMin), stamps[2 * launch + 1]: the last block's end (atomicMax)
#define BODY(STORE)                                                                                 \
    const unsigned long long start = now_ns();                                                    \
    if (threadIdx.x == 0) atomicMin(stamps + 2 * launch, start);                                  \
    STORE                                                                                         \
    __syncthreads();                                                                              \
    if (threadIdx.x == 0) atomicMax(stamps + 2 * launch + 1, now_ns());
// a block's 128 x 128 halves (32 KB) written as h6's epilogue leaves them: 16 bytes a thread a row of 8
#define TILE_STORE                                                                                \
    for (int i = threadIdx.x; i < 128 * 128 / 8; i += blockDim.x)                                 \
        reinterpret_cast<uint4*>(out)[blockIdx.x * (128 * 128 / 8) + i] = make_uint4(i, 1, 2, 3);
// the same 32 KB stored as h6 stores C: from shared memory by the async proxy (a bulk copy, as a TMA store), thread
// 0 then waiting for the copy to be written (WAIT "cp.async.bulk.wait_group 0", h6's end) or only read
#define BULK_STORE(WAIT)                                                                          \
    extern __shared__ __align__(128) unsigned char staged[];                                      \
    for (int i = threadIdx.x; i < 32768 / 16; i += blockDim.x)                                    \
        reinterpret_cast<uint4*>(staged)[i] = make_uint4(i, 1, 2, 3);                             \
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");                                  \
    __syncthreads();                                                                              \
    if (threadIdx.x == 0) {                                                                       \
        const unsigned from = (unsigned)__cvta_generic_to_shared(staged);                         \
        char* to = reinterpret_cast<char*>(out) + (size_t)blockIdx.x * 32768;                     \
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 32768;"             \
                     :: "l"(to), "r"(from) : "memory");                                           \
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");                                 \
        asm volatile(WAIT ::: "memory");                                                          \
    }
extern "C" __global__ void lo_small(unsigned long long* stamps, int launch, void* out) { BODY() }
extern "C" __global__ void lo_grid(unsigned long long* stamps, int launch, void* out) { BODY() }
extern "C" __global__ void lo_smem(unsigned long long* stamps, int launch, void* out) { BODY() }
extern "C" __global__ void lo_smem_pdl(unsigned long long* stamps, int launch, void* out) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    BODY()
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) lo_cluster(unsigned long long* stamps, int launch, void* out) { BODY() }
extern "C" __global__ void lo_stores(unsigned long long* stamps, int launch, void* out) { BODY(TILE_STORE) }
extern "C" __global__ void lo_stores_pdl(unsigned long long* stamps, int launch, void* out) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    BODY(TILE_STORE)
}
extern "C" __global__ void lo_bulk(unsigned long long* stamps, int launch, void* out) {
    BODY(BULK_STORE("cp.async.bulk.wait_group 0;"))
}
extern "C" __global__ void lo_bulk_read(unsigned long long* stamps, int launch, void* out) {
    BODY(BULK_STORE("cp.async.bulk.wait_group.read 0;"))
}
"""
H6_SMEM = 231680  # hgemm_h6_pp_tma_128x128's dynamic shared memory (ncu, the record's call 3)
# name -> (grid, block, dynamic shared memory, launched as a programmatic dependent launch)
VARIANTS = {
    "lo_small": (1, 32, 0, False),
    "lo_grid": (132, 384, 0, False),
    "lo_smem": (132, 384, H6_SMEM, False),
    "lo_smem_pdl": (132, 384, H6_SMEM, True),
    "lo_cluster": (132, 384, H6_SMEM, False),
    "lo_stores": (132, 384, H6_SMEM, False),
    "lo_stores_pdl": (132, 384, H6_SMEM, True),
    "lo_bulk": (132, 384, H6_SMEM, False),
    "lo_bulk_read": (132, 384, H6_SMEM, False),
}


PHASES = ("warm", "cold")
EVICT_BYTES = 256 << 20  # written between the cold launches: four times any Hopper L2


def launch_all(launches: int) -> dict[str, list[list[int]]]:
    """Every variant `launches` times in turn in each of PHASES (each launch between its own events); per variant,
    each launch's [first block's start, last block's end] in global-timer ns, the warm launches first."""
    import cupy as cp
    import numpy as np

    from nsprof.launch.dependent_launch import DependentLaunch

    module = cp.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=None)
    out = cp.zeros(132 * 128 * 128, dtype=cp.float16)
    stamps = {name: cp.zeros(2 * len(PHASES) * launches, dtype=cp.uint64) for name in VARIANTS}
    evict = cp.empty(EVICT_BYTES, dtype=cp.uint8)
    calls = {}
    for name, (grid, block, smem, dependent) in VARIANTS.items():
        kernel = module.get_function(name)
        if smem:
            kernel.max_dynamic_shared_size_bytes = smem
        launch = DependentLaunch(kernel) if dependent else kernel
        calls[name] = (launch, grid, block, smem)
    for stamp in stamps.values():  # each launch's first start is the least of its blocks' (atomicMin)
        stamp[0::2] = np.uint64(2**64 - 1)
    for i in range(len(PHASES) * launches):
        for name, (launch, grid, block, smem) in calls.items():
            if i >= launches:  # cold: nothing of the kernel's left in the L2
                evict.fill(i % 251)
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            launch((grid,), (block,), (stamps[name], cp.int32(i), out), shared_mem=smem)
            end.record()
    cp.cuda.Device().synchronize()
    return {name: stamp.get().reshape(-1, 2).tolist() for name, stamp in stamps.items()}


def no_block_times(durations_ns: list[int], spans: list[list[int]]) -> dict:
    """Per launch in order: its duration (the export's) and its blocks' span (the stamps'); the medians of each and
    of their difference, the time the launch ran with no block on the GPU."""
    if len(durations_ns) != len(spans):
        raise ValueError(f"{len(durations_ns)} launches in the export against {len(spans)} stamped")
    spans_ns = [end - start for start, end in spans]
    return {"launches": len(spans), "duration_us": statistics.median(durations_ns) / 1e3,
            "span_us": statistics.median(spans_ns) / 1e3,
            "no_block_us": statistics.median(d - s for d, s in zip(durations_ns, spans_ns)) / 1e3}


def read(export: str, stamped: dict[str, list[list[int]]]) -> dict[str, dict]:
    """Each variant's no_block_times in each of PHASES, its launches' durations read from the nsys export in launch
    order."""
    from nsprof.parse.nsys_sqlite import load_nsys

    kernels = load_nsys(export, columns={"kernels": ["start_ns", "end_ns", "short_name"]}).kernels
    kernels = kernels.sort_values("start_ns")
    found = {}
    for name, spans in stamped.items():
        mine = kernels[kernels["short_name"].astype(str) == name]
        durations = (mine["end_ns"] - mine["start_ns"]).tolist()
        if len(durations) != len(spans):
            raise ValueError(f"{name}: {len(durations)} launches in the export against {len(spans)} stamped")
        half = len(spans) // len(PHASES)
        for number, phase in enumerate(PHASES):
            part = slice(number * half, (number + 1) * half)
            found[f"{name} {phase}"] = {"grid, block, shared bytes, dependent": VARIANTS[name],
                                        **no_block_times(durations[part], spans[part])}
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--launches", type=int, default=200)
    ap.add_argument("--read", help="the nsys export of a run: add each launch's duration to the stamps in --out")
    ap.add_argument("--out", required=True, help="the stamps (a run writes them, --read adds the durations)")
    args = ap.parse_args()
    out = Path(args.out)
    if args.read:
        stamped = json.loads(out.read_text())["stamps"]
        result = read(args.read, stamped)
        out.write_text(json.dumps({"stamps": stamped, "no_block": result}))
        for name, row in result.items():
            print(f"{name:19s} {row['launches']:4d} launches: duration {row['duration_us']:7.2f} us, blocks' span "
                  f"{row['span_us']:7.2f} us, no block {row['no_block_us']:5.2f} us")
    else:
        out.write_text(json.dumps({"stamps": launch_all(args.launches)}))
        print(f"stamps of {len(VARIANTS)} variants written to {out}")


if __name__ == "__main__":
    main()
