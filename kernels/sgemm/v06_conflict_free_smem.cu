// v6 bank-conflict-free shared memory: the transposed A tile's rows are padded to 132 floats.
//
// What changed since v5: one number. The transposed A tile As[k][m] gets rows of 132 floats
// instead of 128 (A_LD = BM + 4).
// Why it should help: v5's transposing stores put a warp's kc = 0 and kc = 4 halves 512
// floats apart, in the same 16 banks (2-way conflicts). With rows of 132 floats they are
// 528 floats apart, i.e. 16 banks apart: the two halves fill all 32 banks. 132 * 4 bytes
// is still a multiple of 16, so the float4 reads of As stay aligned, and they stay
// conflict-free (two broadcast addresses per warp).
// Expect a small gain in time: these stores happen once per 8-deep K tile (4 per thread),
// against 32 LDS.128 and 512 FMAs per thread, so the conflict costs little.
// Metric to watch: l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st falls to ~0, and the
// store n-way (l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st / ..._inst_executed_op_shared_st)
// falls against v5.
// Ragged sizes: padded on the device to multiples of 128 (M, N) and 8 (K).

#define BM 128
#define BN 128
#define BK 8
#define NTHREADS 256
#define A_LD (BM + 4)

extern "C" __global__ void __launch_bounds__(NTHREADS)
sgemm_v6(int M, int N, int K, const float* __restrict__ A,
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
    for (int k0 = 0; k0 < K; k0 += BK) {
        const float4 a = *reinterpret_cast<const float4*>(&Ablk[a_row * K + k0 + a_col]);
        As[a_col + 0][a_row] = a.x;
        As[a_col + 1][a_row] = a.y;
        As[a_col + 2][a_row] = a.z;
        As[a_col + 3][a_row] = a.w;
        *reinterpret_cast<float4*>(&Bs[b_row][b_col]) =
            *reinterpret_cast<const float4*>(&Bblk[(k0 + b_row) * N + b_col]);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float4 a0 = *reinterpret_cast<const float4*>(&As[k][ty * 4]);
            const float4 a1 = *reinterpret_cast<const float4*>(&As[k][64 + ty * 4]);
            const float4 b0 = *reinterpret_cast<const float4*>(&Bs[k][tx * 4]);
            const float4 b1 = *reinterpret_cast<const float4*>(&Bs[k][64 + tx * 4]);
            const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i) {
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] += av[i] * bv[j];
            }
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
