"""A program's loop, one notion of it for every command: its iterations, from markers or found in
the GPU work itself (pure functions over one nsys export). docs/loops.md tells it with examples.

Most captures carry no markers (`nsys profile python train.py`, nsys's defaults), so the loop is
found from the GPU work: the program's GPU operations in launch order (correlation ids: order by
launch, not by start, as work on several streams interleaves), each as a symbol (a kernel with its
grid and block, a graph, a copy's direction and size, a memset's size); XLA's autotuner's kernels
are left out (nsprof.analyze.loop_operations). For every symbol, the stretch from each of its
launches to its next is fingerprinted (its length and a sum of hashed neighbouring pairs of symbols,
from one prefix sum: nsprof.analyze.loop_fingerprints), and the stretch it repeats covering the most
GPU time is its candidate (a graph launch is one operation but a whole step's work). The loop is the
candidate covering the most; among those within TIED_COVERAGE (or two iterations) of it, the
outermost, its anchor launched once an iteration (a training step, not a layer inside it, whose
stretches leave the step's other work out); among anchors of one period, the one after the longest
pause of the host's launches (where a step begins). Stretches of the loop's length running ALIKE of
its operations are iterations whose work drifted; where launch sizes change every iteration, the
loop is found by kernel names alone and said to drift. The loop's region is its runs from first to
last where the stretches between repeat it too, else its run doing the most work (_region). Its
first iterations still slower than WARMUP_SLOWER times its typical one are start-up
(warmup_iterations). A capture of more than MAX_FIND_OPERATIONS (nsprof.analyze.loop_operations)
operations is searched in its tail, the loop followed back by its anchor.

No loop is found (and none invented) where no sequence repeats MIN_ITERATIONS times, the loop holds
less than MIN_LOOP_SHARE of the GPU's time, or fewer than MIN_REGULAR of its stretches repeat it
(MIN_REGULAR_DRIFTING of a loop found by names alone: cuDNN's autotuner tries one algorithm after
another at a few sizes, which names alone would call a loop). Markers, where a capture has them (a
repeating NVTX range: nsprof.analyze.program_harness.steady_state; torch.profiler's
`ProfilerStep#N` is one family), decide the iterations where they mark MIN_ITERATIONS or more, or
where a range repeated inside fewer marks the loop found (a decode step inside four `generate`
calls); the loop is still found, and checked against them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from nsprof.analyze.launch_configs import LAUNCH_SIZES
from nsprof.analyze.loop_fingerprints import CHUNK, Candidate, loop_candidates, matches
from nsprof.analyze.loop_operations import Operations, loop_operations, pids, process_ids
from nsprof.analyze.loop_types import IterationsJson, LoopJson, MarkerCheckJson
from nsprof.analyze.program_harness import SteadyState, steady_state
from nsprof.kernel_names import kernel_label
from nsprof.parse.ladder_stages import timeline_has_stages
from nsprof.parse.model import GpuTimeline, id_values, linux_pid
from nsprof.shorten import shortened

MARKERS, FOUND = "markers", "found"
HIGH, MEDIUM = "high", "medium"
MIN_ITERATIONS = 5  # a sequence repeated fewer times is no loop to judge a steady state by
MARKS_FOUND = 0.8  # of the found iterations, starting one to a marked instance: the markers mark that loop
MIN_LOOP_SHARE = 0.1  # of the process's GPU time, which the loop's iterations must hold
MIN_REGULAR = 0.6  # of the iterations in the loop's stretch, which must repeat its sequence
MIN_REGULAR_DRIFTING = 0.8  # the same, of a loop found by kernel names alone (whose launch sizes drift)
ALIKE = 0.8  # of an iteration's operations, the same as the loop's sequence's, where its work drifts
WARMUP_SLOWER = 1.5  # an iteration this many times slower than the loop's typical one is slow (warmup_iterations)
TIED_COVERAGE = 0.98  # loops covering this share of the best's GPU work or more are tied: the outermost wins
ONCE_EACH = 1.2  # an anchor launched at most this many times an iteration is launched once each (some in start-up)
DRIFT_GAIN = 1.1  # names alone must cover this much more than names with launch sizes to call the work drifting
FOLLOW_SLACK = 2.0  # a loop followed back before its last MAX_FIND_OPERATIONS goes on while its anchor's launches
# follow each other within this many iterations' time
NAME_WIDTH = 60  # of a kernel's name in a sentence (its full name is in `anchor`)
MAX_LISTED = 1000  # iterations listed one by one in --json (the first and last half of this)


@dataclass(frozen=True)
class MarkerCheck:
    """A found loop against the markers of the same capture: how many iterations each gives, and how
    many marked instances hold exactly one found iteration's start."""

    markers: int
    found: int
    matched: int

    def to_json(self) -> MarkerCheckJson:
        return {"markers": self.markers, "found": self.found, "matched": self.matched}


@dataclass(frozen=True)
class Iterations:
    """A loop's iterations: when each began (`starts_ns`: the launch call of its first GPU operation
    where found, the marker's start where marked; the capture's clock) and when the last ended."""

    source: str  # MARKERS or FOUND
    starts_ns: np.ndarray  # int64, one per iteration
    end_ns: int
    confidence: str  # HIGH or MEDIUM (find_loop says which; markers are HIGH)
    rule: str  # what defines the iterations, in words
    marker: str | None = None  # the repeating range (family), where marked
    anchor: str | None = None  # the GPU operation that starts each iteration, where found
    operations: int | None = None  # GPU operations in each repeated iteration, where found
    regular: int | None = None  # iterations of the repeated sequence (the rest differ), where found
    drift: str | None = None  # what changes between iterations, where something does
    check: MarkerCheck | None = None  # a found loop checked against the markers (on the marked iterations)
    warmup: int = 0  # the first iterations that are still start-up (warmup_iterations)

    @property
    def count(self) -> int:
        return len(self.starts_ns)

    @property
    def spans_ns(self) -> np.ndarray:
        """Each iteration's span: to the next one's start, the last to `end_ns`."""
        return np.diff(np.r_[self.starts_ns, self.end_ns])

    @property
    def median_ns(self) -> float:
        """The median span of the steady state's iterations."""
        return float(np.median(self.spans_ns[self.steady_from:]))

    @property
    def spread_pct(self) -> float:
        """The steady state's spans' interquartile range as a percentage of their median (as bench's spread is)."""
        q1, q3 = np.percentile(self.spans_ns[self.steady_from:], [25, 75])
        median = self.median_ns
        return float(100 * (q3 - q1) / median) if median > 0 else 0.0

    @property
    def steady_from(self) -> int:
        """The first iteration of the steady state: the second, or the first after the warm-up (the
        first of one iteration)."""
        return max(0, min(max(1, self.warmup), self.count - 1))

    def steady_state(self) -> SteadyState:
        """The steady state the hot kernels and host side read (from steady_from on)."""
        name = self.marker if self.marker is not None else "the loop found in the GPU work"
        return SteadyState(name, self.count, int(self.starts_ns[self.steady_from]), self.starts_ns, source=self.source)

    def to_json(self) -> IterationsJson:
        starts = self.starts_ns
        spans = self.spans_ns
        listed = np.r_[0:min(len(starts), MAX_LISTED // 2), max(MAX_LISTED // 2, len(starts) - MAX_LISTED // 2):len(starts)]
        return {"count": self.count, "source": self.source, "confidence": self.confidence, "rule": self.rule,
                "start_ns": int(starts[0]), "end_ns": self.end_ns, "median_ns": self.median_ns,
                "spread_pct": self.spread_pct, "min_ns": int(spans.min()), "max_ns": int(spans.max()),
                "marker": self.marker, "anchor": self.anchor, "operations": self.operations, "regular": self.regular,
                "drift": self.drift, "check": self.check.to_json() if self.check else None,
                "listed": [{"index": int(i), "start_ns": int(starts[i]), "span_ns": int(spans[i])} for i in listed]}


@dataclass(frozen=True)
class Loop:
    """One capture's loop: the iterations that decide (markers where there are, else those found),
    the loop found in the GPU work whether or not markers decide, and why none was found."""

    iterations: Iterations | None
    found: Iterations | None = None
    not_found: str | None = None  # why no loop was found in the GPU work, where none was
    operations: int = 0  # the GPU operations of the process the loop was looked for in
    pid: int | None = None  # that process (Linux id)
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> LoopJson:
        return {"iterations": None if self.iterations is None else self.iterations.to_json(),
                "found": None if self.found is None or self.found is self.iterations else self.found.to_json(),
                "not_found": self.not_found, "operations": self.operations, "notes": list(self.notes)}


# --- the loop ----------------------------------------------------------------------------------------


def find_loop(export: GpuTimeline) -> tuple[Iterations | None, str | None, int, int | None]:
    """The loop found in the export's GPU work (module docstring): its iterations, or None and why
    none was found; the operations it was looked for in, and their process."""
    ops = loop_operations(export)
    if ops is None:
        return None, "the capture holds no GPU work", 0, None
    found, why, total = _loop_of(export, ops)
    return found, why, total, ops.pid


def _loop_of(export: GpuTimeline, ops: Operations) -> tuple[Iterations | None, str | None, int]:
    total = len(ops.exact) + ops.earlier
    durations = ops.end - ops.start
    exact = _working(loop_candidates(ops.exact, durations, MIN_ITERATIONS - 1), ops.exact, ops.work_below)
    # one kernel at a new size each launch (a model's parameters initialized one by one) is no loop
    named = [candidate for candidate in _working(loop_candidates(ops.named, durations, MIN_ITERATIONS - 1), ops.named,
                                                 ops.work_below) if candidate.length > 1]
    drift = None
    chosen, symbols = exact, ops.exact
    if named and (not exact or named[0].covered >= DRIFT_GAIN * exact[0].covered):
        chosen, symbols = named, ops.named
        drift = "launch sizes change between iterations (found by kernel names alone)"
    if not chosen:
        return None, f"no sequence of GPU work repeats {MIN_ITERATIONS} times", total
    candidate = _outermost(chosen, export, ops, symbols)
    positions = np.flatnonzero(symbols == candidate.symbol)
    same = matches(symbols, positions, candidate)
    # a stretch of the loop's length running mostly the same operations is an iteration whose work drifted (a
    # kernel chosen by sequence length)
    periodic = np.r_[np.diff(positions), len(symbols) - positions[-1]] >= candidate.length
    periodic[:-1] &= np.diff(positions) == candidate.length
    periodic &= same | _alike(symbols, positions, candidate.length, int(positions[np.argmax(same)]))
    least = MIN_REGULAR if symbols is ops.exact else MIN_REGULAR_DRIFTING  # found by names alone: more must repeat
    first, last = _region(periodic, ops.end[positions] - ops.start[positions], least)
    in_loop = positions[first:last + 1]
    regular, alike = int(periodic[first:last + 1].sum()), int(same[first:last + 1].sum())
    loop_end = int(positions[last]) + candidate.length
    share = float(durations[int(positions[first]):loop_end].sum() / max(1, durations.sum()))
    anchor = ops.label(candidate.symbol)
    if regular < MIN_ITERATIONS or share < MIN_LOOP_SHARE or regular < least * len(in_loop):
        named_as = shortened(kernel_label(anchor), NAME_WIDTH)
        return None, (f"the most repeated sequence ({candidate.length:,} operations from {named_as}) repeats "
                      f"{regular} times over {100 * share:.0f}% of the GPU time, {len(in_loop) - regular:,} "
                      "other stretches between: too little or too irregular to be the program's loop"), total
    if alike < regular:
        drift = "; ".join(filter(None, (drift, f"{regular - alike:,} of {regular:,} iterations of the loop's length "
                                               "ran other kernels or sizes")))
    starts = _launch_starts(export, ops, in_loop)
    if first == 0 and ops.earlier:  # the loop ran before the operations it was found in: followed back
        before = _followed_back(ops, int(positions[0]), symbols is ops.exact, float(np.median(np.diff(starts))))
        starts = np.r_[before, starts]
    end = int(ops.end[int(positions[last]):loop_end].max())
    confidence = HIGH if regular >= 10 and regular >= 0.9 * len(in_loop) else MEDIUM
    rule = (f"found in the GPU work: {len(in_loop):,} iterations of {candidate.length:,} operations, each starting "
            f"with a launch of {anchor} ({regular:,} of the loop's length)")
    return Iterations(FOUND, starts, end, confidence, rule, anchor=anchor,
                      operations=candidate.length, regular=regular, drift=drift,
                      warmup=warmup_iterations(starts, end)), None, total


def _region(periodic: np.ndarray, work: np.ndarray, least: float) -> tuple[int, int]:
    """The first and last index of the loop's stretches: its runs (periodic stretches, a run going
    on over single other stretches between, as the prompt before each of several generate calls,
    and ending at two in a row) of MIN_ITERATIONS or more, from the first to the last, where at
    least `least` of the stretches between are periodic (a benchmark timing one kernel at several
    sizes, autotuning between them); else the run doing the most GPU work (`work`: a weight per
    stretch), where other loops lie between (do_bench timing another kernel)."""
    at = np.flatnonzero(periodic)
    breaks = np.flatnonzero(np.diff(at) > 2)  # two or more other stretches between periodic ones end a run
    firsts, lasts = np.r_[at[0], at[breaks + 1]], np.r_[at[breaks], at[-1]]
    counts = np.cumsum(periodic)
    long = np.flatnonzero(counts[lasts] - counts[firsts] + 1 >= MIN_ITERATIONS)
    if len(long) > 1:
        low, high = int(firsts[long[0]]), int(lasts[long[-1]])
        if counts[high] - counts[low] + 1 >= least * (high - low + 1):
            return low, high
    weight = np.r_[0.0, np.cumsum(np.where(periodic, work, 0.0))]
    best = int(np.argmax(weight[lasts + 1] - weight[firsts]))
    return int(firsts[best]), int(lasts[best])


def _alike(symbols: np.ndarray, positions: np.ndarray, length: int, reference: int) -> np.ndarray:
    """Which stretches of `length` from `positions` run at least ALIKE of the operations of the one
    from `reference` in the same places (a chunk of stretches at a time)."""
    alike = np.zeros(len(positions), dtype=bool)
    fits = np.flatnonzero(positions + length <= len(symbols))
    model = symbols[reference:reference + length]
    step = max(1, CHUNK // length)
    for low in range(0, len(fits), step):
        rows = positions[fits[low:low + step]]
        stretches = symbols[rows[:, None] + np.arange(length)]
        alike[fits[low:low + step]] = (stretches == model).mean(axis=1) >= ALIKE
    return alike


def warmup_iterations(starts: np.ndarray | tuple[int, ...], end: int) -> int:
    """How many of a loop's first iterations are still start-up: the prefix in which iterations
    slower than WARMUP_SLOWER times the median of the loop's second half outnumber the others by
    the most (0 where none do). A first call of a model loads modules and allocates as it goes:
    a transformer's first generate ran each token 8 times slower than the next two calls did."""
    spans = np.diff(np.r_[np.asarray(starts, dtype=np.int64), end])
    typical = np.median(spans[len(spans) // 2:])
    score = np.cumsum(np.where(spans > WARMUP_SLOWER * typical, 1, -1))
    return int(np.argmax(score)) + 1 if score.max() > 0 else 0


def _working(candidates: list[Candidate], symbols: np.ndarray, work_below: int) -> list[Candidate]:
    """The candidates whose repeated sequence holds GPU work (a kernel or graph): copies or memsets
    alone repeat in a library's set-up (XLA's redzone memsets), not as a program's loop."""
    return [candidate for candidate in candidates
            if candidate.symbol < work_below or (symbols[candidate.at:candidate.at + candidate.length] < work_below).any()]


def _outermost(candidates: list[Candidate], export: GpuTimeline, ops: Operations, symbols: np.ndarray) -> Candidate:
    """The loop of the module docstring among the candidates (best first): of those tied with the
    best (within TIED_COVERAGE, or two iterations: a first or last stretch that differs), the fewest
    iterations, then the anchor after the longest pause of the host's launches."""
    best = candidates[0].covered
    tied = [c for c in candidates if c.covered >= best - max((1 - TIED_COVERAGE) * best, 2 * c.covered / c.repeats)]
    # an anchor launched once an iteration, where there is one (one launched twice cuts each iteration in two)
    tied = [c for c in tied if c.launches <= ONCE_EACH * c.repeats + 2] or tied
    fewest = min(c.repeats for c in tied)
    period = [c for c in tied if c.repeats <= fewest + 2]
    if len(period) == 1:
        return period[0]
    return max(period, key=lambda c: _pause_before(export, ops, symbols, c.symbol))


def _followed_back(ops: Operations, at: int, exact: bool, period_ns: float) -> np.ndarray:
    """The GPU starts of the anchor's launches before the operations the loop was found in (the one
    at `at` among them is the anchor), as long as each follows the one before it by at most
    FOLLOW_SLACK periods: where the loop began, in a capture too long to fingerprint whole."""
    frame, kind = ops.tables[int(ops.table[at])]
    model = frame.iloc[int(ops.row[at])]
    columns = {"kernel": ["kernel", *(LAUNCH_SIZES if exact else ())], "graph": ["graph_id"],
               "copy": ["copy_kind", "bytes"], "memset": ["bytes"]}[kind]
    start = frame["start_ns"].to_numpy(np.int64)
    before = slice(0, int(np.searchsorted(start, ops.start[at]))) if (start[1:] >= start[:-1]).all() else \
        np.flatnonzero(start < ops.start[at])
    earlier = frame.iloc[before]
    same = np.ones(len(earlier), dtype=bool)
    for column in (c for c in columns if c in earlier):
        same &= (earlier[column] == model[column]).to_numpy()
    rows = np.flatnonzero(same)
    if len(process_ids(earlier)) > 1:  # several processes: the loop's own
        rows = rows[pids(earlier.iloc[rows]) == ops.pid]
    starts = earlier["start_ns"].to_numpy(np.int64)[rows]
    starts = starts if isinstance(before, slice) else np.sort(starts)  # a slice of a table by start is by start
    if not len(starts):
        return starts
    gaps = np.diff(np.r_[starts, ops.start[at]])
    broken = np.flatnonzero(gaps > FOLLOW_SLACK * period_ns)
    return starts[broken[-1] + 1:] if len(broken) else starts


def _pause_before(export: GpuTimeline, ops: Operations, symbols: np.ndarray, symbol: int) -> float:
    """The median pause before the launches of `symbol` in the analyzed stretch: from the launch
    call of the operation before each to its own (the GPU's idle time before it where the capture
    links operations to no launch call)."""
    at = np.flatnonzero(symbols == symbol)
    at = at[at > 0]
    if not len(at):
        return 0.0
    launched = _launch_starts(export, ops, np.r_[at - 1, at])
    before, own = launched[:len(at)], launched[len(at):]
    if (before == ops.start[at - 1]).all():  # no launch calls: the GPU's idle time
        return float(np.median(ops.start[at] - ops.end[at - 1]))
    return float(np.median(own - before))


def _launch_starts(export: GpuTimeline, ops: Operations, positions: np.ndarray) -> np.ndarray:
    """When the launch call of each operation at `positions` began (its GPU start where the capture
    links it to no call)."""
    wanted = ops.correlation[positions]
    gpu = ops.start[positions]
    runtime = export.runtime
    if runtime.empty or (wanted < 0).all():
        return gpu
    corr = id_values(runtime["correlation_id"])
    # correlation ids grow with each launch: the calls from the first one wanted on (a 10M-call table's tail)
    low = int(wanted[wanted >= 0].min())
    later = np.flatnonzero(corr >= low)
    corr = corr[later]
    pid = linux_pid(id_values(runtime["global_tid"])[later])
    mine = (pid == ops.pid) & np.isin(corr, wanted)
    calls = pd.Series(runtime["start_ns"].to_numpy(np.int64)[later[mine]], index=corr[mine])
    calls = calls[~calls.index.duplicated()]
    found = calls.reindex(wanted).to_numpy()
    return np.where(np.isnan(found), gpu, found).astype(np.int64)


def capture_loop(export: GpuTimeline) -> Loop:
    """The capture's loop (Loop). Marked iterations decide where a repeating NVTX range marks at
    least MIN_ITERATIONS of them; fewer (three calls of `generate` around many decode steps) give
    way to a range repeated inside them that marks the loop found in the GPU work (_inner_markers),
    else to the found loop, and decide only where none is found. A found loop is checked against the
    markers."""
    found, why, operations, pid = find_loop(export)
    marked = steady_state(export)
    if marked is not None and marked.instances < MIN_ITERATIONS and found is not None:
        marked = _inner_markers(export, found) or marked
    if marked is None:
        return Loop(found, found, why, operations, pid)
    end = int(max(export.kernels["end_ns"].max() if len(export.kernels) else 0,
                  export.graphs["end_ns"].max() if len(export.graphs) else 0))
    check = _check(marked.instance_starts, found) if found is not None else None
    starts = np.asarray(marked.instance_starts, dtype=np.int64)
    iterations = Iterations(MARKERS, starts, end, HIGH, marked.to_json()["rule"], marker=marked.range, check=check,
                            warmup=warmup_iterations(starts, end))
    if marked.instances < MIN_ITERATIONS and found is not None:
        note = (f"{marked.range} is marked {marked.instances} times, fewer than {MIN_ITERATIONS}: the loop found in "
                "the GPU work decides")
        return Loop(found, found, why, operations, pid, (note,))
    return Loop(iterations, found, why, operations, pid)


def steady_part(exports: list[GpuTimeline], loop: Loop | None = None) -> tuple[list[GpuTimeline], SteadyState | None]:
    """The exports' kernels and graph launches from the steady state on (the second iteration of
    the capture's loop, capture_loop's unless `loop` is given), and the steady state, for a single
    program's capture with a loop; else (a ladder's capture, whose stages are timed after their own
    warm-up, or several exports) the exports as they are and None."""
    if loop is None and len(exports) == 1 and not timeline_has_stages(exports[0]):
        loop = capture_loop(exports[0])
    if loop is None or loop.iterations is None or loop.iterations.count < 2:
        return exports, None
    state = loop.iterations.steady_state()
    export = exports[0]
    return [replace(export, kernels=_started_from(export.kernels, state.start_ns),
                    graphs=_started_from(export.graphs, state.start_ns))], state


def _started_from(frame: pd.DataFrame, start_ns: int) -> pd.DataFrame:
    """The rows of `frame` that started at `start_ns` or later: a slice where the rows are in time
    order, as nsys writes them (a copy of 10M launches costs seconds), else a copy."""
    starts = frame["start_ns"]
    if starts.is_monotonic_increasing:
        return frame.iloc[int(np.searchsorted(starts.to_numpy(), start_ns, side="left")):]
    return frame[starts >= start_ns]


def _inner_markers(export: GpuTimeline, found: Iterations) -> SteadyState | None:
    """A range repeated MIN_ITERATIONS times or more inside the few that span longest (a decode step
    marked in each of four `generate` calls), where it marks the loop found in the GPU work: most
    found iterations start in an instance of their own. XLA's ranges of one operation each repeat
    inside a step too, but mark no loop of the GPU work's."""
    inner = steady_state(export, prefer=MIN_ITERATIONS)
    if inner is None or inner.instances < MIN_ITERATIONS:
        return None
    return inner if _check(inner.instance_starts, found).matched >= MARKS_FOUND * found.count else None


def _check(marked_starts, found: Iterations) -> MarkerCheck:
    """How many marked instances hold exactly one found iteration's start."""
    marks = np.asarray(marked_starts, dtype=np.int64)
    where = np.searchsorted(marks, found.starts_ns, side="right") - 1
    held = np.bincount(where[where >= 0], minlength=len(marks))
    return MarkerCheck(len(marks), found.count, int((held == 1).sum()))

