// s4 shared x: s2 with x staged through shared memory, 4096 floats of x at a time.
//
// Launch configuration (threads, rows of y per block): nsprof/ops/sgemv.py, which calls the
// entries as this header says.
//
// What changed since s2 (and s3): the block walks K in tiles of S4_TILE = 4096 columns. For each
// tile, all 512 threads first copy x[t0 .. t0 + 4096) into shared memory (8 floats per thread,
// all 8 loads in flight), the block synchronises, and the At loop of s2 then takes x[k] from
// shared memory: one address per warp, a broadcast, so no bank conflicts. A second barrier
// keeps the tile alive until every warp is done with it. The k split over the 16 warps, the 16
// At loads in flight per thread and the shared-memory sum of the partial sums are s2's. Unlike
// s3 there is no limit on K and one launch does the whole product.
// Why it should help (a little at most): as in s3, the x loads leave the global path (global
// load instructions halve against s2), and x is read from L2 once per block and tile instead
// of by every warp at every k (mostly L1 hits in s2). The tile is large (16 KB) so that the barriers, where each warp's
// pipeline of At loads drains, come once per 4096 k x 32 rows = 512 KB of At per block; the
// kernel stays bound by DRAM reading At.
// Metric to watch: global_ld_instructions halves against s2 (the x copies are 1/32 of them);
// smem_ld_instructions appear, with smem_ld_conflicts ~0; stall_barrier stays small against
// stall_long_scoreboard.
// Ragged sizes: the last tile holds kt = K - t0 <= 4096 columns; the copy of x is predicated on
// i < kt (x is never read past K); inside a tile, full batches of 16 rows per warp while they
// are inside the tile, then one batch with each load predicated on j < kt. Lanes with m >= M
// skip the At loads but execute the x copy and both __syncthreads() of every tile, and the
// final one, so every barrier is reached by every thread of the block. Scalar loads only;
// warp 0 writes every y[m], m < M, exactly once. Offsets are 64-bit. As s2, M = 256 is only
// 8 blocks whatever K is.
// What the seed tutorial got wrong: it called __syncthreads() inside `if (id < M)`, so when M
// was not a multiple of the block size the last block's threads with id >= M skipped the
// barrier (a divergent barrier: undefined behaviour, a hang or a wrong result), and its tiles
// of x were as wide as the block and loaded without a bound, so it read x past its end when K
// was not a multiple of the block size. Its layout was also s2's (one thread per row, the
// whole of K in one thread).
// Measured for the seed's kernel on the H200 (M = K = 4096 ... 32768): 0.24-1.85 TB/s, against
// cuBLAS 1.83-4.12 TB/s.
// Tuning knobs (-D; nsprof/ops/sgemv.py declares the defaults): S4_THREADS, S4_UNROLL, S4_MIN_BLOCKS
// as s2's; S4_TILE (floats of x per tile, a multiple of S4_THREADS; static shared memory is
// 4 S4_TILE + 4 S4_THREADS bytes: 18 KB by default).

#ifndef S4_THREADS
#define S4_THREADS 512
#endif
#ifndef S4_UNROLL
#define S4_UNROLL 16
#endif
#ifndef S4_MIN_BLOCKS
#define S4_MIN_BLOCKS 2
#endif
#ifndef S4_TILE
#define S4_TILE 4096
#endif
#define S4_ROWS 32                   // rows of y per block: one per lane
#define S4_KW (S4_THREADS / 32)      // warps per block, each on its own share of a tile

static_assert(S4_THREADS % 32 == 0 && S4_THREADS <= 1024, "S4_THREADS: a multiple of 32, at most 1024");
static_assert(S4_TILE % S4_THREADS == 0, "S4_TILE: a multiple of S4_THREADS");

extern "C" __global__ void __launch_bounds__(S4_THREADS, S4_MIN_BLOCKS)
sgemv_s4(int M, int K, const float* __restrict__ At, const float* __restrict__ x, float* __restrict__ y) {
    __shared__ float xs[S4_TILE];
    __shared__ float partial[S4_KW][S4_ROWS];
    const int lane = threadIdx.x & 31;
    const int w = threadIdx.x >> 5;          // this warp's share of a tile: j = w (mod S4_KW)
    const int m = blockIdx.x * S4_ROWS + lane;
    const bool active = m < M;
    const size_t step = static_cast<size_t>(S4_KW) * M;   // At rows k -> k + S4_KW

    float acc = 0.0f;
    for (int t0 = 0; t0 < K; t0 += S4_TILE) {             // uniform across the block
        const int kt = min(S4_TILE, K - t0);               // columns in this tile
        // Every thread copies its share of the tile of x (loads first, then stores).
        {
            float xv[S4_TILE / S4_THREADS];
#pragma unroll
            for (int r = 0; r < S4_TILE / S4_THREADS; ++r) {
                const int i = threadIdx.x + r * S4_THREADS;
                xv[r] = i < kt ? __ldg(x + t0 + i) : 0.0f;
            }
#pragma unroll
            for (int r = 0; r < S4_TILE / S4_THREADS; ++r) xs[threadIdx.x + r * S4_THREADS] = xv[r];
        }
        __syncthreads();                                    // the tile is in shared memory

        if (active) {
            const float* a = At + static_cast<size_t>(t0 + w) * M + m;   // At[t0 + w][m]
            int j = w;                                                    // column within the tile
#pragma unroll 1
            for (; j < kt - (S4_UNROLL - 1) * S4_KW; j += S4_UNROLL * S4_KW) {
                float av[S4_UNROLL];
#pragma unroll
                for (int u = 0; u < S4_UNROLL; ++u) {
                    av[u] = __ldg(a);
                    a += step;
                }
#pragma unroll
                for (int u = 0; u < S4_UNROLL; ++u) acc = fmaf(av[u], xs[j + u * S4_KW], acc);
            }
            // The last, partial batch (if any): every load predicated on its row being inside the tile.
            if (j < kt) {
                float av[S4_UNROLL], xv[S4_UNROLL];
#pragma unroll
                for (int u = 0; u < S4_UNROLL; ++u) {
                    const bool in = j + u * S4_KW < kt;   // (xs is then read only below kt)
                    av[u] = in ? __ldg(a) : 0.0f;
                    xv[u] = in ? xs[j + u * S4_KW] : 0.0f;
                    a += step;
                }
#pragma unroll
                for (int u = 0; u < S4_UNROLL; ++u) acc = fmaf(av[u], xv[u], acc);
            }
        }
        __syncthreads();                                    // every warp is done with this tile
    }

    // Add the S4_KW partial sums of each row; warp 0 writes y.
    partial[w][lane] = acc;
    __syncthreads();
    if (w == 0 && active) {
        float s = 0.0f;
#pragma unroll
        for (int i = 0; i < S4_KW; ++i) s += partial[i][lane];
        y[m] = s;
    }
}
