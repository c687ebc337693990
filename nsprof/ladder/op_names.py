"""The ops' names, for help texts that must not load the ops (and NumPy) to print themselves; a
test keeps this equal to the registry."""

OP_NAMES = ("sgemm", "hgemm", "sgemv")
