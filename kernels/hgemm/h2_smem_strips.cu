// h2 shared-memory strips: the block stages its A and B strips in shared memory each k-step.
//
// launch: entry=hgemm_h2 bm=64 bn=32 bk=16 threads=256 smem=0 split=1 arch=sm_90
//
// What changed since h1: the block (8 warps as 4 x 2, each still one 16x16 tile of C, so the
// block covers 64 x 32) walks K in 16-deep steps. Each step, threads 0-127 copy the 64x16
// strip of A and threads 128-191 the 16x32 strip of B into shared memory, one 16-byte global
// load and shared store each, then __syncthreads(), and every warp loads its fragments from
// shared memory and issues one mma_sync; a second __syncthreads() keeps the next copy from
// overwriting a strip that a warp still reads.
// Why it should be faster: in h1 each fragment was 4 narrow loads per lane that touched 8
// cache lines each, and the warps sharing a row of A (or a column of B) each fetched it
// again. Now each element of the strips is loaded from global memory once per block, with
// 16-byte loads that cover whole 32- or 64-byte row segments, and the fragments come from
// shared memory through ldmatrix (WMMA's lowering of a shared-memory load_matrix_sync).
// Why 4 x 2 warps and 16-deep strips: the strips are unpadded (h4 pads them), so the 8 rows
// that one ldmatrix phase reads collide in the banks whenever the row pitch is a multiple of
// 64 bytes: 32-byte rows of A give 2-way conflicts and 64-byte rows of B 4-way. A 2 x 4
// shape (32 x 64, B rows of 128 bytes: 8-way) would need 40 shared wavefronts per mma_sync
// instead of 24, and shared-memory bandwidth is what bounds this stage.
// Metric to watch: l1tex__t_bytes (global load traffic) falls ~5x against h1;
// smsp__sass_inst_executed_op_shared_ld appears, with
// l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld nonzero (the 2- and 4-way conflicts);
// smsp__average_warp_latency_issue_stalled_barrier is the new stall.
// Precision: float32 accumulators (fragment<accumulator, 16, 16, 16, float>), rounded to fp16
// once: each warp stores its float tile to a private 1 KB of shared memory, converts, and
// writes C with one 16-byte store per lane.
// Ragged sizes: the launcher pads M to a multiple of 64, N to 32 and K to 16 with zeros;
// no bounds checks (all rows stay 16-byte aligned for the vector loads).
// What the seed tutorial got wrong: fp16 accumulation (an accumulator fragment of half: the
// running sum is rounded to 11 bits after every 16-deep step, so its error grows with K), and
// it assumed M, N, K multiples of 16 (ragged sizes read and wrote out of bounds).

#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

#define H2_WARPS_M 4
#define H2_WARPS_N 2
#define H2_BM (H2_WARPS_M * 16)
#define H2_BN (H2_WARPS_N * 16)
#define H2_BK 16

// Write one warp's 16x16 float accumulator tile to C (row-major, leading dimension ldc) as
// fp16: through the warp's 16x16 float staging area, then 16 bytes (8 halves) per lane.
// Lane l converts row l / 2, columns 8 * (l % 2) .. +7.
__device__ __forceinline__ void h2_store_tile(__half* c, int ldc, float* stage,
                                              const wmma::fragment<wmma::accumulator, 16, 16, 16, float>& acc) {
    const int lane = threadIdx.x % 32;
    wmma::store_matrix_sync(stage, acc, 16, wmma::mem_row_major);
    __syncwarp();
    const float* src = stage + (lane / 2) * 16 + (lane % 2) * 8;
    const float4 lo = *reinterpret_cast<const float4*>(src);
    const float4 hi = *reinterpret_cast<const float4*>(src + 4);
    __half2 h[4] = {__floats2half2_rn(lo.x, lo.y), __floats2half2_rn(lo.z, lo.w),
                    __floats2half2_rn(hi.x, hi.y), __floats2half2_rn(hi.z, hi.w)};
    *reinterpret_cast<uint4*>(c + (lane / 2) * ldc + (lane % 2) * 8) = *reinterpret_cast<const uint4*>(h);
}

extern "C" __global__ void __launch_bounds__(256)
hgemm_h2(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
         __half* __restrict__ C, float* partials) {
    // WMMA pointers must be 32-byte aligned: every fragment origin below is a multiple of 32 B.
    __shared__ __align__(128) __half As[H2_BM * H2_BK];   // [64][16]
    __shared__ __align__(128) __half Bs[H2_BK * H2_BN];   // [16][32]
    __shared__ __align__(128) float stage[H2_WARPS_M * H2_WARPS_N][16 * 16];
    const int tid = threadIdx.x;
    const int warp = tid / 32;
    const int warp_m = warp / H2_WARPS_N, warp_n = warp % H2_WARPS_N;

    // Copy assignment, in 16-byte chunks (8 halves): A's strip is 64 rows x 2 chunks (chunk c
    // = thread c, c < 128), B's strip 16 rows x 4 chunks (chunk c = thread 128 + c, c < 64);
    // threads 192-255 copy nothing. Whole warps take the same branch, and consecutive lanes
    // take consecutive chunks of a row.
    constexpr int A_CHUNKS = H2_BM * H2_BK / 8;  // 128
    constexpr int B_CHUNKS = H2_BK * H2_BN / 8;  // 64
    const bool loads_a = tid < A_CHUNKS;
    const bool loads_b = !loads_a && tid < A_CHUNKS + B_CHUNKS;
    const int c = loads_a ? tid : tid - A_CHUNKS;
    const int a_row = c / (H2_BK / 8), a_col = (c % (H2_BK / 8)) * 8;
    const int b_row = c / (H2_BN / 8), b_col = (c % (H2_BN / 8)) * 8;
    const __half* a_src = A + (size_t)(blockIdx.y * H2_BM + a_row) * K + a_col;
    const __half* b_src = B + (size_t)b_row * N + blockIdx.x * H2_BN + b_col;
    __half* a_dst = &As[a_row * H2_BK + a_col];
    __half* b_dst = &Bs[b_row * H2_BN + b_col];

    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);

    for (int k0 = 0; k0 < K; k0 += H2_BK) {
        if (loads_a) *reinterpret_cast<uint4*>(a_dst) = *reinterpret_cast<const uint4*>(a_src + k0);
        if (loads_b) *reinterpret_cast<uint4*>(b_dst) = *reinterpret_cast<const uint4*>(b_src + (size_t)k0 * N);
        __syncthreads();  // the strips are complete
        wmma::load_matrix_sync(a, &As[(warp_m * 16) * H2_BK], H2_BK);
        wmma::load_matrix_sync(b, &Bs[warp_n * 16], H2_BN);
        wmma::mma_sync(acc, a, b, acc);
        __syncthreads();  // every warp is done with the strips before they are overwritten
    }
    const int row0 = blockIdx.y * H2_BM + warp_m * 16;
    const int col0 = blockIdx.x * H2_BN + warp_n * 16;
    h2_store_tile(C + (size_t)row0 * N + col0, N, stage[warp], acc);
}
