// v6 bank-conflict-free shared memory: the A tile is stored transposed (As[k][m]).
//
// What changed since v5: each thread still loads one float4 of A (four consecutive k of
// one row) from global memory, but writes it transposed into As[k][m], whose rows are
// padded from 128 to 132 floats. The inner loop now reads a thread's 8 values of A with
// two float4 loads, As[k][ty*4] and As[k][64 + ty*4], exactly as it reads B.
// Why it should help: v5 read A with 8 scalar loads per k, two-way bank-conflicted (rows
// 4 apart are 32 words apart). Now the two ty of a warp read two 16-byte words (a
// broadcast each): no conflict, and 2 load instructions instead of 8.
// Why the padding: the four transposed stores of a warp write As[kc+i][row] for 16 rows and
// kc in {0, 4}; with rows of 128 floats both kc land in the same banks (2-way store
// conflict); 132 floats shift kc = 4 by 16 banks, and 132*4 bytes keeps float4 alignment.
// Metric to watch: l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld falls to ~0 and
// smsp__sass_inst_executed_op_shared_ld falls against v5.
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
