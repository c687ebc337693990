// v0b CPU, cache-blocked and multi-threaded: what the CPU does with the tutorials' two CPU ideas.
//
// What changed since v0: the loops are reordered and blocked. Each thread (OpenMP, one per core)
// takes whole row blocks of C; within one, K and N are cut into blocks (KB x NB of B, about
// 128 KiB: it stays in the L2 cache while a row block of A streams past it), and the innermost
// loop runs along a row of B and of C (m, k, n order), unit stride, so that the compiler
// vectorizes it (-O3 -march=native: AVX2 or AVX-512 fused multiply-adds) and each A[m][k] is
// used NB times from a register.
// Why it is faster: the bytes per multiply-add fall from a new cache line of B each to B's
// block read from L2, and every core works. (Strassen's fewer multiplications, which the
// tutorials also mention, change the rounding and are not a layout idea; left out.)
// What bounds it now: the cores' FMA rate for blocks in cache, and memory bandwidth for B's
// blocks otherwise: the CPU BLAS (v0blas) packs and blocks further, in registers too.
// Ragged sizes: any M, N, K (the last blocks are shorter); 64-bit offsets. Without OpenMP the
// same code runs on one core.

#include <stddef.h>
#include <string.h>

#define MB 64
#define NB 256
#define KB 128

void nsprof_cpu_product(int M, int N, int K, const float *A, const float *B, float *C) {
#pragma omp parallel for schedule(static)
    for (int m0 = 0; m0 < M; m0 += MB) {
        const int m1 = m0 + MB < M ? m0 + MB : M;
        for (int m = m0; m < m1; ++m) memset(C + (size_t)m * N, 0, sizeof(float) * (size_t)N);
        for (int n0 = 0; n0 < N; n0 += NB) {
            const int n1 = n0 + NB < N ? n0 + NB : N;
            for (int k0 = 0; k0 < K; k0 += KB) {
                const int k1 = k0 + KB < K ? k0 + KB : K;
                for (int m = m0; m < m1; ++m) {
                    float *c = C + (size_t)m * N;
                    for (int k = k0; k < k1; ++k) {
                        const float a = A[(size_t)m * K + k];
                        const float *b = B + (size_t)k * N;
                        for (int n = n0; n < n1; ++n) c[n] += a * b[n];
                    }
                }
            }
        }
    }
}
