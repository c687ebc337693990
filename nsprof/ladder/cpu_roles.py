"""The rungs of the CPU's ladder, as its stages declare them: which is the serial loop, which the
blocked code on every core and which the CPU's BLAS, and the compiler flags each file is built with.
Facts about the declared stages, read by the launcher, the speed-ups and the explanations alike."""

from __future__ import annotations

from pathlib import Path

from nsprof.ladder.op_model import Stage

CPU_LOOP, CPU_BLOCKED, CPU_BLAS = "loop", "blocked", "blas"
# flags by file: the serial loops compile as the tutorials' loop would (-O2, no -march), the
# blocked ones for this machine's vector units and with OpenMP
SERIAL_FLAGS = ("-O2",)
PARALLEL_FLAGS = ("-O3", "-march=native", "-fopenmp")


def compile_flags(stage: Stage) -> tuple[str, ...]:
    """The host compiler's flags for a CPU stage's C file: serial files as the tutorials built theirs."""
    return SERIAL_FLAGS if "serial" in Path(stage.kernel_file or "").stem else PARALLEL_FLAGS


def cpu_role(stage: Stage) -> str:
    """Which rung of the CPU's ladder: the serial loop, the blocked parallel code, or the BLAS (no file)."""
    if stage.kernel_file is None:
        return CPU_BLAS
    return CPU_LOOP if compile_flags(stage) == SERIAL_FLAGS else CPU_BLOCKED
