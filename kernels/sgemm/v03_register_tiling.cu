// v3 register (thread) tiling: each thread computes an 8x8 block of C in registers.
//
// What changed since v2: a 256-thread block now owns a 128x128 tile of C and walks K in
// steps of 8 (BK). Thread (ty, tx) of a 16x16 layout keeps 64 accumulators for the
// contiguous 8x8 block at rows ty*8.., columns tx*8.. . Per step of k it reads 8 values
// of A and 8 of B from shared memory and performs 64 FMAs with them.
// Why it should help: v2 did one FMA per two shared-memory loads; here a thread does 64
// FMAs per 16 loads, so the FMA pipes, not the shared-memory pipe, become the limit.
// Blocks are 8x larger in work, so fewer synchronisations per FLOP.
// What is still wrong (fixed in v4): a thread's 8 columns are contiguous, so lanes of a
// warp read Bs with a stride of 8 words (bank conflicts when read as single words) and
// store C with a stride of 32 bytes.
// Metric to watch: sm__pipe_fma_cycles_active / sm__throughput rises sharply against v2;
// smsp__sass_inst_executed_op_shared_ld falls per FLOP.
// Ragged sizes: padded on the device to multiples of 128 (M, N) and 8 (K).

#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define NTHREADS 256

extern "C" __global__ void __launch_bounds__(NTHREADS)
sgemm_v3(int M, int N, int K, const float* __restrict__ A,
         const float* __restrict__ B, float* __restrict__ C) {
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int tx = tid % (BN / TN);
    const int ty = tid / (BN / TN);
    const float* Ablk = A + blockIdx.y * BM * K;
    const float* Bblk = B + blockIdx.x * BN;

    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        // Each thread copies 4 elements of each tile; consecutive threads copy
        // consecutive addresses of a row, so the global loads are coalesced.
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
                    acc[i][j] += As[ty * TM + i][k] * Bs[k][tx * TN + j];
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
            Cblk[(ty * TM + i) * N + tx * TN + j] = acc[i][j];
        }
    }
}
