"""How a matrix product is cut into blocks: the tile, the K split and the tiles a stream-K grid shares
out, chosen from a stage's declared tiles for the problem and the GPU's SMs (`choose_plan`). The launcher
(nsprof.ladder.ops.matmul) runs the plan; `nsprof explain wave-quantization` counts it in waves
(nsprof.ladder.ops.waves).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from nsprof.errors import UsageError
from nsprof.ladder.op_model import Stage
from nsprof.ladder.ops.rounds import finer_rows, in_one_round, rounds
from nsprof.ladder.ops.tiles import Tile, as_tiles, round_up

# A plan that shares a stream-K tail is taken over (`_taken_over`) only where the heir's own rounds keep at least
# this share of the SMs busy: it has no tail to even its last round out (8192^3: 97%, alike; 8192 x 14336 x 4096
# 98.7% and 6144 x 14336 x 4096 99.3%, ahead).
TAKE_OVER_TAIL_BUSY = 0.98
# Where rows straddle lines, the ping-pong tile takes over (`_unaligned_form`) only plans that share no tail, with B
# of at most this many elements: it was measured there so; past it the clusters that share B stay.
STRADDLED_TAKE_OVER_MAX_B = 1 << 26
MIN_SLICE_K = 128  # a K split keeps each slice at least this deep, so the partial sums stay worth a launch
# A grid fills the GPU evenly when the SMs' average block count is at least this share of the busiest SM's
# (blocks spread round-robin): 1.94 of 2 per SM (0.97) runs at full speed, 1.21 of 2 (0.61) does not.
EVEN_SPREAD = 0.8
# A K split whose slices are at most this deep gives way to a tile declared to replace it (`Tile.replaces_split`),
# where that tile's blocks fit one wave or keep at least FILLED_SHARE of the slots busy: h6's split 128 x 128 tile
# pays a fixed cost a slice (its float32 sums added in a workspace) that deep slices hide and shallow ones do not.
SHALLOW_SLICE_K = 2048
FILLED_SHARE = 0.9
# A tile whose blocks fill at least this share of one wave, but not all of it, runs in its clustered form where rows
# straddle the L2's sectors or lines (`_nearly_full_wave`), rather than leaving the launcher to a smaller tile.
NEARLY_FULL_WAVE = 0.78
SECTOR_HALVES = 16  # 32 bytes of fp16: a row that is not whole sectors starts inside one
# Where only B's rows straddle lines, at whole sectors, the ping-pong tile keeps the plan up to this K; deeper, the
# clusters' shared B pays (`_ping_pong_reads_it_better`).
B_STRADDLE_MAX_K = 2048
# A few-row tile's K split into slices shallower than this per 16 rows it sums (at least 16) gives way to a narrower
# tile for as many rows that makes as many blocks with fewer, deeper slices (`_fewer_slices`).
FEW_ROW_SLICE_K = 1024
# The clusters share a last wave's units by k steps (`_with_shared_tail`) only where K is at least this deep: a
# round then outweighs the float32 sums the shared units' pieces add and read.
CLUSTER_TAIL_MIN_K = 4000
# Where K is shallower than that, clusters give way to an alternative tile's clusters whose units keep at least this
# much more of the clusters' slots busy (`_better_filled_clusters`), below the alternative's own `fill_gain`.
CLUSTER_FILL_GAIN = 0.04


@dataclass(frozen=True)
class LaunchPlan:
    """How a product is cut into blocks: the tile, the K split and, for a stream_k tile, the last
    `shared_tiles` tiles whose k steps `shared_blocks` blocks share out evenly (a K split of a
    stream_k tile shares every tile: split x tiles blocks)."""

    tile: Tile
    split_k: int = 1
    shared_tiles: int = 0
    shared_blocks: int = 0


def choose_plan(stage: Stage, m: int, n: int, k: int, sm_count: int, forced_tile: str | None = None,
                forced_split: int | None = None, tiles: tuple[Tile, ...] | None = None,
                forced_tail: int | None = None) -> LaunchPlan:
    """Pick the block tile (and split-K factor) that keeps every SM busy, for the M x N x K the stage's kernels run
    (`run_shape`: a TMA stage's copies of rows that are not 16-byte aligned).

    In registry order (largest tile first), take the first tile that yields at least one
    block per SM on its own, or with a split of K that the tile allows (each slice at least
    MIN_SLICE_K deep). A tile that can split K splits until its blocks also spread evenly over
    the SMs (`spreads_evenly`), or as far as it may. Otherwise fall back to the smallest tile.
    `forced_tile` ("64x128"), `forced_split` and `forced_tail` (tiles shared at the end) override
    the choice, for tuning runs; `tiles` limits the choice to those this GPU can run. A stream_k
    tile that needs no split shares its last tiles out (`stream_k_tail`). Where few-row tiles fit M,
    only they are tried (`for_rows`), one that fills one wave unsplit first (`one_wave_first`); an
    alternative tile may then replace the choice (`_better_filled`), a larger tile that fits one round the smaller
    tile's two (`rounds.in_one_round`), a narrower 16-row tile a wider one's shallow
    split (`_fewer_slices`), where rows are not whole TMA boxes wide, its clustered form (`_unaligned_form`; and
    where a tile falls just short of one wave, rather than a smaller tile: `_nearly_full_wave`), a
    shallow K split a tile that needs none (`_unsplit_form`), and elsewhere a tile that takes over its plans
    (`_taken_over`); last, where the plan's tiles leave many rows past M, 64-row tiles (`rounds.finer_rows`).

    Why the even spread (measured on the H200 with v8, benchmarks/gpu/sgemm_peak_h200.sh):
    at 1000x1200x800, 80 tiles of 128x128 split in 2 give 160 blocks, so 28 SMs run two blocks and
    104 run one, at 79% of cuBLAS; split in 4 (320 blocks, 2.4 per SM) the same kernel reads 99%.
    """
    candidates = as_tiles(stage.tiles) if tiles is None else tiles
    every_tile = candidates
    if forced_tile:
        chosen = [t for t in candidates if t.shape == forced_tile]
        if not chosen:
            shapes = ", ".join(t.shape for t in candidates)
            raise UsageError(f"stage {stage.stage} has no {forced_tile} tile", f"choose one of: {shapes}")
        if chosen[0].max_rows is not None and m > chosen[0].max_rows:
            raise UsageError(f"the {forced_tile} tile of stage {stage.stage} runs products of at most "
                             f"{chosen[0].max_rows} rows, not {m}", "choose a taller tile, or leave the choice to nsprof")
        if forced_split is not None:
            return _unless_needless(_with_sharing(chosen[0], m, n, forced_split, sm_count, forced_tail), chosen)
        candidates = tuple(chosen)
    else:
        candidates = for_rows(candidates, m)
    candidates, alternatives, replacements = _by_role(candidates)
    for tile in candidates:
        if tile.one_wave_first and sm_count < 2 * tile.count(m, n) <= 2 * sm_count:
            return LaunchPlan(tile)
    for tried, tile in enumerate(candidates):
        blocks = tile.count(m, n)
        split = _split(tile, blocks, k, sm_count)
        fills = blocks * split >= sm_count or (_for_few_rows(tile) and 2 * blocks * split > sm_count)
        twin = None if fills or split > 1 else _nearly_full_wave(tile, replacements, m, n, k, sm_count)
        if twin is not None:
            return LaunchPlan(twin)
        if fills or tile is candidates[-1]:  # a tile for few rows: more than half a wave, all one wave holds
            tile, split = in_one_round(tile, split, candidates[:tried] + alternatives, m, n, sm_count)
            plan = _unless_needless(_with_sharing(tile, m, n, split, sm_count, forced_tail), candidates)
            plan = _fewer_slices(plan, candidates, m, n, k)
            plan = _unaligned_form(_better_filled(plan, alternatives, m, n, sm_count), replacements, candidates,
                                   m, n, k, sm_count)
            plan = _better_filled_clusters(plan, alternatives, replacements, m, n, k, sm_count)
            plan = _taken_over(_unsplit_form(plan, replacements, m, n, k, sm_count), candidates, m, n, sm_count)
            finer = None if forced_tile or plan.split_k > 1 or plan.shared_tiles else finer_rows(
                plan.tile, every_tile, m, n, sm_count)
            return plan if finer is None else LaunchPlan(finer)
    raise AssertionError("unreachable: the last tile always returns")


def run_shape(stage: Stage, m: int, n: int, k: int, item_bytes: int) -> tuple[int, int, int]:
    """The M x N x K a stage's kernels run for an M x N x K product, the one `choose_plan` plans. A TMA stage
    ("tma-fill") reads past the edges as zeros, so it runs the product as it is where every row is 16-byte aligned;
    where A's (K) or B's (N) are not, it runs on a copy of that operand (and of C, for N) whose rows are whole
    128-byte lines, as many tiles as before. The other stages pad to whole tiles of the tile they take
    (nsprof.ladder.ops.matmul), or run as they are."""
    if stage.ragged != "tma-fill":
        return m, n, k

    def pitch(length: int) -> int:
        line = 128 // item_bytes
        return length if length * item_bytes % 16 == 0 else round_up(length, line)

    return m, pitch(n), pitch(k)


def _by_role(tiles: tuple[Tile, ...]) -> tuple[tuple[Tile, ...], tuple[Tile, ...], tuple[Tile, ...]]:
    """The tiles the launcher chooses from (all of them where none is plain: a forced alternative), the
    alternatives that may replace the choice (`fill_gain`) and the replacements where rows are not whole
    boxes (`replaces_unaligned`) or K is split shallow (`replaces_split`)."""
    alternatives = tuple(t for t in tiles if t.fill_gain is not None)
    replacements = tuple(t for t in tiles if t.replaces_unaligned is not None or t.replaces_split is not None)
    plain = tuple(t for t in tiles if t.fill_gain is None and t not in replacements)
    return plain or tiles, alternatives, replacements


def busy_share(blocks: int, slots: int) -> float:
    """The share of the slots' time a grid keeps busy over its rounds (ceil(blocks / slots)), each block
    taking the same time: 1.0 for whole waves."""
    return blocks / (math.ceil(blocks / slots) * slots)


def _better_filled(plan: LaunchPlan, alternatives: tuple[Tile, ...], m: int, n: int, sm_count: int) -> LaunchPlan:
    """An unsplit plan of at least a wave gives way to an alternative tile (`fill_gain`) whose waves keep
    that much more of the slots busy. Why a margin (the H200, paired with the library): at 3072^3, 128 x 192
    keeps 97% busy against 128 x 256's 73% and ran 640.7 TFLOP/s against 588.6 (84% -> 100% of torch.mm,
    benchmarks/records/2026-11-29-h200-hgemm-sizes); with 5.5 to 7.3 points more busy it ran 91.0-101.6% of the
    library against 84.1-96.0% (3072 x 4608 x 2048, 5120 x 3072 x 2048, 3072 x 5120 x 2048), with 3.0 and 4.3
    points alike (6144 x 4096 x 2048, 5120 x 5120 x 2048), and at 8192^3 (2.3 points) 645 against 675
    (benchmarks/records/2026-11-30-h200-hgemm-multicast)."""
    if plan.split_k > 1 or plan.tile.count(m, n) < sm_count * plan.tile.blocks_per_sm:
        return plan
    busy = busy_share(plan.tile.count(m, n), sm_count * plan.tile.blocks_per_sm)
    for tile in alternatives:
        slots = sm_count * tile.blocks_per_sm
        if tile.count(m, n) >= slots and busy_share(tile.count(m, n), slots) >= busy + (tile.fill_gain or 0.0):
            return LaunchPlan(tile)
    return plan


def _fewer_slices(plan: LaunchPlan, candidates: tuple[Tile, ...], m: int, n: int, k: int) -> LaunchPlan:
    """A few-row tile's K split into slices shallower than FEW_ROW_SLICE_K per 16 rows it sums (M's rows up to
    the tile's, at least 16) gives way to a narrower tile for the same rows that makes as many blocks with a
    smaller split, its slices deeper: each slice adds float32 sums for its rows below M in the workspace and the
    last loads them, a cost per slice that shallow slices do not hide. Why (the H200, paired with the library):
    16 x 128 split in 4 ran 103.9-104.6% at 1 and 16 x 4096 x 4096 against 100.8-103.7% for 16 x 256 split in 8
    (slices of 512), alike at 1 x 4096 x 14336 (slices of 1792: 99.6-100.8 against 100.4-102.2;
    benchmarks/records/2026-12-01-h200-hgemm-block-start). 64 x 128 against 64 x 256 with twice the split, fitted
    at four shapes: 87-90% against 74-81% at 48 and 64 x 4096 x 4096, 104% against 97-98% at 32 rows, 98.4-98.5%
    against 90.4-91.0% at 64 x 4096 x 14336 (slices of 1792); held out at eleven, ahead at nine by 4 to 17 points
    (64 x 14336 x 4096 95 -> 105-106%, slices of 2048), alike at 33 x 8192 x 8192 (2048 against 2112), behind at
    17 x 14336 x 4096 (64 x 128 unsplit 82% against 95%): so the depth scales with M's rows, not the tile's, which
    keeps the split there (2048 against 1088). On a second card, the rule as it stands ahead at all seven products
    tried, by 3-14 points (benchmarks/records/2026-12-01-h200-hgemm-decode-rings)."""
    wide = plan.tile
    if plan.split_k == 1 or wide.few_rows is None:
        return plan
    summed_rows = max(min(m, wide.few_rows), 16)
    if k >= plan.split_k * FEW_ROW_SLICE_K * summed_rows // 16:
        return plan
    for tile in candidates:
        split, rest = divmod(plan.split_k * tile.bn, wide.bn)
        if (tile.few_rows == wide.few_rows and tile.bn < wide.bn and not rest and 1 <= split < plan.split_k
                and split <= tile.max_split_k and tile.count(m, n) * split == wide.count(m, n) * plan.split_k):
            return LaunchPlan(tile, split)
    return plan


def _unaligned_form(plan: LaunchPlan, replacements: tuple[Tile, ...], candidates: tuple[Tile, ...], m: int, n: int,
                    k: int, sm_count: int) -> LaunchPlan:
    """Where the rows of A or B are not whole TMA boxes wide, a tile declared to replace the chosen one there
    (`replaces_unaligned`) does, unsplit and sharing nothing. Each box row then straddles two 128-byte lines,
    and the L2 serves more sectors for the same bytes; h6's replacements are its tiles in clusters of two that
    share B's boxes by multicast, a third less traffic per block, and for its ping-pong tile pairs that share the
    operand whose rows straddle (`Tile.straddle`; nsprof/ladder/ops/hgemm.py says what they measured). Not where its
    clusters take more rounds than the tile's blocks: a unit is two tiles stacked, so an
    odd count of tile rows leaves half a unit over (1400 x 2900 x 3000: 132 tiles of 128 x 256 in one round, 72 units
    for 66 clusters in two, 78% of the library against 95% for the tile's own plan; benchmarks/records/
    2026-12-01-h200-hgemm-cluster-split). Nor where one operand's rows alone straddle lines at whole sectors and
    the tile that takes over the plan's (`_taken_over`) reads them better (`_ping_pong_reads_it_better`): that tile
    runs it."""
    if plan.split_k > 1 or plan.tile.rows_in_whole_boxes(n, k):
        return plan
    if not plan.shared_tiles and k * n <= STRADDLED_TAKE_OVER_MAX_B and _ping_pong_reads_it_better(plan.tile, n, k):
        heir = _taken_over(plan, candidates, m, n, sm_count)
        if heir is not plan or plan.tile.takes_over is not None:  # (the ping-pong tile's own plan stays too)
            return heir
    twin = _clustered_form(plan.tile, replacements, n, k)
    if twin is None or rounds(twin, m, n, sm_count) > rounds(plan.tile, m, n, sm_count):
        return plan
    return _with_shared_tail(LaunchPlan(twin), replacements, m, n, k, sm_count)


def _better_filled_clusters(plan: LaunchPlan, alternatives: tuple[Tile, ...], replacements: tuple[Tile, ...], m: int,
                            n: int, k: int, sm_count: int) -> LaunchPlan:
    """A clustered plan that shares no tail, where K is shallower than CLUSTER_TAIL_MIN_K, gives way to an alternative
    tile's clustered form (`_clustered_form`) whose units keep at least CLUSTER_FILL_GAIN more of the clusters' slots
    busy. Why (the H200, paired with the library, benchmarks/records/2026-12-01-h200-hgemm-cluster-tail): 128 x 192's
    clusters ran ahead of 128 x 256's with 4.3-4.9 points more busy by 3.5-5.5 points of the library (3500 x 4000 x
    3000, 2000 x 7000 x 3000 89 -> 93%, 3500 x 4000 x 2000, 5000 x 5000 x 1000), and alike or behind with 2.5-3.0
    (5000 x 2000 x 3000, 6000 x 2000 x 3000; ahead at 2500 x 10000 x 3000); on three held-out shapes ahead by
    3.1-8.3 (14336 x 3000 x 1024 101 -> 109%). Deeper K shares the short round instead (`_with_shared_tail`)."""
    tile = plan.tile
    # (pairs that share A keep their plan: the alternatives' clusters share B, which A's straddling rows do not need)
    if (tile.replaces_unaligned is None or tile.stream_k or plan.split_k > 1 or k >= CLUSTER_TAIL_MIN_K
            or tile.straddle == "A inside sectors"):
        return plan
    slots = tile.slots(sm_count)
    busy = busy_share(tile.count(m, n), slots)
    for alternative in alternatives:
        twin = _clustered_form(alternative, replacements, n, k)
        if (twin is not None and twin.cluster == tile.cluster and twin.count(m, n) >= slots
                and busy_share(twin.count(m, n), slots) >= busy + CLUSTER_FILL_GAIN):
            return LaunchPlan(twin)
    return plan


def _clustered_form(tile: Tile, replacements: tuple[Tile, ...], n: int, k: int) -> Tile | None:
    """The tile declared to replace `tile` where rows are not whole boxes (`replaces_unaligned`), sharing nothing, for
    the rows that straddle here (`Tile.straddle`); None if there is none, or `tile` is one for few rows (h6's split
    128 x 128 shares the ping-pong tile's shape, not its replacements)."""
    if _for_few_rows(tile):
        return None
    return next((t for t in replacements if t.replaces_unaligned == tile.shape and not t.stream_k
                 and _straddles_as(t.straddle, tile, n, k)), None)


def _straddles_as(straddle: str, tile: Tile, n: int, k: int) -> bool:
    """Whether `tile`'s box rows straddle lines as a replacement's `straddle` asks: "either" operand's, "B" (B's rows
    not whole boxes), "A inside sectors" (B's whole boxes, A's rows starting inside a 32-byte sector)."""
    a_whole, b_whole = tile.whole_box_rows(n, k)
    if straddle == "B":
        return not b_whole
    if straddle == "A inside sectors":
        return b_whole and k % SECTOR_HALVES != 0
    return not (a_whole and b_whole)


def _with_shared_tail(plan: LaunchPlan, replacements: tuple[Tile, ...], m: int, n: int, k: int,
                      sm_count: int) -> LaunchPlan:
    """The clusters' plan with a stream-K tail: where K is at least CLUSTER_TAIL_MIN_K deep and their last wave's
    units fill at most the stream-K form's `max_tail_fill` of the clusters, that form (the same tile, `stream_k`)
    shares those units by k steps, each block adding its tile's sums in the workspace. Why (the H200, paired with
    the library, benchmarks/records/2026-12-01-h200-hgemm-cluster-tail): 400 units of 256 x 256 take 7 rounds of 66
    clusters at 5000^3, the last with 4 units; shared, 88.5 -> 93.5%. With K of 5000 ahead by 3.3-5.1 points at
    four shapes; with K of 1000-3000 behind by 0.3-5.6 at six and ahead at two (256 x 192: 2500 x 5000 x 3000,
    2000 x 7000 x 3000): a round of a shallow K does not outweigh the sums. On nine held-out shapes with K of 4096-8192
    ahead at seven by 1.7-8.9 points (5000 x 2000 x 8192 81.7 -> 90.5%), tied at one, and behind by 0.9 at 8192 x
    8192 x 4000, whose short round is one of 16."""
    sharing = next((t for t in replacements if t.stream_k and t.shape == plan.tile.shape), None)
    if sharing is None or k < CLUSTER_TAIL_MIN_K:
        return plan
    shared = _with_sharing(sharing, m, n, plan.split_k, sm_count, None)
    return shared if shared.shared_tiles else plan


def _just_short_of_a_wave(blocks: int, sm_count: int) -> bool:
    """Whether blocks fill at least NEARLY_FULL_WAVE of one wave of the GPU's SMs, but not all of it."""
    return NEARLY_FULL_WAVE * sm_count <= blocks < sm_count


def _rows_inside_sectors(n: int, k: int) -> bool:
    """Whether the rows of A (K halves long) or of B (N halves) start inside a 32-byte sector of the L2."""
    return bool(k % SECTOR_HALVES or n % SECTOR_HALVES)


def _ping_pong_reads_it_better(tile: Tile, n: int, k: int) -> bool:
    """Whether the rows of one operand alone straddle lines, at whole 32-byte sectors (a multiple of 16 halves, not
    of a box), and that operand is A, or B with K at most B_STRADDLE_MAX_K: there h6's ping-pong tile ran ahead of
    the clusters, which share B. Why (the H200, paired with the library, benchmarks/records/
    2026-12-01-h200-hgemm-cluster-split, section 5): A's rows alone, ahead by 0.7-3.0 points at six shapes (4096 x
    4096 x 4000, 8192 x 4096 x 4000, 4096 x 4096 x 6000, 6144 x 4096 x 3056, 8192 x 4096 x 2032, 2048 x 4096 x 6000);
    B's with K <= 2048, ahead by 0.4-3.1 at five (3072 x 4000 x 2048, 4096 x 4000 x 2048, 1500 x 2800 x 1024,
    4096 x 3056 x 2048, 2048 x 6000 x 1024); B's with K of 3072 or more, behind by 1.3-8.3 at seven (4096 x 4000 x
    4096, 8192 x 4000 x 4096, 6144 x 4000 x 4096, 4096 x 4000 x 8192, 2048 x 4000 x 4096, 4096 x 2000 x 4096, 3072 x
    6000 x 3072). Split between its two runs: 4096 x 4096 x 2000, 3072 x 4080 x 1536."""
    if tile.tma_boxes is None or _rows_inside_sectors(n, k):
        return False
    a_whole, b_whole = tile.whole_box_rows(n, k)
    return (b_whole and not a_whole) or (a_whole and not b_whole and k <= B_STRADDLE_MAX_K)


def _nearly_full_wave(tile: Tile, replacements: tuple[Tile, ...], m: int, n: int, k: int,
                      sm_count: int) -> Tile | None:
    """The clustered form (`replaces_unaligned`) of a tile whose blocks fill at least NEARLY_FULL_WAVE of one wave
    but not all of it, where the rows of A or B start inside a 32-byte sector (K or N not a multiple of 16) or
    neither's rows are whole TMA boxes, and the clusters fit one wave; else None, and the launcher goes on to a
    smaller tile. Why (the H200, paired with the library, benchmarks/records/2026-12-01-h200-hgemm-cluster-split):
    there 128 tiles of 128 x 256 in clusters of two ran ahead of the two waves of ping-pong 128 x 128 tiles the
    launcher took, whose box rows straddle sectors, in 27 of 28 pairs at 14 shapes, by 1-28 points (2000 x 1800 x
    1000 70 -> 98% of the library, 4000 x 1000 x 4000 70-80 -> 98-100%, 8000 x 504 x 2048 76-85 -> 98-100%, 2000^3
    85-88 -> 99-100%; three cards, 8 of the shapes held out from the rule's making); where one operand's rows are
    whole lines and the other's whole sectors the ping-pong tile stayed ahead by
    0.8-2.6 points at four shapes (1000 x 4000 x 1024, 1024 x 4096 x 2000, 2048 x 2000 x 4096, 2048 x 1920 x 4000)
    and behind by 0.5-1.0 at a fifth (2000 x 1920 x 2000). Less full (benchmarks/records/
    2026-12-01-h200-hgemm-one-round-wider, section 4): where 104-120 tiles of 128 x 256 fill 79-91% of the wave, the
    clusters ran 2-18 points ahead of the ping-pong tile's clusters in two rounds at all eight shapes probed, in both
    orders (1800^3 69-70 -> 82-83%, 1600 x 2000 x 1800 77 -> 94%, 1600 x 2200 x 1000 86 -> 98%); held out, ahead at
    three of four by 1-7 points, behind by 1.3-1.4 at 7000 x 512 x 1000 (side-by-side pairs). Only where C has
    more than one row of the tiles and N fills one: a tile wider than N would leave most of its products zero."""
    if tile.tma_boxes is None or not _just_short_of_a_wave(tile.count(m, n), sm_count):
        return None
    if m <= tile.bm or n < tile.bn:
        return None
    if not (_rows_inside_sectors(n, k) or not any(tile.whole_box_rows(n, k))):
        return None
    twin = _clustered_form(tile, replacements, n, k)
    return None if twin is None or rounds(twin, m, n, sm_count) > 1 else twin


def _unsplit_form(plan: LaunchPlan, replacements: tuple[Tile, ...], m: int, n: int, k: int,
                  sm_count: int) -> LaunchPlan:
    """A K split into slices at most SHALLOW_SLICE_K deep gives way, unsplit, to a tile declared to replace that
    tile's splits (`replaces_split`) where M is whole rows of it and its blocks fit one wave or keep at least
    FILLED_SHARE of the slots busy. Why (the H200, benchmarks/records/2026-11-30-h200-hgemm-pp64): h6's ping-pong
    64 x 64 tile in a 13-deep ring, against 128 x 128 split in 2 to 8, ran 214 against 157 TFLOP/s at
    128 x 4096 x 2048, 306 against 255 at 128 x 4096 x 4096, 348 against 301 at 128 x 4096 x 8192, 334 against
    304 at 128 x 8192 x 4096 and 186 against 161 at 128 x 3072 x 3072; alike at 128 x 2048 x 4096 (64 tiles) and
    128 x 6144 x 4096 (192 tiles, 73% busy); behind with slices 2560 and 3584 deep (128 x 5120 x 5120,
    128 x 4096 x 14336: 247 against 290, 336 against 386) and where M is not whole rows of it (96 and 72 rows:
    183 against 192, 112 against 138)."""
    if plan.split_k == 1 or k > plan.split_k * SHALLOW_SLICE_K:
        return plan
    heir = next((t for t in replacements if t.replaces_split == plan.tile.shape), None)
    if heir is None or m % heir.bm:
        return plan
    tiles, slots = heir.count(m, n), sm_count * heir.blocks_per_sm
    return LaunchPlan(heir) if tiles <= slots or busy_share(tiles, slots) >= FILLED_SHARE else plan


def _taken_over(plan: LaunchPlan, candidates: tuple[Tile, ...], m: int, n: int, sm_count: int) -> LaunchPlan:
    """A plan that splits no K, of more than one row of tiles, runs on a tile declared to take over the plans of
    its tile's shape (`takes_over`); one that shares a stream-K tail, where the heir's rounds keep
    TAKE_OVER_TAIL_BUSY of the SMs busy. Why (the H200, paired with the library):
    - h6's ping-pong 128 x 128 tiles ran 0.1-1.3 points ahead of 128 x 256 at 4096^3, 6144^3, 4096 x 4096 x 2048
      and the 2048-row shapes with N of 4096 and 14336, alike at 8192 x 4096 x 4096 and 8192 x 4096 x 14336
      (benchmarks/records/2026-11-30-h200-hgemm-energy).
    - Where B outgrew 2^26 elements or 128 x 256 shared a tail, against the library's pick timed in turn, three
      rounds on two cards (benchmarks/records/2026-12-02-h200-hgemm-library-finalists, section 6): ahead in every
      round at 8192 x 14336 x 4096 by 2.4-3.3 points (tail 20: 98.0-98.3 -> 100.7-101.4%), 2048 x 128256 x 4096 by
      1.0-1.7 and 8192 x 128256 x 4096 by 0.5-2.0 (B of 1 GB, where the ping-pong tile of eight records before ran
      7-9 behind); held out, two rounds, by 2.8-5.4 at 4096 x 128256 x 4096 (tail 60) and 3.6-3.7 at 6144 x 14336 x
      4096 (tail 48: 95.7-96.0 -> 99.4-99.5%); alike at 8192^3 (tail 68: +0.2 and -0.5).
    With one row of tiles 128 x 256 evicts B first (nsprof/ladder/ops/hgemm.py) and keeps its plan."""
    if (plan.split_k > 1 or m <= plan.tile.bm
            or plan.tile.replaces_unaligned is not None):  # (a clustered form keeps its plan: its unit is its shape)
        return plan
    heir = next((t for t in candidates if t.takes_over == plan.tile.shape), None)
    if heir is None or (plan.shared_tiles and
                        busy_share(heir.count(m, n), sm_count * heir.blocks_per_sm) < TAKE_OVER_TAIL_BUSY):
        return plan
    return LaunchPlan(heir)


def _split(tile: Tile, blocks: int, k: int, sm_count: int) -> int:
    """The K split of a tile's blocks: doubled until they spread evenly over the SMs. A tile for few rows
    (`few_rows`, `max_rows`) doubles only while its blocks still fit one wave: its products stream B from
    memory, and a second, partial wave costs more than the SMs one wave leaves idle (16 x 14336 x 4096 on
    the H200: 56 tiles of 64 x 256 split in 2 ran 54.7 TFLOP/s, in 4 47.6, 224 blocks in 1.7 waves)."""
    def may_double(split: int) -> bool:
        return split * 2 <= tile.max_split_k and k >= split * 2 * MIN_SLICE_K

    split = 1
    if _for_few_rows(tile):
        while may_double(split) and blocks * split * 2 <= sm_count:
            split *= 2
        return split
    while not spreads_evenly(blocks * split, sm_count) and may_double(split):
        split *= 2
    return split


def _for_few_rows(tile: Tile) -> bool:
    """A tile made for few rows, or never used past a row limit: its products stream B from memory."""
    return tile.few_rows is not None or tile.max_rows is not None


def for_rows(tiles: tuple[Tile, ...], m: int) -> tuple[Tile, ...]:
    """The tiles an M-row product may take: those made for the fewest rows that still hold M (`few_rows`)
    where there are any (a taller tile would multiply or load rows of zeros), else the others that allow M
    rows (`max_rows`)."""
    fits = [t.few_rows for t in tiles if t.few_rows is not None and m <= t.few_rows]
    few = tuple(t for t in tiles if fits and t.few_rows == min(fits))
    allowed = tuple(t for t in tiles if t.few_rows is None and (t.max_rows is None or m <= t.max_rows))
    return few or allowed or tiles


def _unless_needless(plan: LaunchPlan, candidates: tuple[Tile, ...] | list[Tile]) -> LaunchPlan:
    """A tile that is there to share its last wave (`sums_in_workspace`) gives way, where it would share
    nothing, to the declared tile of its shape that never shares: the same kernel without the sharing
    code. (h6's stream-K entry unshared ran at 0.996-1.000 of its plain entry at 4096^3 on an H100,
    paired: benchmarks/records/2026-11-26-h100-h6-stream-k/h100-h6-stream-k.md.)"""
    if not (plan.tile.stream_k and plan.tile.sums_in_workspace) or plan.shared_tiles:
        return plan
    twin = next((t for t in candidates if t.shape == plan.tile.shape and not t.stream_k), None)
    return plan if twin is None else LaunchPlan(twin, plan.split_k)


def _with_sharing(tile: Tile, m: int, n: int, split: int, sm_count: int, forced_tail: int | None) -> LaunchPlan:
    """The plan of a tile and split; a stream_k tile also says which tiles its blocks share."""
    if not tile.stream_k:
        return LaunchPlan(tile, split)
    tiles = tile.count(m, n)
    if split > 1:
        return LaunchPlan(tile, split, tiles, tiles * split)
    slots = tile.slots(sm_count)
    shared = stream_k_tail(tiles, slots, tile.max_tail_fill) if forced_tail is None else min(forced_tail, tiles)
    return LaunchPlan(tile, 1, shared, slots if shared else 0)


def stream_k_tail(tiles: int, slots: int, max_fill: float = 1.0) -> int:
    """How many of the last tiles one block per slot shares out by k steps: those of the last, partial
    wave, when there is more than one wave (with fewer tiles than slots, `spreads_evenly` decides) and
    the last wave fills at most `max_fill` of the slots (a tile's `max_tail_fill`).

    Why (measured on the H200,
    benchmarks/experiments/2026-11-24-h200-sgemm-tail-probe/h200-sgemm-tail-probe.json, v8 against cuBLAS
    FP32): at 8192^3, 2048 tiles of 256x128 fill 15.5 waves of 132 slots; whole tiles only read 97.0-
    97.7%, sharing the last 68 99.5-100.3%; 4096^3 95.8-96.2 -> 98.1-98.8%, 3072^3 81.4 -> 110.2-110.7%
    (24 shared). With 128x128 tiles (264 slots) the same rule gave 97.2 -> 98.0-98.3% at 8192^3;
    sharing one more wave's tiles as well was slower at every size (97.7, 95.8, 107.4%).
    h6's stream-K tile shares only a last wave at most 0.6 full
    (benchmarks/records/2026-11-26-h100-h6-stream-k/h100-h6-stream-k.md).
    """
    tail = tiles % slots if tiles > slots else 0
    return tail if tail <= max_fill * slots else 0


def spreads_evenly(blocks: int, sm_count: int) -> bool:
    """At least one block per SM, and the average SM's share at least EVEN_SPREAD of the busiest one's."""
    return blocks >= sm_count and blocks / sm_count / math.ceil(blocks / sm_count) >= EVEN_SPREAD
