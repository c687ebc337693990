"""How many times faster than the CPU: each stage's speed-up over the CPU rung's serial loop and over
its BLAS at the same op and size. The one rule that bench, analyze, report and the ladder chart show."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Final

from nsprof.errors import NsprofError

# Final: literal keys, which mypy checks against the typed records that carry them
LOOP_KEY: Final = "speedup_vs_cpu_loop"
BLAS_KEY: Final = "speedup_vs_cpu_blas"


def cpu_speedups(rows: Sequence[Mapping], time_key: str) -> list[dict[str, float | None]]:
    """For each row ({"op", "stage", "size", time_key}; a time that is None or NaN was not measured),
    {LOOP_KEY, BLAS_KEY}: the time of the op's serial CPU loop and of its CPU BLAS stage at the same
    size over the row's own time; None where either time is missing."""
    from nsprof.ladder.cpu_roles import CPU_BLAS, CPU_LOOP

    roles = {CPU_LOOP: LOOP_KEY, CPU_BLAS: BLAS_KEY}
    times: dict[tuple[str, str, str], float] = {}
    for row in rows:
        role, time = _role(row), _time(row, time_key)
        if role in roles and time is not None:
            times[(roles[role], row["op"], row["size"])] = time
    found = []
    for row in rows:
        time = _time(row, time_key)
        found.append({key: (base / time if (base := times.get((key, row["op"], row["size"]))) and time else None)
                      for key in roles.values()})
    return found


def _role(row: Mapping) -> str | None:
    """The CPU rung's role of the row's stage (loop, blocked, blas); None for a GPU stage or one this nsprof lacks."""
    from nsprof.ladder.cpu_roles import cpu_role
    from nsprof.ladder.registry import get_stage

    if not isinstance(row.get("op"), str) or not isinstance(row.get("stage"), str):
        return None
    try:
        stage = get_stage(row["op"], row["stage"])
    except NsprofError:
        return None
    return cpu_role(stage) if stage.kind.on_host else None


def _time(row: Mapping, key: str) -> float | None:
    value = row.get(key)
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value <= 0:
        return None
    return float(value)
