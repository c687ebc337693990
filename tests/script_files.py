"""The repository's scripts outside the package (benchmarks/), imported from their files for the tests that hold
them to the kernel, the launcher and real data."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def script(relative: str) -> ModuleType:
    """The script at `relative` (from the repository's root), imported once, named as its file."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
