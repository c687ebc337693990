// s0 CPU, serial: the tutorials' first version, one dot product per row, one core.
//
// What it is: y[m] = sum_k A[m][k] * x[k], row after row, in float32, as the seed tutorials write
// it before any GPU code, compiled by the host compiler (-O2, no -march) rather than interpreted.
// Why it is slow: one core, one multiply-add chain per row (each add waits for the one before,
// so the loop runs at the adder's latency, not its throughput), while the product itself is
// bound by reading A once: 4 bytes per multiply-add.
// What to compare it with: s1, one GPU thread per row; and s0b, the same rows over every core.
// Ragged sizes: any M, K; 64-bit offsets. (The signature is the matrix product's with N = 1:
// nsprof calls every CPU stage the same way.)

#include <stddef.h>

void nsprof_cpu_product(int M, int N, int K, const float *A, const float *x, float *y) {
    (void)N;
    for (int m = 0; m < M; ++m) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) acc += A[(size_t)m * K + k] * x[k];
        y[m] = acc;
    }
}
