// The epilogue of the WMMA stages (h1-h4): one warp's 16x16 float32 accumulator tile, rounded
// to fp16 once and written to C (row-major, leading dimension ldc). The tile goes through the
// warp's 16x16 float staging area in shared memory so that each lane converts 8 floats of one
// row (lane l: row l / 2, columns 8 (l % 2) .. +7) and writes them with one 16-byte store.
#pragma once

#include <cuda_fp16.h>
#include <mma.h>

__device__ __forceinline__ void wmma_store_tile_fp16(
    __half* c, int ldc, float* stage, const nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float>& acc) {
    const int lane = threadIdx.x % 32;
    nvcuda::wmma::store_matrix_sync(stage, acc, 16, nvcuda::wmma::mem_row_major);
    __syncwarp();
    const float* src = stage + (lane / 2) * 16 + (lane % 2) * 8;
    const float4 lo = *reinterpret_cast<const float4*>(src);
    const float4 hi = *reinterpret_cast<const float4*>(src + 4);
    __half2 h[4] = {__floats2half2_rn(lo.x, lo.y), __floats2half2_rn(lo.z, lo.w),
                    __floats2half2_rn(hi.x, hi.y), __floats2half2_rn(hi.z, hi.w)};
    *reinterpret_cast<uint4*>(c + (lane / 2) * ldc + (lane % 2) * 8) = *reinterpret_cast<const uint4*>(h);
    __syncwarp();  // every lane has read the staging area before the warp's next tile overwrites it
}
