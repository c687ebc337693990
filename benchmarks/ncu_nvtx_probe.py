"""Probe (GPU): which ncu --nvtx-include expressions select kernels inside nsprof-style
push/pop ranges (names with '/', domain nsprof).

    ncu --nvtx --nvtx-include 'EXPR' python3 benchmarks/ncu_nvtx_probe.py
"""

import cupy as cp
import nvtx

x = cp.ones(1 << 20, dtype=cp.float32)
with nvtx.annotate(message="verify/sgemm/v6/64x64x64", domain="nsprof"):
    x *= 2  # must NOT be selected: cupy_multiply
with nvtx.annotate(message="plain", domain="nsprof"):
    cp.sqrt(x)  # cupy_sqrt: a name without '/'
with nvtx.annotate(message="plaindefault"):
    cp.exp(x)  # cupy_exp: default domain
for _ in range(2):
    with nvtx.annotate(message="sgemm/v5/64x64x64", domain="nsprof"):
        x += 1  # cupy_add
    with nvtx.annotate(message="sgemm/v6/64x64x64", domain="nsprof"):
        x -= 1  # cupy_subtract
cp.cuda.Device().synchronize()
print("probe done")
