// Copies a rows x cols block of one matrix into another with a different row pitch (elements), the padded copies
// of the GEMM ladders' operands (nsprof.ladder.ops.matmul): a row of the source or the destination may start
// anywhere a 2-byte (4-byte) element may, so no access is wider than an element. A warp takes 128 columns of one
// row, four elements a lane, four loads in flight before its four stores; a block of 32 x 8 threads takes 8 rows,
// so narrow rows (100 columns) still fill its warps, and blockIdx.y steps over the rows (a grid holds at most 65535
// in y). No index needs division: CuPy's strided assignment divides a 64-bit index per element.
template <typename T>
__device__ __forceinline__ void copy_rows(const T* __restrict__ src, long long src_pitch, T* __restrict__ dst,
                                          long long dst_pitch, int rows, int cols) {
    const int col0 = blockIdx.x * 128 + threadIdx.x;
    for (int row = blockIdx.y * 8 + threadIdx.y; row < rows; row += gridDim.y * 8) {
        const T* s = src + row * src_pitch;
        T* d = dst + row * dst_pitch;
        T v[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int col = col0 + j * 32;  // a warp's 32 lanes read 32 neighbours: whole sectors
            if (col < cols) v[j] = s[col];
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int col = col0 + j * 32;
            if (col < cols) d[col] = v[j];
        }
    }
}

extern "C" __global__ void __launch_bounds__(256)
copy_rows_2(const unsigned short* src, long long src_pitch, unsigned short* dst, long long dst_pitch, int rows,
            int cols) {
    copy_rows(src, src_pitch, dst, dst_pitch, rows, cols);
}

extern "C" __global__ void __launch_bounds__(256)
copy_rows_4(const unsigned* src, long long src_pitch, unsigned* dst, long long dst_pitch, int rows, int cols) {
    copy_rows(src, src_pitch, dst, dst_pitch, rows, cols);
}
