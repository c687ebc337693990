// h2 shared-memory strips: the block stages its A and B strips in shared memory each k-step.
//
// Launch configurations (tiles, threads, shared memory): nsprof/ops/hgemm.py.
//
// What changed since h1: the block (8 warps as 4 x 2, each still one 16x16 tile of C, so the
// block covers 64 x 32) walks K in 16-deep steps. Each step, threads 0-127 copy the 64x16
// strip of A and threads 128-191 the 16x32 strip of B into shared memory, one 16-byte global
// load and shared store each, then __syncthreads(), and every warp loads its fragments from
// shared memory and issues one mma_sync; a second __syncthreads() keeps the next copy from
// overwriting a strip that a warp still reads.
// Why it should be faster: in h1 each fragment was 4 narrow loads per lane that touched 8
// cache lines each, and the warps sharing a row of A (or a column of B) each fetched it
// again. Now each element of the strips is loaded from global memory once per block, with
// 16-byte loads that cover whole 32- or 64-byte row segments, and the fragments come from
// shared memory through ldmatrix (WMMA's lowering of a shared-memory load_matrix_sync).
// What bounds it: the L1/shared-memory data path. The strips are unpadded (h4 pads them), so
// the 8 rows that one ldmatrix phase reads collide in the banks whenever the row pitch is a
// multiple of 64 bytes: row-major, 32-byte rows of A give 2-way conflicts and 64-byte rows of
// B 4-way, 24 shared wavefronts per mma_sync, most of the L1 traffic. So the strips are
// stored as 16-column panels (H2_PANELS=1, the default): every fragment then has a 32-byte
// pitch and both operands are 2-way. Measured on the H200: 48.9 TFLOP/s at 4096^3 row-major
// (the seed's 49.1), 60.2-60.5 with panels; ncu at 1024^3: 2.1 M shared-load conflicts, n-way 8.0
// (ldmatrix.x4 needs 4 wavefronts when conflict-free).
// Metric to watch: l1tex__t_bytes (global load traffic) falls ~5x against h1;
// smsp__sass_inst_executed_op_ldsm (ldmatrix) appears, with
// l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld nonzero (the 2- and 4-way conflicts);
// smsp__average_warp_latency_issue_stalled_barrier is the new stall.
// Tuning knobs (-D; the defaults are what nsprof/ops/hgemm.py declares, and every variant keeps the
// stage's idea: each warp one 16x16 tile, strips in unpadded shared memory, WMMA):
//   H2_WARPS_M x H2_WARPS_N warps per block (bm = 16 H2_WARPS_M, bn = 16 H2_WARPS_N,
//     threads = 32 x both): a wider block loads each B row once for more warps, a taller one
//     each A row; bn = 48 (3 warps across) makes B's row pitch 96 bytes, 6 bank groups, so
//     ldmatrix on the plain strip is 2-way instead of 4-way.
//   H2_BK (16, 32, 48, 64): strip depth; deeper strips mean fewer barriers per MMA and longer
//     global rows per load, but plain A rows of 64+ bytes conflict 4-way or worse.
//   H2_PANELS=1: each strip is stored as 16-wide panels, one after another, every panel
//     row-major with a 32-byte pitch (A: panel p = columns 16p.. of all rows, one k-step; B:
//     panel q = columns 16q.., one warp column's tile). Every fragment then has a 32-byte
//     pitch: 2-way conflicts for A and B whatever bn and bk are (not 4- or 8-way), with no
//     padding; the copy numbers its chunks so that 8 lanes store into 2 panels (2-way).
//   H2_PREFETCH=1: the next strips' global loads are issued into registers right after the
//     first barrier, so they are in flight during this step's MMAs (same shared memory, same
//     two barriers; h4's cp.async double buffer is the step beyond).
//   H2_MIN_BLOCKS: the __launch_bounds__ minimum of blocks per SM (caps registers).
// Precision: float32 accumulators (fragment<accumulator, 16, 16, 16, float>), rounded to fp16
// once: after the k-loop each warp stores its float tile to a private 1 KB of shared memory
// (the strips' space, freed by the loop's last barrier), converts, and writes C with one
// 16-byte store per lane.
// Ragged sizes: the launcher pads M to a multiple of bm, N of bn and K of bk with zeros;
// no bounds checks (all rows stay 16-byte aligned for the vector loads).
// What the seed tutorial got wrong: fp16 accumulation (an accumulator fragment of half: the
// running sum is rounded to 11 bits after every 16-deep step, so its error grows with K), and
// it assumed M, N, K multiples of 16 (ragged sizes read and wrote out of bounds).

#include <cuda_fp16.h>
#include <mma.h>

#include "wmma_store.cuh"

using namespace nvcuda;

// Tuning knobs (see the header); the defaults are what nsprof/ops/hgemm.py declares.
#ifndef H2_WARPS_M
#define H2_WARPS_M 4
#endif
#ifndef H2_WARPS_N
#define H2_WARPS_N 2
#endif
#ifndef H2_BK
#define H2_BK 16
#endif
#ifndef H2_PANELS
#define H2_PANELS 1
#endif
#ifndef H2_PREFETCH
#define H2_PREFETCH 0
#endif
#ifndef H2_MIN_BLOCKS
#define H2_MIN_BLOCKS 0  // 0: no minimum in __launch_bounds__
#endif

#define H2_BM (H2_WARPS_M * 16)
#define H2_BN (H2_WARPS_N * 16)
#define H2_WARPS (H2_WARPS_M * H2_WARPS_N)
#define H2_THREADS (H2_WARPS * 32)

static_assert(H2_BK % 16 == 0 && H2_BK >= 16 && H2_BK <= 64, "H2_BK: 16, 32, 48 or 64");

constexpr int H2_A_ELEMS = H2_BM * H2_BK;  // the A strip, BM x BK halves
constexpr int H2_B_ELEMS = H2_BK * H2_BN;  // the B strip, BK x BN halves
constexpr int H2_A_CHUNKS = H2_A_ELEMS / 8;  // 16-byte chunks of 8 halves
constexpr int H2_B_CHUNKS = H2_B_ELEMS / 8;
constexpr int H2_CHUNKS = H2_A_CHUNKS + H2_B_CHUNKS;
constexpr int H2_PER_THREAD = (H2_CHUNKS + H2_THREADS - 1) / H2_THREADS;
constexpr int H2_STRIP_BYTES = (H2_A_ELEMS + H2_B_ELEMS) * 2;
constexpr int H2_STAGE_BYTES = H2_WARPS * 16 * 16 * 4;  // one 16x16 float tile per warp
constexpr int H2_SMEM_BYTES = H2_STRIP_BYTES > H2_STAGE_BYTES ? H2_STRIP_BYTES : H2_STAGE_BYTES;
// Whole warps take the same branches in the copy: A's chunks end on a warp boundary, and so
// do all chunks (BM * BK / 8 = 2 * WARPS_M * BK, a multiple of 32).
static_assert(H2_A_CHUNKS % 32 == 0 && H2_CHUNKS % 32 == 0, "copy branches must be warp-uniform");

// Where element (r, c) of the A strip and (k, n) of the B strip live in shared memory (in
// halves from the start of each strip). Plain: row-major, row pitches BK and BN halves.
// Panels: each strip is a row of 16-wide panels stored one after another, every panel
// row-major with a 16-half (32-byte) pitch: A's panel p holds columns 16p..16p+15 of all BM
// rows (one k-step), B's panel q columns 16q..16q+15 of all BK rows (one warp column's tile).
__device__ __forceinline__ int h2_a_off(int r, int c) {
#if H2_PANELS
    return (c / 16) * (H2_BM * 16) + r * 16 + c % 16;
#else
    return r * H2_BK + c;
#endif
}
__device__ __forceinline__ int h2_b_off(int k, int n) {
#if H2_PANELS
    return (n / 16) * (H2_BK * 16) + k * 16 + n % 16;
#else
    return k * H2_BN + n;
#endif
}
#if H2_PANELS
#define H2_LDA 16
#define H2_LDB 16
#else
#define H2_LDA H2_BK
#define H2_LDB H2_BN
#endif

// Which element chunk c (8 halves) of a strip with W chunks per row copies: (row, col).
// Plain strips: row by row, so 8 consecutive lanes (one shared-store phase) copy 128
// contiguous bytes of one row (two to eight rows when W < 8). Panels, W >= 8: two rows of
// 64 bytes per 8 lanes (c = ((row / 2) * (W / 4) + col / 32) * 8 + (row % 2) * 4 + chunk
// within the 64 bytes), so each phase stores into two panels, 2-way conflicted, where a
// whole 128-byte row would hit four panels at the same banks (4-way). (Row by row when W is
// not a multiple of 4.)
__device__ __forceinline__ void h2_chunk(int c, int W, int& row, int& col) {
    if (!H2_PANELS || W <= 4 || W % 4 != 0) {
        row = c / W;
        col = (c % W) * 8;
    } else {
        const int rest = c / 8;
        row = (rest / (W / 4)) * 2 + (c / 4) % 2;
        col = ((rest % (W / 4)) * 4 + c % 4) * 8;
    }
}

// Copy round i, chunk c = tid + i * THREADS: is it one of A's chunks, is it a chunk at all.
// Folded at compile time for rounds that lie wholly on one side of the boundary.
__device__ __forceinline__ bool h2_is_a(int i, int c) {
    return (i + 1) * H2_THREADS <= H2_A_CHUNKS ? true : i * H2_THREADS >= H2_A_CHUNKS ? false : c < H2_A_CHUNKS;
}
__device__ __forceinline__ bool h2_valid(int i, int c) {
    return (i + 1) * H2_THREADS <= H2_CHUNKS ? true : c < H2_CHUNKS;
}

#if H2_MIN_BLOCKS > 0
#define H2_BOUNDS __launch_bounds__(H2_THREADS, H2_MIN_BLOCKS)
#else
#define H2_BOUNDS __launch_bounds__(H2_THREADS)
#endif

extern "C" __global__ void H2_BOUNDS
hgemm_h2(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
         __half* __restrict__ C, float* partials) {
    // The strips (A's, then B's) and, after the k-loop, the epilogue's float staging tiles
    // share one buffer. WMMA pointers must be 32-byte aligned: every fragment origin below
    // is a multiple of 16 halves from the 128-byte aligned base.
    __shared__ __align__(128) unsigned char smem_raw[H2_SMEM_BYTES];
    __half* const sm = reinterpret_cast<__half*>(smem_raw);
    const int tid = threadIdx.x;
    const int warp = tid / 32;
    const int warp_m = warp / H2_WARPS_N, warp_n = warp % H2_WARPS_N;
    const int bm0 = blockIdx.y * H2_BM, bn0 = blockIdx.x * H2_BN;

    // Copy assignment: the strips are CHUNKS 16-byte chunks, A's first, then B's; thread t
    // copies chunks t, t + THREADS, ... (round i: chunk t + i * THREADS), each placed by
    // h2_chunk, so consecutive lanes read consecutive 16 bytes of a row. src: this round's
    // next source; dst: its place in sm, in halves. Whether a round is all A's, all B's or
    // all valid is known at compile time (h2_is_a, h2_valid), so only a round that
    // straddles a boundary tests its chunk (default tile: threads 0-127 copy A's strip,
    // 128-191 B's, 192-255 nothing).
    const __half* src[H2_PER_THREAD];
    int dst[H2_PER_THREAD];
#pragma unroll
    for (int i = 0; i < H2_PER_THREAD; ++i) {
        const int c = tid + i * H2_THREADS;
        if (h2_is_a(i, c)) {
            int r, col;
            h2_chunk(c, H2_BK / 8, r, col);
            src[i] = A + (size_t)(bm0 + r) * K + col;
            dst[i] = h2_a_off(r, col);
        } else {
            const int cb = h2_valid(i, c) ? c - H2_A_CHUNKS : 0;  // threads past the end copy nothing
            int k, n;
            h2_chunk(cb, H2_BN / 8, k, n);
            src[i] = B + (size_t)k * N + bn0 + n;
            dst[i] = H2_A_ELEMS + h2_b_off(k, n);
        }
    }
    const int b_step = H2_BK * N;  // a B source moves BK rows per k-step, an A source BK columns

    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);

    // The copy in two halves: this thread's global loads (all in flight together) into v,
    // then v's shared stores.
    uint4 v[H2_PER_THREAD];
    auto load_strips = [&]() {
#pragma unroll
        for (int i = 0; i < H2_PER_THREAD; ++i) {
            const int c = tid + i * H2_THREADS;
            if (h2_valid(i, c)) v[i] = *reinterpret_cast<const uint4*>(src[i]);
            src[i] += h2_is_a(i, c) ? H2_BK : b_step;  // (an idle thread's src walks B's chunk 0)
        }
    };
    auto store_strips = [&]() {
#pragma unroll
        for (int i = 0; i < H2_PER_THREAD; ++i) {
            if (h2_valid(i, tid + i * H2_THREADS)) *reinterpret_cast<uint4*>(sm + dst[i]) = v[i];
        }
    };

#if H2_PREFETCH
    if (K > 0) load_strips();
#endif
    for (int k0 = 0; k0 < K; k0 += H2_BK) {
#if !H2_PREFETCH
        load_strips();
#endif
        store_strips();
        __syncthreads();  // the strips are complete
#if H2_PREFETCH
        if (k0 + H2_BK < K) load_strips();  // the next strips load while this step's MMAs run
#endif
#pragma unroll
        for (int kk = 0; kk < H2_BK; kk += 16) {
            wmma::load_matrix_sync(a, sm + h2_a_off(warp_m * 16, kk), H2_LDA);
            wmma::load_matrix_sync(b, sm + H2_A_ELEMS + h2_b_off(kk, warp_n * 16), H2_LDB);
            wmma::mma_sync(acc, a, b, acc);
        }
        __syncthreads();  // every warp is done with the strips before they are overwritten
    }
    // The loop's last barrier also frees the strips for the staging tiles.
    const int row0 = bm0 + warp_m * 16, col0 = bn0 + warp_n * 16;
    wmma_store_tile_fp16(C + (size_t)row0 * N + col0, N, reinterpret_cast<float*>(smem_raw) + warp * 256, acc);
}
