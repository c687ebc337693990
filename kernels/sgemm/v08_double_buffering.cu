// v8 double buffering: the next K-tile is fetched while the current one is computed.
//
// What changed since v7: shared memory holds two copies of the A and B tiles. At the top
// of each K step a thread issues the global loads of the next tile into registers, computes
// the current tile's 8 outer products from the other shared buffer, and only then writes the
// registers to shared memory; one __syncthreads() per tile instead of two.
// Why it should help: in v7 every tile began with global loads that the whole block waited
// for (~500+ cycles of DRAM/L2 latency per 8-deep K step). Now that latency overlaps with
// 512 FMAs per thread, and half the barriers are gone.
// Tile shape and split-K: the kernel is a template over the block tile. 128x128 (256 threads,
// 8x8 outputs each) is used when it yields at least one block per SM. With fewer tiles than
// SMs (1024^3 has 64 tiles of 128x128 for 132 SMs) the launcher splits K over gridDim.z
// (2, 4 or 8 slices, each at least 256 deep) and the slices add into a zeroed C with float4
// atomics; only when K is too shallow to split do 64x128 or 64x64 tiles take over. The
// launcher (nsprof.launch.sgemm.choose_plan) chooses; the bench prints the plan.
// Metric to watch: smsp__average_warp_latency_issue_stalled_long_scoreboard and
// ..._barrier fall against v7; sm__pipe_fma_cycles_active rises.
// Ragged sizes: padded on the device to multiples of the block tile and 8 (K).

// Tuning knobs (a tuning run overrides them with -D): V8_BK is the depth of a K tile;
// the second launch bound (blocks per SM) caps registers at 65536 / (threads * blocks), and
// V8_MIN_BLOCKS = 2 trades a few spilled registers for twice the warps per SM (measured on
// the H200 at 4096^3: 45.1 TFLOP/s against 34.0 with 1).
#ifndef V8_BK
#define V8_BK 8
#endif
#ifndef V8_MIN_BLOCKS
#define V8_MIN_BLOCKS 2
#endif

template <int BM, int BN, int BK>
struct V8 {
    static constexpr int THREADS = BM * BN / 64;  // each thread owns 8x8 outputs
    static constexpr int A_LD = BM + 4;           // transposed A rows, padded (see v6)
    static constexpr int A_VECS = BM * BK / 4 / THREADS;  // float4 per thread per tile
    static constexpr int B_VECS = BK * BN / 4 / THREADS;
    static_assert(A_VECS >= 1 && B_VECS >= 1, "tile too small for the thread count");
};

template <int BM, int BN, int BK>
__device__ __forceinline__ void sgemm_v8_body(int M, int N, int K,
                                              const float* __restrict__ A,
                                              const float* __restrict__ B,
                                              float* __restrict__ C) {
    using P = V8<BM, BN, BK>;
    __shared__ __align__(16) float As[2][BK][P::A_LD];
    __shared__ __align__(16) float Bs[2][BK][BN];
    const int tid = threadIdx.x;
    // A warp covers 4 x 8 threads of the block's (BM/8) x (BN/8) grid, so each k step reads
    // 4 distinct float4 of A and 8 of B per warp (v7's 2 x 16 layout: 2 and 16). Measured on
    // the H200 both layouts ran at the same speed (45.1 TFLOP/s at 4096^3); 4 x 8 is kept
    // because it also works for 64-wide tiles.
    constexpr int LANES_X = 8;
    constexpr int WARPS_X = (BN / 8) / LANES_X;
    static_assert(WARPS_X >= 1, "BN must be at least 64");
    const int warp = tid / 32, lane = tid % 32;
    const int ty = (warp / WARPS_X) * 4 + lane / LANES_X;
    const int tx = (warp % WARPS_X) * LANES_X + lane % LANES_X;
    // Split-K: blockIdx.z takes the z-th of gridDim.z equal slices of K (a multiple of BK)
    // and adds its partial sums into C, which the launcher zeroed.
    const int k_len = K / gridDim.z;
    const float* Ablk = A + blockIdx.y * BM * K + blockIdx.z * k_len;
    const float* Bblk = B + blockIdx.x * BN + blockIdx.z * k_len * N;

    float4 stage_a[P::A_VECS], stage_b[P::B_VECS];
    auto load_global = [&](int k0) {
#pragma unroll
        for (int r = 0; r < P::A_VECS; ++r) {
            const int e = tid + r * P::THREADS;
            const int row = e / (BK / 4), col = (e % (BK / 4)) * 4;
            stage_a[r] = *reinterpret_cast<const float4*>(&Ablk[row * K + k0 + col]);
        }
#pragma unroll
        for (int r = 0; r < P::B_VECS; ++r) {
            const int e = tid + r * P::THREADS;
            const int row = e / (BN / 4), col = (e % (BN / 4)) * 4;
            stage_b[r] = *reinterpret_cast<const float4*>(&Bblk[(k0 + row) * N + col]);
        }
    };
    auto store_shared = [&](int buf) {
#pragma unroll
        for (int r = 0; r < P::A_VECS; ++r) {
            const int e = tid + r * P::THREADS;
            const int row = e / (BK / 4), col = (e % (BK / 4)) * 4;
            As[buf][col + 0][row] = stage_a[r].x;
            As[buf][col + 1][row] = stage_a[r].y;
            As[buf][col + 2][row] = stage_a[r].z;
            As[buf][col + 3][row] = stage_a[r].w;
        }
#pragma unroll
        for (int r = 0; r < P::B_VECS; ++r) {
            const int e = tid + r * P::THREADS;
            const int row = e / (BN / 4), col = (e % (BN / 4)) * 4;
            *reinterpret_cast<float4*>(&Bs[buf][row][col]) = stage_b[r];
        }
    };
    float4 frag_a[2][2], frag_b[2][2];
    auto load_fragments = [&](int buf, int k, int slot) {
        frag_a[slot][0] = *reinterpret_cast<const float4*>(&As[buf][k][ty * 4]);
        frag_a[slot][1] = *reinterpret_cast<const float4*>(&As[buf][k][BM / 2 + ty * 4]);
        frag_b[slot][0] = *reinterpret_cast<const float4*>(&Bs[buf][k][tx * 4]);
        frag_b[slot][1] = *reinterpret_cast<const float4*>(&Bs[buf][k][BN / 2 + tx * 4]);
    };

    float acc[8][8] = {};
    load_global(0);
    store_shared(0);
    __syncthreads();
    load_fragments(0, 0, 0);
    int buf = 0;
    for (int k0 = 0; k0 < k_len; k0 += BK) {
        const bool has_next = k0 + BK < k_len;
        if (has_next) load_global(k0 + BK);  // in flight during the FMAs below
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            if (k + 1 < BK) load_fragments(buf, k + 1, (k + 1) % 2);
            const float av[8] = {frag_a[k % 2][0].x, frag_a[k % 2][0].y, frag_a[k % 2][0].z,
                                 frag_a[k % 2][0].w, frag_a[k % 2][1].x, frag_a[k % 2][1].y,
                                 frag_a[k % 2][1].z, frag_a[k % 2][1].w};
            const float bv[8] = {frag_b[k % 2][0].x, frag_b[k % 2][0].y, frag_b[k % 2][0].z,
                                 frag_b[k % 2][0].w, frag_b[k % 2][1].x, frag_b[k % 2][1].y,
                                 frag_b[k % 2][1].z, frag_b[k % 2][1].w};
#pragma unroll
            for (int i = 0; i < 8; ++i) {
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] += av[i] * bv[j];
            }
        }
        if (has_next) {
            // The other buffer was last read before the previous barrier: safe to overwrite.
            store_shared(buf ^ 1);
            __syncthreads();
            buf ^= 1;
            load_fragments(buf, 0, 0);
        }
    }
    float* Cblk = C + blockIdx.y * BM * N + blockIdx.x * BN;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = (i / 4) * (BM / 2) + ty * 4 + i % 4;
        const float4 left = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        const float4 right = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
        float4* c_left = reinterpret_cast<float4*>(&Cblk[row * N + tx * 4]);
        float4* c_right = reinterpret_cast<float4*>(&Cblk[row * N + BN / 2 + tx * 4]);
        if (gridDim.z == 1) {
            *c_left = left;
            *c_right = right;
        } else {
            atomicAdd(c_left, left);  // float4 atomics: sm_90 and later
            atomicAdd(c_right, right);
        }
    }
}

// One entry point per block tile: sgemm_v8_<BM>x<BN>.
extern "C" __global__ void __launch_bounds__(256, V8_MIN_BLOCKS)
sgemm_v8_128x128(int M, int N, int K, const float* __restrict__ A,
                 const float* __restrict__ B, float* __restrict__ C) {
    sgemm_v8_body<128, 128, V8_BK>(M, N, K, A, B, C);
}

extern "C" __global__ void __launch_bounds__(128, 2 * V8_MIN_BLOCKS)
sgemm_v8_64x128(int M, int N, int K, const float* __restrict__ A,
                const float* __restrict__ B, float* __restrict__ C) {
    sgemm_v8_body<64, 128, V8_BK>(M, N, K, A, B, C);
}

extern "C" __global__ void __launch_bounds__(64, 4 * V8_MIN_BLOCKS)
sgemm_v8_64x64(int M, int N, int K, const float* __restrict__ A,
               const float* __restrict__ B, float* __restrict__ C) {
    sgemm_v8_body<64, 64, V8_BK>(M, N, K, A, B, C);
}
