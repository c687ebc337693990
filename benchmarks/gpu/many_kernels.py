"""12,000 small kernels on 4 streams inside 30 NVTX ranges: the capture behind
tests/data/timeline/nsys-12000-kernels.sqlite, made on the H200 with

    nsys profile -t cuda,nvtx --export=sqlite -o many python3 benchmarks/gpu/many_kernels.py
"""

import cupy as cp
import nvtx

streams = [cp.cuda.Stream(non_blocking=True) for _ in range(4)]
x = cp.zeros(1 << 16, dtype=cp.float32)
for step in range(30):
    with nvtx.annotate(f"step {step}"):
        for i in range(400):
            with streams[i % 4]:
                x += 1
cp.cuda.Device().synchronize()
