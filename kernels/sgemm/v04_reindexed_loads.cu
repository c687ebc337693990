// v4 re-indexed shared-memory loads: each thread's 8x8 outputs are strided by 16.
//
// What changed since v3: only the map from thread to outputs. Thread (ty, tx) now owns
// rows ty + 16*i and columns tx + 16*j (i, j = 0..7) instead of a contiguous 8x8 block.
// Why it should help: in the inner loop the 16 lanes with different tx read Bs[k][tx + 16j]:
// 16 consecutive words in 16 different banks (the two ty of a warp read the same words, a
// broadcast). As[ty + 16i][k] is two addresses 8 words apart, in two banks. In v3 the same
// reads were 8 words apart per lane, four lanes to a bank. The store of C also becomes
// 16 consecutive floats per row per instruction instead of a 32-byte stride per lane.
// Metric to watch: l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld and the load n-way
// (l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld / smsp__sass_inst_executed_op_shared_ld)
// drop to ~1 where v3 showed conflicts; global store sectors per request fall.
// Ragged sizes: padded on the device to multiples of 128 (M, N) and 8 (K).

#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define NTHREADS 256

extern "C" __global__ void __launch_bounds__(NTHREADS)
sgemm_v4(int M, int N, int K, const float* __restrict__ A,
         const float* __restrict__ B, float* __restrict__ C) {
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int tx = tid % (BN / TN);  // 0..15
    const int ty = tid / (BN / TN);  // 0..15
    const float* Ablk = A + blockIdx.y * BM * K;
    const float* Bblk = B + blockIdx.x * BN;

    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int r = 0; r < BM * BK / NTHREADS; ++r) {
            const int e = tid + r * NTHREADS;
            As[e / BK][e % BK] = Ablk[(e / BK) * K + k0 + e % BK];
        }
#pragma unroll
        for (int r = 0; r < BK * BN / NTHREADS; ++r) {
            const int e = tid + r * NTHREADS;
            Bs[e / BN][e % BN] = Bblk[(k0 + e / BN) * N + e % BN];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; ++i) {
#pragma unroll
                for (int j = 0; j < TN; ++j) {
                    acc[i][j] += As[ty + 16 * i][k] * Bs[k][tx + 16 * j];
                }
            }
        }
        __syncthreads();
    }
    float* Cblk = C + blockIdx.y * BM * N + blockIdx.x * BN;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            Cblk[(ty + 16 * i) * N + tx + 16 * j] = acc[i][j];
        }
    }
}
