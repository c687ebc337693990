// s1 thread per row: y = A x with one thread per row of A, reading A in row-major order.
//
// Launch configuration (threads, rows of y per block): nsprof/ops/sgemv.py, which calls the
// entries as this header says.
//
// What changed: nothing yet; this is the baseline. Thread m walks row m of A (K floats,
// leading dimension K) from k = 0 to K - 1 and accumulates A[m][k] * x[k] in float32.
// Why it is slow: at each k the 32 lanes of a warp read 32 different rows, K * 4 bytes apart,
// so one warp load touches 32 sectors (32 cache lines) for 128 useful bytes. The other 28
// bytes of each sector are only useful if the line is still in L1 when the same lane gets to
// k + 1 ... k + 7, which depends on how many rows a block keeps in flight (L1 thrashing as M
// and K grow). Little parallelism either: M threads in all, one serial K-long loop each
// (M = 4096 is 32 blocks of 128 threads for 132 SMs). Blocks of 128 rather than 256 threads
// give twice the blocks, so small M spreads over more SMs.
// Metric to watch: global_ld_sectors / global_ld_requests (l1tex__t_sectors_pipe_lsu_mem_global_op_ld
// over ..._requests_...) near 32 for the A loads (the ideal is 4), and l1tex__t_bytes far above
// dram__bytes_read.
// Ragged sizes: one thread per row, threads with m >= M return; the k loop runs to K, scalar
// loads only (rows of A are not 16-byte aligned when K % 4 != 0). Every y[m], m < M, is written
// once. Offsets are 64-bit (m * K can pass 2^31 for large matrices).
// What the seed tutorial got wrong: its host code copied x with M instead of K elements (too
// few or too many bytes whenever M != K), and it compared results with an absolute 1e-6
// tolerance: with large integer-valued data and K = 12,800 the sums pass 2^24, where the
// spacing of float32 values is 2 or more, so its serial, parallel and cuBLAS results
// "disagreed" only because different summation orders round differently. nsprof verifies
// every stage against a float64 reference with a relative tolerance instead.
// Measured for the seed's kernel on the H200 (M = K = 4096 ... 32768): 0.16-0.93 TB/s, against
// cuBLAS 1.83-4.12 TB/s.

extern "C" __global__ void __launch_bounds__(128)
sgemv_s1(int M, int K, const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y) {
    const int m = blockIdx.x * blockDim.x + threadIdx.x;
    if (m >= M) return;
    const float* a = A + static_cast<size_t>(m) * K;  // row m of A
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) {
        acc += a[k] * x[k];
    }
    y[m] = acc;
}
