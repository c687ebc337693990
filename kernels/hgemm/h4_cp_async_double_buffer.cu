// h4 cp.async double buffer: h3's warp tiles fed by two padded shared buffers filled with cp.async.
//
// Launch configurations (tiles, threads, shared memory): nsprof/ops/hgemm.py.
//
// What changed since h3:
// - Two buffers: shared memory holds two copies of the A and B k-tiles. While the warps run
//   the MMAs of tile t from one buffer, the copies of tile t + 1 fill the other, so global
//   latency hides behind tensor-core work; one __syncthreads() per tile instead of two.
// - cp.async.cg (16-byte copies, global -> shared without registers, bypassing L1), with
//   commit_group / wait_group: the copies need no registers while in flight and no
//   instructions to move data through the register file.
// - Padded rows: A's rows are 64 + 8 halves (144 bytes) and B's 128 + 8 (272 bytes), so the
//   8 rows that one ldmatrix phase reads (16 bytes each) start in 8 different 16-byte bank
//   groups: h3's 4-way (A) and 8-way (B) conflicts are gone. Rows stay 16-byte aligned for
//   cp.async and fragment origins 32-byte aligned for WMMA.
// - The k-tile is 64 deep instead of 32: each tile's copies then have 32 mma_sync per warp
//   (twice h3's 16) to hide behind, and there are half as many barriers. Two 128x128
//   stages take 70 KB, so the shared memory is dynamic (the launcher raises the 48 KB limit);
//   two blocks fit on an SM (140 KB, and __launch_bounds__(256, 2) caps registers at 128).
// Why it should be faster: h3 stalled every tile on the global loads (long scoreboard) and
// on two barriers, and its fragment loads were replayed 4-8 times by bank conflicts.
// Metric to watch: l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld drops to ~0;
// smsp__average_warp_latency_issue_stalled_long_scoreboard and ..._barrier fall;
// sm__ops_path_tensor_src_fp16 per second (tensor FLOP/s) rises.
// Tile variants: 128x128 (warp tile 64x32: 4 x 2 fragments) and, when that leaves SMs
// idle, 64x128 (warp tile 32x32: 2 x 2); both 8 warps as 2 x 4.
// Split-K: with gridDim.z > 1 slice z computes k in [z*K/gridDim.z, (z+1)*K/gridDim.z) and
// stores its float32 tile to partials[z*M*N + row*N + col]; the reduce kernel sums them.
// Precision: float32 accumulators, rounded to fp16 once: each warp stages one 16x16 float
// tile at a time in 1 KB of (reused) shared memory, converts, and writes C with one 16-byte
// store per lane.
// Ragged sizes: the launcher pads M to a multiple of bm, N of bn and K of 64 * split with
// zeros; no bounds checks (all rows 16-byte aligned for cp.async).
// What the seed tutorial got wrong: fp16 accumulation (its 267 TFLOP/s at 4096^3 on the H200
// rounded the running sum to 11 bits after every 16-deep step, an error that grows with K),
// and it assumed M, N, K multiples of its tile sizes (128 / 16): ragged sizes read and wrote
// out of bounds.

#include <cuda_fp16.h>
#include <mma.h>

#include "wmma_store.cuh"

using namespace nvcuda;

#define H4_BK 64
#define H4_STAGES 2
#define H4_A_LD (H4_BK + 8)  // 72 halves = 144 bytes: 9 16-byte groups, odd, so 8 rows hit 8 groups
#define H4_THREADS 256
#define H4_WARPS_M 2
#define H4_WARPS_N 4

typedef wmma::fragment<wmma::accumulator, 16, 16, 16, float> h4_acc_t;

__device__ __forceinline__ void h4_cp_async16(__half* smem, const __half* gmem) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    const size_t g = __cvta_generic_to_global(gmem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(g) : "memory");
}
__device__ __forceinline__ void h4_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void h4_cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

template <int BM, int BN>
__device__ __forceinline__ void hgemm_h4_body(int M, int N, int K, const __half* __restrict__ A,
                                              const __half* __restrict__ B, __half* __restrict__ C,
                                              float* partials) {
    constexpr int BK = H4_BK;
    constexpr int A_LD = H4_A_LD;
    constexpr int B_LD = BN + 8;  // 136 halves = 272 bytes: 17 16-byte groups, odd
    constexpr int A_STAGE = BM * A_LD;  // halves per buffer
    constexpr int B_STAGE = BK * B_LD;
    constexpr int WM = BM / H4_WARPS_M, WN = BN / H4_WARPS_N;
    constexpr int FM = WM / 16, FN = WN / 16;
    constexpr int A_CHUNKS = BM * BK / 8 / H4_THREADS;  // 16-byte copies per thread per tile
    constexpr int B_CHUNKS = BK * BN / 8 / H4_THREADS;
    static_assert(A_CHUNKS * 8 * H4_THREADS == BM * BK && B_CHUNKS * 8 * H4_THREADS == BK * BN, "copy split");
    static_assert(FM >= 1 && FN >= 1 && WM % 16 == 0 && WN % 16 == 0, "warp tile");
    static_assert(H4_WARPS_M * H4_WARPS_N * 256 * 4 <= H4_STAGES * (A_STAGE + B_STAGE) * 2, "epilogue staging");

    extern __shared__ __align__(128) unsigned char h4_smem[];
    __half* As = reinterpret_cast<__half*>(h4_smem);  // H4_STAGES x [BM][A_LD]
    __half* Bs = As + H4_STAGES * A_STAGE;            // H4_STAGES x [BK][B_LD]

    const int tid = threadIdx.x;
    const int warp = tid / 32;
    const int warp_m = warp / H4_WARPS_N, warp_n = warp % H4_WARPS_N;
    const int bm0 = blockIdx.y * BM, bn0 = blockIdx.x * BN;
    // This block's K slice (the whole of K without split-K); a multiple of BK by the padding.
    const int k_begin = (int)((long long)blockIdx.z * K / gridDim.z);
    const int k_end = (int)((long long)(blockIdx.z + 1) * K / gridDim.z);
    const int tiles = (k_end - k_begin) / BK;
    const __half* Ablk = A + (size_t)bm0 * K + k_begin;
    const __half* Bblk = B + (size_t)k_begin * N + bn0;

    // Copies of k-tile `tile` into buffer `buf`, in 16-byte chunks of 8 halves: chunk e of A
    // is row e / 8, column (e % 8) * 8; chunk e of B is row e / (BN / 8), column
    // (e % (BN / 8)) * 8. Thread t copies chunks t, t + 256, ...: a warp covers 4 (A) or
    // 2 (B) whole 128- or 256-byte row segments per copy instruction.
    auto issue_tile = [&](int tile, int buf) {
        const int k0 = tile * BK;
        __half* as = As + buf * A_STAGE;
        __half* bs = Bs + buf * B_STAGE;
#pragma unroll
        for (int r = 0; r < A_CHUNKS; ++r) {
            const int e = tid + r * H4_THREADS;
            const int row = e / (BK / 8), col = (e % (BK / 8)) * 8;
            h4_cp_async16(as + row * A_LD + col, Ablk + (size_t)row * K + k0 + col);
        }
#pragma unroll
        for (int r = 0; r < B_CHUNKS; ++r) {
            const int e = tid + r * H4_THREADS;
            const int row = e / (BN / 8), col = (e % (BN / 8)) * 8;
            h4_cp_async16(bs + row * B_LD + col, Bblk + (size_t)(k0 + row) * N + col);
        }
    };

    h4_acc_t acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b[FN];

    if (tiles > 0) issue_tile(0, 0);
    h4_cp_async_commit();
    for (int t = 0; t < tiles; ++t) {
        // Tile t has landed (the only group in flight), and the barrier makes it visible to all
        // warps and guarantees that every warp has finished tile t - 1, whose buffer the
        // copies of tile t + 1 now overwrite.
        h4_cp_async_wait_all();
        __syncthreads();
        if (t + 1 < tiles) issue_tile(t + 1, (t + 1) % H4_STAGES);
        h4_cp_async_commit();

        const __half* as = As + (t % H4_STAGES) * A_STAGE + warp_m * WM * A_LD;
        const __half* bs = Bs + (t % H4_STAGES) * B_STAGE + warp_n * WN;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            // B fragments first (each serves all FM A fragments), then one A at a time.
#pragma unroll
            for (int j = 0; j < FN; ++j) wmma::load_matrix_sync(b[j], bs + kk * B_LD + j * 16, B_LD);
#pragma unroll
            for (int i = 0; i < FM; ++i) {
                wmma::load_matrix_sync(a, as + i * 16 * A_LD + kk, A_LD);
#pragma unroll
                for (int j = 0; j < FN; ++j) wmma::mma_sync(acc[i][j], a, b[j], acc[i][j]);
            }
        }
    }
    h4_cp_async_wait_all();  // nothing is in flight here (the last group is empty); kept for safety

    const int row0 = bm0 + warp_m * WM, col0 = bn0 + warp_n * WN;
    if (gridDim.z > 1) {
        // Split-K: this slice's float32 partial tile, summed into C by the reduce kernel.
        float* P = partials + (size_t)blockIdx.z * M * N;
#pragma unroll
        for (int i = 0; i < FM; ++i)
#pragma unroll
            for (int j = 0; j < FN; ++j)
                wmma::store_matrix_sync(P + (size_t)(row0 + i * 16) * N + col0 + j * 16, acc[i][j], N,
                                        wmma::mem_row_major);
        return;
    }
    __syncthreads();  // other warps may still read the last tile: wait before reusing its memory
    float* stage = reinterpret_cast<float*>(h4_smem) + warp * 256;
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j)
            wmma_store_tile_fp16(C + (size_t)(row0 + i * 16) * N + col0 + j * 16, N, stage, acc[i][j]);
}

extern "C" __global__ void __launch_bounds__(H4_THREADS, 2)
hgemm_h4(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
         __half* __restrict__ C, float* partials) {
    hgemm_h4_body<128, 128>(M, N, K, A, B, C, partials);
}

extern "C" __global__ void __launch_bounds__(H4_THREADS, 2)
hgemm_h4_64x128(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
                __half* __restrict__ C, float* partials) {
    hgemm_h4_body<64, 128>(M, N, K, A, B, C, partials);
}
