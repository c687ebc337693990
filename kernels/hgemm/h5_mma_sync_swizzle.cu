// h5 mma.sync + swizzle: PTX mma.sync m16n8k16 (fp16 in, float32 accumulators) on ldmatrix
// fragments, a 4-stage cp.async ring and XOR-swizzled (unpadded) shared memory.
//
// Launch configurations (tiles, threads, shared memory): nsprof/ops/hgemm.py.
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
// - The epilogue stages C in shared memory with stmatrix (the accumulators are already in its
//   8x8 layout) and writes it with coalesced 16-byte stores (H5_EPI_SMEM=1), and the per-tile
//   barrier is an mbarrier each thread arrives at after its last read of a tile and waits on
//   one k step of MMAs later (H5_SPLIT_BAR=1). Together +2.5% at 8192^3 on the H200 against
//   half2 stores from the accumulators and __syncthreads (benchmarks/records/2026-11-22-h200-hgemm/h200-hgemm.md).
// Measured on the H200 over four runs: 421-430 TFLOP/s at 4096^3 (57-65% of cuBLAS), 420-433 at
// 8192^3 (62-68%); ncu at 1024^3: 700 shared-load conflicts (h3: 3.4 M), n-way 4.00, the
// minimum for ldmatrix.x4. No variant tried (k depth 64, 3-5 stages, 256x128, two blocks of
// 4 warps) passed ~460 TFLOP/s: mma.sync's ceiling on this chip, which wgmma (h6) lifts.
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
// Tuning (benchmarks/experiments/2026-11-22-h200-hgemm-variants/h5.json): the -D knobs below (k depth, ring depth, a shared-
// memory epilogue, a split arrive/wait barrier) and two entries the launcher does not declare
// yet: hgemm_h5_128x128_w4 (4 warps of 64x64, two blocks per SM) and hgemm_h5_256x128. With
// the knobs' defaults the declared entries compile to the same code as before.

#include <cuda_fp16.h>

// Tuning knobs (a tuning run overrides them with -D; the defaults are what nsprof/ops/hgemm.py declares).
// H5_BK: k depth of a shared-memory tile, 32, 64 or 128 (A rows of 64, 128, 256 bytes).
// H5_STAGES: cp.async ring depth (>= 2). (Neither applies to hgemm_h5_128x128: see there.)
// H5_GROUP_M: tile rows per rasterization group.
// H5_EPI_SMEM=1: C leaves through shared memory (stmatrix, then 16-byte coalesced stores)
// instead of half2 stores straight from the accumulators (see the epilogue).
// H5_SPLIT_BAR=1: the per-tile __syncthreads becomes an mbarrier (8 bytes of static shared
// memory) whose arrive and wait are one k step of MMAs apart (see the main loop).
// Shared memory of an entry: STAGES * (BM + BN) * BK * 2 bytes (with H5_EPI_SMEM the C tile,
// BM * BN * 2 bytes, reuses the ring; a static_assert checks that it fits).
#ifndef H5_BK
#define H5_BK 32
#endif
#ifndef H5_STAGES
#define H5_STAGES 4
#endif
#ifndef H5_GROUP_M
#define H5_GROUP_M 8
#endif
#ifndef H5_EPI_SMEM
#define H5_EPI_SMEM 1
#endif
#ifndef H5_SPLIT_BAR
#define H5_SPLIT_BAR 1
#endif

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
// The inverse of ldsm_x4 (sm_90): lane l gives the address of row l % 8 of matrix l / 8 and
// supplies, in register q, row l / 4, columns 2(l % 4), 2(l % 4) + 1 of matrix q.
__device__ __forceinline__ void stsm_x4(unsigned addr, unsigned r0, unsigned r1, unsigned r2, unsigned r3) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
                 ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
}
__device__ __forceinline__ unsigned pack_half2(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);  // lo in the low 16 bits: the lower column
    return *reinterpret_cast<const unsigned*>(&h);
}
// mbarrier (sm_80+; try_wait sm_90): arrive has release and try_wait acquire semantics at
// CTA scope, so what a thread wrote (its completed cp.async included) or read before arriving
// is ordered before what any thread does after its wait for that phase returns.
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {  // phase of this parity completed
    asm volatile("{\n .reg .pred done;\n"
                 "H5_WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 " @!done bra H5_WAIT;\n}\n" ::"r"(bar), "r"(parity) : "memory");
}
// D (16x8 f32) += A (16x16 f16, row) * B (16x8 f16, col).
__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <int BM, int BN, int WARPS_M, int WARPS_N, int BK_ = H5_BK, int STAGES_ = H5_STAGES>
struct H5 {
    static constexpr int BK = BK_, STAGES = STAGES_;
    static constexpr bool EPI_SMEM = H5_EPI_SMEM != 0;
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
    static constexpr int C_ROW = BN * 2;                                 // bytes per row of the C tile
    static constexpr int C_COPIES = BM * B_CHUNKS / THREADS;             // 16-byte C stores per thread
    static constexpr int C_ROWS_PER_PASS = THREADS / B_CHUNKS;
    static_assert(BK == 32 || BK == 64 || BK == 128, "the A swizzle: 64-byte rows, or multiples of 128 bytes");
    static_assert(STAGES >= 2, "a ring of at least two stages");
    static_assert(!H5_SPLIT_BAR || STAGES >= 3 || KSTEPS > 2, "H5_SPLIT_BAR with BK = 32 needs 3 stages");
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
    static_assert(!EPI_SMEM || (BM * BN * 2 <= SMEM && C_COPIES * THREADS == BM * B_CHUNKS &&
                                C_ROWS_PER_PASS % 8 == 0), "the C tile reuses the ring");
};

// Swizzled byte offsets inside one stage.
// B (BK x BN halves), and any tile whose rows are a multiple of 128 bytes: every row starts at
// bank 0; XOR-ing the low 3 chunk bits with k & 7 spreads 8 consecutive rows of one chunk over
// 8 groups.
template <int B_ROW>
__device__ __forceinline__ int b_off(int k, int chunk) { return k * B_ROW + ((chunk ^ (k & 7)) << 4); }
// A (BM x BK halves). With BK = 32 (64-byte rows) two rows share a 128-byte line of the 32
// banks; XOR-ing the chunk with bits 1-2 of the row spreads 8 consecutive rows of one chunk
// over 8 groups. Longer rows (BK = 64, 128) swizzle like B.
template <int A_ROW>
__device__ __forceinline__ int a_off(int row, int chunk) {
    if constexpr (A_ROW == 64) return row * 64 + ((chunk ^ ((row >> 1) & 3)) << 4);
    else return b_off<A_ROW>(row, chunk);
}

template <int BM, int BN, int WARPS_M, int WARPS_N, int BK_ = H5_BK, int STAGES_ = H5_STAGES>
__device__ __forceinline__ void hgemm_h5_body(int M, int N, int K, const __half* __restrict__ A,
                                              const __half* __restrict__ B, __half* __restrict__ C,
                                              float* __restrict__ partials) {
    using P = H5<BM, BN, WARPS_M, WARPS_N, BK_, STAGES_>;
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
    const unsigned a_dst = sA + a_off<P::A_ROW>(a_row, a_chunk);
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
    // The swizzle key ((row >> 1) & 3 for 64-byte rows, else row & 7) does not change with
    // 16 i, and chunk 2 kk + l / 16 = (l / 16) ^ 2 kk, whose bits the key leaves alone above
    // bit 2, so the offset is a_frag ^ (kk << 5), plus i * 16 * A_ROW.
    // B: a warp owns the 16-column groups warp_n + WARPS_N * jj (jj < NJ / 2) of the block tile,
    // interleaved with the other warps', so that its groups lie a multiple of 8 chunks apart and
    // the swizzle leaves their distance alone: one lane offset plus an immediate per group.
    // For k rows 16 kk + 0..15 and group jj, lane l points at k row 16 kk + l % 16, chunk
    // 2 (warp_n + WARPS_N jj) + l / 16, so with .trans the matrices 0..3 are (k 0-7, n 0-7),
    // (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15) = b0b1, b2b3 of n tile 2 jj, then of
    // n tile 2 jj + 1. The swizzle key k & 7 is l & 7.
    const unsigned a_frag = a_off<P::A_ROW>(warp_m * P::WARP_M + lane % 16, lane / 16);
    const unsigned b_frag = b_off<P::B_ROW>(lane % 16, 2 * warp_n + lane / 16);
    constexpr int GS = 2 * WARPS_N;  // chunks between a warp's column groups
    auto group = [&](unsigned frag, int jj) -> unsigned {  // frag: the lane's offset for jj = 0
        if constexpr (GS % 8 == 0) {
            return frag + jj * GS * 16;
        } else {  // 2 or 4 chunks apart: groups inside one 8-chunk span differ in XOR-ed bits
            constexpr int PER8 = 8 / GS;
            return (frag ^ (((jj % PER8) * GS) << 4)) + (jj / PER8) * 128;
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
            ldsm_x4_trans(r, b_base + group(b_frag, jj));
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

#if H5_SPLIT_BAR
    __shared__ __align__(8) unsigned long long tile_bar;
    const unsigned bar = smem_u32(&tile_bar);
    if (tid == 0) mbar_init(bar, P::THREADS);  // made visible by the prologue's barrier
#endif
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
                // tells that every warp has issued its last ldmatrix of this tile's stage, which
                // the cp.async of the next tile's kk = 0 overwrites. One barrier per tile.
#if H5_SPLIT_BAR
                mbar_wait(bar, tile & 1);  // every thread arrived for this tile (below, kk = KSTEPS - 2)
#else
                cp_async_wait<STAGES - 2>();
                __syncthreads();
#endif
                read_stage = (read_stage + P::STAGE == RING) ? 0 : read_stage + P::STAGE;
            }
            // Fragments of the next k step (the next tile's first step in the last step; past
            // the last tile they are read from a stale stage and never used).
            load_frags(fa[(kk + 1) % 2], fb[(kk + 1) % 2], read_stage, (kk + 1) % KSTEPS);
#if H5_SPLIT_BAR
            if (kk == KSTEPS - 2) {
                // The split barrier's arrive: this thread's copies of tile + 1 have landed, and
                // its warp has issued its last ldmatrix of this tile's stage (the load_frags just
                // above). The wait comes a k step of MMAs later, so the barrier's latency and the
                // warps' skew hide behind MMAs instead of stalling the tensor pipes. (With
                // KSTEPS = 2 this is kk = 0, before this tile's commit: one group fewer may pend.)
                cp_async_wait<(KSTEPS == 2) ? STAGES - 3 : STAGES - 2>();
                mbar_arrive(bar);
            }
#endif
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
    if constexpr (P::EPI_SMEM) {
        if (gridDim.z == 1) {  // uniform over the block: the barriers below are safe
            // Direct half2 stores write 16 bytes to each of 8 rows per instruction (8 partial
            // lines). Instead, the warps put the rounded tile into the (now idle) ring as BM rows
            // of BN halves, swizzled like B, with stmatrix, which takes the accumulator layout
            // as it is: for the n tiles 2 jj and 2 jj + 1 of row block i, packed (c0, c1) and
            // (c2, c3) are rows g of the 8x8 matrices (rows 0-7, n 0-7), (rows 8-15, n 0-7),
            // (rows 0-7, n 8-15), (rows 8-15, n 8-15) of the 16x16 group, and lane l gives the
            // address of row l % 16, chunk l / 16 of the group: the B ldmatrix lane pattern,
            // so the same group offsets apply. Then every thread copies 16-byte chunks, a warp
            // covering whole rows of the tile, to C.
            __syncthreads();  // every warp has read its last fragments from the ring
            const unsigned c_frag = sA + b_off<P::C_ROW>(warp_m * P::WARP_M + lane % 16, 2 * warp_n + lane / 16);
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int jj = 0; jj < NJ / 2; ++jj)
                    stsm_x4(group(c_frag, jj) + i * 16 * P::C_ROW,
                            pack_half2(acc[i][2 * jj][0], acc[i][2 * jj][1]),
                            pack_half2(acc[i][2 * jj][2], acc[i][2 * jj][3]),
                            pack_half2(acc[i][2 * jj + 1][0], acc[i][2 * jj + 1][1]),
                            pack_half2(acc[i][2 * jj + 1][2], acc[i][2 * jj + 1][3]));
            __syncthreads();
            // Thread tid copies chunk tid % B_CHUNKS of rows tid / B_CHUNKS + r * C_ROWS_PER_PASS
            // (a multiple of 8 rows apart: the same swizzle key, so a constant offset).
            const int c_row = tid / P::B_CHUNKS, c_chunk = tid % P::B_CHUNKS;
            const unsigned c_src = sA + b_off<P::C_ROW>(c_row, c_chunk);
            __half* c = C + static_cast<size_t>(bm0 + c_row) * N + bn0 + c_chunk * 8;
#pragma unroll
            for (int r = 0; r < P::C_COPIES; ++r) {
                uint4 v;
                asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                             : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                             : "r"(c_src + r * P::C_ROWS_PER_PASS * P::C_ROW));
                *reinterpret_cast<uint4*>(c + static_cast<size_t>(r * P::C_ROWS_PER_PASS) * N) = v;
            }
            return;
        }
    }
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

// The shared memory nsprof/ops/hgemm.py declares (static_assert) holds for the default knobs; with others the
// variants list gives STAGES * (BM + BN) * BK * 2.
#define H5_DEFAULT_RING (H5_BK == 32 && H5_STAGES == 4)

extern "C" __global__ void __launch_bounds__(256, 1)
hgemm_h5_128x256(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
                 __half* __restrict__ C, float* __restrict__ partials) {
    static_assert(!H5_DEFAULT_RING || H5<128, 256, 2, 4>::SMEM == 98304, "the smem nsprof/ops/hgemm.py declares");
    hgemm_h5_body<128, 256, 2, 4>(M, N, K, A, B, C, partials);
}

extern "C" __global__ void __launch_bounds__(256, 2)
hgemm_h5_128x128(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
                 __half* __restrict__ C, float* __restrict__ partials) {
    // Its 128-register budget (two blocks of 8 warps) fits the default ring only (with
    // H5_STAGES=3 or H5_BK=64 ptxas spills), so H5_BK and H5_STAGES leave it alone.
    static_assert(H5<128, 128, 2, 4, 32, 4>::SMEM == 65536, "the smem nsprof/ops/hgemm.py declares");
    hgemm_h5_body<128, 128, 2, 4, 32, 4>(M, N, K, A, B, C, partials);
}

extern "C" __global__ void __launch_bounds__(128, 2)
hgemm_h5_64x128(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
                __half* __restrict__ C, float* __restrict__ partials) {
    static_assert(!H5_DEFAULT_RING || H5<64, 128, 2, 2>::SMEM == 49152, "the smem nsprof/ops/hgemm.py declares");
    hgemm_h5_body<64, 128, 2, 2>(M, N, K, A, B, C, partials);
}

// Tuning entries (benchmarks/experiments/2026-11-22-h200-hgemm-variants/h5.json; not declared to the launcher yet).
// 128x128 with 4 warps of 64x64 (the 128x256 tile's warp tile, 234 registers) and two blocks
// per SM: the same 8 warps per SM as 128x256, but in two independent blocks, so one block's
// barrier waits, prologue and epilogue overlap the other's MMAs; the price is a third more L2
// traffic per FLOP than 128x256 (64 against 85 FLOP per byte).
extern "C" __global__ void __launch_bounds__(128, 2)
hgemm_h5_128x128_w4(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
                    __half* __restrict__ C, float* __restrict__ partials) {
    static_assert(!H5_DEFAULT_RING || H5<128, 128, 2, 2>::SMEM == 65536, "smem of the variant");
    hgemm_h5_body<128, 128, 2, 2>(M, N, K, A, B, C, partials);
}

// 256x128 (8 warps as 4 x 2, 64x64 each): 128x256 transposed; A is the larger operand.
extern "C" __global__ void __launch_bounds__(256, 1)
hgemm_h5_256x128(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
                 __half* __restrict__ C, float* __restrict__ partials) {
    static_assert(!H5_DEFAULT_RING || H5<256, 128, 4, 2>::SMEM == 98304, "smem of the variant");
    hgemm_h5_body<256, 128, 4, 2>(M, N, K, A, B, C, partials);
}
