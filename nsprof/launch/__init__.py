"""Launch layer: compiles stages through CuPy, verifies them and times them on the GPU, and
measures the GPU's and the host's ceilings (gpu_ceilings, cpu_ceilings).

Only this package imports CuPy, and only when a GPU command runs, so parsing and reporting work on
machines without a GPU or CuPy.
"""
