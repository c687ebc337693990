"""Launch layer: compiles stages through CuPy, verifies them and times them on the GPU.

Only this package (and nsprof.ceilings.measure, which measures the GPU's ceilings through it)
imports CuPy, and only when a GPU command runs, so parsing and reporting work on machines without
a GPU or CuPy.
"""
