"""Why a tiled stage sits where it does on the roofline, per size: the report's "Bound now" line of each
stage whose entries declare how many blocks an SM holds says how its launch fills the profile's GPU
(nsprof.ladder.ops.waves, the plan `nsprof bench` launches), from the example H200 profile of h6 and h8."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from nsprof.api import load_ladder, write_roofline
from nsprof.explain.topics import get_topic
from nsprof.ladder.ops.waves import COUNTED, counted, launch_waves, plan_text, waves_of
from nsprof.ladder.registry import get_stage, stages_for
from nsprof.ladder_analysis.profiles import with_launch_plans
from nsprof.render.document import Paragraph
from nsprof.render.report import report_document

EXAMPLE = Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h200-hgemm-triton-1024"


def _bound_lines(ladder) -> dict[str, str]:
    """Each stage's "Bound now" paragraph, by the stage heading before it."""
    _, blocks = report_document(ladder)
    found, stage = {}, None
    for block in blocks:
        if getattr(block, "level", None) == 3:
            stage = block.text.split(":")[0]
        if isinstance(block, Paragraph) and block.text.startswith("Bound now"):
            found[stage] = block.text
    return found


def test_the_report_says_how_h6s_launch_fills_the_h200_and_counts_no_triton_wave():
    ladder = load_ladder([EXAMPLE], False, None)
    assert ladder.sm_count == 132  # the manifest's device
    lines = _bound_lines(ladder)
    expected = plan_text(waves_of(get_stage("hgemm", "h6"), 1024, 1024, 1024, 132))
    assert expected == "128 blocks of 128x64 on 132 slots: 0.97 wave, 3% of the slots' time idle"
    assert f"launched as {expected}" in lines["h6"]
    assert "launched as" not in lines["h8"]  # Triton's blocks per SM are the compiler's: no wave is counted


def test_the_csv_holds_the_plan_and_without_the_gpus_sm_count_none_is_said(tmp_path):
    ladder = load_ladder([EXAMPLE], False, None)
    write_roofline(ladder, tmp_path)
    table = pd.read_csv(tmp_path / "roofline.csv")
    h6 = table[table["stage"] == "h6"]
    assert len(h6) and (h6["launch_plan"] == plan_text(waves_of(get_stage("hgemm", "h6"), 1024, 1024, 1024, 132))).all()
    assert h6["launch_waves"].round(3).eq(0.97).all() and table[table["stage"] == "h8"]["launch_plan"].isna().all()
    unknown = with_launch_plans(ladder.points, None)
    assert unknown["launch_plan"].isna().all()
    blind = dataclasses.replace(ladder, points=unknown, sm_count=None)
    assert all("launched as" not in line for line in _bound_lines(blind).values())


@pytest.mark.parametrize("size, text", [
    ((3072, 3072, 3072), "384 blocks of 128x192 on 132 slots: 2.91 waves, 3% of the slots' time idle"),
    ((8192, 8192, 8192), "2048 blocks of 128x256 on 132 slots: 15.52 waves, 3% of the slots' time idle but for "
                         "the last 68 tiles, shared out by k steps"),
    ((16, 4096, 4096), "128 blocks of 16x128 (K split in 4) on 132 slots: 0.97 wave, 3% of the slots' time idle"),
])
def test_a_plan_reads_as_blocks_waves_and_idle_slots(size, text):
    assert plan_text(waves_of(get_stage("hgemm", "h6"), *size, 132)) == text


def test_the_report_counts_the_stages_the_wave_topic_counts():
    """One list of the stages whose entries declare their blocks per SM: the report's (COUNTED) is the
    wave-quantization topic's, ladder by ladder, and names real stages."""
    topic = get_topic("wave-quantization")
    for op, names in COUNTED.items():
        assert tuple(topic.ladder(op)[0]) == names
        assert [stage.stage for stage in stages_for(op) if counted(stage)] == list(names)


def test_no_plan_is_counted_for_a_size_of_another_shape_or_an_uncounted_stage():
    """A stage range's size may hold any count of dimensions (nsprof.ranges): only MxNxK is counted, and
    only for the counted stages; other work's NaNs give none."""
    assert launch_waves("sgemm", "v8", "1024x1024", 132) is None
    assert launch_waves("sgemm", "v1", "1024x1024x1024", 132) is None
    assert launch_waves(float("nan"), float("nan"), float("nan"), 132) is None
    assert launch_waves("sgemm", "v8", "1024x1024x1024", 132) == waves_of(get_stage("sgemm", "v8"), 1024, 1024, 1024, 132)
