"""Launch layer: compiles stages through CuPy, verifies them and times them on the GPU, and
measures the GPU's and the host's ceilings (gpu_ceilings, cpu_ceilings).

Only this package imports CuPy, and only when a GPU command runs, so parsing and reporting work on
machines without a GPU or CuPy.
"""

import os

# "0" in the environment: time launches in one run, with no holds of the GPU between them (nsprof.launch.measure
# ._timed); nsprof profile sets it for its workload, whose profilers must see only the launches asked for.
HOLD_VARIABLE = "NSPROF_HOLD"
HELD, UNHELD = "host held ahead", "unheld"  # how GPU launches are timed: a bench results file's `timing`


def timing_method() -> str:
    """HELD, or UNHELD where HOLD_VARIABLE is "0"."""
    return UNHELD if os.environ.get(HOLD_VARIABLE, "1") == "0" else HELD
