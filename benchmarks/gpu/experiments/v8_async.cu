// Experiment: v8 with a cp.async ring instead of register-staged double buffering.
// A stays k-minor in shared memory (As[m][k], rows padded to 12 floats) so that cp.async can
// copy it unchanged; each thread reads its 8 rows of A as float4 along k, half a K tile at a time.
// Same entry names and split-K contract as kernels/sgemm/v08_double_buffering.cu.

#ifndef V8_STAGES
#define V8_STAGES 3
#endif
#ifndef V8_MIN_BLOCKS
#define V8_MIN_BLOCKS 2
#endif

__device__ __forceinline__ void cp_async16(float* smem, const float* gmem) {
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(addr), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

template <int BM, int BN>
__device__ __forceinline__ void sgemm_v8_body(int M, int N, int K, const float* __restrict__ A,
                                              const float* __restrict__ B, float* __restrict__ C) {
    constexpr int BK = 8;
    constexpr int THREADS = BM * BN / 64;
    constexpr int A_LD = BK + 4;  // 48-byte rows: rows 4 apart land 16 banks apart
    constexpr int A_STAGE = BM * A_LD, B_STAGE = BK * BN;
    __shared__ __align__(16) float As[V8_STAGES * A_STAGE];
    __shared__ __align__(16) float Bs[V8_STAGES * B_STAGE];
    const int tid = threadIdx.x;
    // Warps cover 2 x 16 threads: the two thread rows of a warp read A rows 4 apart (16 banks).
    const int tx = tid % (BN / 8), ty = tid / (BN / 8);
    const int k_len = K / gridDim.z;
    const float* Ablk = A + blockIdx.y * BM * K + blockIdx.z * k_len;
    const float* Bblk = B + blockIdx.x * BN + blockIdx.z * k_len * N;
    const int tiles = k_len / BK;

    auto issue = [&](int t) {
        const int s = t % V8_STAGES, k0 = t * BK;
#pragma unroll
        for (int e = tid; e < BM * BK / 4; e += THREADS) {
            const int row = e / 2, col = (e % 2) * 4;
            cp_async16(&As[s * A_STAGE + row * A_LD + col], &Ablk[row * K + k0 + col]);
        }
#pragma unroll
        for (int e = tid; e < BK * BN / 4; e += THREADS) {
            const int row = e / (BN / 4), col = (e % (BN / 4)) * 4;
            cp_async16(&Bs[s * B_STAGE + row * BN + col], &Bblk[(k0 + row) * N + col]);
        }
    };

    float acc[8][8] = {};
#pragma unroll
    for (int t = 0; t < V8_STAGES - 1; ++t) {
        if (t < tiles) issue(t);
        cp_async_commit();
    }
    for (int t = 0; t < tiles; ++t) {
        cp_async_wait<V8_STAGES - 2>();
        __syncthreads();
        if (t + V8_STAGES - 1 < tiles) issue(t + V8_STAGES - 1);
        cp_async_commit();
        const float* as = As + (t % V8_STAGES) * A_STAGE;
        const float* bs = Bs + (t % V8_STAGES) * B_STAGE;
#pragma unroll
        for (int kh = 0; kh < BK; kh += 4) {
            float4 a[8];
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const int row = (i / 4) * (BM / 2) + ty * 4 + i % 4;
                a[i] = *reinterpret_cast<const float4*>(&as[row * A_LD + kh]);
            }
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) {
                const float4 b0 = *reinterpret_cast<const float4*>(&bs[(kh + kk) * BN + tx * 4]);
                const float4 b1 = *reinterpret_cast<const float4*>(&bs[(kh + kk) * BN + BN / 2 + tx * 4]);
                const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
                for (int i = 0; i < 8; ++i) {
                    const float av = kk == 0 ? a[i].x : kk == 1 ? a[i].y : kk == 2 ? a[i].z : a[i].w;
#pragma unroll
                    for (int j = 0; j < 8; ++j) acc[i][j] += av * bv[j];
                }
            }
        }
    }
    cp_async_wait<0>();
    float* Cblk = C + blockIdx.y * BM * N + blockIdx.x * BN;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = (i / 4) * (BM / 2) + ty * 4 + i % 4;
        const float4 left = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        const float4 right = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
        float4* c_left = reinterpret_cast<float4*>(&Cblk[row * N + tx * 4]);
        float4* c_right = reinterpret_cast<float4*>(&Cblk[row * N + BN / 2 + tx * 4]);
        if (gridDim.z == 1) {
            *c_left = left;
            *c_right = right;
        } else {
            atomicAdd(c_left, left);
            atomicAdd(c_right, right);
        }
    }
}

extern "C" __global__ void __launch_bounds__(256, V8_MIN_BLOCKS)
sgemm_v8_128x128(int M, int N, int K, const float* __restrict__ A,
                 const float* __restrict__ B, float* __restrict__ C) {
    sgemm_v8_body<128, 128>(M, N, K, A, B, C);
}

extern "C" __global__ void __launch_bounds__(128, 2 * V8_MIN_BLOCKS)
sgemm_v8_64x128(int M, int N, int K, const float* __restrict__ A,
                const float* __restrict__ B, float* __restrict__ C) {
    sgemm_v8_body<64, 128>(M, N, K, A, B, C);
}

extern "C" __global__ void __launch_bounds__(64, 4 * V8_MIN_BLOCKS)
sgemm_v8_64x64(int M, int N, int K, const float* __restrict__ A,
               const float* __restrict__ B, float* __restrict__ C) {
    sgemm_v8_body<64, 64>(M, N, K, A, B, C);
}
