"""The host side's result as types (nsprof.analyze.host_side builds it, nsprof.analyze.host_verdict
judges it): what `analyze --json` writes under `host`, what the tables, `explain gpu-idle`, `diff`
and `history` read. Plain dicts at run time, so the JSON is what these say; mypy checks every key
read, and docs/json/ holds the JSON Schema derived from them (tests/json_schemas.py)."""

from __future__ import annotations

from typing_extensions import TypedDict  # pydantic reads it for docs/json (typing's, only from Python 3.12)


class Window(TypedDict):
    """The stretch of the capture the host side judges: the steady state, else the GPU work's span."""

    start_ns: int
    end_ns: int
    span_ns: int
    source: str  # how it was chosen, in words


class BusyAndIdle(TypedDict):
    busy_ns: int
    busy_pct: float
    copy_busy_ns: int
    idle_ns: int
    idle_causes: dict[str, int]  # cause (nsprof.analyze.host_verdict.IDLE_RULES) -> idle ns it made


class StreamFigures(BusyAndIdle):
    stream_id: int


class DeviceFigures(BusyAndIdle):
    device_id: int
    streams: list[StreamFigures]


class Launches(TypedDict):
    count: int
    per_s: float | None
    kernels: int
    graphs: int
    median_kernel_ns: float | None
    median_call_ns: float | None
    median_between_ns: float | None
    median_to_start_ns: float | None
    median_queue_depth: float | None
    empty_queue_pct: float | None
    threads: int
    host_ns: int


class ApiTime(TypedDict):
    api: str
    count: int
    host_ns: int


class CallSummary(TypedDict):
    count: int
    host_ns: int
    apis: list[ApiTime]  # the five that took most host time


class CallPlace(TypedDict):
    thread: str
    range: str | None  # the innermost NVTX range open around the calls
    count: int
    host_ns: int


class Waits(CallSummary):
    where: list[CallPlace]


class PageableCopies(TypedDict):
    direction: str
    count: int
    bytes: int
    gpu_ns: int
    pinned_bytes_per_s: float | None
    rate_source: str | None


class Copies(TypedDict):
    count: int
    bytes: int
    gpu_ns: int
    pageable_count: int
    pageable_bytes: int
    pageable_gpu_ns: int
    pageable: list[PageableCopies]  # per direction
    blocking_calls: int
    blocking_host_ns: int


class IterationsJudged(TypedDict):
    range: str
    count: int | None  # None where the steady state began after the last GPU work
    source: str


class ActivityShare(TypedDict):
    activity: str
    samples: int
    pct: float
    top: list[str]
    fix: str | None


class HostWait(TypedDict):
    call: str
    host_ns: int


class Activity(TypedDict):
    """What the host's CPU samples in the GPU's idle time show it did (nsprof.analyze.host_activity)."""

    thread: int  # nsys's global thread id of the thread with most samples there
    threads: int
    samples: int
    sample_interval_ns: float
    idle_ns: int
    activities: list[ActivityShare]
    waits: list[HostWait]


class VerdictEvidence(TypedDict):
    device_id: int
    busy_pct: float
    copy_share_pct: float
    idle_ns: int
    top_idle_cause: str | None
    top_idle_cause_pct: float | None


class Verdict(TypedDict):
    verdict: str
    rule: str
    evidence: VerdictEvidence


class Fix(TypedDict):
    kind: str  # "host" (a cause of idle time) or "copy" (pageable copies of one direction)
    cause: str
    fix: str
    saving_ns: int
    bound: str  # what bounds the saving
    evidence: str


class HostFigures(TypedDict):
    """What host_side measures, before the verdict."""

    window: Window
    devices: list[DeviceFigures]
    launches: Launches
    waits: Waits
    copies: Copies
    loading: CallSummary
    allocation: CallSummary
    startup_ns: int
    untraced: list[str]
    tool: str
    framework: str | None
    iterations: IterationsJudged | None
    activity: Activity | None


class HostSide(HostFigures):
    """One program's host side (nsprof.analyze.host_side): its figures, the verdict and the fixes."""

    verdict: Verdict
    fixes: list[Fix]
