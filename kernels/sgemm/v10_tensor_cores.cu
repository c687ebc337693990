// v10 tensor cores: TF32 warp-level matrix multiply (mma.sync m16n8k8) with float32 accumulation.
//
// What changed since v8/v9: the multiply-adds run on the tensor cores instead of the FP32
// pipes. Each float32 input is rounded to TF32 (10-bit mantissa, float32 range) with
// cvt.rna as it is loaded into a fragment (V10_ROUND=0 passes the float32 bits instead,
// which the tensor cores truncate: ~15% faster on the H200, twice the error); products are
// accumulated in float32. Expect a relative error near 3e-4 instead of ~1e-6: this stage
// computes a different (lower-precision) function, checked against a 5e-3 tolerance.
// Structure: a 256-thread block owns a 128x256 (or, for small problems, 128x128) tile of
// C; its 8 warps form a 2x4 grid and each warp owns 64x64 (4x8 accumulator tiles of 16x8,
// 128 floats per thread; 64x32 with the smaller tile). K is walked in 32-deep tiles through
// a 3-stage ring of shared-memory buffers filled with cp.async (16-byte copies that bypass
// registers), so two tiles are in flight while one is used.
// Why PTX rather than the WMMA API: WMMA's load_matrix_sync for TF32 reads each fragment
// element with its own 4-byte shared load, and on the H200 that capped a WMMA version of this
// kernel at 101 TFLOP/s (1.97x cuBLAS SGEMM at 4096^3). Writing the same warp-level MMA as
// PTX lets one ldmatrix.x4 fetch a whole 16x8 A fragment (8 rows of 16 bytes per phase):
// 20 instead of 32 shared loads per 32 MMAs; the kernel then ran at 145 TFLOP/s.
// Rows of the shared tiles are padded (36 and 136 or 264 floats): ldmatrix phases and the
// B fragment loads then hit 32 different banks, and rows stay 16-byte aligned.
// Why it should help: an H100/H200 SM's tensor cores do many times the FP32 pipes' work
// per cycle, even through the pre-Hopper mma.sync path (Hopper's fastest path, wgmma, needs
// sm_90a and is not used here).
// Metric to watch: sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32 (tensor ops) replaces the
// ffma counts; smsp__sass_thread_inst_executed_op_ffma_pred_on drops to ~0.
// Ragged sizes (changed): no padding copies when K and N are multiples of 4 (rows of A
// and B 16-byte aligned, as a 16-byte cp.async needs). A copy that lies past M, N or K is issued
// with a source size of 0, which cp.async turns into 16 zero bytes (the zeros add nothing to the
// products), and C is stored only inside M x N. Before, the launcher zero-padded A, B and C to
// whole tiles on every launch: at 1000x1200x800 the stage ran at 39-64% of its aligned speed.
// sgemm_v10_<tile>_unchecked skips the checks for sizes of whole tiles; the launcher picks.
// K % 4 != 0 or N % 4 != 0 are still padded.

#define BK 32
#ifndef STAGES
#define STAGES 3
#endif
#define A_LD (BK + 4)

// Tuning knobs (a tuning run overrides them with -D): blocks per SM for the register cap
// of the 128x128 tile, and TF32 rounding (1: cvt.rna, 0: truncation by the tensor cores;
// on the H200 at 4096^3: 145 against 166 TFLOP/s, errors 2.9e-4 against 7.8e-4).
#ifndef V10_MIN_BLOCKS
#define V10_MIN_BLOCKS 1
#endif
#ifndef V10_ROUND
#define V10_ROUND 1
#endif

#include "../common/cp_async.cuh"  // cp_async16 with zero fill (`in` false: 16 zero bytes), commit, wait

// The tensor-core instructions, written as PTX: mma.sync m16n8k8 on TF32 with float32
// accumulators, and ldmatrix, which loads four 8x4-word tiles of A per instruction.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const float* smem_row) {
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem_row));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

__device__ __forceinline__ void mma_tf32(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ unsigned tf32_bits(float x) {
#if V10_ROUND
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
#else
    return __float_as_uint(x);  // the tensor cores ignore the low 13 mantissa bits
#endif
}

// The block's 8 warps form a 2 x 4 grid; each warp owns (BM/2) x (BN/4) of C as
// MI x NJ accumulator tiles of 16x8 (4 floats per thread each).
template <int BM, int BN, bool CHECKED>
__device__ __forceinline__ void sgemm_v10_body(int M, int N, int K, const float* __restrict__ A,
                                               const float* __restrict__ B, float* __restrict__ C) {
    constexpr int NTHREADS = 256;
    constexpr int B_LD = BN + 8;
    constexpr int A_STAGE = BM * A_LD;
    constexpr int B_STAGE = BK * B_LD;
    constexpr int WARP_M = BM / 2, WARP_N = BN / 4;
    constexpr int MI = WARP_M / 16, NJ = WARP_N / 8;
    extern __shared__ __align__(128) float smem[];
    float* As = smem;                      // STAGES x [BM][A_LD]
    float* Bs = smem + STAGES * A_STAGE;   // STAGES x [BK][B_LD]
    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int g = lane / 4, t = lane % 4;  // the mma fragment coordinates of this lane
    const int warp_m = warp / 4;
    const int warp_n = warp % 4;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const float* Ablk = A + m0 * K;
    const float* Bblk = B + n0;
    const int tiles = (K + BK - 1) / BK;  // the last one zero-filled past K

    auto issue_tile = [&](int tile) {
        const int stage = tile % STAGES;
        const int k0 = tile * BK;
#pragma unroll
        for (int r = 0; r < BM * BK / 4 / NTHREADS; ++r) {
            const int e = tid + r * NTHREADS;
            const int row = e / (BK / 4), col = (e % (BK / 4)) * 4;
            const bool in = !CHECKED || (m0 + row < M && k0 + col < K);  // K % 4 == 0: all 4 or none
            cp_async16(&As[stage * A_STAGE + row * A_LD + col], in ? &Ablk[row * K + k0 + col] : A, in);
        }
#pragma unroll
        for (int r = 0; r < BK * BN / 4 / NTHREADS; ++r) {
            const int e = tid + r * NTHREADS;
            const int row = e / (BN / 4), col = (e % (BN / 4)) * 4;
            const bool in = !CHECKED || (k0 + row < K && n0 + col < N);  // N % 4 == 0: all 4 or none
            cp_async16(&Bs[stage * B_STAGE + row * B_LD + col], in ? &Bblk[(k0 + row) * N + col] : B, in);
        }
    };

    float acc[MI][NJ][4] = {};

    // Prologue: put the first STAGES-1 tiles in flight. Every iteration commits exactly one
    // group (possibly empty) so that wait_group<STAGES-2> always means "tile t has landed".
#pragma unroll
    for (int tile = 0; tile < STAGES - 1; ++tile) {
        if (tile < tiles) issue_tile(tile);
        cp_async_commit();
    }
    for (int tile = 0; tile < tiles; ++tile) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();  // tile visible to all; everyone is done with the previous stage
        if (tile + STAGES - 1 < tiles) issue_tile(tile + STAGES - 1);
        cp_async_commit();

        const float* a_tile = As + (tile % STAGES) * A_STAGE + warp_m * WARP_M * A_LD;
        const float* b_tile = Bs + (tile % STAGES) * B_STAGE + warp_n * WARP_N;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            // A (16x8, row-major): lane l points ldmatrix at row l % 16, words (l / 16) * 4..+3,
            // which hands each lane a0..a3 = A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4].
            unsigned a[MI][4];
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                ldmatrix_x4(a[i], a_tile + (i * 16 + lane % 16) * A_LD + kk + (lane / 16) * 4);
#if V10_ROUND
#pragma unroll
                for (int q = 0; q < 4; ++q) a[i][q] = tf32_bits(__uint_as_float(a[i][q]));
#endif
            }
            // B (8x8, k x n): b0 = B[t][g], b1 = B[t+4][g]; rows 136 (or 264) floats apart put
            // the 32 lanes in 32 different banks.
            unsigned b[NJ][2];
#pragma unroll
            for (int j = 0; j < NJ; ++j) {
                b[j][0] = tf32_bits(b_tile[(kk + t) * B_LD + j * 8 + g]);
                b[j][1] = tf32_bits(b_tile[(kk + t + 4) * B_LD + j * 8 + g]);
            }
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int j = 0; j < NJ; ++j) mma_tf32(acc[i][j], a[i], b[j]);
        }
    }
    cp_async_wait<0>();

    // Accumulator tile (16x8): c0, c1 at row g, columns 2t, 2t+1; c2, c3 at row g + 8.
    const int row_w = m0 + warp_m * WARP_M, col_w = n0 + warp_n * WARP_N;
    float* Cwarp = C + row_w * N + col_w;
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j) {
            const int row = row_w + i * 16 + g, col = col_w + j * 8 + 2 * t;  // N % 4 == 0: the pair is all in or out
            float* c = Cwarp + (i * 16 + g) * N + j * 8 + 2 * t;
            if (CHECKED && col >= N) continue;
            if (!CHECKED || row < M) *reinterpret_cast<float2*>(c) = make_float2(acc[i][j][0], acc[i][j][1]);
            if (!CHECKED || row + 8 < M) *reinterpret_cast<float2*>(c + 8 * N) = make_float2(acc[i][j][2], acc[i][j][3]);
        }
}

// Two entries per tile: sgemm_v10_<tile> checks bounds (K % 4 == N % 4 == 0, any M);
// sgemm_v10_<tile>_unchecked runs whole tiles (M % BM == N % BN == K % 32 == 0) without checks.
#define V10_ARGS int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C
extern "C" __global__ void __launch_bounds__(256, V10_MIN_BLOCKS)
sgemm_v10_128x128(V10_ARGS) { sgemm_v10_body<128, 128, true>(M, N, K, A, B, C); }
extern "C" __global__ void __launch_bounds__(256, V10_MIN_BLOCKS)
sgemm_v10_128x128_unchecked(V10_ARGS) { sgemm_v10_body<128, 128, false>(M, N, K, A, B, C); }

extern "C" __global__ void __launch_bounds__(256, 1)
sgemm_v10_128x256(V10_ARGS) { sgemm_v10_body<128, 256, true>(M, N, K, A, B, C); }
extern "C" __global__ void __launch_bounds__(256, 1)
sgemm_v10_128x256_unchecked(V10_ARGS) { sgemm_v10_body<128, 256, false>(M, N, K, A, B, C); }
