// v0 CPU, serial: the tutorials' first version, the triple loop, one core.
//
// What it is: C[m][n] = sum_k A[m][k] * B[k][n] for every m, then n, then k, in float32, as the
// seed tutorials write it before any GPU code (their "CPU time: 3.83 second" at 4096^3 on the
// CPU beside an A100). What the tutorials leave out: they time it interpreted or unoptimized;
// here it is C compiled by the host compiler (-O2, no -march), so that the rung is the loop's
// own speed and not Python's.
// Why it is slow: the innermost k loop walks B down a column, N floats apart, so every
// multiply-add touches a new cache line of B once N * 4 bytes passes a page; nothing is reused
// from registers, and one core of many does the work. (The loop's order, not the compiler,
// sets this: the blocked stage v0b changes the order.)
// What to compare it with: v1, the naive GPU kernel, computes the same way on every element at
// once.
// Ragged sizes: any M, N, K; 64-bit offsets.

#include <stddef.h>

void nsprof_cpu_product(int M, int N, int K, const float *A, const float *B, float *C) {
    for (int m = 0; m < M; ++m) {
        for (int n = 0; n < N; ++n) {
            float acc = 0.0f;
            for (int k = 0; k < K; ++k) {
                acc += A[(size_t)m * K + k] * B[(size_t)k * N + n];
            }
            C[(size_t)m * N + n] = acc;
        }
    }
}
