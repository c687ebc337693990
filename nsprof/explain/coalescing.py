"""Which 32-byte sectors and 128-byte cache lines one warp's global access touches.

A warp's global load or store is one request to L1; L1 and L2 move data in 32-byte sectors,
four to a 128-byte line. The cost follows the sectors (and lines) touched, not the bytes the lanes
asked for. The array is assumed to start on a 128-byte boundary (cudaMalloc gives 256).
"""

from __future__ import annotations

from dataclasses import dataclass

from nsprof.access import MemoryAccess, lane_byte_ranges
from nsprof.explain.explain_types import SectorFigures, SectorJson

SECTOR_BYTES = 32
LINE_BYTES = 128


@dataclass(frozen=True)
class SectorAnalysis:
    access: MemoryAccess
    lane_ranges: tuple[tuple[int, int], ...]  # [start, end) bytes of each lane
    sectors: tuple[int, ...]  # sector numbers touched (byte offset // 32), ascending

    @property
    def lines(self) -> tuple[int, ...]:
        return tuple(sorted({sector * SECTOR_BYTES // LINE_BYTES for sector in self.sectors}))

    @property
    def bytes_used(self) -> int:
        """Distinct bytes the lanes ask for (lanes on the same address count once)."""
        return len(set().union(*(range(start, end) for start, end in self.lane_ranges)))

    @property
    def min_sectors(self) -> int:
        """The fewest sectors that could hold those bytes."""
        return -(-self.bytes_used // SECTOR_BYTES)

    @property
    def efficiency(self) -> float:
        """Bytes used per byte moved in the sectors touched (1.0 = every fetched byte is used)."""
        return self.bytes_used / (len(self.sectors) * SECTOR_BYTES)

    def to_json(self) -> SectorJson:
        return {"access": self.access.to_json(), **self.figures()}

    def figures(self) -> SectorFigures:
        """What the model computes, without the access it computes it for."""
        return {
            "sectors": len(self.sectors), "lines": len(self.lines),
            "min_sectors": self.min_sectors, "bytes_used": self.bytes_used,
            "efficiency": round(self.efficiency, 4), "sector_ids": list(self.sectors), "line_ids": list(self.lines),
            "lanes": [{"lane": lane, "start": start, "end": end} for lane, (start, end) in enumerate(self.lane_ranges)],
        }


def analyze_global(access: MemoryAccess) -> SectorAnalysis:
    """Sectors and lines touched by one warp (warp 0 of the block) executing `access`."""
    ranges = lane_byte_ranges(access)
    sectors = {byte // SECTOR_BYTES for start, end in ranges for byte in range(start, end)}
    return SectorAnalysis(access, tuple(ranges), tuple(sorted(sectors)))
