// s5 warp per row, float4: one warp reads one row of the row-major A with 16-byte loads.
//
// Launch configuration (threads, rows of y per block): nsprof/ops/sgemv.py, which calls the
// entries as this header says.
//
// What changed since s4: back to the row-major A, with no transpose to pay for. Warp w of a
// block owns row m = 8 * blockIdx.x + w; its 32 lanes walk the row together, lane l reading the
// float4 at index l, l + 32, l + 64, ... of the row's 16-byte-aligned body, so one warp load
// instruction covers 512 contiguous bytes (four full 128-byte lines, 16 sectors, no waste). x is
// read the same way (float4 at the same index), from L1/L2: it is the same 4K bytes for every row.
// Each lane keeps one float32 partial sum; the 32 partial sums are added by a butterfly of
// __shfl_xor_sync (full mask, offsets 16, 8, 4, 2, 1: 5 steps, no shared memory, no
// __syncthreads) and lane 0 writes y[m].
// Why it should be faster: s1 let each lane read its own row (32 lines per warp load, most of each
// sector wasted unless it survived in L1); s2-s4 read coalesced columns of At but needed the
// transpose (a full read and write of A) first. Here every load is fully coalesced on A itself, and
// 16-byte loads need a quarter of the load instructions of 4-byte ones for the same bytes.
// What is still missing (s6): one 16-byte load of A per lane is in flight at a time (the loop is
// kept at `#pragma unroll 1` so that this stage measures exactly that): at 2048 resident threads
// per SM that is 32 KB in flight per SM, barely above the ~22 KB that latency x bandwidth / SMs
// (0.7 us x 4.1 TB/s / 132) asks for, and fewer when registers or a short grid leave the SM less
// than full. One row per warp also starves the extreme shapes: M = 256, K = 2^20 is 32 blocks on
// 132 SMs; M = 2^20, K = 256 gives each warp two loads per lane and then a 5-step reduction.
// Metric to watch: sectors per request of the global loads (l1tex__t_sectors_pipe_lsu_mem_global_op_ld
// / l1tex__t_requests_pipe_lsu_mem_global_op_ld) at 16 on the float4 path (512 bytes, every 32-byte
// sector fully used; s1 had ~32 sectors for 128 useful bytes); dram__throughput against the copy
// bandwidth, with smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio the dominant stall (the
// single load in flight per lane).
// Ragged sizes: any M, K >= 1. Warps with m >= M return (whole warps, so the shuffles never see a
// missing lane). Row m starts at A + m * K floats, which is only 4-byte aligned when K % 4 != 0, so
// each row is cut into a scalar head (0-3 floats, up to the first 16-byte boundary, taken from the
// address itself, so an unaligned A base is handled too), a float4 body and a scalar tail (0-3
// floats); lanes 0..head-1 and 0..tail-1 take the scalar pieces. The body reads x as float4 only
// when x + head is 16-byte aligned too (always when K % 4 == 0 and A, x are 16-byte aligned, as
// CuPy allocates them); otherwise it reads the same four x values as four 4-byte loads (same bytes,
// same L1 wavefronts, more instructions). Every y[m], m < M, is written once, by lane 0 of its
// warp. Row offsets are 64-bit (m * K passes 2^31 for large matrices).

#define S5_THREADS 256
#define S5_ROWS (S5_THREADS / 32)  // one warp per row

extern "C" __global__ void __launch_bounds__(S5_THREADS)
sgemv_s5(int M, int K, const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y) {
    const int lane = threadIdx.x & 31;
    const int m = blockIdx.x * S5_ROWS + (threadIdx.x >> 5);
    if (m >= M) return;  // uniform per warp

    const float* a = A + static_cast<size_t>(m) * K;  // row m of A
    // Floats before the first 16-byte boundary of the row (0..3), at most K.
    const unsigned misalign = static_cast<unsigned>(reinterpret_cast<size_t>(a)) & 15u;
    const int head = min(static_cast<int>(((16u - misalign) & 15u) >> 2), K);
    const int n4 = (K - head) >> 2;      // float4s in the body
    const int tail0 = head + 4 * n4;     // first float of the tail
    const int tail = K - tail0;          // 0..3

    float acc = 0.0f;
    if (lane < head) acc = a[lane] * x[lane];

    const float4* a4 = reinterpret_cast<const float4*>(a + head);  // 16-byte aligned
    const float* xb = x + head;                                    // x[head] pairs with a4[0].x
    if ((reinterpret_cast<size_t>(xb) & 15) == 0) {
        const float4* x4 = reinterpret_cast<const float4*>(xb);
#pragma unroll 1
        for (int j = lane; j < n4; j += 32) {
            const float4 av = a4[j];
            const float4 xv = x4[j];
            acc = fmaf(av.x, xv.x, acc);
            acc = fmaf(av.y, xv.y, acc);
            acc = fmaf(av.z, xv.z, acc);
            acc = fmaf(av.w, xv.w, acc);
        }
    } else {
        // x + head is not 16-byte aligned (K % 4 != 0 puts rows at a different phase than x):
        // read the four x values as scalars.
#pragma unroll 1
        for (int j = lane; j < n4; j += 32) {
            const float4 av = a4[j];
            const float* xp = xb + 4 * j;
            acc = fmaf(av.x, xp[0], acc);
            acc = fmaf(av.y, xp[1], acc);
            acc = fmaf(av.z, xp[2], acc);
            acc = fmaf(av.w, xp[3], acc);
        }
    }

    if (lane < tail) acc = fmaf(a[tail0 + lane], x[tail0 + lane], acc);

    // Butterfly: after the 5 steps every lane holds the sum of all 32 partial sums.
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, offset);
    if (lane == 0) y[m] = acc;
}
