"""PyTorch's work (Triton's launches, torch.mm) on the stream nsprof times: CuPy's current one."""

from __future__ import annotations

import functools
from collections.abc import Callable
from functools import lru_cache

from nsprof.launch.gpu import require_cupy


def on_cupy_stream(launch: Callable[[], object]) -> Callable[[], object]:
    """The launch on CuPy's current stream: PyTorch (and Triton) launch on PyTorch's current stream,
    made CuPy's for the call. The launch's `steps` get the same."""
    import torch

    cp = require_cupy()

    def on_stream(call=launch):
        stream = cp.cuda.get_current_stream().ptr
        if stream == torch.cuda.current_stream().cuda_stream:
            return call()
        with torch.cuda.stream(_external_stream(stream)):
            return call()

    on_stream.steps = {name: functools.partial(on_stream, step)  # type: ignore[attr-defined]
                       for name, step in getattr(launch, "steps", {}).items()}
    return on_stream


@lru_cache(maxsize=16)
def _external_stream(pointer: int):
    import torch

    return torch.cuda.ExternalStream(pointer)
