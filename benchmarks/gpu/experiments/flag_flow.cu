// Issue 33's 1024^3 flow: a persistent TF32 product that starts each tile the moment its rows of A have
// landed, and tells the copy-out stream how many rows of C are whole, through words in device memory
// instead of events between streams and one launch per row block.
//
// Work items are (unit, 64x64 tile of it), a unit being 64 rows of A and C, in unit order; each block
// takes the next item with an atomic counter, so every SM works on whatever has landed, and a unit's
// tiles are spread over as many SMs as it has tiles. Operands are read with cp.async.cg (L2 only: no
// stale L1 line of an earlier flow). How a unit's arrival is known (`arrival`):
//  * 0, flags: the copy-in stream copies A in blocks of `copy_rows` rows and writes in_flag[block] = 1
//    after each (cuStreamWriteValue32, whose default orders the copy's bytes before the word);
//  * 1, sentinel: A is copied whole, onto device rows that hold a NaN no arithmetic makes (SENTINEL).
//    The block that takes a unit's first tile reads the unit's rows until no word is the sentinel, then
//    raises in_flag[unit] for the unit's other tiles; the block that finishes the unit's last tile
//    writes the sentinel back, so the next flow finds it. B is copied before A on the same stream, so
//    A's first bytes land only after B's last (the poisoned verification checks that premise).
// When a tile is stored, the block counts it on done[unit]; the block that counts a unit's last tile
// makes the stores visible system-wide, marks unit_done[unit], and moves whole_units (the number of
// leading units that are whole) as far as it can. The copy-out stream waits for whole_units >= the
// end of each block of C it copies (cuStreamWaitValue32), and writes it back to 0 after the last. The
// last block to leave resets the rest, so a CUDA graph of the flow can be replayed as is.
// Spinning threads sleep 256 ns between reads (132 SMs reading one word without pause slowed the
// copies and the product in the first version).
//
// The product: WMMA m16n16k8 TF32 (inputs rounded with __float_to_tf32, float32 accumulation), 4 warps
// of 32x32 per 64x64 tile, 32-deep k steps through a 3-stage cp.async ring. Needs M and N multiples of
// 64 and K of 32 (the experiment's 1024^3). `compute` = 0 skips the product (C left unwritten: the
// schedule's own cost, not verified).

#include <mma.h>

#define FF_BM 64
#define FF_BN 64
#define FF_BK 32
#define FF_STAGES 3
#define FF_A_LD (FF_BK + 4)  // padded rows; wmma needs ldm % 4 == 0 and 32-byte aligned fragment rows
#define FF_B_LD (FF_BN + 4)
#define FF_STAGE_FLOATS (FF_BM * FF_A_LD + FF_BK * FF_B_LD)
#define FF_SENTINEL 0x7FF1A95Eu  // a quiet NaN with a payload arithmetic never produces

__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %globaltimer;\n" : "=l"(t));
    return t;
}

__device__ __forceinline__ void st_release_sys(unsigned* p, unsigned v) {
    asm volatile("st.release.sys.global.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ void cp_async16_cg(float* dst, const float* src) {
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

// Wait, sleeping between reads, until *p != 0; trap after 2 s (a word never raised: fail, not hang).
__device__ __forceinline__ void wait_raised(const unsigned* p) {
    const unsigned long long start = global_ns();
    while (ld_acquire(p) == 0u) {
        __nanosleep(256);
        if (global_ns() - start > 2000000000ull) __trap();
    }
}

// The whole block reads rows [row0, row0 + FF_BM) of A (K floats each) until none holds the sentinel.
__device__ void wait_landed(const float* A, int row0, int K) {
    const uint4* p = reinterpret_cast<const uint4*>(A + (size_t)row0 * K);
    const int chunks = FF_BM * K / 4;
    const unsigned long long start = global_ns();
    for (int i = threadIdx.x; i < chunks;) {
        uint4 v;
        asm volatile("ld.relaxed.gpu.global.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p + i) : "memory");
        if (v.x != FF_SENTINEL && v.y != FF_SENTINEL && v.z != FF_SENTINEL && v.w != FF_SENTINEL) {
            i += blockDim.x;
        } else {
            __nanosleep(256);
            if (global_ns() - start > 2000000000ull) __trap();
        }
    }
    __syncthreads();
}

// The block writes the sentinel over rows [row0, row0 + FF_BM) of A, for the next flow.
__device__ void refill_sentinel(float* A, int row0, int K) {
    uint4* p = reinterpret_cast<uint4*>(A + (size_t)row0 * K);
    const uint4 s = make_uint4(FF_SENTINEL, FF_SENTINEL, FF_SENTINEL, FF_SENTINEL);
    for (int i = threadIdx.x; i < FF_BM * K / 4; i += blockDim.x) p[i] = s;
}

// After unit r is whole: advance whole_units over every leading unit that is whole. Any block may move
// it one step with compare-and-swap; the one that completes the last missing unit carries it through.
__device__ void advance_whole(unsigned* whole_units, const unsigned* unit_done, unsigned units) {
    unsigned w = ld_acquire(whole_units);
    while (w < units && ld_acquire(unit_done + w) != 0u) {
        const unsigned seen = atomicCAS(whole_units, w, w + 1u);
        w = seen == w ? w + 1u : seen;
    }
}

extern "C" __global__ void __launch_bounds__(128, 2)
flag_flow_gemm(const float* __restrict__ B, float* A, float* __restrict__ C, int M, int N, int K, int arrival,
               int copy_rows, unsigned* in_flag, unsigned* unit_done, unsigned* done, unsigned* whole_units,
               unsigned* counter, int compute) {
    using namespace nvcuda;
    extern __shared__ __align__(128) float ff_smem[];
    __shared__ int item_s;
    const int tiles_n = N / FF_BN;
    const int units = M / FF_BM;
    const int items = units * tiles_n;
    const int k_tiles = K / FF_BK;
    const int warp = threadIdx.x / 32, wm = warp / 2, wn = warp % 2;

    for (;;) {
        if (threadIdx.x == 0) item_s = (int)atomicAdd(counter, 1u);
        __syncthreads();
        const int it = item_s;
        if (it >= items) break;
        const int r = it / tiles_n, t = it % tiles_n;
        const int m0 = r * FF_BM, n0 = t * FF_BN;
        if (arrival == 1 && t == 0) {  // the unit's first tile: read its rows until all have landed
            wait_landed(A, m0, K);
            if (threadIdx.x == 0) {
                __threadfence();
                atomicExch(in_flag + r, 1u);
            }
        } else if (threadIdx.x == 0) {
            wait_raised(in_flag + (arrival == 1 ? r : m0 / copy_rows));
        }
        __syncthreads();

        wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[2][2];
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.f);

        if (compute) {
            const auto load = [&](int s, int kt) {
                float* sa = ff_smem + s * FF_STAGE_FLOATS;
                float* sb = sa + FF_BM * FF_A_LD;
                const int k0 = kt * FF_BK;
#pragma unroll
                for (int i = threadIdx.x; i < FF_BM * FF_BK / 4; i += 128) {
                    const int row = i / (FF_BK / 4), c4 = i % (FF_BK / 4);
                    cp_async16_cg(sa + row * FF_A_LD + 4 * c4, A + (size_t)(m0 + row) * K + k0 + 4 * c4);
                }
#pragma unroll
                for (int i = threadIdx.x; i < FF_BK * FF_BN / 4; i += 128) {
                    const int row = i / (FF_BN / 4), c4 = i % (FF_BN / 4);
                    cp_async16_cg(sb + row * FF_B_LD + 4 * c4, B + (size_t)(k0 + row) * N + n0 + 4 * c4);
                }
            };
#pragma unroll
            for (int s = 0; s < FF_STAGES - 1; ++s) {
                if (s < k_tiles) load(s, s);
                cp_async_commit();
            }
            for (int kt = 0; kt < k_tiles; ++kt) {
                cp_async_wait<FF_STAGES - 2>();
                __syncthreads();  // stage kt is in for every thread; stage kt-1 is free to refill
                if (kt + FF_STAGES - 1 < k_tiles) load((kt + FF_STAGES - 1) % FF_STAGES, kt + FF_STAGES - 1);
                cp_async_commit();
                const float* sa = ff_smem + (kt % FF_STAGES) * FF_STAGE_FLOATS;
                const float* sb = sa + FF_BM * FF_A_LD;
#pragma unroll
                for (int kk = 0; kk < FF_BK; kk += 8) {
                    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a[2];
                    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b[2];
#pragma unroll
                    for (int i = 0; i < 2; ++i) {
                        wmma::load_matrix_sync(a[i], sa + (wm * 32 + i * 16) * FF_A_LD + kk, FF_A_LD);
#pragma unroll
                        for (int e = 0; e < a[i].num_elements; ++e) a[i].x[e] = wmma::__float_to_tf32(a[i].x[e]);
                        wmma::load_matrix_sync(b[i], sb + kk * FF_B_LD + wn * 32 + i * 16, FF_B_LD);
#pragma unroll
                        for (int e = 0; e < b[i].num_elements; ++e) b[i].x[e] = wmma::__float_to_tf32(b[i].x[e]);
                    }
#pragma unroll
                    for (int i = 0; i < 2; ++i)
#pragma unroll
                        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
                }
            }
            cp_async_wait<0>();
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int j = 0; j < 2; ++j)
                    wmma::store_matrix_sync(C + (size_t)(m0 + wm * 32 + i * 16) * N + n0 + wn * 32 + j * 16, acc[i][j], N,
                                            wmma::mem_row_major);
        }
        __syncthreads();  // every store issued (and the ring read) before the tile is counted
        if (threadIdx.x == 0) {
            __threadfence();
            item_s = atomicAdd(done + r, 1u) == (unsigned)tiles_n - 1u;  // this block finished the unit
            if (item_s) {
                __threadfence_system();  // the whole unit's stores, before the copy engine reads them
                atomicExch(unit_done + r, 1u);
                __threadfence_system();
                advance_whole(whole_units, unit_done, (unsigned)units);
            }
        }
        __syncthreads();
        if (arrival == 1 && item_s) refill_sentinel(A, m0, K);  // no tile of the unit reads A any more
        __syncthreads();  // item_s is read by all before thread 0 takes the next item
    }
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(counter + 1, 1u) == gridDim.x - 1u) {  // every block has left the loop: reset for the next flow
            for (int i = 0; i < units; ++i) {
                in_flag[i] = 0u;
                unit_done[i] = 0u;
                done[i] = 0u;
            }
            counter[0] = 0u;
            counter[1] = 0u;
            __threadfence();
        }
    }
}

