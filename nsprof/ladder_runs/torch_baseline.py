"""What PyTorch gives its users for a library stage's product: torch.mm or torch.mv on the same
arrays (shared through DLPack, no copy), in the same precision (TF32 allowed only for a TF32
stage), on the stream nsprof times, verified and timed by the same CUDA events as the stage.
Where PyTorch is installed, every library record carries its median as `torch_ms`, and % of
cuBLAS is of the faster of the two (nsprof.ladder_runs.bench)."""

from __future__ import annotations

import importlib.util
from collections import OrderedDict
from collections.abc import Callable

from nsprof.ladder.op_model import LibraryCall, Stage
from nsprof.launch.measure import time_launches
from nsprof.launch.rotation import active_rotation
from nsprof.launch.torch_stream import on_cupy_stream


def torch_timing(stage: Stage, problem, call: LibraryCall, size, *, repeat: int | None,
                 warmup: int | None) -> dict:
    """{"torch_call", "torch_ms", "torch_message"}: PyTorch's median, or why there is none (not
    installed; failed verification)."""
    name = f"torch.{call.torch_call}"
    if importlib.util.find_spec("torch") is None:
        return {"torch_call": name, "torch_ms": None, "torch_message": "PyTorch is not installed"}
    launch = torch_launch(call, stage.precision.name)
    problem.poison_output()
    launch()
    error = problem.relative_error()
    if not error <= stage.tolerance(size):
        return {"torch_call": name, "torch_ms": None,
                "torch_message": f"{name}: relative error {error:.3g} exceeds {stage.tolerance(size):.3g}"}
    return {"torch_call": name, "torch_ms": time_launches(launch, repeat=repeat, warmup=warmup).median_ms,
            "torch_message": None}


def torch_launch(call: LibraryCall, precision: str) -> Callable[[], object]:
    """torch.mm or torch.mv on the LibraryCall's current arrays (read at each launch, as the library's
    own candidates read them: a stage's refresh makes new ones, and a launch paired with that stage's
    must run on the stage's), TF32 allowed only for a TF32 stage, on CuPy's current stream."""
    import torch

    function = {"mm": torch.mm, "mv": torch.mv}[call.torch_call]
    settings = torch.backends.cuda.matmul
    wrapped: OrderedDict[tuple[int, ...], tuple] = OrderedDict()  # tensors by their arrays' addresses

    def tensors() -> tuple:
        arrays = call.arrays()
        key = tuple(array.data.ptr for array in arrays)
        if key in wrapped:
            wrapped.move_to_end(key)
            return wrapped[key]
        wrapped[key] = tuple(torch.from_dlpack(array) for array in arrays)  # no copy
        rotation = active_rotation()  # keep the sets launches rotate among, let arrays a refresh replaced go
        while len(wrapped) > (rotation.sets if rotation else 1):
            wrapped.popitem(last=False)
        return wrapped[key]

    def run() -> None:
        a, b, out = tensors()
        allowed = settings.allow_tf32
        settings.allow_tf32 = precision == "tf32"  # PyTorch's float32 products are FP32 unless allowed
        try:
            function(a, b, out=out)
        finally:
            settings.allow_tf32 = allowed

    return on_cupy_stream(run)
