"""What `nsprof diff` returns: `DiffResult`, the tables of a diff and how they were called."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from nsprof.diff.judge import ADDED, REMOVED
from nsprof.diff.noise import NoiseFloor
from nsprof.diff.types import Contributor, HostChange, KernelRow, LoopChange, RangeRow, Row, StageRow, TotalRow


@dataclass(frozen=True)
class DiffResult:
    """Two captures compared: the rows of each table, the warnings, and how the rows were called."""

    a: str
    b: str
    kernels: list[KernelRow]
    ranges: list[RangeRow]
    stages: list[StageRow]
    totals: list[TotalRow]
    contributors: list[Contributor]
    warnings: list[str]
    method: str
    min_change_pct: float
    stage_pair: tuple[str, str] | None = None
    time_source: dict = field(default_factory=dict)  # side -> "nsys" (or the timeline's tool), "ncu" or "bench"
    runs: dict = field(default_factory=dict)  # side -> how many runs it holds
    noise: NoiseFloor | None = None  # the floors a one-run diff called changes beyond
    host: HostChange | None = None  # nsprof.diff.host.host_rows: the host side of two programs' captures
    apart: bool = False  # the sides ran on different GPUs: work of 10-100 us and copies were not called (noise.MACHINE_PACED)
    loop: LoopChange | None = None  # nsprof.diff.loop: the time an iteration takes, where both sides have a loop

    def compared(self) -> int:
        """How many kernels, ranges and stages both sides have (what a change could be measured on)."""
        return sum(row["status"] not in (ADDED, REMOVED) for rows in (self.kernels, self.ranges, self.stages)
                   for row in rows)

    def slower_than(self, pct: float) -> list[str]:
        """One line per kernel, range or stage significantly slower by more than `pct` percent."""
        tables: tuple[tuple[str, str, Sequence[Row]], ...] = (
            ("kernels", "kernel", self.kernels), ("ranges", "range", self.ranges), ("stages", "stage", self.stages))
        return [f"{section[:-1]} {row[label]}: {row['change_pct']:+.1f}% "
                f"[{row['ci_low_pct']:+.1f}%, {row['ci_high_pct']:+.1f}%]"
                for section, label, rows in tables
                for row in rows if row["significant"] and row["change_pct"] is not None and row["change_pct"] > pct]
