// h1 WMMA naive: one warp per 16x16 tile of C, operands straight from global memory.
//
// Launch configurations (tiles, threads, shared memory): nsprof/ops/hgemm.py.
//
// What changed: this is the first HGEMM stage. C = A * B with fp16 inputs runs on the
// tensor cores through the WMMA API (nvcuda::wmma, m16n16k16): each warp owns one 16x16 tile
// of C and walks K in steps of 16, loading a 16x16 fragment of A and of B with
// load_matrix_sync straight from global memory (leading dimensions K and N) and issuing one
// mma_sync per step. A 256-thread block is a 4 x 2 grid of warps (4 down M, 2 across N), so
// it covers 64 x 32 of C; the block only groups warps that read the same rows of A and
// columns of B, so that those reads can hit in L1: no shared memory holds the operands.
// (h2 keeps this block shape, so that the change between the two is the staging alone.)
// Precision: accumulators are float32 (fragment<accumulator, 16, 16, 16, float>); each product
// sum is rounded to fp16 once, when C is written. To write C, each warp stores its float tile
// to a private 1 KB of shared memory, and every lane converts 8 floats of one row and writes
// them to C as one 16-byte store.
// Why it is slow: a warp loads 1 KB of operands from L1/L2 for every 8192 FLOPs, and the
// WMMA global loads are narrow: a fragment is 4 LDG.32 per lane (B's then transposed in
// registers by MOVM), each touching 8 rows (8 cache lines) for 128 useful bytes. When the
// row pitch is a multiple of 128 bytes (K, N multiples of 64), those 8 pieces also sit in the
// same L1 data banks, so each load takes 8 wavefronts: 64 per warp per 16-deep step, ~0.85
// per SM cycle at the measured 28 TFLOP/s (1.98 GHz). The kernel is bound by the L1 load
// path, not by the tensor cores.
// Metric to watch: sm__ops_path_tensor_src_fp16 (tensor FLOPs) replaces the FP32 counts;
// l1tex__t_bytes is 1-2 KB per 16x16x16 step per warp (8 loads of 8 sectors each), far above
// the DRAM bytes.
// Ragged sizes: the launcher pads M to a multiple of 64, N to 32 (bm, bn) and K to 16 with zeros;
// no bounds checks are needed (and every row of A, B and C is 32-byte aligned, as WMMA's
// 256-bit pointer alignment rule requires).
// What the seed tutorial got wrong: it accumulated in fp16 (an accumulator fragment of half),
// whose rounding error grows with K: the running sum is rounded to fp16 after every 16-deep
// step (a numpy model with unit-normal inputs at K = 4096: 2.5e-3 relative rms error, against
// 2.1e-4 for a float32 sum rounded once), and it assumed M, N, K were multiples of 16,
// reading and writing out of bounds otherwise. -DH1_HALF_ACCUMULATOR=1 compiles the seed's
// half accumulators back in (same tile and launch), so the ladder can measure that error
// against K; the half tile is then stored to C directly with store_matrix_sync.
// Measured on the H200 (benchmarks/records/2026-11-22-h200-hgemm/h200-hgemm.md): 28.0-28.2 TFLOP/s at 4096^3, 28.5 at 8192^3,
// level with the seed's 28.1 / 28.6 (its half accumulators do not change the load path that
// bounds both); 8 blocks per SM (H1_MIN_BLOCKS=8, 32 registers) gained 0-1% over 40 registers.
// Tuning knobs (-D, for tuning runs; the defaults are what nsprof/ops/hgemm.py declares): H1_WARPS_M x
// H1_WARPS_N warps per block (bm = 16 H1_WARPS_M, bn = 16 H1_WARPS_N, threads = 32 x both):
// more warps per block share each A row (H1_WARPS_N of them) and B column (H1_WARPS_M), so
// more of the fragment loads hit in L1 instead of going to L2 (misses also cost L1 fill
// bandwidth); H1_MIN_BLOCKS, the __launch_bounds__ minimum of blocks per SM (8 with 256
// threads caps registers at 32, for 64 resident warps instead of the 48 that 40 registers
// allow). H1_WARPS_N=3 (bn = 48) is an experiment on the bank conflicts above: N is then
// padded to a multiple of 48, and for N = 4096 or 8192 (padded to 4128, 8208) B's row pitch
// is no longer a multiple of 128 bytes, so B's loads conflict 4- or 2-way instead of 8-way;
// the gain depends on N (none when N is a multiple of 192) and is bought with padding copies.

#include <cuda_fp16.h>
#include <mma.h>

#include "wmma_store.cuh"

using namespace nvcuda;

#ifndef H1_WARPS_M
#define H1_WARPS_M 4
#endif
#ifndef H1_WARPS_N
#define H1_WARPS_N 2
#endif
#ifndef H1_MIN_BLOCKS
#define H1_MIN_BLOCKS 8  // 8 blocks of 8 warps per SM: 32 registers (0, no minimum: ptxas chose 40; 1 gave 56)
#endif
#ifndef H1_HALF_ACCUMULATOR
#define H1_HALF_ACCUMULATOR 0
#endif
#define H1_BM (H1_WARPS_M * 16)
#define H1_BN (H1_WARPS_N * 16)
#define H1_THREADS (H1_WARPS_M * H1_WARPS_N * 32)

#if H1_HALF_ACCUMULATOR
typedef __half h1_acc_elem_t;  // the seed's choice: the running sum is rounded to fp16 each step
#else
typedef float h1_acc_elem_t;
#endif

#if H1_MIN_BLOCKS > 0
#define H1_BOUNDS __launch_bounds__(H1_THREADS, H1_MIN_BLOCKS)
#else
#define H1_BOUNDS __launch_bounds__(H1_THREADS)
#endif

extern "C" __global__ void H1_BOUNDS
hgemm_h1(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
         __half* __restrict__ C, float* partials) {
    const int warp = threadIdx.x / 32;
    const int row0 = blockIdx.y * H1_BM + (warp / H1_WARPS_N) * 16;  // this warp's tile of C
    const int col0 = blockIdx.x * H1_BN + (warp % H1_WARPS_N) * 16;
    const __half* a_ptr = A + (size_t)row0 * K;  // A[row0][0]
    const __half* b_ptr = B + col0;              // B[0][col0]

    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, h1_acc_elem_t> acc;
    wmma::fill_fragment(acc, h1_acc_elem_t(0.0f));
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(a, a_ptr + k, K);               // A[row0 .. +15][k .. +15]
        wmma::load_matrix_sync(b, b_ptr + (size_t)k * N, N);   // B[k .. +15][col0 .. +15]
        wmma::mma_sync(acc, a, b, acc);
    }
#if H1_HALF_ACCUMULATOR
    // Already fp16: straight to C (32-byte aligned: col0 and N are multiples of 16 halves).
    wmma::store_matrix_sync(C + (size_t)row0 * N + col0, acc, N, wmma::mem_row_major);
#else
    // One 16x16 float staging tile per warp for the epilogue (32-byte aligned for WMMA).
    __shared__ __align__(128) float stage[H1_WARPS_M * H1_WARPS_N][16 * 16];
    wmma_store_tile_fp16(C + (size_t)row0 * N + col0, N, stage[warp], acc);
#endif
}
