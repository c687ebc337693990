"""Which shared-memory banks one warp touches, and how many wavefronts that costs.

The model (compute capability 7.0 and later; checked against the H200 fixtures):

- Shared memory has 32 banks of 4 bytes: byte address a lies in bank (a // 4) % 32.
- Each wavefront (one pass of the shared-memory data pipe, 128 bytes) serves at most one 4-byte
  word per bank, to every lane that wants it: lanes on the same word never conflict (broadcast
  on loads, one write on stores).
- The lanes of a warp are split into phases that are served separately: all 32 lanes for 32-bit
  accesses, half-warps (16 lanes = 128 bytes) for 64-bit and quarter-warps (8 lanes) for 128-bit.
  A phase takes as many wavefronts as the most distinct words any one bank must serve in it (its
  n-way degree); lanes in different phases never conflict. So a conflict-free 128-bit access still
  takes 4 wavefronts, a 64-bit one 2.
- Loads only: when lanes come in pairs with the same address (lane n and n^1, or n and n^2, for
  every lane) the data returned is packed twice as densely, so the phases are twice as large
  (a 128-bit load in half-warps, at least 2 wavefronts). NVIDIA describes this for compute
  capability 7.x (developer forum thread 77228); the H200 counters agree for 128-bit loads.

Nsight Compute counts the wavefronts (l1tex__data_pipe_lsu_wavefronts_mem_shared_*) and, as bank
conflicts, only those above the minimum: `excess_wavefronts` here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from nsprof.access import WARP_SIZE, MemoryAccess, lane_byte_ranges
from nsprof.errors import UsageError
from nsprof.explain.explain_types import BankFigures, BankJson

BANKS = 32
BANK_BYTES = 4
WAVEFRONT_BYTES = BANKS * BANK_BYTES


@dataclass(frozen=True)
class LaneWords:
    """The 4-byte words one lane touches, their banks and the wavefront (1-based) that serves each."""

    lane: int
    words: tuple[int, ...]
    banks: tuple[int, ...]
    wavefronts: tuple[int, ...]


@dataclass(frozen=True)
class BankAnalysis:
    access: MemoryAccess
    paired: bool  # lanes came in same-address pairs: a load served in phases twice as large
    phases: tuple[tuple[int, ...], ...]  # lanes served together, in order
    phase_wavefronts: tuple[int, ...]  # wavefronts each phase takes (its n-way degree)
    lanes: tuple[LaneWords, ...]

    @property
    def wavefronts(self) -> int:
        return sum(self.phase_wavefronts)

    @property
    def min_wavefronts(self) -> int:
        return len(self.phases)

    @property
    def excess_wavefronts(self) -> int:
        """What Nsight Compute counts as bank conflicts for this instruction."""
        return self.wavefronts - self.min_wavefronts

    @property
    def n_way(self) -> int:
        """The conflict degree: most distinct words one bank serves within a phase (1 = conflict-free)."""
        return max(self.phase_wavefronts)

    def to_json(self) -> BankJson:
        return {"access": self.access.to_json(), **self.figures()}

    def figures(self) -> BankFigures:
        """What the model computes, without the access it computes it for."""
        return {
            "n_way": self.n_way, "wavefronts": self.wavefronts,
            "min_wavefronts": self.min_wavefronts, "excess_wavefronts": self.excess_wavefronts,
            "paired": self.paired, "phases": [list(p) for p in self.phases],
            "phase_wavefronts": list(self.phase_wavefronts),
            "lanes": [{"lane": lane.lane, "banks": list(lane.banks), "words": list(lane.words),
                       "wavefronts": list(lane.wavefronts)} for lane in self.lanes],
        }


def analyze_shared(access: MemoryAccess) -> BankAnalysis:
    """Banks, phases and wavefronts of one warp (warp 0 of the block) executing `access`."""
    ranges = lane_byte_ranges(access)
    paired = access.op == "load" and access.width > BANK_BYTES and _paired([start for start, _ in ranges])
    lanes_per_phase = min(WARP_SIZE, (WAVEFRONT_BYTES // access.width) * (2 if paired else 1))
    phases = tuple(tuple(range(first, first + lanes_per_phase)) for first in range(0, WARP_SIZE, lanes_per_phase))
    words = [tuple(range(start // BANK_BYTES, end // BANK_BYTES)) for start, end in ranges]
    served: dict[tuple[int, int], int] = {}  # (lane, word) -> wavefront
    phase_wavefronts: list[int] = []
    for phase in phases:
        offset = sum(phase_wavefronts)
        per_bank: dict[int, list[int]] = {}  # bank -> its distinct words, in the order lanes ask
        for lane in phase:
            for word in words[lane]:
                queue = per_bank.setdefault(word % BANKS, [])
                if word not in queue:
                    queue.append(word)
                served[lane, word] = offset + queue.index(word) + 1
        phase_wavefronts.append(max(len(queue) for queue in per_bank.values()))
    lanes = tuple(LaneWords(lane, words[lane], tuple(w % BANKS for w in words[lane]),
                            tuple(served[lane, w] for w in words[lane])) for lane in range(WARP_SIZE))
    return BankAnalysis(access, paired, phases, tuple(phase_wavefronts), lanes)


def _paired(starts: list[int]) -> bool:
    """Lane n reads what lane n^1 reads, for every n; or lane n what lane n^2 reads."""
    return any(all(starts[n] == starts[n ^ step] for n in range(WARP_SIZE)) for step in (1, 2))


def conflict_free_row_length(accesses: list[MemoryAccess], max_padding: int = 32) -> int | None:
    """The shortest row length (padding the rows of one array, same indices) at which every access
    given is conflict-free and still aligned; None if no padding up to `max_padding` elements does it."""
    rows, cols = accesses[0].shape
    for padding in range(1, max_padding + 1):
        padded = [replace(a, shape=(rows, cols + padding)) for a in accesses]
        try:
            if all(analyze_shared(a).n_way == 1 for a in padded):
                return cols + padding
        except UsageError:  # misaligned at this row length
            continue
    return None
