"""benchmarks/gpu/experiments/pair_kernels.py on a real export: call 7 of the record
2026-12-02-h200-hgemm-kernel-time (h6_plans.py pairing h6 with the library under nsys on an H200), cut to about 30
pairs at 2048^3 and 30 at 4096^3 (tests/data/paired/h6-library.sqlite.xz). The script lives outside the package,
so it is loaded from its file."""

from __future__ import annotations

import lzma
import sqlite3
import statistics
from pathlib import Path

import pytest
from script_files import script

from nsprof.parse.nsys_sqlite import load_nsys

ROOT = Path(__file__).resolve().parents[1]
EXPORT = ROOT / "tests" / "data" / "paired" / "h6-library.sqlite.xz"


def pair_kernels():
    return script("benchmarks/gpu/experiments/pair_kernels.py")


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("pair") / "pair.sqlite"
    path.write_bytes(lzma.decompress(EXPORT.read_bytes()))
    return path


def raw_kernels(path: Path) -> list[tuple[str, int, int]]:
    """(short name, start, end) in time order, straight from the export's tables."""
    with sqlite3.connect(path) as db:
        return db.execute("SELECT s.value, k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                          "JOIN StringIds s ON s.id = k.shortName ORDER BY k.start").fetchall()


def test_each_alternating_stretch_gives_each_kernels_own_median_and_the_gap_before_it(export):
    kernels = load_nsys(export, columns={"kernels": ["start_ns", "end_ns", "short_name"]}).kernels
    rows = pair_kernels().stretches(kernels, "hgemm_h6", "nvjet_sm90", min_pairs=10)
    raw = raw_kernels(export)
    # the two sizes the export holds, told apart by h6's kernel time (about 26 us and 207 us)
    assert len(rows) == 4 and set(rows["side"]) == {"ours", "theirs"}
    for (_, stretch), small in zip(rows.groupby("stretch"), (True, False)):
        ours = stretch.set_index("side").loc["ours"]
        assert ours["name"] == "hgemm_h6_pp_tma_128x128"
        # every kernel of the size's run counts for its time; a gap only where the kernel before it is in the run
        in_run = [(r, before) for before, r in zip([None, *raw], raw) if (r[2] - r[1] < 60_000) == small]
        for side, part in (("ours", "hgemm_h6"), ("theirs", "nvjet_sm90")):
            row = stretch.set_index("side").loc[side]
            mine = [(r, before) for r, before in in_run if part in r[0]]
            assert row["median_ns"] == statistics.median(r[2] - r[1] for r, _ in mine)
            gaps = [r[1] - before[2] for r, before in mine
                    if before is not None and (before[2] - before[1] < 60_000) == small]
            assert row["gap_before_ns"] == statistics.median(gaps)
    # the library's kernel is the faster at both sizes here: 96.5% and 99.3% by kernel time
    ratios = [s.set_index("side")["median_ns"] for _, s in rows.groupby("stretch")]
    assert [round(100 * r["theirs"] / r["ours"], 1) for r in ratios] == [96.5, 99.3]


def test_stretches_shorter_than_asked_are_left_out(export):
    kernels = load_nsys(export, columns={"kernels": ["start_ns", "end_ns", "short_name"]}).kernels
    assert pair_kernels().stretches(kernels, "hgemm_h6", "nvjet_sm90", min_pairs=40).empty
    assert pair_kernels().stretches(kernels, "hgemm_h6", "no such kernel", min_pairs=1).empty
