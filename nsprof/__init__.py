"""nsprof: run, verify, profile and explain a ladder of CUDA kernels under Nsight tools."""

__version__ = "0.1.0"
