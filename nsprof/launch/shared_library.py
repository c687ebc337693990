"""The copy of a shared library that this process has loaded already, so that nsprof's ctypes
calls and CuPy's bindings share one (one cuBLAS, one cuBLASLt: their handles and state)."""

from __future__ import annotations

import ctypes
import ctypes.util


def loaded_library(fragment: str, but: str | None = None, fallback: str | None = None) -> str | None:
    """The path of the loaded library whose file name holds `fragment` (and not `but`), from
    /proc/self/maps; else the one the loader finds by the name `fallback`; None where neither."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if fragment in path and (but is None or but not in path):
                    return path
    except OSError:  # not Linux
        pass
    return ctypes.util.find_library(fallback) if fallback else None


def load_loaded(fragment: str, what: str, but: str | None = None, fallback: str | None = None) -> ctypes.CDLL:
    """The library loaded_library finds, opened; RuntimeError naming `what` where there is none."""
    path = loaded_library(fragment, but, fallback)
    if path is None:
        raise RuntimeError(f"{what} could not be found in this process")
    return ctypes.CDLL(path)
