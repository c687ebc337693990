"""Noise floors: how far one unchanged program moves between two runs, per category of work.

With one run a side, a diff's interval comes from the launches of that run alone and says nothing
of the variation between runs, which is often larger (an unchanged torch.compile program: a copy
range 4.3% slower, an optimizer kernel 4.9%; an unchanged training step's optimizer kernel 15%
between two machines). Such a diff calls a change only beyond the floor of its row's category
(`category`), which a corpus of eight programs (seven nsprof was not tuned on) showed to matter
(benchmarks/records/2026-11-28-h200-noise-corpus/noise_corpus.md):

- the duration class of the row's median (the slower side's): 10-100 us or over 100 us; kernels,
  graph launches, copies and ranges of one class moved alike, so they share its floor;
- under 10 us (SHORT_NS): never called from one run a side; timestamp steps and launch jitter move
  such work by up to 26% (a 1 us fill kernel of an unchanged torch.compile program);
- `copies under 100 us` (SMALL_COPIES: ranges whose GPU time is mostly copies, 10-100 us): never
  called from one run a side, nor from few runs; their time is mostly each copy's latency, which
  follows the host and the bus (eight 64 KiB pinned copies moved 5.1% between two runs on one
  machine, a pinned h2d range of torch.compile's 4.2% between days, while kernels of the class
  moved under 2.6%); five runs a side decide them by their own variation;
- `pageable copies` (ranges whose GPU time is mostly copies with a pageable side): never called,
  nor across runs (HOST_PACED); their speed follows the host's (152% between two runs of one
  program; 24% between two sets of 3 runs);
- `waiting kernels` (XLA's DelayKernel, NCCL's collectives: WAITING): never called, nor across
  runs; their time is the wait for the host or the other ranks (52%);
- where the sides ran on different GPUs (`apart`: no UUID in common), one run a side or few runs:
  work of 10-100 us (MACHINE_PACED) and copies of any size are never called. Another machine moved
  an unchanged training step's optimizer kernels by 14% (13.1 us against 11.5 us) while runs on one
  machine moved them under 2%, and no other program of the corpus measures how far a machine moves
  such work, so no floor learned without that program could hold for it; a copy's speed is its
  host's bus (a pinned h2d range of torch.compile's moved 4.2% between two days' machines). Other
  work over 100 us moved at most 1.4% between machines and keeps its floor.

A category the record holds no floor for is not called either: nothing measured says how far it
moves. A record of the first format (one floor per kind of work: FIRST_FORMAT) is read too.

A floor is the smallest threshold that calls nothing between two runs of one unchanged program: the
largest change among the rows that the one-run comparison (statistics.compare_samples) finds
significant, over every pair of runs (of many runs, a sample: compared_pairs); rows tested are
those the diff tests: MIN_SAMPLES launches or more on both sides, and not a kernel whose mix of
configurations moves its median (mix).
`measure_noise` takes them from a capture with runs (`nsprof profile --runs N`) or a directory of
captures. nsprof's own (NOISE_RECORD, beside this
module) are the largest over the corpus, checked leaving each program out; `nsprof noise RUNS
--out FILE` records the user's (noise_document), which `nsprof diff --noise FILE` reads, as it
reads runs directly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from nsprof.diff.mix import as_runs, mix_moved
from nsprof.diff.statistics import compare_samples
from nsprof.diff.types import NoiseRecord
from nsprof.errors import MissingPathError, ParseError
from nsprof.parse.json_document import UnreadableDocument, read_json_object
from nsprof.paths import missing_reason
from nsprof.printable import printable

KINDS = ("kernels", "copies", "ranges")  # run_frames' frames; a copies frame's rows may be "pageable copies"
FIRST_FORMAT = KINDS  # the first records held one floor per kind
SHORT_NS, LONG_NS = 10_000, 100_000
CLASSES = ("under 10 us", "10-100 us", "over 100 us")
PAGEABLE, WAITING_KERNELS, SMALL_COPIES = "pageable copies", "waiting kernels", "copies under 100 us"
CATEGORIES = (*CLASSES, SMALL_COPIES, PAGEABLE, WAITING_KERNELS)
HOST_PACED = (PAGEABLE, WAITING_KERNELS)  # their time is the host's or a wait: never called, even across runs
NEVER_CALLED = (CLASSES[0], SMALL_COPIES, *HOST_PACED)  # from one run a side, or few runs
MACHINE_PACED = (CLASSES[1],)  # where the floors apply and the sides ran on different GPUs: never called (nor copies)
MACHINE_COPIES = ("copies", PAGEABLE)  # a row's kinds of copies: their speed is the host's bus
# A floor is this much above the largest change measured: left out in turn, the program that moved most
# exceeded the others' largest by up to 1.22x (torch.compile's 10-100 us kernels, 2.55% against 2.14%)
FLOOR_MARGIN = 1.5
WAITING = re.compile(r"DelayKernel|nccl", re.IGNORECASE)  # kernels whose duration is a wait
COPY_SHARE = 0.5  # a range whose GPU time is more than half copies is a copy range
NOISE_RECORD = Path(__file__).with_name("noise_floor.json")
MAX_RECORD_BYTES = 1 << 20  # a noise record is a few hundred bytes: anything past this is something else
ALL_PAIRS_UP_TO = 10  # runs: 45 pairs; past it, measure_noise compares a sample (compared_pairs)
MAX_SOURCE_CHARS = 200  # a record's source, as the diff's note shows it
NOISE_FIX = "measure one with `nsprof noise RUNS... --out noise.json`, or pass a profile with runs (nsprof profile --runs 5)"


@dataclass(frozen=True)
class NoiseFloor:
    pct: dict[str, float]  # category (CATEGORIES) -> its floor in percent; or, first format, kind -> floor
    source: str  # what measured it, for the diff's note
    gpu: str | None = None  # the GPU its runs ran on, where the record names one

    @property
    def missing(self) -> tuple[str, ...]:
        """The categories a diff calls from one run that the record holds no floor for (never called)."""
        if set(self.pct) <= set(FIRST_FORMAT):
            return tuple(kind for kind in FIRST_FORMAT if kind not in self.pct)
        return tuple(name for name in CLASSES[1:] if name not in self.pct)

    def of(self, category: str, kind: str = "ranges", apart: bool = False) -> float:
        """The floor of a row of `category` and `kind` (inf: not called from one run a side);
        `apart`: the sides ran on different GPUs (MACHINE_PACED: the module docstring)."""
        if category in NEVER_CALLED or (apart and (category in MACHINE_PACED or kind in MACHINE_COPIES)):
            return np.inf
        if set(self.pct) <= set(FIRST_FORMAT):
            return self.pct.get("copies" if kind == PAGEABLE else kind, np.inf)
        return self.pct.get(category, np.inf)


def category(kinds: pd.Series, median_ns: pd.Series) -> pd.Series:
    """Per row (indexed by its key: a kernel's name, a range's): its category (module docstring),
    from its kind of work (KINDS, or PAGEABLE) and the median that sets its duration class."""
    classes = pd.Series(np.select([median_ns < SHORT_NS, median_ns < LONG_NS], CLASSES[:2], CLASSES[2]),
                        index=kinds.index)
    names = pd.Series(kinds.index.astype(str), index=kinds.index)
    waiting = (kinds == "kernels") & names.str.contains(WAITING)
    small_copies = (kinds == "copies") & (classes == CLASSES[1])
    return classes.mask(small_copies, SMALL_COPIES).mask(kinds == PAGEABLE, PAGEABLE).mask(waiting, WAITING_KERNELS)


def range_kind(copy_ns: pd.Series, gpu_time_ns: pd.Series, pageable_ns: pd.Series) -> pd.Series:
    """Per range instance: PAGEABLE or "copies" where copies are most of its GPU time (pageable
    ones where they are most of it), else "ranges"."""
    total = gpu_time_ns.where(gpu_time_ns > 0)
    kind = np.where(pageable_ns / total > COPY_SHARE, PAGEABLE, np.where(copy_ns / total > COPY_SHARE, "copies", "ranges"))
    return pd.Series(kind, index=copy_ns.index)


def measure_noise(runs: list[dict[str, pd.DataFrame]], source: str) -> NoiseFloor:
    """The floors of one unchanged program from its runs, each a dict of frames (KINDS -> key,
    value_ns, kind: one row per launch or instance): per category, the largest change of a
    significant row over the pairs of runs compared_pairs gives (module docstring)."""
    if len(runs) < 2:
        raise ParseError(f"{source}: {len(runs)} run, and a noise floor needs two or more",
                         "capture the unchanged program with `nsprof profile --runs 5`")
    changes = pd.concat([changes_between(runs[first], runs[second]) for first, second in compared_pairs(len(runs))])
    return NoiseFloor(floors_of(changes), source)


def compared_pairs(count: int) -> list[tuple[int, int]]:
    """The pairs of runs measure_noise compares: every pair of up to ALL_PAIRS_UP_TO runs; of more,
    each run with the next and with the one half the runs on (cyclically): 200 runs
    make 300 comparisons, not 19,900 (about 6 minutes), and each run still meets near and far ones."""
    if count <= ALL_PAIRS_UP_TO:
        return list(combinations(range(count), 2))
    pairs = {(min(run, (run + step) % count), max(run, (run + step) % count))
             for run in range(count) for step in (1, count // 2)}
    return sorted(pairs)


def changes_between(first: dict[str, pd.DataFrame], second: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The rows two runs of one unchanged program both tested (module docstring), indexed by key:
    per row its `category`, `change_pct` and whether the one-run comparison finds it `significant`."""
    found = []
    for frame_kind in KINDS:
        a, b = (_launches(run.get(frame_kind), frame_kind) for run in (first, second))
        stats = compare_samples(a, b)
        # every row one run a side tests, as a diff would (not a kernel whose mix of configurations moves its median)
        mixed = mix_moved(as_runs(a, b)) if "config" in a and "config" in b else pd.Index([])
        stats = stats[stats["testable"] & ~stats.index.isin(mixed)]
        kinds = a.drop_duplicates("key").set_index("key")["kind"].reindex(stats.index)
        found.append(pd.DataFrame({
            "category": category(kinds, stats[["a_median_ns", "b_median_ns"]].max(axis=1)),
            "kind": kinds, "change_pct": stats["change_pct"],
            "significant": (stats["ci_low_pct"] > 0) | (stats["ci_high_pct"] < 0)}))
    return pd.concat(found)


def floors_of(changes: pd.DataFrame) -> dict[str, float]:
    """Per category that held a tested row and is ever called: FLOOR_MARGIN times the largest
    |change| of its significant rows (0 where none was)."""
    tested = changes[~changes["category"].isin(NEVER_CALLED)]
    largest = tested["change_pct"].abs().where(tested["significant"], 0.0)
    return {str(name): FLOOR_MARGIN * float(value) for name, value in largest.groupby(tested["category"]).max().items()}


def noise_document(floor: NoiseFloor, runs: int, gpu: str | None, created: str) -> NoiseRecord:
    """A noise record of `floor` (noise_record reads it back): its floors, what measured them, over
    how many runs, on which GPU, and when."""
    return {"source": floor.source, "floor_pct": floor.pct, "runs": runs, "gpu": gpu, "created": created,
            "short_ns": SHORT_NS}


def _launches(frame: pd.DataFrame | None, kind: str) -> pd.DataFrame:
    """A run_frames frame with its rows' kind (`kind` where it has none)."""
    if frame is None:
        return pd.DataFrame({"key": pd.Series(dtype=object), "value_ns": pd.Series(dtype=float),
                             "kind": pd.Series(dtype=object)})
    return frame if "kind" in frame else frame.assign(kind=kind)


def default_noise() -> NoiseFloor:
    """nsprof's own floors, as recorded on the GPU machine (NOISE_RECORD)."""
    return noise_record(NOISE_RECORD)


def noise_record(path: Path) -> NoiseFloor:
    """A noise record ({"floor_pct": {category: percent}, "source"}: noise_floor.json's format, as
    noise_document writes it; or the first format's {kind: percent} of FIRST_FORMAT) read back;
    ParseError when it is none."""
    path = Path(path)
    if not path.exists():
        raise MissingPathError(f"{path}: {missing_reason(path)}", NOISE_FIX)
    try:  # what is no file, or too large, is said as it is
        document = read_json_object(path, "noise record", NOISE_FIX, MAX_RECORD_BYTES)
    except UnreadableDocument:
        document = None  # no JSON object at all: not a noise record, as noise_from_document says
    return noise_from_document(document, str(path))


def noise_from_document(document, where: str) -> NoiseFloor:
    """The floors of a noise record already parsed from JSON (`where` names it in errors)."""
    try:  # a bool is no percentage (float(True) would read as a 1% floor)
        floors = {str(name): float(value) if not isinstance(value, bool) else np.nan
                  for name, value in document["floor_pct"].items()}
    except (KeyError, TypeError, ValueError, AttributeError):
        floors = {}
    if not floors or not (set(floors) <= set(CATEGORIES) or set(floors) == set(FIRST_FORMAT)):
        raise ParseError(f"{where}: not a noise record (no \"floor_pct\" of {', '.join(CATEGORIES[1:3])})", NOISE_FIX)
    if not all(np.isfinite(value) and value >= 0 for value in floors.values()):
        raise ParseError(f"{where}: a noise floor that is not a percentage", "measure it again")
    source = printable(str(document.get("source", where)))  # it is printed under the tables: one short line
    gpu = document.get("gpu")
    return NoiseFloor(floors, source if len(source) <= MAX_SOURCE_CHARS else source[:MAX_SOURCE_CHARS - 1] + "…",
                      printable(gpu)[:MAX_SOURCE_CHARS] if isinstance(gpu, str) and gpu else None)
