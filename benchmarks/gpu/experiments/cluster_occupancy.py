"""How many clusters of an h6 entry the card runs at once (the driver's cuOccupancyMaxActiveClusters): a
cluster's blocks must share one GPC, so clusters of 4 or 8 blocks of one SM each may not all fit in one
wave where the GPCs' SM counts do not divide by the cluster size.

    python3 benchmarks/gpu/experiments/cluster_occupancy.py hgemm_h6_ks4_128x128:197888 hgemm_h6_ks8_128x256:197888
"""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))


class LaunchConfig(ctypes.Structure):  # CUlaunchConfig
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("shared_mem_bytes", ctypes.c_uint),
                ("stream", ctypes.c_void_p), ("attrs", ctypes.c_void_p), ("num_attrs", ctypes.c_uint)]


def main() -> None:
    import cupy

    from nsprof.ladder.registry import get_stage
    from nsprof.launch.compile import load_kernel

    stage = get_stage("hgemm", "h6")
    cuda = ctypes.CDLL("libcuda.so.1")
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    for spec in sys.argv[1:]:
        entry, smem = spec.split(":")
        kernel = load_kernel(stage.kernel_path(), entry, dynamic_smem_bytes=int(smem), arch="sm_90a")
        config = LaunchConfig((ctypes.c_uint * 3)(sms, 1, 1), (ctypes.c_uint * 3)(384, 1, 1), int(smem), None, None, 0)
        clusters = ctypes.c_int(0)
        status = cuda.cuOccupancyMaxActiveClusters(ctypes.byref(clusters), ctypes.c_void_p(kernel.kernel.ptr),
                                                   ctypes.byref(config))
        print(f"{entry}: {clusters.value} clusters at once on {sms} SMs (status {status})")


if __name__ == "__main__":
    main()
