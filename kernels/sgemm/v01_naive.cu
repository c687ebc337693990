// v1 naive: one thread per element of C.
//
// What changed: nothing yet; this is the baseline. Thread (x, y) of the grid computes
// C[m][n] = sum_k A[m][k] * B[k][n] with m = y and n = x, straight from global memory.
// Why it is slow: every multiply-add loads two floats from global memory (an arithmetic
// intensity of 1/4 FLOP per byte requested), so the kernel is bound by the memory system
// and the L1/L2 caches do the only reuse. Consecutive lanes take consecutive n, so the
// loads of B and the store of C are coalesced and the load of A is one broadcast address.
// Metric to watch: l1tex__t_bytes (huge: every FMA requests 8 bytes) against
// dram__bytes, and sm__throughput far below 100%.
// Ragged sizes: bounds checks (threads outside C return).

extern "C" __global__ void sgemm_v1(int M, int N, int K,
                                    const float* __restrict__ A,
                                    const float* __restrict__ B,
                                    float* __restrict__ C) {
    const int n = blockIdx.x * blockDim.x + threadIdx.x;
    const int m = blockIdx.y * blockDim.y + threadIdx.y;
    if (m >= M || n >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) {
        acc += A[m * K + k] * B[k * N + n];
    }
    C[m * N + n] = acc;
}
