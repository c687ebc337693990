// Hopper asynchronous-copy and warpgroup-MMA primitives shared by h6 (HGEMM) and v11 (SGEMM TF32):
// shared-memory addresses, mbarriers, TMA boxes, the wgmma fences and instructions, and the
// persistent tile order. Included by path ("../common/hopper_async.cuh"), so nvcc finds it beside
// the including file and NVRTC through the kernel directory on its include path;
// nsprof.launch.compile hashes it with the kernel.
#pragma once

__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

// Spin until the phase with the given parity has completed (try_wait suspends for a while
// in hardware before returning false, so the loop does not hammer shared memory).
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
    unsigned done;
    do {
        asm volatile(
            "{\n .reg .pred p;\n"
            " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            " selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    } while (!done);
}

__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

// One TMA box: global (c0 = column, c1 = row of the row-major matrix) -> shared dst; the
// bytes are counted on bar (complete_tx).
__device__ __forceinline__ void tma_load_2d(unsigned dst, const void* tmap, int c0, int c1, unsigned bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];\n"
        ::"r"(dst), "l"(tmap), "r"(c0), "r"(c1), "r"(bar) : "memory");
}

// The same with an L2 eviction policy for the box's lines (a createpolicy result: l2_policy).
__device__ __forceinline__ void tma_load_2d_hint(unsigned dst, const void* tmap, int c0, int c1, unsigned bar,
                                                 unsigned long long policy) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1, {%2, %3}], [%4], %5;\n"
        ::"r"(dst), "l"(tmap), "r"(c0), "r"(c1), "r"(bar), "l"(policy) : "memory");
}

// An L2 eviction policy for the lines it covers: evict first (data read once) or normal.
__device__ __forceinline__ unsigned long long l2_policy(bool evict_first) {
    unsigned long long policy;
    if (evict_first) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
    else asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;\n" : "=l"(policy));
    return policy;
}

// One TMA box stored: shared src (written in the map's swizzle) -> global (c0 = column, c1 = row);
// the parts of the box past the map's sizes are not written. The issuing thread tracks its stores
// in bulk groups: commit them, then wait until their reads of shared memory (.read) or the whole
// stores are done. Shared memory written by threads must be fenced to the async proxy first.
__device__ __forceinline__ void tma_store_2d(const void* tmap, int c0, int c1, unsigned src) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n"
                 ::"l"(tmap), "r"(c0), "r"(c1), "r"(src) : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
__device__ __forceinline__ void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

__device__ __forceinline__ void prefetch_tmap(const void* tmap) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(tmap) : "memory");
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }

// Pins the accumulators at this point of the program: the compiler may not move reads or
// writes of them across it, so none of them slips between a wgmma and its wait_group.
template <int R>
__device__ __forceinline__ void fence_acc(float (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// wgmma.mma_async m64nNk{K} with float32 accumulators in registers (N/2 per thread), A and B from
// shared memory by descriptor: HOPPER_WGMMA(K, TYPES, IMMS) defines wgmma_n256, wgmma_n192, wgmma_n128
// and wgmma_n64 for one instruction (its K and types, e.g. "16", "f32.f16.f16") and wgmma_bn<BN>, which
// picks one by tile width. scale_d = 0 ignores the old D (a tile's first k step); imm-scale-a/b = 1;
// IMMS holds whatever immediates the types add (f16's imm-trans-a/b: ", 0, 1"; tf32 has none).
#define HOPPER_D32 \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define HOPPER_D64 HOPPER_D32 ", " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define HOPPER_D96 HOPPER_D64 ", " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define HOPPER_D128 HOPPER_D64 ", " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define HOPPER_ACC8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), \
                       "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define HOPPER_ACC32 HOPPER_ACC8(0), HOPPER_ACC8(8), HOPPER_ACC8(16), HOPPER_ACC8(24)
#define HOPPER_ACC64 HOPPER_ACC32, HOPPER_ACC8(32), HOPPER_ACC8(40), HOPPER_ACC8(48), HOPPER_ACC8(56)
#define HOPPER_ACC96 HOPPER_ACC64, HOPPER_ACC8(64), HOPPER_ACC8(72), HOPPER_ACC8(80), HOPPER_ACC8(88)
#define HOPPER_ACC128 HOPPER_ACC64, HOPPER_ACC8(64), HOPPER_ACC8(72), HOPPER_ACC8(80), HOPPER_ACC8(88), \
                      HOPPER_ACC8(96), HOPPER_ACC8(104), HOPPER_ACC8(112), HOPPER_ACC8(120)
// One width: D's operands are %0..%(N/2 - 1), then the descriptors a, b and scale_d.
#define HOPPER_WGMMA_N(N, K, TYPES, IMMS, D, ACC, A, B, P)                                                   \
    __device__ __forceinline__ void wgmma_n##N(float (&d)[N / 2], unsigned long long a, unsigned long long b, \
                                               int scale_d) {                                                \
        asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, " P ", 0;\n"                                        \
                     " wgmma.mma_async.sync.aligned.m64n" #N "k" K "." TYPES " {" D "}, " A ", " B           \
                     ", p, 1, 1" IMMS ";\n}\n"                                                               \
                     : ACC                                                                                    \
                     : "l"(a), "l"(b), "r"(scale_d));                                                        \
    }
#define HOPPER_WGMMA(K, TYPES, IMMS)                                                                         \
    HOPPER_WGMMA_N(256, K, TYPES, IMMS, HOPPER_D128, HOPPER_ACC128, "%128", "%129", "%130")                 \
    HOPPER_WGMMA_N(192, K, TYPES, IMMS, HOPPER_D96, HOPPER_ACC96, "%96", "%97", "%98")                       \
    HOPPER_WGMMA_N(128, K, TYPES, IMMS, HOPPER_D64, HOPPER_ACC64, "%64", "%65", "%66")                       \
    HOPPER_WGMMA_N(64, K, TYPES, IMMS, HOPPER_D32, HOPPER_ACC32, "%32", "%33", "%34")                        \
    template <int BN>                                                                                        \
    __device__ __forceinline__ void wgmma_bn(float (&d)[BN / 2], unsigned long long a, unsigned long long b, \
                                             int scale_d) {                                                  \
        if constexpr (BN == 256) wgmma_n256(d, a, b, scale_d);                                               \
        else if constexpr (BN == 192) wgmma_n192(d, a, b, scale_d);                                          \
        else if constexpr (BN == 128) wgmma_n128(d, a, b, scale_d);                                          \
        else wgmma_n64(d, a, b, scale_d);                                                                    \
    }

// Persistent tile order: unit u of a units_m x tiles_n grid (a unit is UNIT_ROWS rows of C) goes
// down a group of GROUP_ROWS rows of C before moving right, so the blocks of one wave share few
// tiles of A and B in L2.
template <int GROUP_ROWS, int UNIT_ROWS>
__device__ __forceinline__ void grouped_coords(int u, int units_m, int tiles_n, int& um, int& tn) {
    constexpr int G = GROUP_ROWS / UNIT_ROWS > 0 ? GROUP_ROWS / UNIT_ROWS : 1;
    const int group = u / (G * tiles_n);
    const int first = group * G;
    const int rows = min(units_m - first, G);
    const int r = u - first * tiles_n;
    um = first + r % rows;
    tn = r / rows;
}
