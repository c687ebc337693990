// cp.async (sm_80 on): global -> shared copies that bypass the registers and complete in the
// background, shared by SGEMM v8 and v10. A copy with `in` false reads nothing (source size 0) and
// writes zeros, which is how both read past a matrix's edges. Included by path
// ("../common/cp_async.cuh"), as hopper_async.cuh is; nsprof.launch.compile hashes it with the kernel.
#pragma once

// 4 bytes through L1 (.ca): v8's V8_ASYNC 1 lands each float of A at its transposed place.
__device__ __forceinline__ void cp_async4(float* smem, const float* gmem, bool in) {
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(addr), "l"(gmem), "r"(in ? 4 : 0));
}
// 16 bytes around L1 (.cg): both ends 16-byte aligned.
__device__ __forceinline__ void cp_async16(float* smem, const float* gmem, bool in) {
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(addr), "l"(gmem), "r"(in ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
// Wait until at most N of this thread's groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }
