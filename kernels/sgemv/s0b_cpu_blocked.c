// s0b CPU, multi-threaded and vectorized: every core, several partial sums per row.
//
// What changed since s0: rows are shared out over the cores (OpenMP), and each row's dot
// product keeps 8 independent partial sums (the compiler turns them into one AVX register and
// fused multiply-adds: -O3 -march=native), added in a fixed order at the end, so the loop runs at
// the FMA units' throughput instead of one add's latency.
// Why it is faster: now the cores read A as fast as memory delivers it; SGEMV does 2 FLOPs per
// 4-byte element of A, so the host's memory bandwidth, not its arithmetic, is the roof (and the
// GPU's is several times higher: the ratio nsprof's CPU rung measures).
// Ragged sizes: any M, K (the tail of each row is added one by one); 64-bit offsets.

#include <stddef.h>

#define LANES 8

void nsprof_cpu_product(int M, int N, int K, const float *A, const float *x, float *y) {
    (void)N;
#pragma omp parallel for schedule(static)
    for (int m = 0; m < M; ++m) {
        const float *row = A + (size_t)m * K;
        float partial[LANES] = {0.0f};
        int k = 0;
        for (; k + LANES <= K; k += LANES)
            for (int lane = 0; lane < LANES; ++lane) partial[lane] += row[k + lane] * x[k + lane];
        float acc = 0.0f;
        for (int lane = 0; lane < LANES; ++lane) acc += partial[lane];
        for (; k < K; ++k) acc += row[k] * x[k];
        y[m] = acc;
    }
}
