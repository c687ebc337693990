"""`nsprof explain wave-quantization`: the launch plan counted in waves (nsprof.explain.waves),
checked against the plans the H200 ran (the tile column of the committed bench records, written
by the launcher on the GPU) and against the counts done by hand."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nsprof.cli import app
from nsprof.explain.topics import get_topic
from nsprof.explain.waves import SIZES, Waves, sm_count_of, waves_of
from nsprof.ladder.ops.tiles import as_tiles
from nsprof.ladder.registry import get_stage
from nsprof.sizes import parse_label

ROOT = Path(__file__).resolve().parents[1]
RECORDS = {"sgemm": [ROOT / "benchmarks" / "records" / "2026-11-29-h200-sgemm" / "h200-sgemm.json"],
           "hgemm": [ROOT / "benchmarks" / "records" / "2026-12-02-h200-hgemm-kernel-time" / name
                     for name in ("h200-hgemm-kernel-time.json", "models-run1.json")]}  # squares, model shapes
LABEL = re.compile(r"^(?P<shape>\d+x\d+)x\d+(?:/split(?P<split>\d+)|/tail(?P<tail>\d+))?$")


def ran_on_the_h200() -> list[tuple[str, dict]]:
    """The block-tiled GPU stages of the H200 ladder records, each with the record's env."""
    found = []
    for op, paths in RECORDS.items():
        for path in paths:
            document = json.loads(path.read_text())
            found += [(op, {**row, "sm_count": document["env"]["sm_count"]}) for row in document["results"]
                      if row["status"] == "ok" and LABEL.match(str(row.get("tile")))]
    return found


@pytest.mark.parametrize("op, row", ran_on_the_h200(), ids=lambda value: value["stage"] + " " + value["size"]
                         if isinstance(value, dict) else value)
def test_the_model_counts_the_plan_the_h200_ran(op, row):
    """Tile, K split and stream-K tail as the launcher labelled them on the GPU (h6 at 8192^3:
    128x256x64/tail68; at 16 x 4096 x 4096: 16x128x64/split4), and the blocks and slots counted by hand
    from them."""
    m, n, k = parse_label(row["size"])
    waves = waves_of(get_stage(op, row["stage"]), m, n, k, row["sm_count"])
    label = LABEL.match(row["tile"])
    assert waves.tile == label["shape"] and waves.split_k == int(label["split"] or 1) == row["split_k"]
    assert waves.shared_tiles == int(label["tail"] or 0)
    bm, bn = map(int, label["shape"].split("x"))
    assert waves.blocks == math.ceil(m / bm) * math.ceil(n / bn) * waves.split_k
    # a slot per block an SM fits, as the entry's __launch_bounds__ promise (the registry declares it)
    tile = next(tile for tile in as_tiles(get_stage(op, row["stage"]).tiles) if tile.shape == waves.tile)
    assert waves.slots == row["sm_count"] * tile.blocks_per_sm // tile.cluster  # a cluster's tile: its blocks' SMs
    rounds = math.ceil(waves.blocks / waves.slots)
    assert waves.idle_share == pytest.approx(1 - waves.blocks / (rounds * waves.slots))


def test_the_topic_s_worked_example_is_the_model_s():
    """The text's 3072^3 example (288 tiles of 128x256, 132 slots, a third wave of 24, 108 SMs idle, 2.18
    waves) is what h6's 128x256 tile gives on an H200, and its cure (384 tiles of 128x192, 2.91 waves, 97%
    busy against 73%) is the plan the model gives for h6 there."""
    text = " ".join(get_topic("wave-quantization").text.split())
    h6 = get_stage("hgemm", "h6")
    wide = Waves("3072", "128x256", 1, (3072 // 128) * (3072 // 256), 132, 0)
    rest = wide.blocks % wide.slots
    assert f"{wide.blocks} tiles on {wide.slots} slots" in text and f"a third of {rest} blocks" in text
    assert f"{wide.slots - rest} SMs have nothing to do" in text and f"{wide.waves:.2f} rounds of work" in text
    assert math.ceil(wide.waves) == 3 and "three rounds" in text
    chosen = waves_of(h6, 3072, 3072, 3072, 132)
    assert chosen.tile == "128x192" and f"into {chosen.blocks}, {chosen.waves:.2f} waves" in text
    assert f"keep {1 - chosen.idle_share:.0%} of the slots busy against 128x256's {1 - wide.idle_share:.0%}" in text


def test_explain_shows_every_size_on_the_profile_s_gpu():
    result = CliRunner().invoke(app, ["explain", "wave-quantization", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["sm_count"] == 132 and document["sm_count_source"] == "NVIDIA H200, from the profile's manifest"
    assert [row["size"] for row in document["waves"]] == ["x".join(map(str, size)) for size in SIZES]
    decode = next(row for row in document["waves"] if row["size"] == "16x4096x4096")
    # 32 tiles of 16x128, K split in 4 (16x256's 8 slices of 512 would be shallow): one wave less 4 blocks
    assert (decode["tile"], decode["split_k"], decode["blocks"]) == ("16x128", 4, 128)
    shown = CliRunner().invoke(app, ["explain", "wave-quantization"], env={"COLUMNS": "80"}).stdout
    words = " ".join(shown.split())
    # the least filled plan: one round of 80 ping-pong 128x128 tiles (40 clusters of two: B's rows straddle lines),
    # not two of 152 128x64 ones
    assert "1000x1200x808: 40 blocks of 256x128 (K split 1) are 0.61 of a wave: 26 of 66 slots get no block" in words
    ragged = next(row for row in document["waves"] if row["size"] == "3000x5000x2000")
    # 12 x 27 tiles of 256x192, each a cluster of two blocks: 66 slots of two SMs
    assert (ragged["tile"], ragged["blocks"], ragged["slots"]) == ("256x192", 324, 66)
    # the most quantized plan: 400 units of 256x256 in 7 rounds of 66 clusters, the last 4 shared by k steps
    sliver = next(row for row in document["waves"] if row["size"] == "5000x5000x5000")
    assert (sliver["blocks"], sliver["slots"], sliver["shared_tiles"]) == (400, 66, 4)
    assert "5000x5000x5000: 400 blocks of 256x256 on 66 slots are 6.06 waves" in words
    assert "h6 shares those 4 tiles' k steps over every slot (stream-K)" in words
    assert max(len(line) for line in shown.splitlines()) <= 80


def test_without_a_manifest_the_sms_are_an_h200_s_and_it_says_so():
    assert sm_count_of(None) == (132, "an H200's: no profile's manifest names its GPU")
    assert sm_count_of({"device": {"name": "NVIDIA H100 PCIe", "sm_count": 114}})[0] == 114


def test_an_access_asked_of_the_wave_topic_is_refused_in_one_line():
    result = CliRunner().invoke(app, ["explain", "wave-quantization", "--shape", "32x32"])
    assert result.exit_code == 2 and "has no access model" in result.output and "Traceback" not in result.output


def test_whole_waves_leave_nothing_idle():
    from nsprof.explain.waves import Waves

    whole = Waves("x", "128x256", 1, 264, 132, 0)
    assert whole.waves == 2 and whole.last_wave_fill == 1.0 and whole.idle_share == 0


def test_the_manual_shows_what_explain_prints():
    """docs/explain.md's wave-quantization block is lines the command prints at 100 columns, in order."""
    page = (ROOT / "docs" / "explain.md").read_text()
    shown = page.split("$ nsprof explain wave-quantization\n...\n", 1)[1].split("\n...\n```", 1)[0]
    printed = CliRunner().invoke(app, ["explain", "wave-quantization"], env={"COLUMNS": "100"}).stdout
    assert shown in printed and shown.startswith("Waves, as nsprof bench would launch them\n")


def test_a_stage_that_declares_no_residency_is_named_not_counted():
    """v1 declares no blocks per SM (a 32x32 block of 1,024 threads, two to an SM): counting its
    waves with one would be wrong, so the page says why it is left out; h7 is a library call."""
    for op, stage in (("sgemm", "v1"), ("hgemm", "h7")):
        result = CliRunner().invoke(app, ["explain", "wave-quantization", "--op", op, "--stage", stage, "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["waves"] == []
        shown = " ".join(CliRunner().invoke(app, ["explain", "wave-quantization", "--op", op, "--stage", stage]).stdout.split())
        assert f"{stage} is not counted" in shown
