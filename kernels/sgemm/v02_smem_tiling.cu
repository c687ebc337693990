// v2 shared-memory tiling: 32x32 tiles of A and B staged through shared memory.
//
// What changed since v1: a block of 32x32 threads loads a 32x32 tile of A and of B into
// shared memory once, synchronises, and every thread then reads its 32 products from
// shared memory. Each float fetched from global memory is used 32 times instead of once.
// Why it should help: global (L1/L2) traffic drops 32x; the kernel now waits on shared
// memory and on the two __syncthreads() per tile instead of on L2.
// Metric to watch: l1tex__t_bytes and lts__t_bytes fall ~32x against v1; shared-memory
// wavefronts (l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld) appear instead.
// Shared reads are conflict-free: As[ty][k] is one address per warp (a broadcast) and
// Bs[k][tx] is 32 consecutive words (32 banks).
// Ragged sizes: bounds checks; out-of-range tile elements are loaded as zero.

#define TILE 32

extern "C" __global__ void sgemm_v2(int M, int N, int K,
                                    const float* __restrict__ A,
                                    const float* __restrict__ B,
                                    float* __restrict__ C) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int m = blockIdx.y * TILE + ty;
    const int n = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (m < M && k0 + tx < K) ? A[m * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && n < N) ? B[(k0 + ty) * N + n] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) {
            acc += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    if (m < M && n < N) C[m * N + n] = acc;
}
