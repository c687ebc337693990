// Split-K reduction for the HGEMM stages: C = sum over slices of the float32 partial tiles.
//
// Not a stage of its own: a stage whose tile allows split > 1 (nsprof/ops/hgemm.py) writes one float32 M x N
// partial product per K slice (partials[z * M * N + i]) and the launcher runs this kernel after
// it, inside the same timed launch. Summing in float32 and rounding to half once keeps the
// error of the split result at the unsplit one's (one fp16 rounding of C).
// M and N are padded to tile multiples, so M * N is a multiple of 4: each thread reads float4s
// (16-byte loads, coalesced) and writes four halves as one 8-byte store.

#include <cuda_fp16.h>

extern "C" __global__ void hgemm_splitk_reduce(int MN, int split, const float* __restrict__ partials,
                                               __half* __restrict__ C) {
    const int n4 = MN / 4;
    const float4* p4 = reinterpret_cast<const float4*>(partials);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
        float4 s = p4[i];
        for (int z = 1; z < split; ++z) {
            const float4 p = p4[static_cast<size_t>(z) * n4 + i];
            s.x += p.x; s.y += p.y; s.z += p.z; s.w += p.w;
        }
        const __half2 lo = __floats2half2_rn(s.x, s.y);
        const __half2 hi = __floats2half2_rn(s.z, s.w);
        uint2 packed;
        packed.x = *reinterpret_cast<const unsigned*>(&lo);
        packed.y = *reinterpret_cast<const unsigned*>(&hi);
        reinterpret_cast<uint2*>(C)[i] = packed;
    }
}
