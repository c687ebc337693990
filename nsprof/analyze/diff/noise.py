"""Noise floors: how far one unchanged program moves between two runs, per kind of work.

With one run a side, a diff's interval comes from the launches of that run alone and says nothing
of the variation between runs, which is often larger (an unchanged torch.compile program: a copy
range 4.3% slower, an optimizer kernel 4.9%). Such a diff calls a change only beyond the floor of
its kind of work:

- `kernels`: each kernel's median launch time;
- `copies`: NVTX ranges whose GPU time is mostly copies;
- `ranges`: other NVTX ranges (and ladder stages), by their GPU time.

A floor is the largest change between two runs of one unchanged program, over every pair of its
runs and every kernel or range tested in both (3 launches or more, the same count in each, a median
of SHORT_NS or more), in percent. Work shorter than SHORT_NS is never called from one run a side:
its spread between runs is timestamp steps and launch jitter (a 1 us copy kernel of an unchanged
torch.compile program moved 22%).

`measure_noise` takes the floors from a capture with runs (`nsprof profile --runs N`) or a
directory of captures. nsprof's own (NOISE_RECORD, beside this module) were measured that way on
the GPU machine (benchmarks/noise.md); `nsprof noise RUNS --out FILE` records the user's
(noise_document), which `nsprof diff --noise FILE` reads, as it reads runs directly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from nsprof.analyze.diff.statistics import MIN_SAMPLES
from nsprof.errors import ParseError

KINDS = ("kernels", "copies", "ranges")
SHORT_NS = 10_000
COPY_SHARE = 0.5  # a range whose GPU time is more than half copies is a copy range
NOISE_RECORD = Path(__file__).with_name("noise_floor.json")


@dataclass(frozen=True)
class NoiseFloor:
    pct: dict[str, float]  # kind (KINDS) -> the floor, in percent
    source: str  # what measured it, for the diff's note

    def of(self, kind: str) -> float:
        return self.pct.get(kind, max(self.pct.values(), default=0.0))


def range_kind(copy_ns: pd.Series, gpu_time_ns: pd.Series) -> pd.Series:
    """Per range instance: "copies" where copies are most of its GPU time, else "ranges"."""
    share = copy_ns / gpu_time_ns.where(gpu_time_ns > 0)
    return pd.Series(np.where(share > COPY_SHARE, "copies", "ranges"), index=copy_ns.index)


def measure_noise(runs: list[dict[str, pd.DataFrame]], source: str) -> NoiseFloor:
    """The floors of one unchanged program from its runs, each a dict of frames (kind -> key,
    value_ns, one row per launch or instance): the largest |change| of a median over every pair
    of runs (module docstring)."""
    if len(runs) < 2:
        raise ParseError(f"{source}: {len(runs)} run, and a noise floor needs two or more",
                         "capture the unchanged program with `nsprof profile --runs 5`")
    largest = dict.fromkeys(KINDS, 0.0)
    for kind in KINDS:
        medians = [_medians(run.get(kind)) for run in runs]
        for first, second in combinations(medians, 2):
            both = first.add_suffix("_a").join(second.add_suffix("_b"), how="inner")
            tested = both[(both["count_a"] >= MIN_SAMPLES) & (both["count_a"] == both["count_b"])
                          & (both["median_a"] >= SHORT_NS)]
            if len(tested):
                change = 100 * (tested["median_b"] / tested["median_a"] - 1).abs()
                largest[kind] = max(largest[kind], float(change.max()))
    return NoiseFloor(largest, source)


def noise_document(floor: NoiseFloor, runs: int, gpu: str | None, created: str) -> dict:
    """A noise record of `floor` (noise_record reads it back): its floors, what measured them, over
    how many runs, on which GPU, and when."""
    return {"source": floor.source, "floor_pct": floor.pct, "runs": runs, "gpu": gpu, "created": created,
            "short_ns": SHORT_NS}


def _medians(frame: pd.DataFrame | None) -> pd.DataFrame:
    if frame is None or frame.empty:
        return pd.DataFrame(columns=["count", "median"])
    return frame.groupby("key")["value_ns"].agg(count="count", median="median")


def default_noise() -> NoiseFloor:
    """nsprof's own floors, as recorded on the GPU machine (NOISE_RECORD)."""
    return noise_record(NOISE_RECORD)


def noise_record(path: Path) -> NoiseFloor:
    """A noise record ({"floor_pct": {kind: percent}, "source"}: noise_floor.json's format, as
    benchmarks/noise_record.py writes it) read back; ParseError when it is none."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
        floors = {kind: float(document["floor_pct"][kind]) for kind in KINDS}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError):
        raise ParseError(f"{path}: not a noise record (no \"floor_pct\" of {', '.join(KINDS)})",
                         "pass a profile with runs (nsprof profile --runs 5) or a directory of captures") from None
    if not all(np.isfinite(value) and value >= 0 for value in floors.values()):
        raise ParseError(f"{path}: a noise floor that is not a percentage", "measure it again")
    return NoiseFloor(floors, str(document.get("source", path)))
