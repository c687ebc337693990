// transpose: At = A^T for the transposed SGEMV stages (s2, s3, s4), timed on its own.
//
// Launch (fixed by the contract): entry=sgemv_transpose, block (32, 8), grid (ceil(K / 32),
// ceil(M / 32)), no dynamic shared memory. A is M x K row-major (leading dimension K); At is
// K x M row-major (leading dimension M), At[k][m] = A[m][k].
//
// How: block (bx, by) moves the 32 x 32 tile A[32 by .. +32][32 bx .. +32]. Its 256 threads read
// the tile in four passes of 8 rows, lane tx reading column 32 bx + tx (a warp reads 128
// consecutive bytes of one row of A), into shared memory; after one __syncthreads() they write
// it out in four passes of 8 rows of At, lane tx writing At[32 bx + ty + r][32 by + tx] (128
// consecutive bytes of one row of At). Both global directions are coalesced; the turn happens
// in shared memory. Each tile row is padded to 33 floats: the write pass reads a column of the
// tile, tile[tx][c], at word 33 tx + c, which is bank (tx + c) mod 32: 32 different banks,
// where an unpadded [32][32] tile would put the whole column in one bank (a 32-way conflict).
// Why it matters for the ladder: the transpose reads and writes M K 4 bytes each, twice the
// traffic of one SGEMV, so s2-s4 only pay off when A is transposed once and reused.
// Metric to watch: smem_ld_wavefronts / smem_ld_instructions ~1 (no bank conflicts); global
// load and store sectors per request 4; dram bytes ~ 2 M K 4.
// Ragged sizes: any M, K >= 1: each element is read and written only when its row and column
// are inside A (m < M and k < K); tile entries outside are neither filled nor read back. The
// __syncthreads() is outside every condition, so all 256 threads reach it. Scalar accesses
// only (no alignment assumptions). Offsets are 64-bit. grid.y = ceil(M / 32) <= 65,535 limits M
// to 2,097,120 rows.

#define TT 32       // tile edge
#define TROWS 8     // blockDim.y: rows per pass

extern "C" __global__ void __launch_bounds__(TT * TROWS)
sgemv_transpose(int M, int K, const float* A, float* At) {
    __shared__ float tile[TT][TT + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int k0 = blockIdx.x * TT, m0 = blockIdx.y * TT;

    // Read: tile[r][c] = A[m0 + r][k0 + c].
    const int k = k0 + tx;
#pragma unroll
    for (int p = 0; p < TT; p += TROWS) {
        const int r = ty + p, m = m0 + r;
        if (m < M && k < K) tile[r][tx] = __ldg(A + static_cast<size_t>(m) * K + k);
    }
    __syncthreads();

    // Write: At[k0 + r][m0 + c] = tile[c][r].
    const int m = m0 + tx;
#pragma unroll
    for (int p = 0; p < TT; p += TROWS) {
        const int r = ty + p, kr = k0 + r;
        if (kr < K && m < M) At[static_cast<size_t>(kr) * M + m] = tile[tx][r];
    }
}
