// s2 transposed, coalesced: read At (K x M) so that a warp's loads are 32 consecutive floats.
//
// Launch configuration (threads, rows of y per block): nsprof/ops/sgemv.py, which calls the
// entries as this header says.
//
// What changed since s1: the kernel reads At, the K x M row-major transpose of A (made once by
// sgemv_transpose, timed on its own). Lane l of a warp owns output row m = 32 * block + l, and
// at each k the warp reads At[k][m .. m + 31]: 128 consecutive bytes, one full cache line, so
// every byte fetched is used (s1 fetched 32 lines per warp load). x[k] is one address for the
// whole warp (a broadcast, read through the read-only path with __ldg).
// Each thread still owns one output row, but the 16 warps of a block share the same 32 rows
// and split K between them: warp w takes k = w, w + 16, w + 32, ..., and the 16 partial sums
// of each row are added through shared memory at the end. Why: with one warp per 32 rows and
// the whole K loop in one thread (the seed's layout), M = 4096 is only 128 warps for 132 SMs,
// about one warp per SM, and no warp can keep the ~20 KB per SM in flight that HBM needs
// (Little's law: 4.2 TB/s x ~0.7 us / 132 SMs); the seed's s2 reached 0.26 TB/s there. Here
// every SM holds 16 warps even at M = 4096, and each warp issues 16 independent loads of At
// (and of x) before its first multiply-add: 16 x 16 x 128 B = 32 KB in flight per block.
// Interleaving k across the warps keeps all warps of all blocks near the same rows of At, so
// DRAM sees whole rows of At streamed in order.
// Why it should be faster: all A bytes requested are used, and enough loads are in flight to
// reach DRAM bandwidth for every M >= 4096 (M / 32 blocks: 128 at M = 4096, one per SM).
// Metric to watch: global_ld_sectors / global_ld_requests falls from ~32 (s1) to ~2.5 (4 for At,
// 1 for the x broadcast), l1tex__t_bytes ~ dram__bytes_read, and dram__throughput near its peak.
// Ragged sizes: lanes with m >= M skip the loads but still reach the one __syncthreads(); the
// k loop takes full batches of 16 rows per warp while all 16 are inside K, then at most one
// batch with each load predicated on k < K (so a ragged tail still has all its loads in
// flight at once instead of one after another); scalar loads only, so neither M nor K needs
// to be a multiple of 4 (At rows are not 16-byte aligned then). Warp 0 writes every y[m], m < M,
// exactly once. Offsets are 64-bit. Weak spot: grid = ceil(M / 32), so M = 256 is only 8
// blocks (8 SMs busy) whatever K is; that needs a split of K across blocks, which this stage
// does not do.
// What the seed tutorial got wrong here: nothing in the indexing, but its layout (one thread
// per row, each thread the whole K loop, one warp per 32 rows) cannot keep enough loads in
// flight unless M is large, the reason it stayed far below DRAM bandwidth. Measured for the seed's kernel on the H200 (M = K = 4096 ... 32768):
// 0.26-1.92 TB/s, against cuBLAS 1.83-4.12 TB/s.
// Tuning knobs (-D; nsprof/ops/sgemv.py declares the defaults): S2_THREADS (a multiple of 32,
// at most 1024; warps per block = S2_THREADS / 32, all on the same 32 rows), S2_UNROLL
// (loads of At in flight per thread) and S2_MIN_BLOCKS (__launch_bounds__ blocks per SM: 2 caps
// registers at 64, which keeps all 16 loads of a batch in flight; 4 would cap them at 32, and
// ptxas then starts multiplying before the batch is issued).

#ifndef S2_THREADS
#define S2_THREADS 512
#endif
#ifndef S2_UNROLL
#define S2_UNROLL 16
#endif
#ifndef S2_MIN_BLOCKS
#define S2_MIN_BLOCKS 2
#endif
#define S2_ROWS 32                   // rows of y per block: one per lane
#define S2_KW (S2_THREADS / 32)      // warps per block, each on its own share of K

static_assert(S2_THREADS % 32 == 0 && S2_THREADS <= 1024, "S2_THREADS: a multiple of 32, at most 1024");

extern "C" __global__ void __launch_bounds__(S2_THREADS, S2_MIN_BLOCKS)
sgemv_s2(int M, int K, const float* __restrict__ At, const float* __restrict__ x, float* __restrict__ y) {
    __shared__ float partial[S2_KW][S2_ROWS];
    const int lane = threadIdx.x & 31;
    const int w = threadIdx.x >> 5;          // this warp's share of K: k = w (mod S2_KW)
    const int m = blockIdx.x * S2_ROWS + lane;

    float acc = 0.0f;
    if (m < M) {
        const size_t step = static_cast<size_t>(S2_KW) * M;      // At elements from row k to row k + S2_KW
        const float* a = At + static_cast<size_t>(w) * M + m;    // At[w][m]
        const float* xk = x + w;
        int k = w;
        // Full batches: rows k, k + S2_KW, ..., k + (S2_UNROLL - 1) S2_KW all < K.
#pragma unroll 1
        for (; k < K - (S2_UNROLL - 1) * S2_KW; k += S2_UNROLL * S2_KW) {
            float av[S2_UNROLL], xv[S2_UNROLL];
#pragma unroll
            for (int u = 0; u < S2_UNROLL; ++u) {
                av[u] = __ldg(a);
                xv[u] = __ldg(xk + u * S2_KW);
                a += step;
            }
#pragma unroll
            for (int u = 0; u < S2_UNROLL; ++u) acc = fmaf(av[u], xv[u], acc);
            xk += S2_UNROLL * S2_KW;
        }
        // The last, partial batch (if any): every load predicated on its row being inside K.
        if (k < K) {
            float av[S2_UNROLL], xv[S2_UNROLL];
#pragma unroll
            for (int u = 0; u < S2_UNROLL; ++u) {
                const bool in = k + u * S2_KW < K;
                av[u] = in ? __ldg(a) : 0.0f;
                xv[u] = in ? __ldg(xk + u * S2_KW) : 0.0f;
                a += step;
            }
#pragma unroll
            for (int u = 0; u < S2_UNROLL; ++u) acc = fmaf(av[u], xv[u], acc);
        }
    }

    // Add the S2_KW partial sums of each row; warp 0 writes y.
    partial[w][lane] = acc;
    __syncthreads();
    if (w == 0 && m < M) {
        float s = 0.0f;
#pragma unroll
        for (int i = 0; i < S2_KW; ++i) s += partial[i][lane];
        y[m] = s;
    }
}
