// The watched flow of `nsprof pipeline` (nsprof/launch/pipeline.py; issue 33): A is sent to the GPU as one
// copy, at the bus's full rate, onto rows that hold SENTINEL; on the product stream, watch_rows waits for a
// row block to land before that block's product runs, and fill_sentinel writes the sentinel back once every
// product has read A, so the next flow (a replayed CUDA graph) finds it there.
//
// Why a sentinel: a kernel cannot see a copy's progress, but a host-to-device copy fills its buffer front to
// back (measured on an H100: the first 256 KiB of a 4 MiB copy whole 3 us after its first bytes, the first
// 1 MiB after 18 us; benchmarks/h100-flow-handover.md), so the first row blocks can be multiplied while the
// rest is still in flight, without a copy, an event and a gap per block. SENTINEL is a 32-bit NaN pattern
// (as a float32, a quiet NaN; as two float16, a NaN above a finite half): nsprof's inputs, finite random
// numbers, never hold it. Words are read 16 bytes at a time, so a row block must start and end on 16 bytes.

#define WATCH_SENTINEL 0x7FF1A95Eu

__device__ __forceinline__ unsigned long long watch_clock_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
    return t;
}

// The grid's threads split the block's words; each reads its 16-byte pieces in turn until none is the
// sentinel (L2 reads: a line seen before the copy wrote it is not kept in L1), sleeping between reads.
// After 2 s it traps: a copy that never lands fails the flow instead of hanging it.
extern "C" __global__ void watch_rows(const float* rows, long long words) {
    const uint4* p = reinterpret_cast<const uint4*>(rows);
    const long long pieces = words / 4, stride = (long long)gridDim.x * blockDim.x;
    const unsigned long long start = watch_clock_ns();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < pieces;) {
        uint4 v;
        asm volatile("ld.relaxed.gpu.global.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p + i) : "memory");
        if (v.x != WATCH_SENTINEL && v.y != WATCH_SENTINEL && v.z != WATCH_SENTINEL && v.w != WATCH_SENTINEL) {
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
