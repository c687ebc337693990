// The watched flow of `nsprof pipeline` (nsprof/launch/pipeline.py): A is sent to the GPU as one
// copy, at the bus's full rate, onto rows that hold SENTINEL; on the product stream, watch_rows waits for a
// row block to land before that block's product runs, and fill_sentinel writes the sentinel back once every
// product has read A, so the next flow (a replayed CUDA graph) finds it there.
//
// Why a sentinel: a kernel cannot see a copy's progress, but a host-to-device copy fills its buffer front to
// back (measured on an H100: the first 256 KiB of a 4 MiB copy whole 3 us after its first bytes, the first
// 1 MiB after 18 us; benchmarks/records/2026-11-26-h100-flow-handover/h100-flow-handover.md), so the first row blocks can be multiplied while the
// rest is still in flight, without a copy, an event and a gap per block. SENTINEL is a 32-bit NaN pattern
// (as a float32, a quiet NaN; as two float16, a NaN above a finite half): nsprof's inputs, finite random
// numbers, never hold it. Words are read 16 bytes at a time, so a row block must start and end on 16 bytes.

#define WATCH_SENTINEL 0x7FF1A95Eu

__device__ __forceinline__ unsigned long long watch_clock_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
    return t;
}

__device__ __forceinline__ bool watch_landed(const uint4* piece) {
    uint4 v;  // an L2 read: a line seen before the copy wrote it is not kept in L1
    asm volatile("ld.relaxed.gpu.global.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(piece) : "memory");
    return v.x != WATCH_SENTINEL && v.y != WATCH_SENTINEL && v.z != WATCH_SENTINEL && v.w != WATCH_SENTINEL;
}

// Until the block's last 16 bytes land, one thread per block reads them, sleeping 256 ns between reads.
// (With every thread reading its own words meanwhile, 64 blocks x 256 threads, some runs' copies came in
// slower: a 30% spread over the flows, and 8 MiB in 0.215 instead of 0.159 ms in one capture.) Then the
// grid's threads split the block's words and read each until it is no longer the sentinel: a copy lands
// front to back, but nothing promises that every earlier word is in when the last is. After 2 s it traps:
// a copy that never lands fails the flow instead of hanging it.
extern "C" __global__ void watch_rows(const float* rows, long long words) {
    const uint4* p = reinterpret_cast<const uint4*>(rows);
    const long long pieces = words / 4, stride = (long long)gridDim.x * blockDim.x;
    const unsigned long long start = watch_clock_ns();
    if (threadIdx.x == 0) {
        while (!watch_landed(p + pieces - 1)) {
            __nanosleep(256);
            if (watch_clock_ns() - start > 2000000000ull) __trap();
        }
    }
    __syncthreads();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < pieces;) {
        if (watch_landed(p + i)) {
            i += stride;
        } else {
            __nanosleep(128);
            if (watch_clock_ns() - start > 2000000000ull) __trap();
        }
    }
}

extern "C" __global__ void fill_sentinel(float* rows, long long words) {
    uint4* p = reinterpret_cast<uint4*>(rows);
    const uint4 s = make_uint4(WATCH_SENTINEL, WATCH_SENTINEL, WATCH_SENTINEL, WATCH_SENTINEL);
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < words / 4; i += (long long)gridDim.x * blockDim.x)
        p[i] = s;
}
