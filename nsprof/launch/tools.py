"""What an op's launcher borrows from the launch layer (nsprof.ladder.op_model.LaunchTools): CuPy, the
SM count, the compiler, the tensor-map encoder, which tiles this GPU can run, the library's matrix
product in a given precision and buffers that follow the cold inputs' sets."""

from __future__ import annotations

from nsprof.ladder.op_model import LaunchTools
from nsprof.launch.compile import arch_runs, load_kernel, module_global
from nsprof.launch.gpu import device_info, require_cupy
from nsprof.launch.rotation import per_input_set


def launch_tools() -> LaunchTools:
    def encode_tensor_map(*args) -> bytes:
        from nsprof.launch.tensor_map import encode_2d  # ctypes on the driver: only TMA stages need it

        return encode_2d(*args)

    info = device_info()
    cc = info["compute_capability"]
    return LaunchTools(require_cupy(), info["sm_count"], cc, load_kernel, encode_tensor_map,
                       lambda tile: arch_runs(tile.arch, cc), module_global, per_input_set)
