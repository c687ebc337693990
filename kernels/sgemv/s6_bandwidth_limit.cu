// s6 bandwidth limit: 4 rows per warp sharing x, 8 loads of A in flight per lane, split-K for few rows.
//
// Launch configuration (threads, rows of y per block): nsprof/ops/sgemv.py, which calls the
// entries as this header says.
//
// How the launcher chooses (a rule on M and K alone; tiles = ceil(M / 32), integer divisions):
//     S = 1                                     if tiles >= 256 (M > 8160)
//     S = max(1, min(512 / tiles, K / 1024))    otherwise
//   S == 1: sgemv_s6 alone: grid ceil(M / 32) blocks of 256 threads, args (M, K, A, x, y).
//   S >= 2: a float32 workspace `partial` of S * M floats (no initialisation: every element is
//     written), then sgemv_s6_splitk, 1-D grid of S * ceil(M / 32) blocks of 256 threads, args
//     (M, K, S, A, x, partial), then sgemv_s6_reduce, grid ceil(M / 32) blocks of 256 threads, args
//     (M, S, partial, y); both launches belong to the timed run. Split s covers the columns
//     [s * W, min(K, (s + 1) * W)) with W = ceil(ceil(K / S) / 128) * 128 (the kernel computes it;
//     a split that starts at or past K writes zeros) and writes partial[s * M + m]; the reduce adds
//     a row's S partials in a fixed order (deterministic).
//   At the benchmark shapes: M = K = 4096: S = 4 (512 blocks); M = K >= 8192: S = 1 (256, 512,
//   1024 blocks); M = 256, K = 2^20: S = 64 (8 tiles x 64 splits = 512 blocks of 16,384 columns);
//   M = 2^20, K = 256: S = 1 (32,768 blocks).
//
// What changed since s5, and why. A bandwidth-bound kernel needs about latency x bandwidth / SMs =
// 0.7 us x 4.1 TB/s / 132 = ~22 KB of loads in flight per SM, more as the loaded latency grows; s5
// had one 16-byte load per lane in flight (32 KB per SM at full occupancy, far less on short grids):
// 1. Four rows per warp, x shared. A warp owns rows m0 .. m0 + 3 and its 32 lanes walk the four rows
//    together (lane l reads float4 l, l + 32, ... of each), so every load of A is still 512 contiguous
//    bytes per instruction, while each float4 of x, loaded once, multiplies four rows: x traffic
//    through L1/L2 falls 4x (at K = 32768 x is 128 KB, more than L1 reliably keeps, and with one row
//    per warp x would ask L2 for as many bytes as A). Four rows also give four independent loads of A
//    per load of x and four independent FMA chains.
// 2. Unrolled by 2 along K (S6_UNROLL): each lane issues 2 float4s of x and 8 float4s of A (128 bytes
//    of A) before its first FMA. __launch_bounds__(256, 4) caps registers at 64 (no spills), so an SM
//    holds 4 blocks = 1024 threads = 128 KB of A in flight: ~6x the 22 KB, margin for the loaded
//    latency and for SMs that get one block fewer than others. (SASS checked with nvcc 13.0 and
//    NVRTC 13.5: in both entries the 10 loads come before the first FFMA; see s6_rows_aligned.)
// 3. A is read exactly once, so its loads are ld.global.nc.L1::no_allocate (read-only path, not kept
//    in L1): L1 is left to x, which every warp of the SM re-reads. x uses __ldg (read-only, cached).
//    No L2 eviction hint: x is re-read constantly and stays in L2 anyway, and at M = K = 4096, where
//    A is about the size of L2, a hint would change how much of A survives between timing
//    repetitions, which no other stage (nor cuBLAS) gets.
// 4. Enough blocks at every shape. Short rows (M = 2^20, K = 256): 4 rows per warp, 32 rows per
//    block, 32,768 blocks; each lane has its 8 float4s of A (the whole 4 KB of its warp's 4 rows) in
//    flight at once, then one 5-step butterfly per row. Few rows (M = 256, K = 2^20 would be 8 blocks
//    for 132 SMs): split along K by the rule above into ~512 blocks, about 4 per SM, all resident in
//    one wave (4 x 132 = 528 slots), and a second small kernel adds the S x M partials (64 KB at
//    M = 256, next to 1 GB of A). Two passes rather than atomicAdd keep the sum deterministic and need
//    no zeroed y. M = K = 4096 (128 blocks unsplit, 32 KB in flight on each of 128 SMs) splits 4 ways
//    for the same reason; from M = 8192 up the unsplit grid gives each SM 2-4 resident blocks.
// 5. The reduction: a __shfl_xor_sync butterfly (full mask, offsets 16 .. 1) per row; lane r stores
//    row r (lanes 0-3, one 16-byte segment of y).
// Metric to watch: dram__throughput.avg.pct_of_peak_sustained_elapsed, and dram__bytes_read at
// 4 (MK + M + K) bytes (A read once); lts__t_bytes well below s5's at large K (x read once per 4 rows);
// the long_scoreboard stall per issued instruction falls against s5 (10 loads share one wait).
// Ragged sizes: any M, K >= 1. A warp whose first row is at or past M returns (a whole warp, so
// every shuffle sees 32 lanes). The fast path (4 rows at once, float4 loads of A and x, no bounds
// checks in the unrolled body, then a one-float4-per-lane remainder loop) runs when the warp has all
// 4 rows, K % 4 == 0, k0 % 4 == 0 (split starts are multiples of 128 columns) and A + m0 * K and x
// are 16-byte aligned: then every row and every float4 of the slice is. Otherwise (K % 4 != 0,
// unaligned bases, or the last warp holding 1-3 rows) the warp does its rows one at a time, each
// reduced and stored before the next: a scalar head of 0-3 floats up to the row's first 16-byte
// boundary (computed from the address), a float4 body (4 loads in flight per lane when x is then
// 16-byte aligned too and read as float4, 2 when x must be read as 4 scalars), a scalar tail of 0-3
// floats. Every y[m] (or partial[s * M + m]) with m < M is written exactly once. Row offsets are
// 64-bit.
// Tuning knob (-D, for tuning runs): S6_UNROLL = 1 or 2 (default 2) float4s of each row per lane per
// step; 3 and 4 spill under the 64-register cap that 4 blocks per SM need.

#ifndef S6_UNROLL
#define S6_UNROLL 2      // float4s of each row per lane per step of the fast path
#endif
#define S6_THREADS 256
#define S6_R 4           // rows per warp
#define S6_ROWS (S6_THREADS / 32 * S6_R)  // 32 rows per block
#define S6_SLOW_UNROLL 4 // float4s per lane in flight on the one-row-at-a-time path

#define S6_LD_A "ld.global.nc.L1::no_allocate"

// A is read exactly once: read-only path, no L1 allocation (L1 keeps x).
__device__ __forceinline__ float4 s6_ld_a4(const float4* p) {
    float4 v;
    asm(S6_LD_A ".v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}
__device__ __forceinline__ float s6_ld_a1(const float* p) {
    float v;
    asm(S6_LD_A ".f32 %0, [%1];" : "=f"(v) : "l"(p));
    return v;
}

__device__ __forceinline__ float s6_dot4(const float4 a, const float4 b, float acc) {
    acc = fmaf(a.x, b.x, acc);
    acc = fmaf(a.y, b.y, acc);
    acc = fmaf(a.z, b.z, acc);
    return fmaf(a.w, b.w, acc);
}

__device__ __forceinline__ unsigned s6_misalign(const void* p) {
    return static_cast<unsigned>(reinterpret_cast<size_t>(p)) & 15u;
}

// Fast path: S6_R rows, row r at a4 + r * ld4 (column 0), all 16-byte aligned; x4 aligned. Lane
// `lane` adds the products of float4 columns j = j0, j0 + 32, ... < jend into acc[r]. Every
// address is a base the whole loop shares (a4, or x4 straight from the kernel's parameters) plus
// a 32-bit float4 index (r * ld4 + j < K fits an int): one IMAD.WIDE per load, and no per-split
// pointers held in registers. At the 64-register cap that __launch_bounds__(256, 4) sets, those
// saved registers are what lets ptxas issue all 10 loads before the first FMA in both entries.
__device__ __forceinline__ void s6_rows_aligned(const float4* __restrict__ a4, int ld4,
                                                const float4* __restrict__ x4, int j0, int jend,
                                                float (&acc)[S6_R]) {
    int j = j0;
#pragma unroll 1  // the unrolling is explicit: S6_UNROLL x S6_R loads, then their FMAs
    for (; j + 32 * (S6_UNROLL - 1) < jend; j += 32 * S6_UNROLL) {
        float4 xv[S6_UNROLL];
        float4 av[S6_R][S6_UNROLL];
#pragma unroll
        for (int u = 0; u < S6_UNROLL; ++u) xv[u] = __ldg(x4 + (j + 32 * u));
#pragma unroll
        for (int r = 0; r < S6_R; ++r)
#pragma unroll
            for (int u = 0; u < S6_UNROLL; ++u) av[r][u] = s6_ld_a4(a4 + (r * ld4 + j + 32 * u));
#pragma unroll
        for (int u = 0; u < S6_UNROLL; ++u)
#pragma unroll
            for (int r = 0; r < S6_R; ++r) acc[r] = s6_dot4(av[r][u], xv[u], acc[r]);
    }
#pragma unroll 1
    for (; j < jend; j += 32) {  // remainder: fewer than 32 * S6_UNROLL float4s
        const float4 xv = __ldg(x4 + j);
        float4 av[S6_R];
#pragma unroll
        for (int r = 0; r < S6_R; ++r) av[r] = s6_ld_a4(a4 + (r * ld4 + j));
#pragma unroll
        for (int r = 0; r < S6_R; ++r) acc[r] = s6_dot4(av[r], xv, acc[r]);
    }
}

// Body of the one-row path: n4 aligned float4s of A against x at xs (aligned or not, XV4 says).
template <bool XV4, int U>
__device__ __forceinline__ float s6_row_body(const float4* __restrict__ a4, const float* __restrict__ xs,
                                             int n4, int lane, float acc) {
    const float4* x4 = reinterpret_cast<const float4*>(xs);
    int j = lane;
#pragma unroll 1
    for (; j + 32 * (U - 1) < n4; j += 32 * U) {
        float4 av[U], xv[U];
#pragma unroll
        for (int u = 0; u < U; ++u) av[u] = s6_ld_a4(a4 + j + 32 * u);
#pragma unroll
        for (int u = 0; u < U; ++u) {
            if (XV4) {
                xv[u] = __ldg(x4 + j + 32 * u);
            } else {
                const float* xp = xs + 4 * (j + 32 * u);
                xv[u] = make_float4(__ldg(xp), __ldg(xp + 1), __ldg(xp + 2), __ldg(xp + 3));
            }
        }
#pragma unroll
        for (int u = 0; u < U; ++u) acc = s6_dot4(av[u], xv[u], acc);
    }
#pragma unroll 1
    for (; j < n4; j += 32) {
        const float4 av = s6_ld_a4(a4 + j);
        float4 xv;
        if (XV4) {
            xv = __ldg(x4 + j);
        } else {
            const float* xp = xs + 4 * j;
            xv = make_float4(__ldg(xp), __ldg(xp + 1), __ldg(xp + 2), __ldg(xp + 3));
        }
        acc = s6_dot4(av, xv, acc);
    }
    return acc;
}

// One row, any alignment: lane's share of sum_{k < len} a[k] * xs[k].
__device__ __forceinline__ float s6_row_any(const float* __restrict__ a, const float* __restrict__ xs,
                                            int len, int lane) {
    // Floats before the row's first 16-byte boundary (0..3), at most len.
    const int head = min(static_cast<int>(((16u - s6_misalign(a)) & 15u) >> 2), len);
    float acc = 0.0f;
    if (lane < head) acc = s6_ld_a1(a + lane) * __ldg(xs + lane);
    a += head;
    xs += head;
    len -= head;
    const int n4 = len >> 2;
    const float4* a4 = reinterpret_cast<const float4*>(a);
    if (s6_misalign(xs) == 0) {
        acc = s6_row_body<true, S6_SLOW_UNROLL>(a4, xs, n4, lane, acc);
    } else {
        acc = s6_row_body<false, S6_SLOW_UNROLL / 2>(a4, xs, n4, lane, acc);  // 4 registers of x per float4
    }
    const int t0 = 4 * n4;  // scalar tail: len - t0 = 0..3 floats
    if (lane < len - t0) acc = fmaf(s6_ld_a1(a + t0 + lane), __ldg(xs + t0 + lane), acc);
    return acc;
}

// Rows m = tile * 32 + 4 * warp + r (r < 4) over columns [k0, k0 + len), written to out[s * M + m]
// (s rather than a pointer out + s * M: one register instead of two through the loop).
__device__ __forceinline__ void s6_tile(int M, int K, int tile, int k0, int len,
                                        const float* __restrict__ A, const float* __restrict__ x,
                                        float* __restrict__ out, int s) {
    const int lane = threadIdx.x & 31;
    const int m0 = tile * S6_ROWS + (threadIdx.x >> 5) * S6_R;
    if (m0 >= M) return;  // uniform per warp
    const int nr = min(S6_R, M - m0);

    const float* arow = A + static_cast<size_t>(m0) * K;  // row m0, column 0
    if (nr == S6_R && ((K | k0) & 3) == 0 && (s6_misalign(arow) | s6_misalign(x)) == 0) {
        float acc[S6_R];
#pragma unroll
        for (int r = 0; r < S6_R; ++r) acc[r] = 0.0f;
        s6_rows_aligned(reinterpret_cast<const float4*>(arow), K >> 2, reinterpret_cast<const float4*>(x),
                        (k0 >> 2) + lane, (k0 + len) >> 2, acc);
#pragma unroll
        for (int r = 0; r < S6_R; ++r) {
#pragma unroll
            for (int offset = 16; offset > 0; offset >>= 1)
                acc[r] += __shfl_xor_sync(0xffffffffu, acc[r], offset);
        }
#pragma unroll
        for (int r = 0; r < S6_R; ++r)
            if (lane == r) out[static_cast<size_t>(s) * M + m0 + r] = acc[r];  // lanes 0-3: 16 bytes
    } else {
        // One row at a time, each reduced and stored before the next (fewer live registers).
#pragma unroll 1
        for (int r = 0; r < nr; ++r) {
            float acc = s6_row_any(arow + static_cast<size_t>(r) * K + k0, x + k0, len, lane);
#pragma unroll
            for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, offset);
            if (lane == 0) out[static_cast<size_t>(s) * M + m0 + r] = acc;
        }
    }
}

extern "C" __global__ void __launch_bounds__(S6_THREADS, 4)
sgemv_s6(int M, int K, const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y) {
    s6_tile(M, K, blockIdx.x, 0, K, A, x, y, 0);
}

// Split s of S: columns [s * W, min(K, (s + 1) * W)), W = ceil(ceil(K / S) / 128) * 128; the
// 1-D grid is S * ceil(M / 32) blocks, row tiles fastest (neighbouring blocks share x's slice).
extern "C" __global__ void __launch_bounds__(S6_THREADS, 4)
sgemv_s6_splitk(int M, int K, int S, const float* __restrict__ A, const float* __restrict__ x,
                float* __restrict__ partial) {
    const int tiles = (M + S6_ROWS - 1) / S6_ROWS;
    const int s = blockIdx.x / tiles;
    const int tile = blockIdx.x - s * tiles;
    const long long per = (static_cast<long long>(K) + S - 1) / S;
    const long long width = (per + 127) / 128 * 128;
    const long long start = static_cast<long long>(s) * width;
    const int k0 = static_cast<int>(start < K ? start : K);
    const int len = static_cast<int>(start < K ? (K - start < width ? K - start : width) : 0);
    s6_tile(M, K, tile, k0, len, A, x, partial, s);
}

// y[m] = sum over s of partial[s * M + m]. A block owns 32 rows: warp w adds splits w, w + 8, ...
// for row 32 * blockIdx.x + lane (coalesced across lanes; S / 8 loads per thread, unrolled by 4),
// then warp 0 adds the 8 warps' sums through shared memory in a fixed order.
extern "C" __global__ void __launch_bounds__(S6_THREADS)
sgemv_s6_reduce(int M, int S, const float* __restrict__ partial, float* __restrict__ y) {
    __shared__ float sums[S6_THREADS / 32][32];
    const int lane = threadIdx.x & 31;
    const int w = threadIdx.x >> 5;
    const int m = blockIdx.x * 32 + lane;
    float acc = 0.0f;
    if (m < M) {
#pragma unroll 4
        for (int s = w; s < S; s += S6_THREADS / 32) acc += partial[static_cast<size_t>(s) * M + m];
    }
    sums[w][lane] = acc;
    __syncthreads();
    if (w == 0 && m < M) {
        float total = sums[0][lane];
#pragma unroll
        for (int i = 1; i < S6_THREADS / 32; ++i) total += sums[i][lane];
        y[m] = total;
    }
}
