"""benchmarks/gpu/experiments/launch_overhead.py's reading of a launch's time with no block running (its duration in
the export less its blocks' span), on the three launches of h6 that the record 2026-12-02-h200-hgemm-kernel-time
measured so (dead-time.txt: call 8). The script lives outside the package, so it is loaded from its file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from script_files import script

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "benchmarks" / "records" / "2026-12-02-h200-hgemm-kernel-time"


def launch_overhead():
    return script("benchmarks/gpu/experiments/launch_overhead.py")


@pytest.mark.parametrize("line", (RECORD / "dead-time.txt").read_text().splitlines())
def test_a_launchs_time_with_no_block_is_its_duration_less_its_blocks_span(line):
    measured = json.loads(line)
    duration_ns, span_ns = round(measured["cupti_us"] * 1e3), round(measured["span_us"] * 1e3)
    start = 1_764_650_000_000_000_000  # the global timer's ns, as a block stamps it
    found = launch_overhead().no_block_times([duration_ns], [[start, start + span_ns]])
    assert found["launches"] == 1 and found["duration_us"] == measured["cupti_us"]
    assert found["no_block_us"] == pytest.approx(measured["cupti_us"] - measured["span_us"], abs=1e-9)
    assert 0.7 < found["no_block_us"] < 0.85  # the record's 0.74-0.80 us


def test_launches_the_export_and_the_stamps_do_not_pair_are_refused():
    with pytest.raises(ValueError, match="2 launches in the export against 1 stamped"):
        launch_overhead().no_block_times([25_472, 25_504], [[0, 24_736]])
