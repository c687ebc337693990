// s3 constant x: s2 with x read from constant memory, one 16,384-float chunk of K per launch.
//
// Launch configuration (threads, rows of y per block): nsprof/ops/sgemv.py, which calls the
// entries as this header says.
//
// How the launcher calls it: for k0 = 0, 16384, 32768, ... < K, with kc = min(16384, K - k0):
// copy x[k0 .. k0 + kc) into the __constant__ array sgemv_x_const (cudaMemcpyToSymbol, or
// CuPy's module.get_global("sgemv_x_const")), then launch sgemv_s3(M, K, k0, kc, At, y,
// accumulate = (k0 > 0)) on the same stream. The first launch writes every y[m]; the later
// ones add their chunk to it. K <= 16,384 is one launch.
//
// What changed since s2: x[k] comes from the constant bank instead of a global load. Every
// lane of a warp reads the same x[k], which is exactly the access the constant cache is built
// for (one address per warp instruction is served at full speed; different addresses in one
// warp would serialise). The At loads, the k split over the 16 warps of a block, the 16 loads
// in flight per thread and the shared-memory sum of the partial sums are s2's.
// Why it should help (a little at most): the x loads leave the L1/LSU path, so global load
// instructions halve and L1 only sees the At stream; x was one sector per warp load and hit
// in L1 anyway, so the kernel stays bound by DRAM reading At and the gain over s2 is small. It
// costs one launch (and one 64 KB copy) per 16,384 columns, and the launches of one chunk
// after another re-read and re-write y (M floats each).
// Metric to watch: global_ld_instructions (smsp__sass_inst_executed_op_global_ld) halves against
// s2; dram__bytes_read stays ~M K 4 bytes, summed over the chunk launches.
// Ragged sizes: as s2: lanes with m >= M skip the loads but reach the __syncthreads(); full
// batches of 16 rows while they are inside the chunk, then one batch with every load
// predicated on j < kc (the constant array is never read at or past kc); scalar loads only;
// warp 0 writes every y[m], m < M, exactly once per launch. Offsets are 64-bit. As s2, M = 256
// is only 8 blocks whatever K is.
// What the seed tutorial got wrong: its constant array held the whole of x, so it worked only
// while K <= 16,384 floats (64 KB, all of constant memory); a larger x does not fit in the
// symbol at all. Here K is walked in chunks of 16,384. Its kernel also kept the
// one-thread-per-row, whole-K-per-thread layout of its s2 (see s2).
// Measured for the seed's kernel on the H200 (M = K = 4096 ... 32768): 0.39-1.58 TB/s, against cuBLAS 1.83-4.12 TB/s.
// Tuning knobs (-D; nsprof/ops/sgemv.py declares the defaults): S3_THREADS, S3_UNROLL, S3_MIN_BLOCKS
// as s2's.

#define S3_CHUNK 16384               // floats of x per launch: 64 KB, all of constant memory
#ifndef S3_THREADS
#define S3_THREADS 512
#endif
#ifndef S3_UNROLL
#define S3_UNROLL 16
#endif
#ifndef S3_MIN_BLOCKS
#define S3_MIN_BLOCKS 2
#endif
#define S3_ROWS 32                   // rows of y per block: one per lane
#define S3_KW (S3_THREADS / 32)      // warps per block, each on its own share of the chunk

static_assert(S3_THREADS % 32 == 0 && S3_THREADS <= 1024, "S3_THREADS: a multiple of 32, at most 1024");

__constant__ float sgemv_x_const[S3_CHUNK];   // x[k0 .. k0 + kc) of the current launch

extern "C" __global__ void __launch_bounds__(S3_THREADS, S3_MIN_BLOCKS)
sgemv_s3(int M, int K, int k0, int kc, const float* __restrict__ At, float* __restrict__ y, int accumulate) {
    __shared__ float partial[S3_KW][S3_ROWS];
    const int lane = threadIdx.x & 31;
    const int w = threadIdx.x >> 5;          // this warp's share of the chunk: j = w (mod S3_KW)
    const int m = blockIdx.x * S3_ROWS + lane;
    (void)K;                                 // the chunk [k0, k0 + kc) lies inside [0, K)

    float acc = 0.0f;
    if (m < M) {
        const size_t step = static_cast<size_t>(S3_KW) * M;              // At rows k -> k + S3_KW
        const float* a = At + static_cast<size_t>(k0 + w) * M + m;       // At[k0 + w][m]
        int j = w;                                                        // row within the chunk
#pragma unroll 1
        for (; j < kc - (S3_UNROLL - 1) * S3_KW; j += S3_UNROLL * S3_KW) {
            float av[S3_UNROLL];
#pragma unroll
            for (int u = 0; u < S3_UNROLL; ++u) {
                av[u] = __ldg(a);
                a += step;
            }
#pragma unroll
            for (int u = 0; u < S3_UNROLL; ++u) acc = fmaf(av[u], sgemv_x_const[j + u * S3_KW], acc);
        }
        // The last, partial batch (if any): every load predicated on its row being inside the chunk.
        if (j < kc) {
            float av[S3_UNROLL], xv[S3_UNROLL];
#pragma unroll
            for (int u = 0; u < S3_UNROLL; ++u) {
                const bool in = j + u * S3_KW < kc;
                av[u] = in ? __ldg(a) : 0.0f;
                xv[u] = in ? sgemv_x_const[j + u * S3_KW] : 0.0f;
                a += step;
            }
#pragma unroll
            for (int u = 0; u < S3_UNROLL; ++u) acc = fmaf(av[u], xv[u], acc);
        }
    }

    // Add the S3_KW partial sums of each row; warp 0 writes (or adds to) y.
    partial[w][lane] = acc;
    __syncthreads();
    if (w == 0 && m < M) {
        float s = 0.0f;
#pragma unroll
        for (int i = 0; i < S3_KW; ++i) s += partial[i][lane];
        y[m] = accumulate ? y[m] + s : s;
    }
}
