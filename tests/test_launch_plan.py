"""The tile / split-K choice (pure logic: no GPU needed)."""

import pytest

from nsprof.errors import UsageError
from nsprof.ladder.ops.launch_plan import busy_share, choose_plan, run_shape, spreads_evenly
from nsprof.ladder.ops.tiles import as_tiles
from nsprof.ladder.registry import get_stage
from nsprof.ladder_runs.bench import unavailable_reason
from nsprof.launch.compile import arch_runs

V8 = get_stage("sgemm", "v8")
V10 = get_stage("sgemm", "v10")
H200_SMS = 132


@pytest.mark.parametrize(
    "size, shape, split",
    [
        ((4096, 4096, 4096), "256x128", 1),  # 512 tiles of the widest: no help needed
        ((2048, 2048, 2048), "128x128", 1),  # 128 tiles of 256x128 leave SMs idle; 256 of 128x128
        ((1024, 1024, 1024), "128x128", 4),  # 64 tiles: 4 K slices give 256 blocks
        ((1000, 1200, 800), "128x128", 4),  # 80 tiles: 2 slices put 2 blocks on 28 SMs and 1 on the rest; 4 spread
        ((1024, 1280, 768), "128x128", 4),  # the same with slices of 192
        ((128, 4096, 1024), "128x128", 8),  # 32 tiles: 8 slices of 128, the shallowest allowed
        ((512, 512, 128), "64x64", 1),  # too shallow to split: smaller tiles instead
    ],
)
def test_v8_plan(size, shape, split):
    plan = choose_plan(V8, *size, H200_SMS)
    assert (plan.tile.shape, plan.split_k) == (shape, split)


@pytest.mark.parametrize(
    "size, unchecked",
    [
        ((4096, 4096, 4096), True),
        ((2048, 2048, 2048), True),
        ((1024, 1024, 1024), True),  # 4 slices of 256: whole 16-deep steps
        ((512, 512, 128), True),  # 64x64 tiles
        ((1000, 1200, 800), False),  # ragged M
        ((4096, 4096, 4104), False),  # K % 16 == 8: the last K tile is short
        ((4095, 4097, 4093), False),
    ],
)
def test_v8_runs_its_unchecked_entry_only_on_whole_tiles(size, unchecked):
    plan = choose_plan(V8, *size, H200_SMS)
    entry = plan.tile.entry_for(*size, plan.split_k)
    assert entry == f"sgemm_v8_{plan.tile.shape}" + ("_unchecked" if unchecked else "")


def test_a_k_split_into_slices_of_partial_tiles_takes_the_checked_entry():
    tile = next(t for t in V10.tiles if t.unchecked_entry)
    assert 1056 % tile.bk == 0 and 1056 % (2 * tile.bk) != 0
    assert tile.entry_for(1024, 1024, 1056, 1) == tile.unchecked_entry
    assert tile.entry_for(1024, 1024, 1056, 2) == tile.entry


def test_stream_k_cuts_k_between_whole_steps_so_any_split_of_whole_steps_runs_unchecked():
    tile = next(t for t in V8.tiles if t.shape == "256x128")
    assert tile.stream_k and 1040 % (2 * tile.bk) != 0
    assert tile.entry_for(1024, 1024, 1040, 2) == "sgemm_v8_256x128_unchecked"
    assert tile.entry_for(1024, 1024, 1048, 2) == "sgemm_v8_256x128"  # 65.5 steps: the last one short


@pytest.mark.parametrize(
    "size, shape, shared",
    [
        ((8192, 8192, 8192), "256x128", 68),  # 2048 tiles = 15 waves of 132 + 68: the last wave's are shared
        ((4096, 4096, 4096), "256x128", 116),  # 3 waves + 116
        ((3072, 3072, 3072), "256x128", 24),  # 2 waves + 24
        ((8000, 8000, 8000), "256x128", 36),  # 32 x 63 tiles, ragged
        ((7680, 8448, 8192), "256x128", 0),  # 1980 tiles: 15 whole waves
        ((2048, 2048, 2048), "128x128", 0),  # 256 tiles, one wave of 264 slots (2 per SM): nothing to even out
        ((2048, 4096, 2048), "256x128", 124),  # 256 tiles: one wave + 124
    ],
)
def test_v8_shares_out_the_last_wave_by_stream_k(size, shape, shared):
    plan = choose_plan(V8, *size, H200_SMS)
    slots = H200_SMS * plan.tile.blocks_per_sm
    assert (plan.tile.shape, plan.split_k, plan.shared_tiles, plan.shared_blocks) == \
        (shape, 1, shared, slots if shared else 0)


@pytest.mark.parametrize(
    "size, entry, shared",
    [
        ((5120, 5120, 5120), "hgemm_h6_sk_tma_128x256", 8),  # 800 = 6 waves + 8
        ((8192, 8192, 8192), "hgemm_h6_sk_tma_128x256", 68),  # 2048 = 15 waves + 68: 0.52 full, shared
        # 512 = 3 waves + 116: 0.88 full, kept whole, so the ping-pong tile takes the plan over
        ((4096, 4096, 4096), "hgemm_h6_pp_tma_128x128", 0),
        ((6144, 6144, 6144), "hgemm_h6_pp_tma_128x128", 0),  # 1152 = 8 waves + 96: 0.73 full, kept whole
        ((2048, 2048, 2048), "hgemm_h6_pp_tma_128x128", 0),  # 128 tiles of 128x256 are too few: its own 128x128 plan
    ],
)
def test_h6_shares_out_only_a_last_wave_at_most_0_6_full(size, entry, shared):
    plan = choose_plan(get_stage("hgemm", "h6"), *size, H200_SMS)
    assert (plan.tile.entry, plan.shared_tiles, plan.shared_blocks) == (entry, shared, H200_SMS if shared else 0)


@pytest.mark.parametrize(
    "size, entry",
    [
        ((3072, 3072, 3072), "hgemm_h6_tma_128x192"),  # 288 tiles of 128x256 keep 73% of the slots busy, 384 of 128x192 97%
        ((5120, 5120, 5120), "hgemm_h6_sk_tma_128x256"),  # 87% against 91%: too little gained
        ((8192, 8192, 8192), "hgemm_h6_sk_tma_128x256"),  # 97% against 99%
        ((3072, 5120, 2048), "hgemm_h6_tma_128x192"),  # 91% against 98%
        ((6144, 4096, 2048), "hgemm_h6_pp_tma_128x128"),  # 94% against 97%: too little gained (128x256's, taken over)
        ((2048, 2048, 2048), "hgemm_h6_pp_tma_128x128"),  # less than a wave of 128x192 tiles: never an alternative
        ((1, 4096, 4096), "hgemm_h6_16x128"),  # a few-row product keeps a few-row tile
    ],
)
def test_h6_takes_128x192_only_where_its_waves_keep_a_twentieth_more_of_the_slots_busy(size, entry):
    assert choose_plan(get_stage("hgemm", "h6"), *size, H200_SMS).tile.entry == entry


@pytest.mark.parametrize(
    "size, entry",
    [
        ((3000, 5000, 2000), "hgemm_h6_cl2_tma_256x192"),  # K % 64 = 16, N % 64 = 8; 128x192 by the fill
        ((6000, 6000, 1000), "hgemm_h6_cl2_tma_256x256"),  # its stream-K tail given up with the tile
        ((4096, 4096, 4040), "hgemm_h6_cl2_tma_256x256"),  # K alone, its rows starting inside sectors
        ((4096, 4040, 4096), "hgemm_h6_cl2_tma_256x256"),  # N alone, the same
        ((4096, 4000, 4096), "hgemm_h6_cl2_tma_256x256"),  # N alone at whole sectors, K deep: the shared B pays
        ((3072, 5120, 2048), "hgemm_h6_tma_128x192"),  # whole 128-byte lines: no clusters
        ((4096, 4096, 4096), "hgemm_h6_pp_tma_128x128"),  # whole lines: the ping-pong tile takes 128x256's plan
        ((96, 4096, 4000), "hgemm_h6_split_128x128"),  # a split tile has no clustered form
    ],
)
def test_h6_takes_its_clustered_tiles_where_rows_are_not_whole_128_byte_lines(size, entry):
    assert choose_plan(get_stage("hgemm", "h6"), *size, H200_SMS).tile.entry == entry


@pytest.mark.parametrize(
    "size, entry, shared",
    [
        ((5000, 5000, 5000), "hgemm_h6_cl2_sk_tma_256x256", 4),  # 400 units: 6 rounds of 66 clusters and 4 over
        ((4500, 3000, 5000), "hgemm_h6_cl2_sk_tma_256x192", 24),  # 288 units: a last round 0.36 full
        ((5000, 7000, 3000), "hgemm_h6_cl2_tma_256x256", 0),  # K of 3000: a round too short for the sums
        ((3000, 5000, 4000), "hgemm_h6_cl2_tma_256x192", 0),  # 12 x 27 = 324 units: the last round 0.91 full
        ((4096, 4096, 4040), "hgemm_h6_cl2_tma_256x256", 0),  # 256 units: the last round 0.88 full
    ],
)
def test_h6_clusters_share_a_short_last_round_by_k_steps_only_where_k_is_deep(size, entry, shared):
    plan = choose_plan(get_stage("hgemm", "h6"), *size, H200_SMS)
    assert (plan.tile.entry, plan.shared_tiles, plan.shared_blocks) == (entry, shared, H200_SMS // 2 if shared else 0)


@pytest.mark.parametrize(
    "size, entry",
    [
        ((2000, 7000, 3000), "hgemm_h6_cl2_tma_256x192"),  # 296 units of 256 x 192 keep 89.7% busy, 224 of 256 x 256 84.8%
        ((5000, 5000, 1000), "hgemm_h6_cl2_tma_256x192"),  # 90.9% against 86.6%
        ((5000, 2000, 3000), "hgemm_h6_cl2_tma_256x256"),  # 83.3% against 80.8%: too little gained
        ((5000, 5000, 5000), "hgemm_h6_cl2_sk_tma_256x256"),  # K deep: the short round is shared instead
    ],
)
def test_h6_clusters_give_way_to_clusters_that_keep_more_of_the_slots_busy_where_k_is_shallow(size, entry):
    assert choose_plan(get_stage("hgemm", "h6"), *size, H200_SMS).tile.entry == entry


@pytest.mark.parametrize(
    "size, entry",
    [
        ((2000, 1800, 1000), "hgemm_h6_cl2_tma_256x256"),  # 128 tiles of 128x256; K, N % 16 = 8: rows inside sectors
        ((4000, 1000, 4000), "hgemm_h6_cl2_tma_256x256"),  # N alone starts rows inside sectors
        ((2000, 2000, 2000), "hgemm_h6_cl2_tma_256x256"),  # whole sectors, but neither operand whole lines
        ((8000, 504, 2048), "hgemm_h6_cl2_tma_256x256"),  # 126 tiles: 95% of the wave
        ((1000, 4000, 1024), "hgemm_h6_pp_tma_128x128"),  # A whole lines, B whole sectors: the two waves ran ahead
        ((2048, 1920, 4000), "hgemm_h6_pp_tma_128x128"),  # B whole lines, A whole sectors
        ((2048, 2048, 2048), "hgemm_h6_pp_tma_128x128"),  # whole lines: 128 tiles of 128x256 leave 4 SMs idle
        # 96 tiles: too far from a wave (one round of 128 x 192 runs, in clusters: B's rows straddle lines)
        ((1000, 3000, 2000), "hgemm_h6_cl2_tma_256x192"),
        ((1000, 4000, 2000, 140), "hgemm_h6_cl2_tma_256x256"),  # on 140 SMs 128 tiles are 91% of a wave
        ((1800, 1800, 1800), "hgemm_h6_cl2_tma_256x256"),  # 120 tiles: 91%
        ((1600, 2000, 1800), "hgemm_h6_cl2_tma_256x256"),  # 104 tiles: 79%
        ((1000, 4000, 2000, 168), "hgemm_h6_cl2_tma_256x192"),  # 76%: one round of 128 x 192, in clusters
        ((14336, 64, 1000, 114), "hgemm_h6_128x64"),  # 112 of 114, but 128 x 256 is four times as wide as N
    ],
)
def test_h6_runs_a_nearly_full_wave_of_128x256_in_clusters_where_rows_straddle_sectors(size, entry):
    *mnk, sms = size if len(size) == 4 else (*size, H200_SMS)
    assert choose_plan(get_stage("hgemm", "h6"), *mnk, sms).tile.entry == entry


@pytest.mark.parametrize(
    "size, entry",
    [
        ((1400, 2900, 3000), "hgemm_h6_pp_tma_128x128"),  # 11 x 12 tiles in one round; 6 x 12 units in two
        ((1500, 2800, 1000), "hgemm_h6_cl2_tma_256x256"),  # 12 x 11 tiles; 6 x 11 units: one round each
    ],
)
def test_h6_keeps_its_unclustered_plan_where_the_clusters_would_take_another_round(size, entry):
    assert choose_plan(get_stage("hgemm", "h6"), *size, H200_SMS).tile.entry == entry


@pytest.mark.parametrize(
    "size, entry",
    [
        ((2048, 4096, 4096), "hgemm_h6_pp_tma_128x128"),  # whole, unsplit 128x256 plans: taken over
        ((2048, 14336, 4096), "hgemm_h6_pp_tma_128x128"),
        ((8192, 4096, 14336), "hgemm_h6_pp_tma_128x128"),
        ((2048, 128256, 4096), "hgemm_h6_pp_tma_128x128"),  # B of 525 M elements, far past the L2: taken over too
        ((128, 128256, 4096), "hgemm_h6_tma_128x256"),  # one row of tiles: 128x256 evicts B first
        # 128x256's plans that share a tail, where 128x128's rounds keep 98% of the SMs busy: 7168 tiles in 55
        # rounds of 132 (98.7%), 5376 in 41 (99.3%), 32064 in 243 (99.96%)
        ((8192, 14336, 4096), "hgemm_h6_pp_tma_128x128"),
        ((6144, 14336, 4096), "hgemm_h6_pp_tma_128x128"),
        ((4096, 128256, 4096), "hgemm_h6_pp_tma_128x128"),
        ((8192, 8192, 8192), "hgemm_h6_sk_tma_128x256"),  # 4096 in 32 rounds, 97.0%: the tail stays
        ((5120, 5120, 5120), "hgemm_h6_sk_tma_128x256"),  # 1600 in 13, 93.2%
        ((3072, 3072, 3072), "hgemm_h6_tma_128x192"),  # another tile's plan stays
        ((4096, 4096, 4040), "hgemm_h6_cl2_tma_256x256"),  # rows that start inside sectors keep the clusters
    ],
)
def test_h6_ping_pong_tile_takes_over_unsplit_128x256_plans_and_tails_where_its_rounds_are_full(size, entry):
    assert choose_plan(get_stage("hgemm", "h6"), *size, H200_SMS).tile.entry == entry


@pytest.mark.parametrize(
    "size, entry, split",
    [
        ((128, 4096, 4096), "hgemm_h6_pp_64x64", 1),  # 128 x 128 split in 4: slices of 1024; 128 tiles of 64 x 64
        ((128, 4096, 8192), "hgemm_h6_pp_64x64", 1),  # slices of 2048, the deepest replaced
        ((128, 8192, 4096), "hgemm_h6_pp_64x64", 1),  # split in 2; 256 tiles keep 97% of two waves busy
        ((128, 3072, 3072), "hgemm_h6_pp_64x64", 1),  # 96 tiles: one wave
        ((128, 4096, 14336), "hgemm_h6_split_128x128", 4),  # slices of 3584: deep enough to keep the split
        ((128, 5120, 5120), "hgemm_h6_split_128x128", 2),  # slices of 2560
        ((128, 6144, 4096), "hgemm_h6_split_128x128", 2),  # 192 tiles keep 73% of two waves busy
        ((96, 4096, 4096), "hgemm_h6_split_128x128", 4),  # 96 rows are not whole 64-row tiles
        ((128, 14336, 4096), "hgemm_h6_split_128x128", 1),  # unsplit: nothing to replace
        ((64, 4096, 4096), "hgemm_h6_64x128", 4),  # a few-row tile's split stays (64 x 256's 8 slices: _fewer_slices)
        ((128, 8192, 1096), "hgemm_h6_pp_64x64", 1),  # (a 128-row split tile is no few-row tile: _fewer_slices)
    ],
)
def test_h6_ping_pong_64x64_replaces_shallow_splits_of_128x128(size, entry, split):
    plan = choose_plan(get_stage("hgemm", "h6"), *size, H200_SMS)
    assert (plan.tile.entry, plan.split_k) == (entry, split)


@pytest.mark.parametrize(
    "size, entry",
    [
        ((4096, 4096, 4000), "hgemm_h6_pp_tma_128x128"),  # A's rows alone straddle lines, at whole sectors
        ((8192, 4096, 2032), "hgemm_h6_pp_tma_128x128"),
        ((4096, 4000, 2048), "hgemm_h6_pp_tma_128x128"),  # B's alone, K no deeper than 2048
        ((4096, 4000, 4096), "hgemm_h6_cl2_tma_256x256"),  # B's alone, K deeper: the clusters share B
        ((2048, 128256, 2000), "hgemm_h6_cl2_tma_256x256"),  # B past STRADDLED_TAKE_OVER_MAX_B: the clusters stay
        ((3072, 3072, 5008), "hgemm_h6_cl2_tma_256x192"),  # 128x192's plan: no tile takes it over
    ],
)
def test_h6_gives_one_sided_whole_sector_rows_to_the_ping_pong_tile_where_it_takes_the_plan_over(size, entry):
    assert choose_plan(get_stage("hgemm", "h6"), *size, H200_SMS).tile.entry == entry


@pytest.mark.parametrize(
    "size, entry",
    [
        ((1024, 2048, 1024), "hgemm_h6_pp_tma_128x128"),  # 128 tiles in one round, against 256 of 128x64 in two
        ((2048, 1024, 4096), "hgemm_h6_pp_tma_128x128"),
        ((1000, 2048, 1024), "hgemm_h6_pp_tma_128x128"),  # M ragged
        # where B's rows straddle lines the ping-pong tiles run in clusters of two (40 units of 256x128 at 1000 x
        # 1200 x 808: 80 tiles, 61% of the SMs, one round still beats two)
        ((1024, 2040, 1024), "hgemm_h6_pp_cl2_tma_256x128"),
        ((1000, 1200, 808), "hgemm_h6_pp_cl2_tma_256x128"),
        ((512, 3000, 2000), "hgemm_h6_pp_cl2_tma_256x128"),  # four rows of tiles, two units
        ((1024, 1024, 1024), "hgemm_h6_128x64"),  # 128x64's 128 tiles fit one round: it stays
        ((1000, 1000, 1000), "hgemm_h6_128x64"),
        ((128, 14336, 4096), "hgemm_h6_split_128x128"),  # one row of tiles: not this rule's
        ((1024, 2048, 1024, 128), "hgemm_h6_pp_tma_128x128"),  # on 128 SMs
        ((1024, 1024, 1024, 114), "hgemm_h6_pp_tma_128x128"),  # on 114, 128x64's 128 tiles take two rounds
    ],
)
def test_h6_takes_one_round_of_ping_pong_128x128_tiles_over_two_of_128x64(size, entry):
    *mnk, sms = size if len(size) == 4 else (*size, H200_SMS)
    assert choose_plan(get_stage("hgemm", "h6"), *mnk, sms).tile.entry == entry


@pytest.mark.parametrize(
    "size, entry",
    [
        ((1536, 1536, 1536), "hgemm_h6_tma_128x192"),  # 144 ping-pong tiles take two rounds, 96 of 128 x 192 one
        ((1024, 3072, 1024), "hgemm_h6_tma_128x192"),
        ((300, 6144, 2048), "hgemm_h6_tma_128x192"),  # three rows of tiles
        ((1000, 3072, 2000), "hgemm_h6_cl2_tma_256x192"),  # B's rows straddle lines: 128 x 192 in clusters
        ((2048, 2048, 2048), "hgemm_h6_pp_tma_128x128"),  # 176 tiles of 128 x 192: two rounds as well
        ((2048, 4096, 4096), "hgemm_h6_pp_tma_128x128"),  # four rounds against three: no fewer tiles' work
        ((1024, 2048, 1024), "hgemm_h6_pp_tma_128x128"),  # the ping-pong tile's 128 fit one round
        ((128, 6144, 2048), "hgemm_h6_split_128x128"),  # one row of tiles: not this rule's
    ],
)
def test_h6_takes_one_round_of_128x192_tiles_over_two_of_the_ping_pong_tile(size, entry):
    assert choose_plan(get_stage("hgemm", "h6"), *size, H200_SMS).tile.entry == entry


@pytest.mark.parametrize(
    "size, entry",
    [
        ((300, 3000, 2000), "hgemm_h6_64x128"),  # 128-row tiles leave 22% of their rows empty, 64-row ones 6%
        ((180, 4000, 4000), "hgemm_h6_64x128"),
        ((140, 4500, 4096), "hgemm_h6_64x128"),
        ((300, 1000, 2000), "hgemm_h6_128x64"),  # 40 tiles of 64 x 128: under half a round
        ((384, 2560, 2048), "hgemm_h6_128x64"),  # no row empty
        ((440, 2200, 2048), "hgemm_h6_pp_cl2_tma_256x128"),  # 14% of the rows empty: under rounds.ROW_WASTE
        ((200, 8192, 2048), "hgemm_h6_pp_tma_128x128"),  # 256 tiles of 64 x 128: two rounds
        ((200, 4096, 2048), "hgemm_h6_128x64"),  # 64-row tiles leave as many rows empty
        ((300, 16, 1000), "hgemm_h6_128x64"),  # 64 x 128 would multiply more zeros past N than it saves past M
    ],
)
def test_h6_runs_64_row_tiles_where_taller_tiles_leave_rows_empty(size, entry):
    assert choose_plan(get_stage("hgemm", "h6"), *size, H200_SMS).tile.entry == entry


@pytest.mark.parametrize(
    "size, entry",
    [
        ((1400, 1400, 1400), "hgemm_h6_pp_cl2_tma_256x128"),  # both operands' rows inside sectors: 66 units
        ((3000, 1000, 2000), "hgemm_h6_pp_cl2_tma_256x128"),  # two rounds either way
        ((2048, 1000, 2048), "hgemm_h6_pp_cl2_tma_256x128"),  # B's rows alone straddle, inside sectors
        ((1024, 2000, 4000), "hgemm_h6_pp_cl2_tma_256x128"),  # both straddle at whole sectors
        ((1400, 1500, 3000), "hgemm_h6_pp_tma_128x128"),  # 132 tiles in one round, 72 units in two
        # A's rows alone straddle, inside sectors: side-by-side pairs that share A (taken over by nothing)
        ((3000, 512, 1000), "hgemm_h6_pp_cl2a_tma_128x256"),
        ((2500, 1024, 3000), "hgemm_h6_cl2_tma_256x192"),  # 160 ping-pong tiles, 120 of 128 x 192: one round
        ((2048, 2048, 2000), "hgemm_h6_pp_tma_128x128"),  # A's alone at whole sectors: read better
        ((128, 14336, 1000), "hgemm_h6_split_128x128"),  # the split tile for few rows shares only a shape with it
        ((1024, 2000, 1024), "hgemm_h6_pp_tma_128x128"),  # B's alone at whole sectors, K <= 2048: read better
        ((2048, 2048, 2048), "hgemm_h6_pp_tma_128x128"),  # whole lines
        ((1400, 2000, 2000), "hgemm_h6_cl2_tma_256x192"),  # 128 x 192's clusters fill one round, 96 units two
    ],
)
def test_h6_runs_its_ping_pong_tiles_in_clusters_where_rows_straddle_lines(size, entry):
    assert choose_plan(get_stage("hgemm", "h6"), *size, H200_SMS).tile.entry == entry


@pytest.mark.parametrize(
    "stage, size, shape",
    [
        (("hgemm", "h6"), (14336, 2500, 2000), (14336, 2560, 2000)),  # B's rows (N % 8 = 4) copied, whole lines
        (("hgemm", "h6"), (1000, 1200, 804), (1000, 1200, 832)),  # A's and B's (K % 8 = 4) copied, C as it is
        (("hgemm", "h6"), (1, 1, 1), (1, 64, 64)),
        (("hgemm", "h6"), (1000, 1200, 808), (1000, 1200, 808)),  # 16-byte rows: run as they are
        (("sgemm", "v11"), (17, 33, 9), (17, 64, 32)),  # float32: 4-element rows, 32-element lines
        (("hgemm", "h5"), (17, 33, 9), (17, 33, 9)),  # padded to whole tiles of the tile it takes, by the launcher
    ],
)
def test_a_tma_stage_runs_copies_of_only_the_operands_whose_rows_are_not_16_byte_aligned(stage, size, shape):
    st = get_stage(*stage)
    item = 2 if st.op == "hgemm" else 4
    assert run_shape(st, *size, item) == shape
    if stage[1] == "h6":  # as many tiles of every width h6 declares, so the plan counts the same blocks
        assert all(t.count(*shape[:2]) == t.count(*size[:2]) for t in as_tiles(st.tiles))


def test_a_forced_tile_is_not_taken_over():
    stage = get_stage("hgemm", "h6")
    assert choose_plan(stage, 4096, 4096, 4096, H200_SMS, forced_tile="128x256").tile.entry == "hgemm_h6_tma_128x256"


def test_a_forced_tile_keeps_its_own_form_on_unaligned_rows():
    stage = get_stage("hgemm", "h6")
    assert choose_plan(stage, 3000, 5000, 2000, H200_SMS, forced_tile="128x256").tile.entry == "hgemm_h6_tma_128x256"
    assert choose_plan(stage, 3000, 5000, 2000, H200_SMS, forced_tile="256x256").tile.entry == "hgemm_h6_cl2_tma_256x256"


def test_busy_share_counts_the_idle_slots_of_the_last_round():
    assert busy_share(264, 132) == 1.0
    assert busy_share(288, 132) == pytest.approx(288 / 396)
    assert busy_share(10, 132) == pytest.approx(10 / 132)


@pytest.mark.parametrize(
    "size, shape, split",
    [
        # 16 tiles of 16x256: 8 slices of 512 would fill one wave (128 blocks); 16x128 makes as many, 4 of 1024
        ((1, 4096, 4096), "16x128", 4),
        ((16, 4096, 4096), "16x128", 4),
        ((1, 4096, 14336), "16x256", 8),  # slices of 1792: deep enough, 16x256 keeps its split
        ((1, 4096, 8192), "16x256", 8),  # slices of 1024
        ((16, 14336, 4096), "16x128", 1),  # 112 blocks unsplit, one wave, before 16x256's 56 split in 2
        ((17, 14336, 4096), "64x256", 2),  # past 16 rows: 56 tiles, 112 blocks; 224 ran 1.7 waves and 13% slower
        ((64, 4096, 14336), "64x128", 4),  # 64 x 256's 8 slices of 1792 are shallow for 64 rows: _fewer_slices
        ((16, 128256, 4096), "16x256", 1),  # 501 tiles: waves enough without a split; 16x128's 1002 are past one wave
        ((65, 4096, 4096), "128x128", 4),  # more than 64 rows: 128x128 split in 4, one wave of 128 blocks
        ((128, 14336, 4096), "128x128", 1),  # 112 blocks: all one wave holds (128x64's 224 ran two thirds as fast)
        ((129, 4096, 4096), "64x128", 1),  # past 128 rows no tile splits; 64-row tiles leave fewer rows empty
        ((16, 4096, 128), "16x128", 1),  # K of one slice: too few blocks either way, the last few-row tile
        ((64, 4096, 128), "64x128", 1),
    ],
)
def test_few_row_products_take_a_tile_for_few_rows_split_to_fill_one_wave(size, shape, split):
    plan = choose_plan(get_stage("hgemm", "h6"), *size, H200_SMS)
    assert (plan.tile.shape, plan.split_k) == (shape, split)


@pytest.mark.parametrize(
    "size, shape, split",
    [
        ((32, 4096, 4096), "64x128", 4),  # 64 x 256 in 8 slices of 512 -> as many blocks, 4 slices of 1024
        ((50, 2048, 4096), "64x128", 8),  # 64 x 256 in 16 slices of 256
        ((64, 14336, 4096), "64x128", 1),  # 64 x 256's 2 slices of 2048: shallow for 64 rows (4096)
        ((40, 14336, 4096), "64x128", 1),  # ... and for 40 (2560)
        ((64, 28672, 4096), "64x256", 1),  # unsplit: nothing to replace
    ],
)
def test_a_few_row_split_gives_way_to_deeper_slices_by_the_rows_it_sums(size, shape, split):
    """The rows summed are M's, up to the tile's, at least 16: the few-row test above holds the two ends, 17 x 14336 x
    4096 keeping 64 x 256 in 2 slices of 2048 (deep enough for 17 rows: 1088), and 1 x 4096 x 4096 counting 16 rows
    (16 x 128 split in 4 in place of 16 x 256 in 8)."""
    plan = choose_plan(get_stage("hgemm", "h6"), *size, H200_SMS)
    assert (plan.tile.shape, plan.split_k) == (shape, split)


def test_a_forced_tail_of_none_runs_h6s_plain_entry_and_any_other_its_stream_k_entry():
    h6 = get_stage("hgemm", "h6")
    plan = choose_plan(h6, 3072, 3072, 3072, H200_SMS, forced_tile="128x256", forced_split=1, forced_tail=0)
    assert (plan.tile.entry, plan.shared_tiles) == ("hgemm_h6_tma_128x256", 0)
    plan = choose_plan(h6, 3072, 3072, 3072, H200_SMS, forced_tile="128x256", forced_split=1, forced_tail=3)
    assert (plan.tile.entry, plan.shared_tiles) == ("hgemm_h6_sk_tma_128x256", 3)


def test_only_the_stream_k_tile_shares_its_last_wave():
    plan = choose_plan(V8, 8192, 8192, 8192, H200_SMS, forced_tile="128x128")  # 4096 tiles: 15 waves of 264 + 136
    assert (plan.tile.stream_k, plan.shared_tiles, plan.shared_blocks) == (False, 0, 0)


def test_a_split_of_a_stream_k_tile_shares_every_tile():
    plan = choose_plan(V8, 4096, 4096, 4096, H200_SMS, forced_tile="256x128", forced_split=2)  # 512 tiles
    assert (plan.split_k, plan.shared_tiles, plan.shared_blocks) == (2, 512, 1024)
    plan = choose_plan(V8, 1024, 1024, 1024, H200_SMS)  # 64 tiles of 128x128 (a grid tile), split in 4 over gridDim.z
    assert (plan.tile.shape, plan.split_k, plan.shared_tiles) == ("128x128", 4, 0)


def test_forced_tail_is_capped_at_the_tile_count():
    plan = choose_plan(V8, 512, 512, 512, H200_SMS, forced_tile="256x128", forced_split=1, forced_tail=1000)
    assert (plan.shared_tiles, plan.shared_blocks) == (8, 132)


def test_a_tile_without_an_unchecked_entry_always_runs_its_own():
    v11 = get_stage("sgemm", "v11")
    assert all(t.unchecked_entry is None and t.entry_for(4096, 4096, 4096) == t.entry for t in v11.tiles)


def test_v10_prefers_the_wide_tile_when_it_fills_the_gpu():
    assert choose_plan(V10, 4096, 4096, 4096, H200_SMS).tile.shape == "128x256"
    assert choose_plan(V10, 1024, 1024, 1024, H200_SMS).tile.shape == "128x128"


@pytest.mark.parametrize("blocks, even", [(131, False), (132, True), (160, False), (256, True), (320, True),
                                          (1024, True), (1100, True)])
def test_a_grid_spreads_evenly_when_the_average_sm_is_near_the_busiest(blocks, even):
    # 160 blocks: 28 SMs run two, 104 one (average 1.21 of 2); 320: 2.42 of 3; 1100: 8.3 of 9
    assert spreads_evenly(blocks, H200_SMS) is even


def test_forced_tile_and_split():
    plan = choose_plan(V8, 4096, 4096, 4096, H200_SMS, forced_tile="64x128", forced_split=2)
    assert (plan.tile.shape, plan.split_k) == ("64x128", 2)


def test_a_forced_16_row_tile_refuses_a_taller_product():
    """The 16-row tiles load only 16 rows of A: 17 rows would be wrong (the kernel traps), so nsprof says why."""
    h6 = get_stage("hgemm", "h6")
    assert choose_plan(h6, 16, 4096, 4096, H200_SMS, forced_tile="16x256").tile.entry == "hgemm_h6_16x256"
    with pytest.raises(UsageError, match="runs products of at most 16 rows, not 17"):
        choose_plan(h6, 17, 4096, 4096, H200_SMS, forced_tile="16x256")


def test_unknown_forced_tile_lists_the_choices():
    with pytest.raises(UsageError, match="Choose one of: 256x128, 128x128, 64x128, 64x64"):
        choose_plan(V8, 64, 64, 64, H200_SMS, forced_tile="32x32")


H5 = get_stage("hgemm", "h5")
H6 = get_stage("hgemm", "h6")


@pytest.mark.parametrize(
    "stage, size, shape, split",
    [
        (H5, (4096, 4096, 4096), "128x256", 1),
        (H5, (512, 2048, 1024), "64x128", 2),  # 32 and 64 tiles, then 128 x 2 slices of 512
        (H6, (4096, 4096, 4096), "128x128", 1),  # 128x256 whole and unsplit, run by the ping-pong 128x128 tile
        (H6, (512, 2048, 1024), "128x64", 1),  # 128 blocks: no split declared, the smallest tile
    ],
)
def test_hgemm_plans(stage, size, shape, split):
    plan = choose_plan(stage, *size, H200_SMS)
    assert (plan.tile.shape, plan.split_k) == (shape, split)


@pytest.mark.parametrize("arch, cc, runs", [
    (None, "7.5", True), ("sm_90", "9.0", True), ("sm_90", "10.0", True), ("sm_90", "8.9", False),
    ("sm_90a", "9.0", True), ("sm_90a", "10.0", False), ("sm_90a", "8.9", False), ("sm_100a", "10.0", True),
])
def test_arch_specific_code_runs_on_its_own_compute_capability_only(arch, cc, runs):
    assert arch_runs(arch, cc) is runs


@pytest.mark.parametrize("cc", ["8.9", "10.0"])
def test_a_stage_no_tile_of_which_runs_here_is_not_available_with_the_reason(cc):
    class Tools:
        compute_capability = cc

        @staticmethod
        def runs(tile):
            return arch_runs(tile.arch, cc)

    assert unavailable_reason(H6, Tools) == f"needs sm_90a (compute capability {cc} here)"
    assert unavailable_reason(get_stage("sgemm", "v11"), Tools) == f"needs sm_90a (compute capability {cc} here)"
    assert unavailable_reason(get_stage("sgemm", "v9t"), Tools) is None
    assert unavailable_reason(H5, Tools) is None
    assert unavailable_reason(get_stage("hgemm", "h7"), Tools) is None  # the library runs anywhere
