// v8 double buffering: the next K-tile is fetched while the current one is computed.
//
// What changed since v7: shared memory holds two copies of the A and B tiles. At the top of each
// K step the threads issue the copies of the next tile into the other buffer with cp.async
// (16-byte copies from global to shared memory that bypass the registers and complete in the
// background), compute the current tile's outer products, and wait for the copies only at the
// next step; one __syncthreads() per tile instead of two.
// Why it should help: in v7 every tile began with global loads that the whole block waited for
// (~500+ cycles of DRAM/L2 latency per K step). Now that latency overlaps with 1024 FMAs per
// thread (8x8 outputs x 16 k), half the barriers are gone, and no register holds a tile in flight.
// A is read transposed (changed): the FMAs read A k-major (As[k][m], as since v5), and a
// 16-byte copy can only move 4 consecutive floats, so a first kernel, sgemm_v8_transpose_a, writes
// At (K x M, rows padded to a multiple of 4 floats); the launcher runs it and it is timed with the
// stage (at 4096^3 about 1% of the time). Both tiles then arrive by 16-byte cp.async already in
// the layout the FMAs read. Copies past the matrix (or this block's K slice) have a source size of
// 0, which cp.async turns into zeros: ragged sizes need no padding and no branches in the copies.
// Before, v8 loaded the next tile into registers (float4 global loads) and wrote A into shared
// memory with transposing scalar stores after the FMAs (V8_ASYNC=0 below). On the H200
// (benchmarks/gpu/sgemm_peak_h200.sh, 2026-11-24, % of cuBLAS fp32, verified at every point):
// 4096^3 88.9 -> 96.9, 8192^3 89.9 -> 98.5, 1024^3 (128x128 split 4) 101 -> 103,
// 1000x1200x800 (128x128 split 4) 79.0 -> 99.1.
// Tile shape and how K is shared out: the kernel is a template over the block tile.
// 256x128 (256 threads of 8x16 outputs, one block per SM: cuBLAS's own shape here, read off ncu)
// takes every size it fills the GPU at, 128x128 (256 threads of 8x8, two blocks per SM) the ones
// it spreads evenly, and 64x128 or 64x64 only K too shallow to split. The 256x128 tile's grid is
// 1-D and a block's work is a run of BK-deep k steps (sgemm_v8_blocks, "stream-K"): the first
// blocks compute whole tiles; the tiles of the last, partial wave are shared out evenly over one
// block per SM, each adding its sums into C (zeroed there) with float4 atomics, so the last wave
// ends evenly instead of leaving SMs idle. The smaller tiles keep a 3-D grid whose z splits K
// when there are too few tiles (1024^3: 64 of 128x128 for 132 SMs, split in 4), the slices adding
// into a zeroed C. The launcher (nsprof.ladder.ops.launch_plan.choose_plan) chooses and the bench prints the
// plan ("256x128x16/tail68": the last 68 tiles shared). On the H200
// (benchmarks/gpu/v8_tail_probe_h200.sh, 2026-11-24, % of cuBLAS fp32 in the same process):
// 128x128 alone 97.2 / 95.5% at 8192 / 4096^3, sharing its last wave 98.0-98.3 / 97.2%, the 256x128
// tile sharing its last wave 99.5-100.9 / 98.1-98.8%; at a size of whole waves (7680x8448x8192)
// 128x128 reads 94.7% and 256x128 96.5-96.7%: cuBLAS's tiles are faster, but its last wave is
// not shared.
// Metric to watch: smsp__average_warp_latency_issue_stalled_long_scoreboard and ..._barrier fall
// against v7; sm__pipe_fma_cycles_active rises.
//
// Each tile has two entries: sgemm_v8_<tile> checks bounds (any M, N, K), and
// sgemm_v8_<tile>_unchecked, for sizes of whole tiles (M, N and every K slice), computes no copy
// bounds. The launcher picks one per launch.
//
// Tuning knobs (a tuning run overrides them with -D: benchmarks/gpu/tune_stage.py, swept by
// benchmarks/gpu/sgemm_fp32_h200.sh and sgemm_peak_h200.sh on the H200, 2026-11-24; % of cuBLAS fp32):
//   V8_ASYNC       2 (default): At and B by 16-byte cp.async, as above.
//                  0: register staging, the earlier v8. Its K tile of 16 is staged in two parts of
//                  8 k (part p's global loads fly during part p's FMAs and land in the other buffer
//                  right after; staged whole it spilled at the 128-register cap), and A's copy is
//                  laid out in warp chunks of 16 rows x 8 k so the transposing stores stay
//                  conflict-free. Best: 90.6% at 4096^3 and 90.4% at 8192^3 (BK 8).
//                  1: a ring filled by cp.async from A as it is: the transposed A tile is copied 4
//                  bytes at a time (each landing at its transposed place): 79.8% at 4096^3.
//   V8_BK          depth of a K tile (8 or 16). With V8_ASYNC 2: 16 (96.9 / 98.5% at 4096 / 8192^3)
//                  against 8 (87.8 / 89.2%, 3 stages).
//   V8_STAGES      ring depth with V8_ASYNC 1 or 2 (2..4). BK 8 with 3 or 4 stages: within 0.5% of
//                  each other; BK 16 with 3 or 4 (128x128): 98.2 / 97.8% against 2's 98.5% at 8192^3;
//                  the 256x128 tile with 3: 99.5-99.6% against 2's 99.8-99.9% (at 8000^3 100.2 / 99.1%).
//   V8_MIN_BLOCKS  blocks per SM that __launch_bounds__ promises for the 128x128 tile, which caps
//                  registers at 65536 / (threads * blocks). 2 with 8x8 outputs per thread: twice
//                  the warps of 1 (45.1 against 34.0 TFLOP/s, register staging).
//   V8_TN          outputs per thread along N in the 128x128 tile (8 or 16). 16: 128 threads of 8x16,
//                  128 FMAs per 6 shared loads; with V8_ASYNC 2 it ties (96.0 / 97.2%): 8 stays.
//   (Tried and dropped: the copies' .L2::128B prefetch hint, 98.6 / 96.9% at 8192 / 4096^3 with
//   and without it; a 256x128 tile of 512 threads (8x8 outputs each), 93.0 / 91.9%, its 16 warps
//   meeting at one barrier per tile; the 256x128 tile with cuBLAS's K tiles of 8 in 3 stages,
//   94.6 / 93.3%; blocks walked in bands of 8 block rows, so that blocks running together share
//   A and B tiles in L2, 94.9 / 96.4% with the 128x128 tile; A read as it is, with no transpose
//   (V8_ASYNC 3 in commit fb52c34: rows of A in shared memory, one float4 holding 4 k of a row, a
//   thread's rows ty + 32 i so a warp's loads were conflict-free; verified at 180 points), 82.7 /
//   82.2 / 91.7% at 8192 / 4096 / 1024^3 against this path's 99.5 / 98.1 / 99.4%.)
// NVRTC has no <type_traits>: a k-step count passed as a type, so the lambda below unrolls on it.
template <int N> struct Steps { static constexpr int value = N; };

#ifndef V8_BK
#define V8_BK 16
#endif
#ifndef V8_MIN_BLOCKS
#define V8_MIN_BLOCKS 2
#endif
#ifndef V8_TN
#define V8_TN 8
#endif
#ifndef V8_ASYNC
#define V8_ASYNC 2
#endif
#ifndef V8_STAGES
#define V8_STAGES 2
#endif

template <int BM, int BN, int BK, int TN>
struct V8 {
    static constexpr int TM = 8;
    static constexpr int THREADS = BM * BN / (TM * TN);   // each thread owns TM x TN outputs
    static constexpr int A_LD = BM + 4;                    // transposed A rows, padded (see v6)
    static constexpr int A_VECS = BM * BK / 4 / THREADS;   // float4 per thread per tile
    static constexpr int B_VECS = BK * BN / 4 / THREADS;
    static constexpr int A_WORDS = BM * BK / THREADS;      // 4-byte copies per thread (V8_ASYNC)
    static constexpr int BUFFERS = V8_ASYNC ? V8_STAGES : 2;
    static constexpr int GROUPS_N = TN / 4;                // a thread's float4 column groups
    static constexpr int GROUP_STRIDE_N = BN / GROUPS_N;   // ... spread evenly over the tile
    static_assert(A_VECS >= 1 && B_VECS >= 1 && A_VECS * 4 * THREADS == BM * BK &&
                  B_VECS * 4 * THREADS == BK * BN, "tile too small for the thread count");
    static_assert(BK % 8 == 0 && TN % 4 == 0, "BK must be a multiple of 8, TN of 4");
    static_assert(BM % 16 == 0 && BM * BK / 4 % 32 == 0, "A is staged in warp chunks of 16 rows x 8 k");
    static constexpr int SMEM_BYTES = BUFFERS * BK * (A_LD + BN) * 4;
    static_assert(BUFFERS >= 2 && SMEM_BYTES <= 227 * 1024, "over the 227 KB of shared memory a block may have: "
                  "fewer V8_STAGES or a smaller V8_BK");
};

// Four floats of row `row` from column `col` of a row-major matrix with leading dimension ld,
// zero outside rows x cols. `vec`: cols and col are multiples of 4 and the rows 16-byte aligned.
// Unchecked (whole tiles, see the entries): one float4 load, no compare.
template <bool CHECKED>
__device__ __forceinline__ float4 load4(const float* __restrict__ base, int ld, int row, int col,
                                        int rows, int cols, bool vec) {
    if (!CHECKED) return *reinterpret_cast<const float4*>(base + row * ld + col);
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (row < rows) {
        const float* p = base + row * ld + col;
        if (vec) {
            if (col < cols) v = *reinterpret_cast<const float4*>(p);
        } else {
            if (col + 0 < cols) v.x = p[0];
            if (col + 1 < cols) v.y = p[1];
            if (col + 2 < cols) v.z = p[2];
            if (col + 3 < cols) v.w = p[3];
        }
    }
    return v;
}

#include "../common/cp_async.cuh"  // cp_async4/16 with zero fill, commit, wait

// What one call of the body computes: the BM x BN tile at block row `by`, column `bx`, over
// k in [k_begin, k_end) (whole BK steps, the last may be short), stored into C or, for a part of
// K (`add`), added into C, which the launcher zeroed.
struct V8Work { int by, bx, k_begin, k_end; bool add; };

// GRID: the block's work comes from a 3-D grid instead (the 128x128, 64x128 and 64x64 tiles):
// tile (blockIdx.y, blockIdx.x), K slice blockIdx.z of gridDim.z, added into C when K is split.
// Those tiles keep that simple form: at 128 registers a thread, the stream-K loop (sgemm_v8_blocks)
// cost the 128x128 tile 3-7% at 1024^3 (split in 4) on the H200, and `work` kept live costs
// the 64x128 tile spilled registers.
template <int BM, int BN, int BK, int TN, bool CHECKED, bool GRID = false>
__device__ __forceinline__ void sgemm_v8_body(int M, int N, int K,
                                              const float* __restrict__ A,
                                              const float* __restrict__ B,
                                              float* __restrict__ C, const V8Work& work) {
    using P = V8<BM, BN, BK, TN>;
    // The ring lives in dynamic shared memory (the launcher asks for P::SMEM_BYTES: nsprof.ops.sgemm
    // _v8_smem): the 256x128 tile's two buffers of 16 k take 49,664 bytes, past the 48 KB of static.
    extern __shared__ __align__(16) float v8_smem[];
    auto& As = *reinterpret_cast<float (*)[P::BUFFERS][BK][P::A_LD]>(v8_smem);
    auto& Bs = *reinterpret_cast<float (*)[P::BUFFERS][BK][BN]>(v8_smem + P::BUFFERS * BK * P::A_LD);
    const int tid = threadIdx.x;
    // A warp covers 4 x 8 threads of the block's (BM/8) x (BN/TN) grid, so each k step reads
    // 4 distinct float4 of A and 8 of B per warp (v7's 2 x 16 layout: 2 and 16). Measured on
    // the H200 both layouts ran at the same speed (45.1 TFLOP/s at 4096^3); 4 x 8 is kept
    // because it also works for 64-wide tiles.
    constexpr int LANES_X = 8;
    constexpr int WARPS_X = (BN / TN) / LANES_X;
    static_assert(WARPS_X >= 1, "BN / TN must be at least 8");
    const int warp = tid / 32, lane = tid % 32;
    const int ty = (warp / WARPS_X) * 4 + lane / LANES_X;
    const int tx = (warp % WARPS_X) * LANES_X + lane % LANES_X;

    const int m0 = (GRID ? static_cast<int>(blockIdx.y) : work.by) * BM;
    const int n0 = (GRID ? static_cast<int>(blockIdx.x) : work.bx) * BN;
    const int k_len = (K + gridDim.z * BK - 1) / (gridDim.z * BK) * BK;  // GRID: a slice's depth
    const int k_begin = GRID ? blockIdx.z * k_len : work.k_begin;
    const int k_end = GRID ? min(K, k_begin + k_len) : work.k_end;
    const int tiles = (k_end - k_begin + BK - 1) / BK;
    if (tiles <= 0) return;  // an empty trailing slice (tiny K): nothing to add
    const bool vec_b = !CHECKED || N % 4 == 0;

    // FMAs of k steps [k_lo, k_lo + STEPS) of the tile in buffer buf (constants after unrolling).
    auto compute_steps = [&](int buf, int k_lo, auto steps, float (&acc)[8][TN]) {
        constexpr int STEPS = decltype(steps)::value;
        float4 frag_a[2][2], frag_b[2][P::GROUPS_N];
        auto load_fragments = [&](int k, int slot) {
            frag_a[slot][0] = *reinterpret_cast<const float4*>(&As[buf][k][ty * 4]);
            frag_a[slot][1] = *reinterpret_cast<const float4*>(&As[buf][k][BM / 2 + ty * 4]);
#pragma unroll
            for (int h = 0; h < P::GROUPS_N; ++h)
                frag_b[slot][h] = *reinterpret_cast<const float4*>(&Bs[buf][k][h * P::GROUP_STRIDE_N + tx * 4]);
        };
        load_fragments(k_lo, 0);
#pragma unroll
        for (int k = 0; k < STEPS; ++k) {
            if (k + 1 < STEPS) load_fragments(k_lo + k + 1, (k + 1) % 2);  // in flight during the FMAs below
            const float av[8] = {frag_a[k % 2][0].x, frag_a[k % 2][0].y, frag_a[k % 2][0].z,
                                 frag_a[k % 2][0].w, frag_a[k % 2][1].x, frag_a[k % 2][1].y,
                                 frag_a[k % 2][1].z, frag_a[k % 2][1].w};
            float bv[TN];
#pragma unroll
            for (int h = 0; h < P::GROUPS_N; ++h) {
                bv[h * 4 + 0] = frag_b[k % 2][h].x;
                bv[h * 4 + 1] = frag_b[k % 2][h].y;
                bv[h * 4 + 2] = frag_b[k % 2][h].z;
                bv[h * 4 + 3] = frag_b[k % 2][h].w;
            }
#pragma unroll
            for (int i = 0; i < 8; ++i) {
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += av[i] * bv[j];
            }
        }
    };

    auto compute_tile = [&](int buf, float (&acc)[8][TN]) {
        compute_steps(buf, 0, Steps<BK>{}, acc);
    };

    float acc[8][TN] = {};
#if V8_ASYNC
    // A ring of BUFFERS tiles: the copies of tile t + BUFFERS - 1 are issued while tile t is computed.
    auto issue = [&](int buf, int k0) {
#if V8_ASYNC == 2
        const int lda = (M + 3) & ~3;  // At's rows (see sgemm_v8_transpose_a)
#pragma unroll
        for (int r = 0; r < P::A_VECS; ++r) {
            const int e = tid + r * P::THREADS;
            const int kk = e / (BM / 4), col = (e % (BM / 4)) * 4;
            const bool in = !CHECKED || (k0 + kk < k_end && m0 + col < lda);
            cp_async16(&As[buf][kk][col], in ? &A[(k0 + kk) * lda + m0 + col] : A, in);
        }
#else
#pragma unroll
        for (int r = 0; r < P::A_WORDS; ++r) {
            // 8 lanes cover 8 consecutive k of one row (a 32-byte sector), 4 rows per warp; the
            // transposed stores of a warp then hit 32 distinct banks (rows are BM + 4 floats).
            const int e = tid + r * P::THREADS;
            const int kk = e % 8 + 8 * (e / (8 * BM)), row = e / 8 % BM;
            const bool in = !CHECKED || (m0 + row < M && k0 + kk < k_end);
            cp_async4(&As[buf][kk][row], in ? &A[(m0 + row) * K + k0 + kk] : A, in);
        }
#endif
#pragma unroll
        for (int r = 0; r < P::B_VECS; ++r) {
            const int e = tid + r * P::THREADS;
            const int row = e / (BN / 4), col = (e % (BN / 4)) * 4;
            const int gk = k0 + row, gn = n0 + col;
            if (vec_b) {
                const bool in = !CHECKED || (gk < k_end && gn < N);
                cp_async16(&Bs[buf][row][col], in ? &B[gk * N + gn] : B, in);
            } else {
#pragma unroll
                for (int c = 0; c < 4; ++c) {
                    const bool in = gk < k_end && gn + c < N;
                    cp_async4(&Bs[buf][row][col + c], in ? &B[gk * N + gn + c] : B, in);
                }
            }
        }
    };
#pragma unroll
    for (int t = 0; t < P::BUFFERS - 1; ++t) {
        if (t < tiles) issue(t, k_begin + t * BK);
        cp_async_commit();  // empty groups keep the wait count below uniform
    }
    int read = 0, write = P::BUFFERS - 1;
    for (int t = 0; t < tiles; ++t) {
        cp_async_wait<P::BUFFERS - 2>();  // tile t has landed (for this thread) ...
        __syncthreads();                  // ... for every thread; buffer `write` was read at t - 1
        if (t + P::BUFFERS - 1 < tiles) issue(write, k_begin + (t + P::BUFFERS - 1) * BK);
        cp_async_commit();
        compute_tile(read, acc);
        read = read + 1 == P::BUFFERS ? 0 : read + 1;
        write = write + 1 == P::BUFFERS ? 0 : write + 1;
    }
#else
    // A tile of BK 16 is staged in two parts of 8 k: the global loads of part p of the next tile
    // fly during the FMAs of part p of this one and land in the other buffer right after, so a
    // thread holds 8 k of a tile in registers at any BK (BK 16 staged whole spilled at 128
    // registers) while the block still meets one barrier per BK.
    constexpr int PARTS = BK / 8, A_PART = P::A_VECS / PARTS, B_PART = P::B_VECS / PARTS;
    const bool vec_a = !CHECKED || K % 4 == 0;
    float4 stage_a[A_PART], stage_b[B_PART];
    // The A tile goes in warp chunks of 16 rows x 8 k (lane: row lane / 2, k (lane % 2) * 4; one
    // 32-byte sector per row), down the rows first, then along k. The transposed stores of a warp
    // then hit 32 distinct banks at any BK (bank 4 * k + row, rows BM + 4 floats apart); reading
    // rows of BK / 4 float4 instead made BK 16 store k 0 and 8 to the same bank, 2-way.
    auto a_place = [&](int r, int& row, int& col) {
        const int chunk = warp + r * (P::THREADS / 32);  // THREADS is a whole number of warps
        row = chunk % (BM / 16) * 16 + lane / 2;
        col = (chunk / (BM / 16) * 2 + lane % 2) * 4;
    };
    // Part p holds vectors [p * A_PART, (p + 1) * A_PART) of A (A's chunks p * BM / 16 on: k 8p..8p+7)
    // and [p * B_PART, (p + 1) * B_PART) of B (rows 8p..8p+7).
    auto load_global = [&](int k0, int part) {
#pragma unroll
        for (int r = 0; r < A_PART; ++r) {
            int row, col;
            a_place(part * A_PART + r, row, col);
            stage_a[r] = load4<CHECKED>(A, K, m0 + row, k0 + col, M, k_end, vec_a);
        }
#pragma unroll
        for (int r = 0; r < B_PART; ++r) {
            const int e = tid + (part * B_PART + r) * P::THREADS;
            const int row = e / (BN / 4), col = (e % (BN / 4)) * 4;
            stage_b[r] = load4<CHECKED>(B, N, k0 + row, n0 + col, k_end, N, vec_b);
        }
    };
    auto store_shared = [&](int buf, int part) {
#pragma unroll
        for (int r = 0; r < A_PART; ++r) {
            int row, col;
            a_place(part * A_PART + r, row, col);
            As[buf][col + 0][row] = stage_a[r].x;
            As[buf][col + 1][row] = stage_a[r].y;
            As[buf][col + 2][row] = stage_a[r].z;
            As[buf][col + 3][row] = stage_a[r].w;
        }
#pragma unroll
        for (int r = 0; r < B_PART; ++r) {
            const int e = tid + (part * B_PART + r) * P::THREADS;
            const int row = e / (BN / 4), col = (e % (BN / 4)) * 4;
            *reinterpret_cast<float4*>(&Bs[buf][row][col]) = stage_b[r];
        }
    };
#pragma unroll
    for (int part = 0; part < PARTS; ++part) {
        load_global(k_begin, part);
        store_shared(0, part);
    }
    __syncthreads();
    int buf = 0;
    for (int t = 0; t < tiles; ++t) {
        const bool has_next = t + 1 < tiles;
#pragma unroll
        for (int part = 0; part < PARTS; ++part) {
            if (has_next) load_global(k_begin + (t + 1) * BK, part);  // in flight during the FMAs below
            compute_steps(buf, part * 8, Steps<8>{}, acc);
            // The other buffer was last read before the previous barrier: safe to overwrite.
            if (has_next) store_shared(buf ^ 1, part);
        }
        if (has_next) {
            __syncthreads();
            buf ^= 1;
        }
    }
#endif
    const bool vec_c = !CHECKED || N % 4 == 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = m0 + (i / 4) * (BM / 2) + ty * 4 + i % 4;
        if (CHECKED && row >= M) continue;
#pragma unroll
        for (int h = 0; h < P::GROUPS_N; ++h) {
            const int col = n0 + h * P::GROUP_STRIDE_N + tx * 4;
            const float4 v = make_float4(acc[i][h * 4], acc[i][h * 4 + 1], acc[i][h * 4 + 2], acc[i][h * 4 + 3]);
            float* c = &C[row * N + col];
            if (vec_c) {
                if (CHECKED && col >= N) continue;
                if (GRID ? gridDim.z == 1 : !work.add) *reinterpret_cast<float4*>(c) = v;
                else atomicAdd(reinterpret_cast<float4*>(c), v);  // float4 atomics: sm_90 and later
            } else {
                const float vs[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    if (col + j >= N) continue;
                    if (GRID ? gridDim.z == 1 : !work.add) c[j] = vs[j];
                    else atomicAdd(c + j, vs[j]);
                }
            }
        }
    }
}

// The blocks' work (a 1-D grid; the launcher, nsprof.ladder.ops.matmul, chooses the numbers):
// blocks [0, whole_tiles) each compute one tile over all of K, in row order; the tiles after them
// are shared out over the next `shared_blocks` blocks by k steps (stream-K): block u takes the
// u-th of shared_blocks equal runs of those tiles' BK-deep steps, laid end to end tile after tile,
// and adds its sums into C for each tile its run touches. With whole_tiles = 0 and shared_blocks =
// split x tiles this is split-K; with the last partial wave's tiles (or that and one more wave)
// shared by one block per slot of the GPU, the last wave ends evenly instead of leaving SMs idle.
template <int BM, int BN, int TN, bool CHECKED>
__device__ __forceinline__ void sgemm_v8_blocks(int M, int N, int K, const float* __restrict__ A,
                                                const float* __restrict__ B, float* __restrict__ C,
                                                int whole_tiles, int shared_blocks) {
    // 32-bit counts suffice: the launcher keeps M x K, K x N and M x N under 2^31, so tiles x steps
    // stays under 2^31 for any tile of 64 x 64 x 16 or more.
    const int tiles_x = (N + BN - 1) / BN;
    const int steps = (K + V8_BK - 1) / V8_BK;  // k steps per tile
    const int b = blockIdx.x;
    // This block's run of k steps, counted from the first step of tile `base`.
    int base = 0, step = b * steps, end = step + steps;
    bool add = false;
    if (b >= whole_tiles) {  // shared: q steps a block, the first r blocks one more
        const int shared = (tiles_x * ((M + BM - 1) / BM) - whole_tiles) * steps;
        const int u = b - whole_tiles, q = shared / shared_blocks, r = shared % shared_blocks;
        base = whole_tiles;
        step = u * q + min(u, r);
        end = step + q + (u < r);
        add = true;
    }
    while (step < end) {  // one pass per tile the run touches (a whole tile: one pass)
        const int tile = base + step / steps;
        const int first = step % steps, last = min(steps, first + end - step);
        sgemm_v8_body<BM, BN, V8_BK, TN, CHECKED>(
            M, N, K, A, B, C, {tile / tiles_x, tile % tiles_x, first * V8_BK, min(K, last * V8_BK), add});
        step += last - first;
        if (step < end) __syncthreads();  // the next pass refills the shared buffers
    }
}

// Two entry points per block tile: sgemm_v8_<BM>x<BN> checks every access (any M, N, K);
// sgemm_v8_<BM>x<BN>_unchecked assumes whole tiles (M % BM == N % BN == K % BK == 0, so every row
// is also float4-aligned) and carries no bounds checks. The launcher picks one per launch
// (nsprof.ladder.ops.matmul: Tile.unchecked_entry).
#define V8_ARGS int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C
// The 256x128 tile is cuBLAS's shape for this product on the H200 (ncu at 8192^3: 256 threads,
// one block per SM): 8x16 outputs a thread, 128 FMAs per 6 shared loads, up to 255 registers.
#define V8_THREADS_128 (128 * 128 / (8 * V8_TN))
extern "C" __global__ void __launch_bounds__(256, 1)
sgemm_v8_256x128(V8_ARGS, int whole_tiles, int shared_blocks) { sgemm_v8_blocks<256, 128, 16, true>(M, N, K, A, B, C, whole_tiles, shared_blocks); }
extern "C" __global__ void __launch_bounds__(256, 1)
sgemm_v8_256x128_unchecked(V8_ARGS, int whole_tiles, int shared_blocks) { sgemm_v8_blocks<256, 128, 16, false>(M, N, K, A, B, C, whole_tiles, shared_blocks); }
extern "C" __global__ void __launch_bounds__(V8_THREADS_128, V8_MIN_BLOCKS)
sgemm_v8_128x128(V8_ARGS) { sgemm_v8_body<128, 128, V8_BK, V8_TN, true, true>(M, N, K, A, B, C, {}); }
extern "C" __global__ void __launch_bounds__(V8_THREADS_128, V8_MIN_BLOCKS)
sgemm_v8_128x128_unchecked(V8_ARGS) { sgemm_v8_body<128, 128, V8_BK, V8_TN, false, true>(M, N, K, A, B, C, {}); }
extern "C" __global__ void __launch_bounds__(128, 2 * V8_MIN_BLOCKS)
sgemm_v8_64x128(V8_ARGS) { sgemm_v8_body<64, 128, V8_BK, 8, true, true>(M, N, K, A, B, C, {}); }
extern "C" __global__ void __launch_bounds__(128, 2 * V8_MIN_BLOCKS)
sgemm_v8_64x128_unchecked(V8_ARGS) { sgemm_v8_body<64, 128, V8_BK, 8, false, true>(M, N, K, A, B, C, {}); }
extern "C" __global__ void __launch_bounds__(64, 4 * V8_MIN_BLOCKS)
sgemm_v8_64x64(V8_ARGS) { sgemm_v8_body<64, 64, V8_BK, 8, true, true>(M, N, K, A, B, C, {}); }
extern "C" __global__ void __launch_bounds__(64, 4 * V8_MIN_BLOCKS)
sgemm_v8_64x64_unchecked(V8_ARGS) { sgemm_v8_body<64, 64, V8_BK, 8, false, true>(M, N, K, A, B, C, {}); }

// V8_ASYNC 2: A (M x K) -> At (K x lda), lda = M rounded up to 4 floats (zeros in columns M..lda-1),
// through a 32 x 33 shared tile (coalesced both ways, no bank conflicts); grid (ceil(K / 32),
// ceil(lda / 32)), block 32 x 8.
extern "C" __global__ void sgemm_v8_transpose_a(int M, int K, const float* __restrict__ A, float* __restrict__ At) {
    __shared__ float tile[32][33];
    const int lda = (M + 3) & ~3;
    const int m0 = blockIdx.y * 32, k0 = blockIdx.x * 32;
#pragma unroll
    for (int p = 0; p < 32; p += 8) {
        const int m = m0 + threadIdx.y + p, k = k0 + threadIdx.x;
        tile[threadIdx.y + p][threadIdx.x] = (m < M && k < K) ? A[m * K + k] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int p = 0; p < 32; p += 8) {
        const int k = k0 + threadIdx.y + p, m = m0 + threadIdx.x;
        if (k < K && m < lda) At[k * lda + m] = tile[threadIdx.x][threadIdx.y + p];
    }
}
