"""The tile / split-K choice (pure logic: no GPU needed)."""

import pytest

from nsprof.errors import UsageError
from nsprof.ops.matmul import choose_plan
from nsprof.registry import get_stage

V8 = get_stage("sgemm", "v8")
V10 = get_stage("sgemm", "v10")
H200_SMS = 132


@pytest.mark.parametrize(
    "size, shape, split",
    [
        ((4096, 4096, 4096), "128x128", 1),  # 1024 tiles: no help needed
        ((2048, 2048, 2048), "128x128", 1),  # 256 tiles
        ((1024, 1024, 1024), "128x128", 4),  # 64 tiles: 4 K slices give 256 blocks
        ((1000, 1200, 800), "128x128", 2),  # 80 tiles, K=800 allows 2 slices of >= 256
        ((512, 512, 128), "64x64", 1),  # too shallow to split: smaller tiles instead
    ],
)
def test_v8_plan(size, shape, split):
    plan = choose_plan(V8, *size, H200_SMS)
    assert (plan.tile.shape, plan.split_k) == (shape, split)


def test_v10_prefers_the_wide_tile_when_it_fills_the_gpu():
    assert choose_plan(V10, 4096, 4096, 4096, H200_SMS).tile.shape == "128x256"
    assert choose_plan(V10, 1024, 1024, 1024, H200_SMS).tile.shape == "128x128"


def test_forced_tile_and_split():
    plan = choose_plan(V8, 4096, 4096, 4096, H200_SMS, forced_tile="64x128", forced_split=2)
    assert (plan.tile.shape, plan.split_k) == ("64x128", 2)


def test_unknown_forced_tile_lists_the_choices():
    with pytest.raises(UsageError, match="Choose one of: 128x128, 64x128, 64x64"):
        choose_plan(V8, 64, 64, 64, H200_SMS, forced_tile="32x32")
