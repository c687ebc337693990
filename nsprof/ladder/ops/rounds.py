"""How many rounds a tile's blocks take on a GPU's slots, and the two rules of the launch plan
(nsprof.ladder.ops.launch_plan) that trade rounds and empty rows: one round of a larger tile rather than two of a
smaller one (`in_one_round`), and 64-row tiles where taller ones would leave many rows past M (`finer_rows`).
"""

from __future__ import annotations

import math

from nsprof.ladder.ops.tiles import Tile, round_up

# Where at least this share of a plan's tile rows lies past M, 64-row tiles that fill half a round to one run
# instead (`finer_rows`).
ROW_WASTE = 0.15


def rounds(tile: Tile, m: int, n: int, sm_count: int) -> int:
    """How many rounds a tile's blocks (a clustered tile's units) take on the GPU's slots."""
    return math.ceil(tile.count(m, n) / tile.slots(sm_count))


def in_one_round(tile: Tile, split: int, larger: tuple[Tile, ...], m: int, n: int,
                 sm_count: int) -> tuple[Tile, int]:
    """Where `tile`'s blocks take two rounds or more, unsplit, the first of `larger` (tiles tried before it, which
    did not fill the SMs, then the alternatives) that is marked `one_round_first`, whose blocks fit one round, C
    having more than one row of them, and whose tile is no larger than `tile`'s rounds of tiles; else `tile` and its
    split. Each round pays a block's start and end again, and a larger tile asks the L2 for fewer bytes a FLOP. Why
    (the H200, paired with the library):
    - one round of h6's ping-pong 128 x 128 tiles, 55-76% of the SMs, ran 11-21 points ahead of the two rounds of
      128 x 64 the launcher had taken at 1000 x 1200 x 808 (65 -> 85.7%; 84.9% in nsprof bench), 1200 x 1000 x 800,
      768 x 1536 x 1024, 1024 x 1536 x 1024 and 1280^3, whole or ragged rows alike; where 128 x 64 fits one round
      (1000^3: 128 tiles, 81% against 72%) it stays. A nearly full round of the ping-pong tile had run
      99.3-101.1% where 128 x 64's two ran 79-85% (1024 x 2048 x 1024 and seven more shapes:
      benchmarks/records/2026-12-01-h200-hgemm-last-direct, section 6; 2026-12-01-h200-hgemm-cluster-split,
      section 7).
    - one round of 128 x 192 tiles (1.5 times a ping-pong tile's work) ran 9-20 points ahead of the ping-pong
      tile's two rounds, in both orders, at all seven shapes probed: 1536^3 73 -> 86%, 1024 x 3072 x 1024 87-88 ->
      100-101%, 2048 x 1536 x 2048 85 -> 100%, 1152 x 2304 x 2048 83 -> 100%, 300 x 6144 x 2048 58 -> 76-77%,
      768 x 3072 x 4096 70 -> 86-90%, 1280 x 1920 x 1024 79 -> 88.5%; held out, ahead at 12 of 13 shapes by 12-31
      points (in clusters where rows straddle: 1000 x 3072 x 2000 85 -> 99-100%), alike at K = 256
      (benchmarks/records/2026-12-01-h200-hgemm-one-round-wider, section 2)."""
    if split > 1 or rounds(tile, m, n, sm_count) < 2:
        return tile, split
    work = rounds(tile, m, n, sm_count) * tile.bm * tile.bn
    for other in larger:
        if (other.one_round_first and m > other.bm and rounds(other, m, n, sm_count) == 1
                and other.bm * other.bn <= work):
            return other, 1
    return tile, split


def finer_rows(tile: Tile, tiles: tuple[Tile, ...], m: int, n: int, sm_count: int) -> Tile | None:
    """For an unsplit plan of `tile`, 128 rows tall or more, at least ROW_WASTE of whose rows lie past M: the
    narrowest 64-row tile for few rows (`few_rows` 64), where its blocks fill at least half of one round and no
    more, C has more than one row of them and fewer of their products lie past M or N; else None. Why (the H200,
    paired with the library, benchmarks/records/2026-12-01-h200-hgemm-one-round-wider, section 6): 64 x 128 tiles
    ran 11-21 points ahead where the plan's tiles left 17-49% of their rows past M (300 x 3000 x 2000 56-57 ->
    76-77%, 320 x 3072 x 2048 80 -> 91%), alike at 14% (440 x 2200 x 2048), 15 points behind at none (384 x 2560 x
    2048); held out, ahead at five shapes by 2-31 points (180 x 4000 x 4000 56-57 -> 83-88%) and behind by 6-8 where
    they made 40 and 20 blocks, which set the half round; with it, ahead at four fresh shapes by 7-19 points. Where
    they take two rounds, 36-57 points behind (200 x 8192 x 2048, 256 x 14336 x 4096); the wider 64 x 256 read 64%
    at 300 x 3000 x 2000."""
    if tile.bm < 128 or m <= 64:
        return None
    finer = min((t for t in tiles if t.few_rows == 64), key=lambda t: t.bn, default=None)
    if finer is None or not finer.slots(sm_count) <= 2 * finer.count(m, n) <= 2 * finer.slots(sm_count):
        return None
    if _waste(tile, m) < ROW_WASTE or _waste(finer, m, n) >= _waste(tile, m, n):
        return None
    return finer


def _waste(tile: Tile, m: int, n: int | None = None) -> float:
    """The share of the products of C's tiles that lies past M or N (no N: of their rows, past M)."""
    cols = 1.0 if n is None else n / round_up(n, tile.bn)
    return 1 - m / round_up(m, tile.bm) * cols
