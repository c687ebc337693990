// v11 wgmma + TMA on TF32: Hopper's warpgroup MMA for float32 inputs, fed by the tensor memory
// accelerator, warp-specialised (the HGEMM ladder's h6, for SGEMM). sm_90a only.
//
// Launch configurations (tiles, threads, shared memory): nsprof/ops/sgemm.py.
//
// What changed since v10 (mma.sync m16n8k8 on ldmatrix fragments, a 3-stage cp.async ring, 8
// warps each copying and loading its own fragments): here
//  * TMA copies whole tiles: one thread issues one cp.async.bulk.tensor per box, the hardware
//    computes the addresses, writes the tile in the 128-byte swizzled layout, zero-fills
//    whatever lies outside the matrix, and counts the bytes on an mbarrier (complete_tx);
//  * wgmma reads both operands straight from shared memory through 64-bit matrix descriptors:
//    one wgmma.mma_async m64n256k8 (tf32 in, f32 accumulators) is a 64 x 256 x 8 product for a
//    whole warpgroup, issued asynchronously: no ldmatrix, no register fragments of A or B;
//  * warp specialisation: warpgroup 0 only waits for free ring stages and issues TMA
//    (setmaxnreg.dec hands its registers back); warpgroups 1 and 2 only wait for full stages
//    and issue wgmma (setmaxnreg.inc: 232 registers, 128 of them accumulators of a 64 x 256
//    slice). Full/empty mbarriers hand the stages over; no __syncthreads in the main loop;
//  * persistent tiles (128x256, 128x128): one block per SM walks tiles down groups of
//    V11_GROUP_ROWS rows of C (L2 reuse of Bt); the producer loads the next tile while the
//    consumers store this one.
// The layout wgmma needs: for .tf32 both operands must be K-major in shared memory (the
// transpose immediates imm-trans-a/b exist only for f16/bf16). The 256x128 entry, the one
// large products run, avoids the transpose below altogether: it computes C^T = B^T A^T with
// B's tile in registers (sgemm_v11_rs_256x128, at the end of this file). For the others: A (row-major M x K) is
// K-major: its TMA box is {32 floats = 128 bytes of K, 128 rows}, the canonical K-major
// 128B-swizzle layout (8-row x 128-byte swizzle atoms, SBO = 1024 bytes; a k8 step advances
// the descriptor's start address by 8 floats = 32 bytes inside the swizzled row). B
// (row-major K x N) is N-major, so it is first transposed into Bt (N x K row-major) by
// sgemm_v11_transpose_b; Bt then loads exactly like A (box {32 floats, BN rows}).
// The transpose is part of the stage's timed work (the launcher runs it before each GEMM):
// it reads and writes 4 K N bytes, about 2 x 64 MB = 134 MB at 4096^3, some 35-40 us at
// the H200's ~3.5-4 TB/s of copy bandwidth, i.e. ~10% of a 4096^3 GEMM at 400 TFLOP/s and
// ~5% at 8192^3 (bench records it apart as steps_ms["transpose B"]). A caller that reuses
// B (weights) would transpose it once.
// Why it should be faster than v10: the tensor cores are fed at wgmma rate (mma.sync cannot
// keep Hopper's tensor cores busy: v10 runs 146 TFLOP/s at 4096^3, cuBLAS TF32 389), operand
// traffic bypasses the register file, and 4 (128x256) to 6 (128x128) stages of loads are in
// flight. Expect about half of h6's fp16 rate: tf32 wgmma does half the FLOPs per cycle.
// Metrics to watch: sm__pipe_tensor_op_gmma_cycles_active (the wgmma pipe busy; the hmma pipe
// drops to zero), sm__ops_path_tensor_op_hgmma_src_tf32 counts the FLOPs, smsp__inst_executed
// falls >10x against v10 (no ldmatrix, no cp.async, no per-thread address math), and
// lts__t_bytes (L2 -> SM traffic per tile).
// Precision: the tensor cores read A's float32 bits as TF32 (the low 13 mantissa bits
// dropped: truncation), while Bt is rounded to TF32 with cvt.rna in the transpose; products
// are accumulated in float32. Expect errors near 5e-4 (v10: 2.9e-4 with both rounded, 7.8e-4
// with both truncated), checked against the ladder's TF32 tolerance 5e-3.
// Ragged sizes: no padding copies when K % 4 == 0 (rows of A and Bt 16-byte aligned, which
// TMA needs): the tensor maps have the true M, N, K, TMA fills boxes past them with zeros
// (which add nothing to the sums), and C is stored with bounds checks (float2 where the
// row's pair is inside and 8-byte aligned, else scalar). When K % 4 != 0 the launcher pads
// A, B and C on the device to multiples of the tile (timed with the stage).
// Shared memory: 1 KB of alignment slack + STAGES x (16 KB of A + BN x 128 bytes of Bt) +
// the barriers: 4 x 48 KB (128x256), 6 x 32 KB (128x128), 5 x 24 KB (128x64).
// Tuning knobs (-D; defaults = the entries as declared): V11_STAGES_256, V11_STAGES_128,
// V11_STAGES_64 (ring depths; the launcher's shared memory follows them), V11_GROUP_ROWS
// (tile order of the persistent entries).
// sgemm_v11_128x64 is not persistent: one block per 128x64 tile, for sizes with too few
// large tiles to fill the SMs (1024^3: 128 tiles).

#define V11_BK 32  // 32 floats = 128 bytes: one 128-byte swizzle atom wide
#define V11_PRODUCER_REGS 40
#define V11_CONSUMER_REGS 232  // 128 * 40 + 256 * 232 = 64512 <= 65536 registers per SM

#ifndef V11_STAGES_256
#define V11_STAGES_256 4
#endif
#ifndef V11_STAGES_128
#define V11_STAGES_128 6
#endif
#ifndef V11_STAGES_64
#define V11_STAGES_64 5
#endif
#ifndef V11_GROUP_ROWS
#define V11_GROUP_ROWS 2048
#endif

extern __shared__ unsigned char v11_smem[];

// nvcc -arch=sm_90a also runs a plain compute_90 PTX pass, where wgmma and setmaxnreg do not
// exist: there the GEMM entries compile to a trap (the launcher runs them on sm_90a alone).
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define V11_SM90A_ONLY(call) __trap()
#else
#define V11_SM90A_ONLY(call) call
#endif

// ---------------------------------------------------------------------------------------
// The transpose: Bt (N x K) = B^T with each element rounded to TF32 (cvt.rna). Block (32, 8)
// moves a 32 x 32 tile through shared memory padded to 33 floats per row (no bank
// conflicts); grid (ceil(N / 32), ceil(K / 32)). Both global directions are coalesced.
// ---------------------------------------------------------------------------------------
__device__ __forceinline__ float round_tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

extern "C" __global__ void __launch_bounds__(256)
sgemm_v11_transpose_b(int K, int N, const float* B, float* Bt) {
    __shared__ float tile[32][33];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int n0 = blockIdx.x * 32, k0 = blockIdx.y * 32;
#pragma unroll
    for (int p = 0; p < 32; p += 8) {
        const int k = k0 + ty + p, n = n0 + tx;
        if (k < K && n < N) tile[ty + p][tx] = B[(size_t)k * N + n];
    }
    __syncthreads();
#pragma unroll
    for (int p = 0; p < 32; p += 8) {
        const int n = n0 + ty + p, k = k0 + tx;
        if (n < N && k < K) Bt[(size_t)n * K + k] = round_tf32(tile[tx][ty + p]);
    }
}

// ---------------------------------------------------------------------------------------
// PTX wrappers: shared-memory addresses, mbarriers, TMA, wgmma.
// ---------------------------------------------------------------------------------------
#include "../common/hopper_async.cuh"

// wgmma matrix descriptor: start address >> 4 (bits 0-13), leading byte offset >> 4 (16-29,
// unused for swizzled K-major), stride byte offset >> 4 (32-45: 1024 bytes from one 8-row
// atom to the next), base offset 0 (atoms start 1024-byte aligned; the 32-byte k8 steps stay
// inside one), swizzle mode 1 = 128 bytes (bits 62-63).
__device__ __forceinline__ unsigned long long make_desc(unsigned addr) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)(16 >> 4) << 16) |
           ((unsigned long long)(1024 >> 4) << 32) | (1ull << 62);
}

// D(64 x N, f32) += A(64 x 8, K-major) * B(8 x N, K-major), both tf32 from shared memory. No
// transpose immediates: .tf32 has none (both operands K-major).
HOPPER_WGMMA("8", "f32.tf32.tf32", "")

// Tile order of the persistent entries: consecutive tiles go down a group of V11_GROUP_ROWS
// rows of C before moving right, so one wave of blocks shares few column tiles of Bt.
template <int BM>
__device__ __forceinline__ void tile_coords(int u, int tiles_m, int tiles_n, int& tm, int& tn) {
    grouped_coords<V11_GROUP_ROWS, BM>(u, tiles_m, tiles_n, tm, tn);
}

// Epilogue: one warp stores its 16-row slab of a 64 x BN f32 accumulator fragment. wgmma's D
// fragment: warp w of the warpgroup holds rows 16w..16w+15; for 8-column group j, lane l holds
// d[4j], d[4j+1] at row 16w + l/4, columns 8j + 2(l%4) + {0,1}, and d[4j+2], d[4j+3] 8 rows
// below. A warp's float2 store covers 8 rows x 32 bytes: whole 32-byte sectors.
template <int BN>
__device__ __forceinline__ void store_slab(const float (&d)[BN / 2], float* C, int M, int N, int row0, int n0,
                                           int lane) {
    const int r0 = row0 + lane / 4;
    const int cbase = n0 + 2 * (lane % 4);
    const bool pairs = (N % 2) == 0;  // then (row * N + even column) is 8-byte aligned
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int r = r0 + 8 * h;
        if (r >= M) continue;
        float* row = C + (size_t)r * N;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
            const int col = cbase + 8 * j;
            const float lo = d[4 * j + 2 * h], hi = d[4 * j + 2 * h + 1];
            if (pairs && col + 1 < N) {
                *reinterpret_cast<float2*>(row + col) = make_float2(lo, hi);
            } else {
                if (col < N) row[col] = lo;
                if (col + 1 < N) row[col + 1] = hi;
            }
        }
    }
}

// The ring's mbarriers, set up by one thread before any warp uses them: full[s] counts the
// producer's arrive.expect_tx, empty[s] one arrive per consumer warp (8).
template <int STAGES>
__device__ __forceinline__ void v11_ring_init(unsigned full_bar, unsigned empty_bar) {
    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full_bar + 8 * s, 1);
            mbar_init(empty_bar + 8 * s, 8);
        }
        // The inits are generic-proxy writes; TMA's complete_tx (async proxy) must see them.
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
    __syncthreads();
}

// The producer warpgroup: one thread walks the block's tiles (persistent: every gridDim.x-th of the
// grouped order; else the block's own) and, per k tile, waits for a free stage, expects its bytes,
// loads A's BM x 32 box and lets `load_b(stage's B address, k0, n0, full barrier)` load B's part.
template <int BM, int BN, int STAGES, int STAGE_BYTES, int A_BYTES, bool PERSISTENT, class LoadB>
__device__ __forceinline__ void v11_produce(int M, int N, int K, const void* tmA, const void* tmB, unsigned base,
                                            unsigned full_bar, unsigned empty_bar, LoadB load_b) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(V11_PRODUCER_REGS));
    if (threadIdx.x % 128 == 0) {
        prefetch_tmap(tmA);
        prefetch_tmap(tmB);
        const int tiles_n = (N + BN - 1) / BN, tiles_m = (M + BM - 1) / BM;
        const int num_tiles = PERSISTENT ? tiles_m * tiles_n : 1;
        const int k_tiles = (K + V11_BK - 1) / V11_BK;  // the last one zero-filled past K
        int s = 0;
        unsigned phase = 0;
        for (int u = PERSISTENT ? (int)blockIdx.x : 0; u < num_tiles; u += PERSISTENT ? (int)gridDim.x : 1) {
            int tm, tn;
            if (PERSISTENT) tile_coords<BM>(u, tiles_m, tiles_n, tm, tn);
            else { tm = blockIdx.y; tn = blockIdx.x; }
            const int m0 = tm * BM, n0 = tn * BN;
            for (int kt = 0; kt < k_tiles; ++kt) {
                // Free once all 8 consumer warps are done reading it; the first pass waits on the
                // phase "before" the first and returns at once.
                mbar_wait(empty_bar + 8 * s, phase ^ 1);
                const unsigned fb = full_bar + 8 * s;
                const unsigned sa = base + s * STAGE_BYTES;
                const int k0 = kt * V11_BK;
                mbar_arrive_expect_tx(fb, STAGE_BYTES);
                tma_load_2d(sa, tmA, k0, m0, fb);
                load_b(sa + A_BYTES, k0, n0, fb);
                if (++s == STAGES) { s = 0; phase ^= 1; }
            }
        }
    }
    __syncwarp();
}

// ---------------------------------------------------------------------------------------
// The kernel body. Block = 3 warpgroups: 0 = producer, 1 and 2 = consumers (rows 0-63 and
// 64-127 of the 128-row tile, all BN columns each).
// Shared memory (1024-byte aligned): STAGES x [A 128 x 32 floats (16 KB) | Bt BN x 32 floats],
// then the full[STAGES] and empty[STAGES] mbarriers.
// ---------------------------------------------------------------------------------------
template <int BN, int STAGES, bool PERSISTENT>
__device__ __forceinline__ void v11_body(int M, int N, int K, const void* tmA, const void* tmB, float* C) {
    constexpr int BM = 128;
    constexpr int A_BYTES = BM * V11_BK * 4;  // 16 KB
    constexpr int B_BYTES = BN * V11_BK * 4;  // one box of BN rows of Bt
    constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    static_assert(STAGES >= 2, "a stage is released one k tile late (wgmma.wait_group 1)");
    static_assert(BN == 64 || BN == 128 || BN == 256, "one TMA box of Bt: at most 256 rows");

    const unsigned base = (smem_u32(v11_smem) + 1023u) & ~1023u;  // 128B swizzle atoms: 1024 B
    const unsigned full_bar = base + STAGES * STAGE_BYTES;         // full[s] at full_bar + 8 s
    const unsigned empty_bar = full_bar + 8 * STAGES;              // empty[s] at empty_bar + 8 s

    const int warpgroup = threadIdx.x / 128;
    const int tid = threadIdx.x % 128;
    v11_ring_init<STAGES>(full_bar, empty_bar);

    const int tiles_n = (N + BN - 1) / BN;
    const int tiles_m = (M + BM - 1) / BM;
    const int num_tiles = PERSISTENT ? tiles_m * tiles_n : 1;
    const int first = PERSISTENT ? (int)blockIdx.x : 0;
    const int step = PERSISTENT ? (int)gridDim.x : 1;
    const int k_tiles = (K + V11_BK - 1) / V11_BK;  // the last one zero-filled past K

    if (warpgroup == 0) {
        // ---------------- producer: A's 128-row box and Bt's BN-row box a stage ----------------
        v11_produce<BM, BN, STAGES, STAGE_BYTES, A_BYTES, PERSISTENT>(
            M, N, K, tmA, tmB, base, full_bar, empty_bar,
            [tmB](unsigned sb, int k0, int n0, unsigned fb) { tma_load_2d(sb, tmB, k0, n0, fb); });
    } else {
        // ---------------- consumers ----------------
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(V11_CONSUMER_REGS));
        const int c = warpgroup - 1;  // rows 64c .. 64c+63 of the tile
        const int warp = tid / 32, lane = tid % 32;
        // Descriptor templates at stage 0; a stage / k step adds (byte offset >> 4) to the
        // address field (no carry out of it: shared addresses are < 256 KB).
        const unsigned long long desc_a0 = make_desc(base + c * 64 * 128);
        const unsigned long long desc_b0 = make_desc(base + A_BYTES);
        float acc[BN / 2];
        int s = 0;
        unsigned phase = 0;
        for (int u = first; u < num_tiles; u += step) {
            int tm, tn;
            if (PERSISTENT) tile_coords<BM>(u, tiles_m, tiles_n, tm, tn);
            else { tm = blockIdx.y; tn = blockIdx.x; }
            const int m0 = tm * BM, n0 = tn * BN;
            int prev = 0;
            for (int kt = 0; kt < k_tiles; ++kt) {
                mbar_wait(full_bar + 8 * s, phase);
                fence_acc(acc);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < V11_BK / 8; ++kk) {
                    // k8 step = 8 floats = 32 bytes inside the 128-byte swizzled rows of A and Bt.
                    const unsigned long long da = desc_a0 + ((s * STAGE_BYTES + kk * 32) >> 4);
                    const unsigned long long db = desc_b0 + ((s * STAGE_BYTES + kk * 32) >> 4);
                    wgmma_bn<BN>(acc, da, db, (kt | kk) != 0);
                }
                wgmma_commit();
                fence_acc(acc);
                // Keep this k tile's MMAs in flight; the previous tile's are done, so its stage
                // goes back to the producer.
                wgmma_wait<1>();
                if (kt > 0 && lane == 0) mbar_arrive(empty_bar + 8 * prev);
                prev = s;
                if (++s == STAGES) { s = 0; phase ^= 1; }
            }
            wgmma_wait<0>();
            fence_acc(acc);
            if (lane == 0) mbar_arrive(empty_bar + 8 * prev);
            store_slab<BN>(acc, C, M, N, m0 + c * 64 + warp * 16, n0, lane);
        }
    }
}

extern "C" __global__ void __launch_bounds__(384, 1)
sgemm_v11_128x256(int M, int N, int K, const void* tmA, const void* tmB, float* C) {
    V11_SM90A_ONLY((v11_body<256, V11_STAGES_256, true>(M, N, K, tmA, tmB, C)));
}

extern "C" __global__ void __launch_bounds__(384, 1)
sgemm_v11_128x128(int M, int N, int K, const void* tmA, const void* tmB, float* C) {
    V11_SM90A_ONLY((v11_body<128, V11_STAGES_128, true>(M, N, K, tmA, tmB, C)));
}

extern "C" __global__ void __launch_bounds__(384, 1)
sgemm_v11_128x64(int M, int N, int K, const void* tmA, const void* tmB, float* C) {
    V11_SM90A_ONLY((v11_body<64, V11_STAGES_64, false>(M, N, K, tmA, tmB, C)));
}


// ---------------------------------------------------------------------------------------
// sgemm_v11_rs_256x128: the same product without transposing B ("rs": wgmma's A operand from
// registers). wgmma.tf32 reads a shared-memory operand only K-major, and B (row-major K x N) is
// N-major, which is why the entries above transpose it first: 0.051 of 0.44 ms at 4096^3 on an
// H100, the whole gap to cuBLAS TF32 (benchmarks/records/2026-11-26-h100-paired-library/h100-paired-library.md). Here the block
// computes a tile of C^T = B^T . A^T:
//  * wgmma's B operand (K-major, from shared memory by descriptor) is A's tile as TMA loads it
//    for the entries above, 256 rows of A x 32 k: wgmma's N is 256 rows of C;
//  * wgmma's A operand (64 x 8, from registers) is a 64-column slab of B^T: each consumer
//    warpgroup reads its 64 columns of B's tile from shared memory into the m64k8 tf32 register
//    fragment (lane l of warp w: rows 16w + l/4 and +8, k columns l%4 and +4; CUTLASS's
//    ALayout_64x8), rounding each to TF32 (cvt.rna) as the transpose did;
//  * the accumulators hold C^T: lane l of warp w has C[m][n] for n = 16w + l/4 (+8) and m =
//    8j + 2(l%4) + {0,1}; each store covers 4 rows of C x 32 contiguous bytes (whole sectors).
// B's tile is 4 TMA boxes of {32 floats of N = 128 bytes, 32 rows of K} in the 128-byte swizzle:
// element (k, n) of a box sits at k*128 + ((n/4) ^ (k%8))*16 + (n%4)*4.
// Two fragment sets alternate: while one k tile's MMAs run, the lanes read the next tile's
// fragments into the other set, and the MMAs retire (wgmma.wait_group 0) before the stage goes
// back. Leaving one tile's MMAs in flight across the next (wait_group 1) made ptxas unable to tell
// which set the MMAs in flight still read, and it serialized every wgmma (its warning C7513):
// 0.82 of torch.mm at 4096^3 on an H100.
// Measured on an H100, paired with torch.mm (TF32) on the same arrays, two runs of five rounds:
// 1.023-1.027 of its speed at 4096^3 and 1.006-1.010 at 8192^3, 1.13-1.14x and 1.06-1.10x the
// transposing 128x256 entry (benchmarks/experiments/2026-11-26-h100-v11-no-transpose/h100-v11-no-transpose.md). Without the prefetch of the
// next tile's fragments (each tile's loads after its predecessor's MMAs retired): 0.996 and 0.98.
// Block: 3 warpgroups; consumer c computes columns 64c..64c+63 of the 128-column tile, all 256
// rows. Shared memory: STAGES x [A 256 x 32 floats (32 KB) | B 32 x 128 floats (16 KB)].
// ---------------------------------------------------------------------------------------
#ifndef V11_RS_STAGES
#define V11_RS_STAGES 4
#endif
#ifndef V11_RS_STAGES_128
#define V11_RS_STAGES_128 6
#endif

// D(64 x 256, f32) += A(64 x 8 tf32, registers) * B(8 x 256, K-major, from desc b).
__device__ __forceinline__ void wgmma_rs_n256(float (&d)[128], unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                              unsigned long long b, int scale_d) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %133, 0;\n"
                 " wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {" HOPPER_D128 "}, "
                 "{%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
                 : HOPPER_ACC128
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b), "r"(scale_d));
}

// D(64 x 128, f32) += A(64 x 8 tf32, registers) * B(8 x 128, K-major, from desc b): the 128x128 tile's.
__device__ __forceinline__ void wgmma_rs_n128(float (&d)[64], unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                              unsigned long long b, int scale_d) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %69, 0;\n"
                 " wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {" HOPPER_D64 "}, "
                 "{%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
                 : HOPPER_ACC64
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b), "r"(scale_d));
}

template <int BM>
__device__ __forceinline__ void wgmma_rs(float (&d)[BM / 2], unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                         unsigned long long b, int scale_d) {
    if constexpr (BM == 256) wgmma_rs_n256(d, a0, a1, a2, a3, b, scale_d);
    else wgmma_rs_n128(d, a0, a1, a2, a3, b, scale_d);
}

// One float of shared memory, rounded to TF32 (the fragment's .b32 bits).
__device__ __forceinline__ unsigned lds_tf32(unsigned addr) {
    float x;
    asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(x) : "r"(addr) : "memory");
    unsigned r;
    asm volatile("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

// This lane's m64k8 fragments of B's tile for one k tile: 4 k8 steps x 4 registers, rounded to TF32.
__device__ __forceinline__ void rs_fragments(unsigned (&f)[16], unsigned tile_b, int frag_n, int lane) {
#pragma unroll
    for (int kk = 0; kk < V11_BK / 8; ++kk) {
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int n = frag_n + 8 * (r & 1), k = 8 * kk + lane % 4 + 4 * (r >> 1);
            const int box = n / 32, nb = n % 32;
            f[4 * kk + r] = lds_tf32(tile_b + box * 4096 + k * 128 + (((nb >> 2) ^ (k & 7)) << 4) + ((nb & 3) << 2));
        }
    }
}

// One k tile of one consumer warpgroup, its fragments `cur` already read: issue its 4 MMAs; while
// they run, wait for the next stage and read the next tile's fragments into `next`; then retire
// the MMAs (wait_group 0: ptxas sees that no MMA in flight reads `next`) and hand the stage back.
template <int BM, int STAGES, int STAGE_BYTES, int A_BYTES>
__device__ __forceinline__ void rs_k_tile(float (&acc)[BM / 2], unsigned (&cur)[16], unsigned (&next)[16], int kt,
                                          int k_tiles, int& s, unsigned& phase, unsigned base, unsigned full_bar,
                                          unsigned empty_bar, unsigned long long desc_b0, int frag_n, int lane) {
    fence_acc(acc);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < V11_BK / 8; ++kk)
        wgmma_rs<BM>(acc, cur[4 * kk], cur[4 * kk + 1], cur[4 * kk + 2], cur[4 * kk + 3],
                      desc_b0 + ((s * STAGE_BYTES + kk * 32) >> 4), (kt | kk) != 0);
    wgmma_commit();
    fence_acc(acc);
    const int done = s;
    if (++s == STAGES) { s = 0; phase ^= 1; }
    if (kt + 1 < k_tiles) {
        mbar_wait(full_bar + 8 * s, phase);
        rs_fragments(next, base + s * STAGE_BYTES + A_BYTES, frag_n, lane);
    }
    wgmma_wait<0>();
    if (lane == 0) mbar_arrive(empty_bar + 8 * done);
}

template <int BM, int STAGES>
__device__ __forceinline__ void v11_rs_body(int M, int N, int K, const void* tmA, const void* tmB, float* C) {
    constexpr int BN = 128;
    static_assert(BM == 256 || BM == 128, "wgmma's N: the tile's rows of A");
    constexpr int A_BYTES = BM * V11_BK * 4;  // 32 KB (16 KB): BM rows of A x 32 k
    constexpr int B_BYTES = V11_BK * BN * 4;  // 16 KB: 32 k x 128 columns of B, 4 boxes of 32 columns
    constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    static_assert(STAGES >= 2, "the producer fills a stage while the consumers read another");

    const unsigned base = (smem_u32(v11_smem) + 1023u) & ~1023u;
    const unsigned full_bar = base + STAGES * STAGE_BYTES;
    const unsigned empty_bar = full_bar + 8 * STAGES;
    const int warpgroup = threadIdx.x / 128;
    const int tid = threadIdx.x % 128;
    v11_ring_init<STAGES>(full_bar, empty_bar);

    const int tiles_n = (N + BN - 1) / BN;
    const int tiles_m = (M + BM - 1) / BM;
    const int num_tiles = tiles_m * tiles_n;
    const int k_tiles = (K + V11_BK - 1) / V11_BK;

    if (warpgroup == 0) {
        // ---------------- producer: A's BM x 32 box and B's four 32 x 32 boxes a stage ----------------
        v11_produce<BM, BN, STAGES, STAGE_BYTES, A_BYTES, true>(
            M, N, K, tmA, tmB, base, full_bar, empty_bar, [tmB](unsigned sb, int k0, int n0, unsigned fb) {
#pragma unroll
                for (int box = 0; box < BN / 32; ++box) tma_load_2d(sb + box * 4096, tmB, n0 + 32 * box, k0, fb);
            });
    } else {
        // ---------------- consumers ----------------
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(V11_CONSUMER_REGS));
        const int c = warpgroup - 1;  // columns 64c .. 64c+63 of the tile
        const int warp = tid / 32, lane = tid % 32;
        const unsigned long long desc_b0 = make_desc(base);  // A's tile, as wgmma's K-major B operand
        const int frag_n = 64 * c + 16 * warp + lane / 4;   // this lane's first column of B's tile
        float acc[BM / 2];
        int s = 0;
        unsigned phase = 0;
        for (int u = blockIdx.x; u < num_tiles; u += gridDim.x) {
            int tm, tn;
            tile_coords<BM>(u, tiles_m, tiles_n, tm, tn);
            const int m0 = tm * BM, n0 = tn * BN;
            unsigned fa[16], fb[16];  // two fragment sets: one read by the MMAs in flight, one being filled
            mbar_wait(full_bar + 8 * s, phase);
            rs_fragments(fa, base + s * STAGE_BYTES + A_BYTES, frag_n, lane);
            for (int kt = 0; kt < k_tiles; kt += 2) {
                rs_k_tile<BM, STAGES, STAGE_BYTES, A_BYTES>(acc, fa, fb, kt, k_tiles, s, phase, base, full_bar,
                                                            empty_bar, desc_b0, frag_n, lane);
                if (kt + 1 < k_tiles)
                    rs_k_tile<BM, STAGES, STAGE_BYTES, A_BYTES>(acc, fb, fa, kt + 1, k_tiles, s, phase, base, full_bar,
                                                                empty_bar, desc_b0, frag_n, lane);
            }
            // Epilogue: acc holds C^T (rows n, columns m); C[m][n] with bounds checks.
            const int n = n0 + frag_n;
#pragma unroll
            for (int j = 0; j < BM / 8; ++j) {
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int m = m0 + 8 * j + 2 * (lane % 4) + (e & 1), nn = n + 8 * (e >> 1);
                    if (m < M && nn < N) C[(size_t)m * N + nn] = acc[4 * j + e];
                }
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(384, 1)
sgemm_v11_rs_256x128(int M, int N, int K, const void* tmA, const void* tmB, float* C) {
    V11_SM90A_ONLY((v11_rs_body<256, V11_RS_STAGES>(M, N, K, tmA, tmB, C)));
}

// The same with 128 rows of A a tile (wgmma m64n128k8, 64 accumulators a thread, a 6-deep ring of
// 32 KB), for products with too few 256x128 tiles to give every SM one. A tuning candidate the
// launcher does not declare: it verifies, but against the transposing 128x128 entry it wins only at
// 2048^3 (1.05-1.11x) and loses at 3072x2048x4096 (0.89x) and 4096^3 (0.87-0.89x) on an H100:
// half as many MMA columns per fragment read (benchmarks/experiments/2026-11-26-h100-v11-no-transpose/h100-v11-no-transpose.md).
extern "C" __global__ void __launch_bounds__(384, 1)
sgemm_v11_rs_128x128(int M, int N, int K, const void* tmA, const void* tmB, float* C) {
    V11_SM90A_ONLY((v11_rs_body<128, V11_RS_STAGES_128>(M, N, K, tmA, tmB, C)));
}
