// v5 float4 vectorized loads: 16-byte loads from global and shared memory.
//
// What changed since v4: every global load of A and B, every shared-memory read in the
// inner loop and every store of C moves four floats per instruction (LDG.128 / LDS.128 /
// STG.128). To make a thread's operands readable as float4, each thread now owns two groups
// of 4 rows (ty*4.., 64 + ty*4..) and two groups of 4 columns (tx*4.., 64 + tx*4..), and the
// A tile is written transposed, As[k][m], so that 4 consecutive m are 4 consecutive floats.
// A thread still loads one float4 of A (4 consecutive k of one row) from global memory and
// writes it to shared memory as 4 scalar stores, As[kc+i][row].
// Why it should help: fewer load/store instructions for the same bytes: the inner loop
// issues 4 LDS.128 per k where v4 issued 10 (its A reads, compiler-vectorized, and 8 scalar
// B reads): measured at 1024^3, 2.1 M shared-load instructions instead of 5.2 M.
// What this costs (fixed in v6): in one transposing store the 32 lanes of a warp write 16
// rows at kc = 0 and the same 16 rows at kc = 4; with rows of 128 floats, kc = 4 is 512
// floats further on, the same banks: each of the 4 scalar stores is a 2-way bank conflict.
// Metric to watch: smsp__sass_inst_executed_op_shared_ld and ..._global_ld fall against v4;
// l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st rises (the transposing stores).
// Ragged sizes: padded on the device to multiples of 128 (M, N) and 8 (K).

#define BM 128
#define BN 128
#define BK 8
#define NTHREADS 256
#define A_LD BM  // unpadded: see "What this costs" above

extern "C" __global__ void __launch_bounds__(NTHREADS)
sgemm_v5(int M, int N, int K, const float* __restrict__ A,
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
