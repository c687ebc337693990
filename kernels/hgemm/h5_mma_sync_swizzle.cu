// h5 mma.sync + swizzle: PTX mma.sync m16n8k16 (fp16 in, float32 accumulators) on ldmatrix
// fragments, a 4-stage cp.async ring and XOR-swizzled (unpadded) shared memory.
//
// launch: entry=hgemm_h5_128x256 bm=128 bn=256 bk=32 threads=256 smem=98304 split=1 arch=sm_90
// launch: entry=hgemm_h5_128x128 bm=128 bn=128 bk=32 threads=256 smem=65536 split=2 arch=sm_90
// launch: entry=hgemm_h5_64x128 bm=64 bn=128 bk=32 threads=128 smem=49152 split=4 arch=sm_90
//
// What changed since h4 (WMMA 16x16x16, 64x32 warp tiles, two padded cp.async buffers):
// - The tensor-core instruction is PTX mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32,
//   not the WMMA API, so the kernel owns the fragment registers: one ldmatrix.x4 gives a
//   16x16 A fragment (a0..a7), one ldmatrix.x4.trans gives the B fragments of two 16x8 n
//   tiles. B is row-major K x N, but the mma's "col" operand wants each register to hold two
//   consecutive k of one n, hence .trans (it transposes each 8x8 16-bit matrix on the way
//   into registers). The next 16-deep k step's fragments are loaded while the current step's
//   mma run (two register sets), across k-tile boundaries too.
// - Warp tile 64x64 (block 128x256, 8 warps as 2 x 4): 8 ldmatrix per 32 mma.m16n8k16, where
//   h4's 64x32 warps issued 6 per 16; shared-memory bytes read per FLOP fall by a third (4 KB
//   per warp and 16-deep k step for 131k FLOPs, against 3 KB for 65k).
// - A ring of 4 stages (k depth 32) instead of 2: tiles t+1..t+3 are in flight while tile t
//   is multiplied; still one __syncthreads per k tile, and each cp.async group holds one tile.
// - XOR swizzle instead of padding. A rows are 64 bytes (4 chunks of 16 bytes): chunk c of row
//   r is stored at c ^ ((r >> 1) & 3). B rows are BN * 2 bytes (a multiple of 128): chunk c of
//   row k is stored at c ^ (k & 7). Every 8-lane phase of an ldmatrix (8 rows, one logical
//   chunk) and every 8-thread phase of the cp.async stores (consecutive chunks) then covers 8
//   distinct 16-byte bank groups, and no bytes are wasted: 4 stages of 128x256x32 take 96 KB.
//   To keep the ldmatrix addresses "lane offset + immediate", a warp owns the 16-column groups
//   warp_n + 4 jj of the block tile (interleaved with the other warps), so its groups lie
//   multiples of 8 chunks apart, which the swizzle preserves.
// - Blocks are rasterized in groups of 8 tile rows (column by column within a group), so the
//   ~132 co-resident blocks share A rows and B columns in L2 at 8192^3.
// - The epilogue writes C from the accumulators as packed half2 (h4 staged it in shared
//   memory for 16-byte stores); it is a small part of the time at these tile sizes.
// Why it should be faster: fewer shared-memory bytes and instructions per mma, three tiles of
// latency hiding instead of one, and no register spills at 228 registers/thread (1 block of
// 8 warps per SM). mma.sync tops out well below wgmma on Hopper (h6's step); the aim here is
// >= 60% of cuBLAS (>= ~450 TFLOP/s at 4096^3 and 8192^3 on the H200).
// Metrics to watch: l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum (ldmatrix) and
// ..._op_st.sum stay ~0 (as h4's padding did, now without padding);
// sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active rises against h4;
// smsp__average_warp_latency_issue_stalled_long_scoreboard and ..._barrier fall.
// Tile variants: 128x256 (warps 64x64) first; 128x128 (warps 64x32, __launch_bounds__(256, 2):
// 128 registers, two blocks per SM) when 128x256 leaves SMs idle; 64x128 (4 warps of 32x64)
// for small problems, with split-K up to 4 (512x2048x1024: 128 tiles -> split 2, 256 blocks).
// Split-K: with gridDim.z > 1 slice z computes k in [z*K/gridDim.z, (z+1)*K/gridDim.z) and
// writes its float32 tile to partials[z*M*N + row*N + col]; the reduce kernel sums them.
// Ragged sizes: the launcher pads M to a multiple of bm, N of bn and K of 32 * split with
// zeros, so there are no bounds checks (zero rows and columns add nothing; every row stays
// 16-byte aligned for cp.async).

#include <cuda_fp16.h>

#define H5_BK 32      // k depth of a shared-memory tile: 64-byte rows of A
#define H5_STAGES 4   // cp.async ring depth
#define H5_GROUP_M 8  // tile rows per rasterization group

__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

// Four 8x8 b16 matrices; lane l gives the address of row l % 8 of matrix l / 8 and receives,
// in register q, row l / 4, columns 2(l % 4), 2(l % 4) + 1 of matrix q.
__device__ __forceinline__ void ldsm_x4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
// Same, transposed: register q holds rows 2(l % 4), 2(l % 4) + 1 of column l / 4 of matrix q.
__device__ __forceinline__ void ldsm_x4_trans(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
// D (16x8 f32) += A (16x16 f16, row) * B (16x8 f16, col).
__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <int BM, int BN, int WARPS_M, int WARPS_N>
struct H5 {
    static constexpr int BK = H5_BK, STAGES = H5_STAGES;
    static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    static constexpr int WARP_M = BM / WARPS_M, WARP_N = BN / WARPS_N;
    static constexpr int MI = WARP_M / 16, NJ = WARP_N / 8;  // mma tiles per warp
    static constexpr int KSTEPS = BK / 16;
    static constexpr int A_STAGE = BM * BK * 2, B_STAGE = BK * BN * 2;  // bytes
    static constexpr int A_ROW = BK * 2, B_ROW = BN * 2;                 // bytes per smem row
    static constexpr int A_CHUNKS = BK / 8, B_CHUNKS = BN / 8;           // 16-byte chunks per row
    static constexpr int A_COPIES = BM * A_CHUNKS / THREADS;             // cp.async per thread
    static constexpr int B_COPIES = BK * B_CHUNKS / THREADS;
    static constexpr int A_ROWS_PER_PASS = THREADS / A_CHUNKS;
    static constexpr int B_ROWS_PER_PASS = THREADS / B_CHUNKS;
    static constexpr int STAGE = A_STAGE + B_STAGE;  // one stage: A tile, then B tile
    static constexpr int SMEM = STAGES * STAGE;
    static_assert(BK == 32, "the A swizzle is written for 64-byte rows");
    static_assert(KSTEPS >= 2, "the next tile's fragments are loaded in the last k step");
    static_assert(WARP_M % 16 == 0 && WARP_N % 16 == 0, "warp tile: 16-row A and 16-column B ldmatrix.x4");
    static_assert(B_CHUNKS % 8 == 0, "B rows must be multiples of 128 bytes for the k & 7 swizzle");
    static_assert(A_COPIES * THREADS == BM * A_CHUNKS && B_COPIES * THREADS == BK * B_CHUNKS, "copy split");
    // Each thread's rows in later passes keep the same swizzle key, so the shared offsets of
    // passes r > 0 are the first one's plus a constant.
    static_assert(A_ROWS_PER_PASS % 8 == 0 && B_ROWS_PER_PASS % 8 == 0, "swizzle key per pass");
    // B column groups of a warp (see b_group): 2 * WARPS_N chunks apart, a divisor or a
    // multiple of the 8-chunk swizzle span.
    static_assert((WARPS_N & (WARPS_N - 1)) == 0 && WARPS_N <= BN / 16, "WARPS_N: a power of two");
};

// Swizzled byte offsets inside one stage.
// A (BM x 32 halves, 64-byte rows): two rows share a 128-byte line of the 32 banks; XOR-ing
// the chunk with bits 1-2 of the row spreads 8 consecutive rows of one chunk over 8 groups.
__device__ __forceinline__ int a_off(int row, int chunk) { return row * 64 + ((chunk ^ ((row >> 1) & 3)) << 4); }
// B (32 x BN halves): every row starts at bank 0; XOR-ing the low 3 chunk bits with k & 7
// spreads 8 consecutive k rows of one chunk over 8 groups.
template <int B_ROW>
__device__ __forceinline__ int b_off(int k, int chunk) { return k * B_ROW + ((chunk ^ (k & 7)) << 4); }

template <int BM, int BN, int WARPS_M, int WARPS_N>
__device__ __forceinline__ void hgemm_h5_body(int M, int N, int K, const __half* __restrict__ A,
                                              const __half* __restrict__ B, __half* __restrict__ C,
                                              float* __restrict__ partials) {
    using P = H5<BM, BN, WARPS_M, WARPS_N>;
    constexpr int BK = P::BK, STAGES = P::STAGES, MI = P::MI, NJ = P::NJ, KSTEPS = P::KSTEPS;
    extern __shared__ __align__(1024) unsigned char smem[];
    // STAGES x {A tile, B tile}: one stage offset register serves both operands.
    const unsigned sA = smem_u32(smem);
    const unsigned sB = sA + P::A_STAGE;

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;

    // Grouped rasterization: linear block id -> (tile row, tile column), a bijection.
    int tile_m, tile_n;
    {
        const int tiles_n = gridDim.x, tiles_m = gridDim.y;
        const int id = blockIdx.y * tiles_n + blockIdx.x;
        const int per_group = H5_GROUP_M * tiles_n;
        const int first_m = (id / per_group) * H5_GROUP_M;
        const int group_m = min(tiles_m - first_m, H5_GROUP_M);
        const int in_group = id % per_group;
        tile_m = first_m + in_group % group_m;
        tile_n = in_group / group_m;
    }
    const int bm0 = tile_m * BM, bn0 = tile_n * BN;

    // This block's K slice (split-K over gridDim.z; the launcher pads K to BK * gridDim.z).
    const int k_len = K / gridDim.z;
    const int k_begin = blockIdx.z * k_len;
    const int ktiles = k_len / BK;

    // cp.async: the block's next tile to fetch (a_blk, b_blk: the same for all threads) plus
    // this thread's element offset; pass r adds r * ROWS_PER_PASS rows on both sides, and the
    // destination's swizzle key does not change with it. Every offset is below M * K or K * N,
    // which the launcher keeps under 2^31.
    const int a_row = tid / P::A_CHUNKS, a_chunk = tid % P::A_CHUNKS;
    const int b_row = tid / P::B_CHUNKS, b_chunk = tid % P::B_CHUNKS;
    const __half* a_blk = A + static_cast<size_t>(bm0) * K + k_begin;
    const __half* b_blk = B + static_cast<size_t>(k_begin) * N + bn0;
    const int a_thr = a_row * K + a_chunk * 8, b_thr = b_row * N + b_chunk * 8;
    const unsigned a_dst = sA + a_off(a_row, a_chunk);
    const unsigned b_dst = sB + b_off<P::B_ROW>(b_row, b_chunk);

    auto load_tile = [&](unsigned stage) {  // stage: byte offset of the ring slot
#pragma unroll
        for (int r = 0; r < P::A_COPIES; ++r)
            cp_async16(a_dst + stage + r * P::A_ROWS_PER_PASS * P::A_ROW,
                       a_blk + (a_thr + r * P::A_ROWS_PER_PASS * K));
#pragma unroll
        for (int r = 0; r < P::B_COPIES; ++r)
            cp_async16(b_dst + stage + r * P::B_ROWS_PER_PASS * P::B_ROW,
                       b_blk + (b_thr + r * P::B_ROWS_PER_PASS * N));
        a_blk += BK;
        b_blk += BK * N;
    };

    // ldmatrix lane addresses (byte offsets inside a stage).
    // A, 16x16 fragment i at k step kk: lane l points at row 16 i + l % 16 of the warp's rows,
    // chunk 2 kk + l / 16, so matrices 0..3 are (rows 0-7, k 0-7), (rows 8-15, k 0-7),
    // (rows 0-7, k 8-15), (rows 8-15, k 8-15) = the mma's a0a1, a2a3, a4a5, a6a7 registers.
    // The swizzle key (row >> 1) & 3 does not change with 16 i, and chunk 2 kk + l / 16 =
    // (l / 16) ^ 2 kk, so the offset is a_frag ^ (kk << 5), plus i * 1024.
    // B: a warp owns the 16-column groups warp_n + WARPS_N * jj (jj < NJ / 2) of the block tile,
    // interleaved with the other warps', so that its groups lie a multiple of 8 chunks apart and
    // the swizzle leaves their distance alone: one lane offset plus an immediate per group.
    // For k rows 16 kk + 0..15 and group jj, lane l points at k row 16 kk + l % 16, chunk
    // 2 (warp_n + WARPS_N jj) + l / 16, so with .trans the matrices 0..3 are (k 0-7, n 0-7),
    // (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15) = b0b1, b2b3 of n tile 2 jj, then of
    // n tile 2 jj + 1. The swizzle key k & 7 is l & 7.
    const unsigned a_frag = a_off(warp_m * P::WARP_M + lane % 16, lane / 16);
    const unsigned b_frag = b_off<P::B_ROW>(lane % 16, 2 * warp_n + lane / 16);
    constexpr int GS = 2 * WARPS_N;  // chunks between a warp's column groups
    auto b_group = [&](int jj) -> unsigned {
        if constexpr (GS % 8 == 0) {
            return b_frag + jj * GS * 16;
        } else {  // 2 or 4 chunks apart: groups inside one 8-chunk span differ in XOR-ed bits
            constexpr int PER8 = 8 / GS;
            return (b_frag ^ (((jj % PER8) * GS) << 4)) + (jj / PER8) * 128;
        }
    };
    auto load_frags = [&](unsigned (&fa)[MI][4], unsigned (&fb)[NJ][2], unsigned stage, int kk) {
        const unsigned a_base = sA + stage + (a_frag ^ (kk << 5));
        const unsigned b_base = sB + stage + kk * 16 * P::B_ROW;
#pragma unroll
        for (int i = 0; i < MI; ++i) ldsm_x4(fa[i], a_base + i * 16 * P::A_ROW);
#pragma unroll
        for (int jj = 0; jj < NJ / 2; ++jj) {
            unsigned r[4];
            ldsm_x4_trans(r, b_base + b_group(jj));
            fb[2 * jj][0] = r[0];
            fb[2 * jj][1] = r[1];
            fb[2 * jj + 1][0] = r[2];
            fb[2 * jj + 1][1] = r[3];
        }
    };

    float acc[MI][NJ][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j)
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.f;
    unsigned fa[2][MI][4], fb[2][NJ][2];

    // Prologue: tiles 0..STAGES-2 in flight. Exactly one commit group per tile index (empty
    // past the end), so cp.async group g always holds tile g and wait_group<STAGES-2> after
    // g + STAGES - 1 commits means tile g has landed.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ktiles) load_tile(s * P::STAGE);
        cp_async_commit();
    }
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    load_frags(fa[0], fb[0], 0, 0);

    constexpr unsigned RING = STAGES * P::STAGE;
    unsigned read_stage = 0;                        // byte offset of the stage holding tile `tile`
    unsigned write_stage = (STAGES - 1) * P::STAGE; // ... of the stage receiving tile `tile + STAGES - 1`
    for (int tile = 0; tile < ktiles; ++tile) {
#pragma unroll
        for (int kk = 0; kk < KSTEPS; ++kk) {
            if (kk == KSTEPS - 1) {
                // Tile + 1 has landed (wait) and is visible to all (barrier). The barrier also
                // tells that every warp has issued its last ldmatrix of stage (tile - 1) % STAGES,
                // which the cp.async below (next tile's kk = 0) overwrites. One barrier per tile.
                cp_async_wait<STAGES - 2>();
                __syncthreads();
                read_stage = (read_stage + P::STAGE == RING) ? 0 : read_stage + P::STAGE;
            }
            // Fragments of the next k step (the next tile's first step in the last step; past
            // the last tile they are read from a stale stage and never used).
            load_frags(fa[(kk + 1) % 2], fb[(kk + 1) % 2], read_stage, (kk + 1) % KSTEPS);
            if (kk == 0) {
                if (tile + STAGES - 1 < ktiles) load_tile(write_stage);
                cp_async_commit();
                write_stage = (write_stage + P::STAGE == RING) ? 0 : write_stage + P::STAGE;
            }
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int j = 0; j < NJ; ++j) {
                    const int jn = (i % 2) ? NJ - 1 - j : j;  // serpentine: reuse B operands back to back
                    mma_16816(acc[i][jn], fa[kk % 2][i], fb[kk % 2][jn][0], fb[kk % 2][jn][1]);
                }
        }
    }
    cp_async_wait<0>();  // only empty groups can be left; drain them before exit

    // Accumulator tile (16x8): c0, c1 at row g, columns 2t, 2t+1; c2, c3 at row g + 8.
    const int g = lane / 4, t = lane % 4;
    const int row0 = bm0 + warp_m * P::WARP_M + g;
    const int col0 = bn0 + warp_n * 16 + 2 * t;  // n tile j: + (j / 2) * 16 * WARPS_N + (j % 2) * 8
    if (gridDim.z == 1) {
        __half* c = C + static_cast<size_t>(row0) * N + col0;
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NJ; ++j) {
                __half* p = c + static_cast<size_t>(i * 16) * N + (j / 2) * 16 * WARPS_N + (j % 2) * 8;
                *reinterpret_cast<__half2*>(p) = __floats2half2_rn(acc[i][j][0], acc[i][j][1]);
                *reinterpret_cast<__half2*>(p + static_cast<size_t>(8) * N) =
                    __floats2half2_rn(acc[i][j][2], acc[i][j][3]);
            }
    } else {
        float* c = partials + static_cast<size_t>(blockIdx.z) * M * N + static_cast<size_t>(row0) * N + col0;
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NJ; ++j) {
                float* p = c + static_cast<size_t>(i * 16) * N + (j / 2) * 16 * WARPS_N + (j % 2) * 8;
                *reinterpret_cast<float2*>(p) = make_float2(acc[i][j][0], acc[i][j][1]);
                *reinterpret_cast<float2*>(p + static_cast<size_t>(8) * N) = make_float2(acc[i][j][2], acc[i][j][3]);
            }
    }
}

extern "C" __global__ void __launch_bounds__(256, 1)
hgemm_h5_128x256(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
                 __half* __restrict__ C, float* __restrict__ partials) {
    static_assert(H5<128, 256, 2, 4>::SMEM == 98304, "smem= of the launch line");
    hgemm_h5_body<128, 256, 2, 4>(M, N, K, A, B, C, partials);
}

extern "C" __global__ void __launch_bounds__(256, 2)
hgemm_h5_128x128(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
                 __half* __restrict__ C, float* __restrict__ partials) {
    static_assert(H5<128, 128, 2, 4>::SMEM == 65536, "smem= of the launch line");
    hgemm_h5_body<128, 128, 2, 4>(M, N, K, A, B, C, partials);
}

extern "C" __global__ void __launch_bounds__(128, 2)
hgemm_h5_64x128(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
                __half* __restrict__ C, float* __restrict__ partials) {
    static_assert(H5<64, 128, 2, 2>::SMEM == 49152, "smem= of the launch line");
    hgemm_h5_body<64, 128, 2, 2>(M, N, K, A, B, C, partials);
}
