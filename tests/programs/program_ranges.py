"""NVTX ranges for the test programs, with whatever the machine has: the nvtx package (which names
a domain), else PyTorch's NVTX calls (default domain), else none. The programs run as scripts
(`python3 tests/programs/X.py`), so this folder is on their import path."""

from __future__ import annotations

import contextlib


def range_maker(domain: str):
    """A function `name -> context manager` that opens an NVTX range in `domain` where it can."""
    try:
        import nvtx

        return lambda name: nvtx.annotate(message=name, domain=domain)
    except ImportError:  # pragma: no cover - where the nvtx package is missing
        pass
    try:
        from torch.cuda import nvtx as torch_nvtx
    except ImportError:
        return lambda name: contextlib.nullcontext()

    @contextlib.contextmanager
    def torch_range(name: str):
        torch_nvtx.range_push(name)
        try:
            yield
        finally:
            torch_nvtx.range_pop()

    return torch_range
