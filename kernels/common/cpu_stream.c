// The host's memory bandwidth, as `nsprof ceilings --cpu` measures it: a streaming copy b = a
// over every core (OpenMP), of a buffer far larger than the last-level cache, counting the bytes
// read and written (STREAM's "copy"). Compiled like the CPU stages (-O3 -march=native -fopenmp).

#include <stddef.h>

void nsprof_cpu_copy(size_t n, const float *a, float *b) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) b[i] = a[i];
}
