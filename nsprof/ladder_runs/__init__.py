"""Running a ladder's stages on the GPU and the host: launch each by its kind, tune, verify against
a float64 reference and time them (bench), the whole flow of a product (pipeline), and the host's
roofs measured with the CPU rung's own loop. Built on nsprof.launch (compile, the GPU, CUDA events)."""
