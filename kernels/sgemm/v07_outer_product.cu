// v7 outer product from registers: the fragments for step k+1 are loaded while step k runs.
//
// What changed since v6: the inner loop keeps two register fragments (8 floats of A and 8
// of B each) and alternates between them. Before the 64 FMAs of step k (the outer product
// a[0..7] x b[0..7]) it issues the four float4 shared-memory loads of step k+1, so their
// ~30-cycle latency is covered by independent arithmetic instead of stalling the warp.
// Why it should help: with 2 blocks (16 warps) per SM there are few warps to switch to
// while one waits on shared memory; software pipelining the fragments gives each warp its
// own latency hiding. The compiler may already schedule the fully unrolled v6 loop this
// way, in which case v7 gains little: the benchmark notes record which.
// Metric to watch: smsp__average_warp_latency_issue_stalled_short_scoreboard (stalls on
// shared memory) falls; sm__pipe_fma_cycles_active rises.
// Ragged sizes: padded on the device to multiples of 128 (M, N) and 8 (K).

#define BM 128
#define BN 128
#define BK 8
#define NTHREADS 256
#define A_LD (BM + 4)

__device__ __forceinline__ void load_fragments(const float (*As)[A_LD], const float (*Bs)[BN],
                                               int k, int tx, int ty, float4 (&a)[2],
                                               float4 (&b)[2]) {
    a[0] = *reinterpret_cast<const float4*>(&As[k][ty * 4]);
    a[1] = *reinterpret_cast<const float4*>(&As[k][64 + ty * 4]);
    b[0] = *reinterpret_cast<const float4*>(&Bs[k][tx * 4]);
    b[1] = *reinterpret_cast<const float4*>(&Bs[k][64 + tx * 4]);
}

__device__ __forceinline__ void outer_product(float (&acc)[8][8], const float4 (&a)[2],
                                              const float4 (&b)[2]) {
    const float av[8] = {a[0].x, a[0].y, a[0].z, a[0].w, a[1].x, a[1].y, a[1].z, a[1].w};
    const float bv[8] = {b[0].x, b[0].y, b[0].z, b[0].w, b[1].x, b[1].y, b[1].z, b[1].w};
#pragma unroll
    for (int i = 0; i < 8; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += av[i] * bv[j];
    }
}

extern "C" __global__ void __launch_bounds__(NTHREADS)
sgemm_v7(int M, int N, int K, const float* __restrict__ A,
         const float* __restrict__ B, float* __restrict__ C) {
    __shared__ __align__(16) float As[BK][A_LD];
    __shared__ __align__(16) float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int tx = tid % 16;
    const int ty = tid / 16;
    const int a_row = tid / 2, a_col = (tid % 2) * 4;
    const int b_row = tid / 32, b_col = (tid % 32) * 4;
    const float* Ablk = A + blockIdx.y * BM * K;
    const float* Bblk = B + blockIdx.x * BN;

    float acc[8][8] = {};
    float4 frag_a[2][2], frag_b[2][2];
    for (int k0 = 0; k0 < K; k0 += BK) {
        const float4 a = *reinterpret_cast<const float4*>(&Ablk[a_row * K + k0 + a_col]);
        As[a_col + 0][a_row] = a.x;
        As[a_col + 1][a_row] = a.y;
        As[a_col + 2][a_row] = a.z;
        As[a_col + 3][a_row] = a.w;
        *reinterpret_cast<float4*>(&Bs[b_row][b_col]) =
            *reinterpret_cast<const float4*>(&Bblk[(k0 + b_row) * N + b_col]);
        __syncthreads();
        load_fragments(As, Bs, 0, tx, ty, frag_a[0], frag_b[0]);
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            if (k + 1 < BK) load_fragments(As, Bs, k + 1, tx, ty, frag_a[(k + 1) % 2], frag_b[(k + 1) % 2]);
            outer_product(acc, frag_a[k % 2], frag_b[k % 2]);
        }
        __syncthreads();
    }
    float* Cblk = C + blockIdx.y * BM * N + blockIdx.x * BN;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = (i / 4) * 64 + ty * 4 + i % 4;
        *reinterpret_cast<float4*>(&Cblk[row * N + tx * 4]) =
            make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        *reinterpret_cast<float4*>(&Cblk[row * N + 64 + tx * 4]) =
            make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
    }
}
