"""A diff's rows and summary as types: what `nsprof diff --json` writes under `kernels`, `ranges`,
`stages`, `totals` and `host`, and what the tables, the chart and `history` read. Plain dicts at run
time, so the JSON is what these say; mypy checks every key read, and docs/json/ holds the JSON
Schema derived from them (tests/json_schemas.py). The keys a row has only sometimes sit in a
`total=False` class of their own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from typing_extensions import TypedDict  # pydantic reads it for docs/json (typing's, only from Python 3.12)


class Called(TypedDict):
    """How one comparison of A's and B's times was called (nsprof.diff.judge): the counts and
    medians compared, the change and its 95% interval, the status and why."""

    a_count: int
    b_count: int
    a_median_ns: float | None
    b_median_ns: float | None
    change_pct: float | None
    ci_low_pct: float | None
    ci_high_pct: float | None
    status: str  # faster, slower, same, not called, added, removed, unstable, compiled differently
    testable: bool
    significant: bool
    floor_pct: float | None  # the noise floor the change had to pass, where one applied
    floor: str | None  # its category
    undecided: bool


class Moved(TypedDict):
    a: float
    b: float
    change_pct: float | None


class _WhyAndRuns(TypedDict, total=False):
    """What a row has only sometimes: the runs of each side that ran it (a diff across runs), the
    counters that moved and the ncu rules that came or went (nsprof.diff.why)."""

    a_runs: int
    b_runs: int
    metrics: dict[str, Moved]
    rules_appeared: list[str]
    rules_gone: list[str]


class _KernelRow(Called):
    kernel: str
    matched_by: str | None  # how a renamed kernel was matched across the sides, where it was
    a_total_ns: float
    b_total_ns: float


class KernelRow(_KernelRow, _WhyAndRuns, total=False):
    a_kernel: str  # A's name, where the kernel was matched under another (nsprof.diff.matching)
    compiled: str  # what differed where the kernel was compiled differently (nsprof.diff.compiled)


class _RangeRow(Called):
    range: str
    basis: str  # what was compared: the GPU time of the work the range launched, or its own duration
    duration: Called  # the range's own duration, compared too


class RangeRow(_RangeRow, _WhyAndRuns, total=False):
    pass


class _StageRow(Called):
    stage: str
    op: str | None  # None for a key that names no stage
    size: str | None
    label: str


class StageRow(_StageRow, _WhyAndRuns, total=False):
    duration: Called


class TotalRow(TypedDict):
    quantity: str
    a_ns: float | None
    b_ns: float | None
    change_pct: float | None


class Contributor(TypedDict):
    kernel: str
    delta_ns: float  # B's total less A's
    share_pct: float  # of all the time that moved


class HostRow(TypedDict):
    quantity: str
    label: str
    unit: str  # ns, pct, count or median
    a: float | None
    b: float | None
    change_pct: float | None  # in points for a share


class HostChange(TypedDict):
    """Two programs' host sides per iteration (nsprof.diff.host.host_rows)."""

    basis: str
    a_verdict: str
    b_verdict: str
    rows: list[HostRow]


class LoopChange(TypedDict):
    """The time an iteration takes, A against B (nsprof.diff.loop.loop_change): each side's steady
    iterations and median, the change and its interval, the call, what defined each side's
    iterations, and each side's start-up (the mean of its runs')."""

    a_count: int
    b_count: int
    a_median_ns: float
    b_median_ns: float
    change_pct: float
    ci_low_pct: float | None
    ci_high_pct: float | None
    status: str
    a_source: str
    b_source: str
    a_startup_ns: float | None
    b_startup_ns: float | None


class _NoiseFloors(TypedDict):
    source: str  # what measured the floors
    floor_pct: dict[str, float]  # category -> the change an unchanged program moved by


class NoiseJson(_NoiseFloors):
    """The floors a diff of one run a side called changes beyond, and what it never calls."""

    short_ns: int
    never_called: list[str]  # categories never called from one run
    not_called_across_gpus: list[str]


class TotalsJson(TypedDict):
    rows: list[TotalRow]
    top_contributors: list[Contributor]


class DiffDocument(TypedDict):
    """`nsprof diff A B --json`."""

    a: str
    b: str
    method: str  # how changes were called
    min_change_pct: float
    stage_pair: list[str] | None
    time_source: dict[str, str]  # side -> nsys (or the timeline's tool), ncu or bench
    runs: dict[str, int]  # side -> its runs
    noise: NoiseJson | None
    warnings: list[str]
    kernels: list[KernelRow]
    ranges: list[RangeRow]
    stages: list[StageRow]
    totals: TotalsJson
    host: HostChange | None
    loop: LoopChange | None

class NoiseRecord(_NoiseFloors, total=False):
    """A noise record as `diff --noise` reads it: its floors and what measured them (nsprof's own,
    nsprof/diff/noise_floor.json, say no more); `nsprof noise` writes every key."""

    runs: int
    gpu: str | None
    created: str
    short_ns: int


class NoiseDocument(NoiseRecord):
    """What `nsprof noise --json` prints: the record, and the files it was written to."""

    written: list[str]


# A row of any of a diff's tables, read by key name (`row[label]`, label being kernel, range or stage)
Row = Mapping[str, Any]
