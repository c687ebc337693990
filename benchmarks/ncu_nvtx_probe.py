"""Probe (GPU): which ncu --nvtx-include expressions select kernels inside push/pop ranges
whose names contain '/', as nsprof's ranges (sgemm/v6/64x64x64) do.

    ncu --nvtx --nvtx-include 'EXPR' python3 benchmarks/ncu_nvtx_probe.py
"""

import cupy as cp
import nvtx

x = cp.ones(1 << 20, dtype=cp.float32)
with nvtx.annotate(message="verify/sgemm/v6/64x64x64", domain="nsprof"):
    x *= 2  # must NOT be selected
for stage in ("v5", "v6"):
    for _ in range(2):
        with nvtx.annotate(message=f"sgemm/{stage}/64x64x64", domain="nsprof"):
            x += 1 if stage == "v5" else 3
cp.cuda.Device().synchronize()
print("probe done")
