// v5 float4 vectorized loads: 16-byte loads from global and shared memory.
//
// What changed since v4: every global load of A and B, the shared-memory reads of B and
// the stores of C move four floats per instruction (LDG.128 / LDS.128 / STG.128). To make
// a thread's columns readable as float4, each thread now owns two groups of 4 columns,
// tx*4.. and 64 + tx*4.., and likewise two groups of 4 rows, ty*4.. and 64 + ty*4.. .
// Why it should help: a quarter of the load/store instructions for the same bytes, so
// fewer issue slots spent on memory and fewer address calculations.
// What this costs (fixed in v6): A is still stored k-minor (As[m][k]), so a thread's four
// rows are read with four scalar loads, and the two ty of a warp read rows 4 apart, i.e.
// 32 words apart: the same bank. Those As loads are 2-way bank conflicts.
// Metric to watch: smsp__sass_inst_executed_op_global_ld and ..._shared_ld fall against
// v4; l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld rises (the As reads).
// Ragged sizes: padded on the device to multiples of 128 (M, N) and 8 (K).

#define BM 128
#define BN 128
#define BK 8
#define NTHREADS 256

extern "C" __global__ void __launch_bounds__(NTHREADS)
sgemm_v5(int M, int N, int K, const float* __restrict__ A,
         const float* __restrict__ B, float* __restrict__ C) {
    __shared__ __align__(16) float As[BM][BK];
    __shared__ __align__(16) float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int tx = tid % 16;
    const int ty = tid / 16;
    // One float4 of A (row tid/2, k 0 or 4) and one of B (k tid/32, columns 4*(tid%32)).
    const int a_row = tid / 2, a_col = (tid % 2) * 4;
    const int b_row = tid / 32, b_col = (tid % 32) * 4;
    const float* Ablk = A + blockIdx.y * BM * K;
    const float* Bblk = B + blockIdx.x * BN;

    float acc[8][8] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        *reinterpret_cast<float4*>(&As[a_row][a_col]) =
            *reinterpret_cast<const float4*>(&Ablk[a_row * K + k0 + a_col]);
        *reinterpret_cast<float4*>(&Bs[b_row][b_col]) =
            *reinterpret_cast<const float4*>(&Bblk[(k0 + b_row) * N + b_col]);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float4 b0 = *reinterpret_cast<const float4*>(&Bs[k][tx * 4]);
            const float4 b1 = *reinterpret_cast<const float4*>(&Bs[k][64 + tx * 4]);
            const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const float a = As[(i / 4) * 64 + ty * 4 + i % 4][k];
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] += a * b[j];
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
