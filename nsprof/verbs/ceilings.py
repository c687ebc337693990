"""`ceilings` and `doctor`: this machine's roofs, measured, and what profiling needs, checked."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from nsprof.verbs.common import path_or_none

if TYPE_CHECKING:
    from nsprof.capture.checks import Check
    from nsprof.ceilings.types import CpuCeilings, GpuCeilings


def doctor(nsys: str | None = None, ncu: str | None = None) -> list[Check]:
    """What profiling needs, checked (CuPy, GPU, driver, nvtx, nsys, ncu, counter access): one
    record per check (check, status, detail, fix), as `nsprof doctor --json` prints them."""
    from nsprof.capture.checks import environment_checks

    return environment_checks(nsys, ncu)


def measure_ceilings(out: str | Path | None = None, save: bool = True,
                     progress: Callable[[str], None] | None = None) -> tuple[GpuCeilings, list[Path]]:
    """This GPU's roofs, measured (GPU): the document `nsprof ceilings --json` prints, and the file
    it was saved to in nsprof's data directory (or `out`) when `save`."""
    from nsprof.ceilings.files import save_ceilings
    from nsprof.launch.gpu import device_info
    from nsprof.launch.gpu_ceilings import measure_ceilings as measure

    device_info()  # without CuPy or a GPU: the one-line error, before any progress
    document = measure(progress=progress or (lambda message: None))
    return document, [save_ceilings(document, path_or_none(out))] if save else []


def measure_cpu_ceilings(out: str | Path | None = None, save: bool = True,
                         progress: Callable[[str], None] | None = None) -> tuple[CpuCeilings, list[Path]]:
    """This host CPU's roofs, measured (no GPU): the document `nsprof ceilings --cpu --json` prints
    (nsprof.ladder_runs.cpu_ceilings), and the file it was saved to (as a GPU's are) when `save`."""
    from nsprof.ceilings.files import save_ceilings
    from nsprof.ladder_runs.cpu_ceilings import measure_cpu_ceilings as measure

    document = measure(progress=progress or (lambda message: None))
    return document, [save_ceilings(document, path_or_none(out))] if save else []
