// h3 warp tiles: each warp computes a 64x32 block of C (4 x 2 WMMA tiles), reusing fragments.
//
// Launch configurations (tiles, threads, shared memory): nsprof/ops/hgemm.py.
//
// What changed since h2: the block tile grows from 64x32 to 128x128 and each of the 8 warps
// (now a 2 x 4 grid) owns 64x32 of C as 4 x 2 accumulator fragments (64 float registers per
// thread). Per 16-deep step a warp loads 4 A fragments and 2 B fragments from shared memory
// and issues 8 mma_sync: each A fragment is used twice and each B fragment four times,
// where h2 loaded two fragments for every mma_sync. The strips are 32 deep (128x32 of A,
// 32x128 of B, 8 KB each; half the barriers per FLOP of a 16-deep step) and still copied
// through registers with 16-byte loads (two chunks of each per thread), between two
// __syncthreads().
// Why it should be faster: shared-memory traffic per MMA falls from 2 fragments to 0.75, and
// global traffic per FLOP falls 3x (a 128x128 tile reads 128 + 128 elements per k for
// 16384 outputs; 64x32 read 96 for 2048), so the tensor cores wait less on both. In shared
// wavefronts (the bound of h2): 16 per mma_sync with h3's conflicts, against h2's 24.
// Not yet done (h4 does it): the strips are unpadded (rows of 64 and 256 bytes), so each
// ldmatrix phase of A is a 4-way and of B an 8-way bank conflict (worse than h2's 2- and
// 4-way, but amortized over 2.7x more MMAs per fragment load), and the global loads of the next
// strip do not overlap the MMAs of this one (two blocks per SM hide part of that).
// Metric to watch: smsp__sass_inst_executed_op_ldsm (ldmatrix) per tensor FLOP falls against h2;
// l2_bytes (lts__t_bytes) falls; sm__ops_path_tensor_src_fp16 per second rises.
// Split-K: with gridDim.z > 1 (small problems that leave SMs idle) slice z computes
// k in [z*K/gridDim.z, (z+1)*K/gridDim.z) and stores its float32 tile to
// partials[z*M*N + row*N + col] with store_matrix_sync (no fp16 rounding); the launcher's
// reduce kernel sums the slices into C.
// Precision: float32 accumulators, rounded to fp16 once: each warp stages one 16x16 float
// tile at a time in 1 KB of (reused) shared memory, converts, and writes C with one 16-byte
// store per lane.
// Ragged sizes: the launcher pads M and N to multiples of 128 and K to 32 * split with
// zeros; no bounds checks (all rows 16-byte aligned for the vector loads).
// What the seed tutorial got wrong: fp16 accumulation (the running sum is rounded to 11 bits
// after every 16-deep step, so its error grows with K), and it assumed M, N, K multiples of
// its tile sizes (128 / 16): ragged sizes read and wrote out of bounds.

#include <cuda_fp16.h>
#include <mma.h>

#include "wmma_store.cuh"

using namespace nvcuda;

#define H3_BM 128
#define H3_BN 128
#define H3_BK 32
#define H3_WARPS_M 2
#define H3_WARPS_N 4
#define H3_WM (H3_BM / H3_WARPS_M)  // 64 rows of C per warp
#define H3_WN (H3_BN / H3_WARPS_N)  // 32 columns of C per warp
#define H3_FM (H3_WM / 16)          // 4 fragments down
#define H3_FN (H3_WN / 16)          // 2 fragments across
#define H3_THREADS 256

typedef wmma::fragment<wmma::accumulator, 16, 16, 16, float> h3_acc_t;

extern "C" __global__ void __launch_bounds__(H3_THREADS, 2)
hgemm_h3(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
         __half* __restrict__ C, float* partials) {
    // Fragment origins are multiples of 32 bytes, as WMMA requires.
    __shared__ __align__(128) __half As[H3_BM * H3_BK];  // [128][32]
    __shared__ __align__(128) __half Bs[H3_BK * H3_BN];  // [32][128]
    const int tid = threadIdx.x;
    const int warp = tid / 32;
    const int warp_m = warp / H3_WARPS_N, warp_n = warp % H3_WARPS_N;
    const int bm0 = blockIdx.y * H3_BM, bn0 = blockIdx.x * H3_BN;
    // This block's K slice (the whole of K without split-K).
    const int k_begin = (int)((long long)blockIdx.z * K / gridDim.z);
    const int k_end = (int)((long long)(blockIdx.z + 1) * K / gridDim.z);

    // Copy assignment, in 16-byte chunks of 8 halves: chunk e of A is row e / 4, column
    // (e % 4) * 8; chunk e of B is row e / 16, column (e % 16) * 8. Thread t copies chunks
    // t and t + 256 of each, so a warp's loads cover whole row segments.
    constexpr int A_CHUNKS = H3_BM * H3_BK / 8 / H3_THREADS;  // 2
    constexpr int B_CHUNKS = H3_BK * H3_BN / 8 / H3_THREADS;  // 2
    const __half* Ablk = A + (size_t)bm0 * K;
    const __half* Bblk = B + bn0;

    h3_acc_t acc[H3_FM][H3_FN];
#pragma unroll
    for (int i = 0; i < H3_FM; ++i)
#pragma unroll
        for (int j = 0; j < H3_FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b[H3_FN];

    for (int k0 = k_begin; k0 < k_end; k0 += H3_BK) {
        uint4 ra[A_CHUNKS], rb[B_CHUNKS];
#pragma unroll
        for (int r = 0; r < A_CHUNKS; ++r) {
            const int e = tid + r * H3_THREADS;
            const int row = e / (H3_BK / 8), col = (e % (H3_BK / 8)) * 8;
            ra[r] = *reinterpret_cast<const uint4*>(Ablk + (size_t)row * K + k0 + col);
        }
#pragma unroll
        for (int r = 0; r < B_CHUNKS; ++r) {
            const int e = tid + r * H3_THREADS;
            const int row = e / (H3_BN / 8), col = (e % (H3_BN / 8)) * 8;
            rb[r] = *reinterpret_cast<const uint4*>(Bblk + (size_t)(k0 + row) * N + col);
        }
#pragma unroll
        for (int r = 0; r < A_CHUNKS; ++r) {
            const int e = tid + r * H3_THREADS;
            *reinterpret_cast<uint4*>(&As[(e / (H3_BK / 8)) * H3_BK + (e % (H3_BK / 8)) * 8]) = ra[r];
        }
#pragma unroll
        for (int r = 0; r < B_CHUNKS; ++r) {
            const int e = tid + r * H3_THREADS;
            *reinterpret_cast<uint4*>(&Bs[(e / (H3_BN / 8)) * H3_BN + (e % (H3_BN / 8)) * 8]) = rb[r];
        }
        __syncthreads();  // the strips are complete

#pragma unroll
        for (int kk = 0; kk < H3_BK; kk += 16) {
            // B fragments first (each is used by all 4 A fragments), then one A at a time.
#pragma unroll
            for (int j = 0; j < H3_FN; ++j)
                wmma::load_matrix_sync(b[j], &Bs[kk * H3_BN + warp_n * H3_WN + j * 16], H3_BN);
#pragma unroll
            for (int i = 0; i < H3_FM; ++i) {
                wmma::load_matrix_sync(a, &As[(warp_m * H3_WM + i * 16) * H3_BK + kk], H3_BK);
#pragma unroll
                for (int j = 0; j < H3_FN; ++j) wmma::mma_sync(acc[i][j], a, b[j], acc[i][j]);
            }
        }
        __syncthreads();  // every warp is done with the strips before they are overwritten
    }

    const int row0 = bm0 + warp_m * H3_WM, col0 = bn0 + warp_n * H3_WN;
    if (gridDim.z > 1) {
        // Split-K: this slice's float32 partial tile, summed into C by the reduce kernel.
        float* P = partials + (size_t)blockIdx.z * M * N;
#pragma unroll
        for (int i = 0; i < H3_FM; ++i)
#pragma unroll
            for (int j = 0; j < H3_FN; ++j)
                wmma::store_matrix_sync(P + (size_t)(row0 + i * 16) * N + col0 + j * 16, acc[i][j], N,
                                        wmma::mem_row_major);
        return;
    }
    // The loop ended on a barrier, so As is free: 1 KB of it per warp stages the epilogue.
    float* stage = reinterpret_cast<float*>(As) + warp * 256;
#pragma unroll
    for (int i = 0; i < H3_FM; ++i)
#pragma unroll
        for (int j = 0; j < H3_FN; ++j)
            wmma_store_tile_fp16(C + (size_t)(row0 + i * 16) * N + col0 + j * 16, N, stage, acc[i][j]);
}
