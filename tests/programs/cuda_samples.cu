// The CUDA samples' classic ideas in one program, for capturing real Nsight exports of plain CUDA C++:
// vectorAdd, a shared-memory tiled matrixMul, a warp-shuffle reduction, bandwidthTest's copies
// (pageable and pinned host memory, both directions and device to device, small and large), a
// CUDA graph replayed (simpleCudaGraphs) and work split over streams (simpleStreams). Every part is
// an NVTX range per iteration; the results are checked on the host at the end (exit 1 if wrong).
//
//     nvcc -O2 -arch=sm_90 -o /tmp/cuda_samples tests/programs/cuda_samples.cu
//     /tmp/cuda_samples --iterations 20
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                                               \
    do {                                                                                          \
        cudaError_t status_ = (call);                                                             \
        if (status_ != cudaSuccess) {                                                             \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(status_)); \
            std::exit(2);                                                                         \
        }                                                                                         \
    } while (0)

constexpr int TILE = 32;
constexpr int STREAMS = 4;

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// C = A B for n x n row-major matrices; tiles guard the edges, so any n works.
__global__ void matrix_mul(const float* a, const float* b, float* c, int n) {
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float sum = 0.0f;
    for (int t = 0; t < n; t += TILE) {
        as[threadIdx.y][threadIdx.x] = (row < n && t + threadIdx.x < n) ? a[row * n + t + threadIdx.x] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = (col < n && t + threadIdx.y < n) ? b[(t + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) sum += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) c[row * n + col] = sum;
}

// One partial sum per block (warp shuffles, then the block's warps); the host adds the partials,
// so the result does not depend on the order of atomics.
__global__ void reduce_sum(const float* x, float* partial, int n) {
    __shared__ float warps[32];
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) sum += x[i];
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffff, sum, offset);
    if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = sum;
    __syncthreads();
    if (threadIdx.x < 32) {
        sum = threadIdx.x < blockDim.x / 32 ? warps[threadIdx.x] : 0.0f;
        for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffff, sum, offset);
        if (threadIdx.x == 0) partial[blockIdx.x] = sum;
    }
}

__global__ void scale(float* x, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= factor;
}

struct Range {
    explicit Range(const char* name) { nvtxRangePushA(name); }
    ~Range() { nvtxRangePop(); }
};

int main(int argc, char** argv) {
    int iterations = 20, n = 1 << 22, matrix = 1024, reduce_blocks = 264;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--iterations")) iterations = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--matrix")) matrix = std::atoi(argv[i + 1]);
    }
    const size_t bytes = size_t(n) * sizeof(float), small = 64 << 10, mbytes = size_t(matrix) * matrix * sizeof(float);
    std::vector<float> pageable(n), host_a(n), host_b(n), host_m(size_t(matrix) * matrix);
    for (int i = 0; i < n; ++i) host_a[i] = float(i % 97) / 97.0f, host_b[i] = float(i % 89) / 89.0f;
    for (size_t i = 0; i < host_m.size(); ++i) host_m[i] = float(int(i % 13) - 6) / 8.0f;
    float *pinned, *pinned_out, *a, *b, *c, *d, *ma, *mb, *mc, *partial;
    CHECK(cudaMallocHost(&pinned, bytes));
    CHECK(cudaMallocHost(&pinned_out, bytes));
    CHECK(cudaMalloc(&a, bytes)); CHECK(cudaMalloc(&b, bytes)); CHECK(cudaMalloc(&c, bytes)); CHECK(cudaMalloc(&d, bytes));
    CHECK(cudaMalloc(&ma, mbytes)); CHECK(cudaMalloc(&mb, mbytes)); CHECK(cudaMalloc(&mc, mbytes));
    CHECK(cudaMalloc(&partial, reduce_blocks * sizeof(float)));
    CHECK(cudaMemcpy(ma, host_m.data(), mbytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(mb, host_m.data(), mbytes, cudaMemcpyHostToDevice));
    std::memcpy(pinned, host_b.data(), bytes);
    cudaStream_t streams[STREAMS];
    for (auto& s : streams) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    // simpleCudaGraphs: scale, add, reduce captured once, replayed every iteration
    cudaGraph_t graph;
    cudaGraphExec_t graph_exec;
    const int block = 256, grid = (n + block - 1) / block;
    CHECK(cudaStreamBeginCapture(streams[0], cudaStreamCaptureModeGlobal));
    scale<<<grid, block, 0, streams[0]>>>(d, 1.0f, n);
    vector_add<<<grid, block, 0, streams[0]>>>(a, d, d, n);
    reduce_sum<<<reduce_blocks, 1024, 0, streams[0]>>>(d, partial, n);
    CHECK(cudaStreamEndCapture(streams[0], &graph));
    CHECK(cudaGraphInstantiate(&graph_exec, graph, 0));

    for (int it = 0; it < iterations; ++it) {
        Range iteration("iteration");
        {
            Range r("h2d pageable 16 MiB");
            CHECK(cudaMemcpy(a, host_a.data(), bytes, cudaMemcpyHostToDevice));
        }
        {
            Range r("h2d pinned 16 MiB");
            CHECK(cudaMemcpy(b, pinned, bytes, cudaMemcpyHostToDevice));
        }
        {
            Range r("h2d pinned 64 KiB x8");
            for (int k = 0; k < 8; ++k) CHECK(cudaMemcpy(c + k * (small / sizeof(float)), pinned, small, cudaMemcpyHostToDevice));
        }
        {
            Range r("d2d 16 MiB");
            CHECK(cudaMemcpy(d, b, bytes, cudaMemcpyDeviceToDevice));
        }
        {
            Range r("vectorAdd");
            vector_add<<<grid, block>>>(a, b, c, n);
            CHECK(cudaGetLastError());
        }
        {
            Range r("matrixMul");
            dim3 threads(TILE, TILE), blocks((matrix + TILE - 1) / TILE, (matrix + TILE - 1) / TILE);
            matrix_mul<<<blocks, threads>>>(ma, mb, mc, matrix);
            CHECK(cudaGetLastError());
        }
        {
            Range r("reduction");
            reduce_sum<<<reduce_blocks, 1024>>>(c, partial, n);
            CHECK(cudaGetLastError());
        }
        {
            Range r("d2h pageable 16 MiB");
            CHECK(cudaMemcpy(pageable.data(), c, bytes, cudaMemcpyDeviceToHost));
        }
        {
            Range r("d2h pinned 16 MiB");
            CHECK(cudaMemcpy(pinned_out, c, bytes, cudaMemcpyDeviceToHost));
        }
        {
            Range r("graph");
            CHECK(cudaMemcpy(d, b, bytes, cudaMemcpyDeviceToDevice));
            CHECK(cudaGraphLaunch(graph_exec, streams[0]));
            CHECK(cudaStreamSynchronize(streams[0]));
        }
        {
            Range r("streams");  // simpleStreams: each stream copies in, adds and copies out its quarter
            const int part = n / STREAMS, part_grid = (part + block - 1) / block;
            for (int s = 0; s < STREAMS; ++s) {
                size_t offset = size_t(s) * part;
                CHECK(cudaMemcpyAsync(b + offset, pinned + offset, part * sizeof(float), cudaMemcpyHostToDevice, streams[s]));
                vector_add<<<part_grid, block, 0, streams[s]>>>(a + offset, b + offset, c + offset, part);
                CHECK(cudaMemcpyAsync(pinned_out + offset, c + offset, part * sizeof(float), cudaMemcpyDeviceToHost, streams[s]));
            }
            CHECK(cudaDeviceSynchronize());
        }
    }

    // checks: the last iteration's c = a + b (by the streams), one matrixMul element, the graph's sum of a + b
    CHECK(cudaDeviceSynchronize());
    std::vector<float> sum_c(n), mc_host(host_m.size()), partials(reduce_blocks);
    CHECK(cudaMemcpy(sum_c.data(), c, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(mc_host.data(), mc, mbytes, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(partials.data(), partial, reduce_blocks * sizeof(float), cudaMemcpyDeviceToHost));
    bool ok = true;
    for (int i = 0; i < n; i += 4099) ok &= sum_c[i] == host_a[i] + host_b[i];
    double expected = 0.0;
    for (int k = 0; k < matrix; ++k) expected += double(host_m[size_t(7) * matrix + k]) * host_m[size_t(k) * matrix + 11];
    ok &= std::fabs(mc_host[size_t(7) * matrix + 11] - expected) < 1e-3 * (1.0 + std::fabs(expected));
    double graph_sum = 0.0, reference = 0.0;
    for (float p : partials) graph_sum += p;
    for (int i = 0; i < n; ++i) reference += double(host_a[i]) + host_b[i];
    ok &= std::fabs(graph_sum - reference) < 1e-4 * reference;
    std::printf("cuda_samples: %d iterations, %s\n", iterations, ok ? "results correct" : "RESULTS WRONG");
    return ok ? 0 : 1;
}
