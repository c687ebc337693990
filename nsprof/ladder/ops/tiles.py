"""The block tile: the launch configuration of the matrix-product ladders (SGEMM, HGEMM) and of
SGEMV, whose blocks cover rows of y. An op-side detail, not part of the generic model: nsprof.ladder.op_model
only asks a stage's launch configurations for what nsprof.ladder.op_model.LaunchConfig names (a shape, the
kernel entries, an arch); a ladder of another shape declares its own configuration type."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from nsprof.ladder.op_model import LaunchConfig


@dataclass(frozen=True)
class Tile:
    """One launch configuration: a block computes a bm x bn tile of C in steps of bk.

    `entry` is the kernel's extern "C" name; `threads` the block shape (x, y).
    Padded stages round M, N up to multiples of bm, bn and K up to a multiple of bk
    (times the split-K factor). `max_split_k` > 1 lets the launcher split K over
    gridDim.z when there are too few tiles to fill the GPU. `arch` names a target the
    entry needs beyond the device's own (sm_90a: wgmma, setmaxnreg), `tma_boxes` the boxes
    (rows, cols) of the A and B tensor maps when the kernel reads its operands through TMA,
    with `swizzle` bytes; `persistent` kernels get one block per SM and loop over tiles.
    `unchecked_entry` names the same kernel without bounds checks, which the launcher runs
    instead when M, N and K are whole tiles (K of bk x the split-K factor; with bn and bk
    multiples of 4, whole tiles also keep float32 rows float4-aligned).
    `stream_k` entries take a 1-D grid and two more arguments, (whole_tiles, shared_blocks): the
    first blocks compute whole tiles, the rest share the remaining tiles' k steps out evenly
    (split-K, or the last wave's tiles; nsprof.ladder.ops.launch_plan.choose_plan). `blocks_per_sm` is what the
    entry's __launch_bounds__ promise to fit on one SM: a wave of the grid is SMs x that.
    A `persistent` stream_k tile keeps its grid of one block per SM and walks its whole tiles first (a clustered
    one: each cluster walks its units as one, its slots SMs / `cluster`); with `sums_in_workspace`, the blocks
    that share a tile add their float32 sums into a workspace (the kernel's `partials` argument) and the last of
    them stores the tile, so C (float16) takes no atomic adds; a tile that is not stream_k does the same with the
    slices of a K split (no reduce kernel).
    A stream_k tile shares its last wave only when that wave would fill at most `max_tail_fill` of the
    slots. A `tma_store` kernel stores C through a TMA tensor map: its C argument is the map's device
    address (64 x 64 boxes, the tile's swizzle). A kernel with `maps_by_value` takes its tensor maps' 128 bytes
    as parameters instead of their device addresses. A tile with `few_rows` is made for products of at
    most that many rows: where M fits, the launcher tries only such tiles, and never otherwise; one
    with `max_rows` is never tried for products of more rows. Both split K only as far as one wave
    holds (their products stream B from memory). A tile with `fill_gain` is an alternative to the
    launcher's choice, taken where its waves keep at least that share more of the slots busy (3072^3:
    128 x 192 for 128 x 256; launch_plan.choose_plan). A tile with `one_wave_first` is taken unsplit, before
    the tiles declared ahead of it, where its blocks fill more than half of one wave and no more (a
    narrower tile with a deep ring, unsplit, against a wider one that would split K: 16 x 128 against
    16 x 256 at N = 14336). A tile with `one_round_first` is taken where its blocks fit one round, however full, and
    C has more than one row of it, rather than a smaller tile whose blocks would take two, if one of its tiles is no
    more work than the smaller tile's rounds of tiles (rounds.in_one_round). A tile with `replaces_unaligned`
    (a shape) is taken instead of the tile of that shape where the rows of A or B are not whole TMA boxes wide
    (`rows_in_whole_boxes`; launch_plan.choose_plan), as its `straddle` says: "either" operand's rows (the default),
    only where B's are not ("B": it shares B, which A's straddling rows do not need), or only where B's are and A's
    start inside 32-byte sectors ("A inside sectors": it shares A).
    A tile with `takes_over` (a shape) runs the plans the launcher makes of the tile of that shape where they split
    no K and C has more than one row of those tiles (launch_plan._taken_over). A tile with `replaces_split` (a
    shape) runs unsplit where the launcher would split K of the tile of that shape into shallow slices
    (launch_plan.SHALLOW_SLICE_K) and its own tiles fill the SMs (launch_plan.choose_plan). A tile with
    `dependent_launch` is launched as a programmatic dependent launch (nsprof.launch.dependent_launch): its kernel
    waits for the grid before it in the stream (griddepcontrol) before it touches memory, so its blocks can be
    placed while that grid finishes.
    """

    bm: int
    bn: int
    bk: int
    threads: tuple[int, int]
    entry: str
    dynamic_smem_bytes: int = 0
    max_split_k: int = 1
    arch: str | None = None
    tma_boxes: tuple[tuple[int, int], tuple[int, int]] | None = None
    swizzle: int = 0
    persistent: bool = False
    b_k_major: bool = False
    b_in_registers: bool = False  # a wgmma tile computing C^T = B^T A^T: B's tile as the MMA's register operand
    a_m_major: bool = False  # the kernel reads A as At (K x M, rows padded to 4 floats), written by a first kernel
    unchecked_entry: str | None = None
    stream_k: bool = False
    blocks_per_sm: int = 1
    sums_in_workspace: bool = False
    max_tail_fill: float = 1.0
    tma_store: bool = False
    few_rows: int | None = None  # where M is at most this, only such tiles are tried
    max_rows: int | None = None  # never tried for products of more rows than this
    fill_gain: float | None = None  # an alternative: taken only where its waves keep this much more busy
    one_wave_first: bool = False  # taken unsplit, before the tiles ahead of it, where it fills half a wave to one
    one_round_first: bool = False  # taken in one round where a smaller tile would take two (launch_plan)
    replaces_unaligned: str | None = None  # the shape of the tile it replaces where rows are not whole boxes
    straddle: str = "either"  # ... whose rows: "either" operand's, "B" or "A inside sectors" (B's whole boxes)
    takes_over: str | None = None  # the shape of the tile whose unsplit plans it runs
    replaces_split: str | None = None  # the shape of the tile whose shallow K splits it replaces, unsplit
    maps_by_value: bool = False
    cluster: int = 1  # blocks per cluster: a tile is theirs (stacked if persistent, else side by side), in as many slots
    dependent_launch: bool = False  # launched to overlap the grid before it (the kernel waits for its writes)

    @property
    def shape(self) -> str:
        return f"{self.bm}x{self.bn}"

    @property
    def entries(self) -> tuple[str, ...]:
        """Every kernel name a launch of this tile can show in a profile."""
        return (self.entry,) if self.unchecked_entry is None else (self.entry, self.unchecked_entry)

    def count(self, m: int, n: int) -> int:
        """How many of these tiles cover an M x N C (the last row and column of tiles ragged)."""
        return -(-m // self.bm) * -(-n // self.bn)

    def slots(self, sm_count: int) -> int:
        """How many of these tiles run at once on `sm_count` SMs: a block per slot, a clustered tile's
        `cluster` blocks taking that many slots."""
        return sm_count * self.blocks_per_sm // self.cluster

    def rows_aligned(self, n: int, k: int, item_bytes: int) -> bool:
        """Whether every row the kernel copies in 16-byte pieces starts 16 bytes apart, as a TMA tensor
        map or a 16-byte cp.async needs: A's rows of K elements, and B's of N (of K when the kernel
        reads B transposed). In float32 that is K % 4 == 0 (and N % 4 == 0); in float16, % 8. Where
        they are not, a cp.async stage's workload pads the operands to whole tiles (nsprof.ladder.ops.matmul); a
        TMA stage's copies only those rows (nsprof.ladder.ops.launch_plan.run_shape)."""
        b_row = k if self.b_k_major else n
        return k * item_bytes % 16 == 0 and b_row * item_bytes % 16 == 0

    def rows_in_whole_boxes(self, n: int, k: int) -> bool:
        """Whether the rows of A (K long) and of B (N long) are whole TMA boxes wide: each box row then
        starts a 128-byte line (with 128-byte swizzled boxes) rather than straddling two."""
        return all(self.whole_box_rows(n, k))

    def whole_box_rows(self, n: int, k: int) -> tuple[bool, bool]:
        """Whether the rows of A (K long), and of B (N long), are whole TMA boxes wide (both, without boxes)."""
        if self.tma_boxes is None:
            return True, True
        (_, a_cols), (_, b_cols) = self.tma_boxes
        return k % a_cols == 0, n % b_cols == 0

    def entry_for(self, m: int, n: int, k: int, split_k: int = 1) -> str:
        """The entry that runs an M x N x K product (K split in split_k slices): the unchecked one
        when there is one and the product is whole tiles, whole bk-deep steps in every K slice
        (a stream_k entry cuts K only between whole steps)."""
        depth = self.bk if self.stream_k else self.bk * split_k  # stream-K slices are whole k steps
        whole = m % self.bm == 0 and n % self.bn == 0 and k % depth == 0
        return self.unchecked_entry if self.unchecked_entry and whole else self.entry



def round_up(x: int, multiple: int) -> int:
    """x rounded up to a whole number of `multiple`s: the rows or columns whole tiles (or 128-byte lines) cover."""
    return -(-x // multiple) * multiple


def as_tile(config: LaunchConfig) -> Tile:
    """A stage's launch configuration as the Tile the GEMM and GEMV launchers read (the op contract
    types it as any LaunchConfig); a configuration of another type is a declaration error."""
    if not isinstance(config, Tile):
        raise TypeError(f"{config!r} is not a nsprof.ladder.ops.tiles.Tile, which this op's launcher needs")
    return config


def as_tiles(configs: Iterable[LaunchConfig]) -> tuple[Tile, ...]:
    return tuple(as_tile(config) for config in configs)
