"""Launch layer: compiles stages through CuPy, verifies them and times them on the GPU.

Only this package imports CuPy, and only when a GPU command runs, so parsing and
reporting work on machines without a GPU or CuPy.
"""
