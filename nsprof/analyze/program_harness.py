"""Harness work inside users' programs: autotuners and benchmark harnesses, told apart from the
work the program is about by evidence in the capture, each by a rule that says what it saw.

What to fix first should be the program's own steady-state kernels. In real captures it was not:
XLA's autotuner took over half of a short JAX run's kernel time (`RedzoneAllocatorKernelImpl`
checking buffers, `DelayKernel` holding a stream while it times, then cuDNN's candidate
algorithms, each launched a few times), and `triton.testing.do_bench` zero-fills 256 MB before
every timed launch (`FillFunctor<int>`: 45% of a Triton tutorial's kernel time).

The rules (HARNESS_RULES), each over one nsys export, each naming kernels:

- `xla-autotuner`: the kernels XLA's autotuner itself launches (stream_executor's redzone checks,
  delay kernels, buffer fills and result comparisons), by name.
- `l2-flush`: a fill (a kernel named fill, zero or memset) launched at least FLUSH_MIN_LAUNCHES
  times, most of them right before a launch of another kernel on the same stream, each long enough
  to write the whole L2 at the GPU's memory bandwidth: a benchmark emptying the cache before each
  timed launch.
- `before-steady-state`: kernels launched only before the program's steady state, which starts at
  the second iteration of its loop, or the first after its warm-up (nsprof.analyze.iterations:
  marked by the NVTX range that repeats on one thread and runs to the program's end,
  steady_state, or found in the GPU work): start-up, compilation and autotuning (XLA launches
  cuDNN's candidate algorithms there). A program without a loop gets no such rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nsprof.analyze.autotune_trials import autotune_trials
from nsprof.analyze.families import family_column
from nsprof.analyze.host_calls import KINDS, LAUNCH, call_kinds
from nsprof.analyze.launch_configs import Configuration
from nsprof.parse.model import THREAD_IDS, GpuTimeline

XLA_AUTOTUNER = re.compile(r"stream_executor::gpu::(?:<unnamed>::)?(?:RedzoneAllocator\w*|DelayKernel|RepeatBuffer\w*|"
                           r"xla_\w+_comparison)\b")
FILL = re.compile(r"fill|zero|memset", re.IGNORECASE)
FLUSH_MIN_LAUNCHES = 5
FLUSH_BEFORE_SHARE = 0.8  # of a fill's launches, followed on their stream by another kernel
STEADY_MIN_INSTANCES = 3


@dataclass(frozen=True)
class SteadyState:
    """Where a program's steady state starts (nsprof.analyze.iterations.Iterations.steady_state): an iteration of its loop."""

    range: str  # the range (family) that repeats
    instances: int
    start_ns: int
    instance_starts: np.ndarray | tuple[int, ...] = ()  # when each instance began, the first included
    source: str = "markers"  # or "found": the loop found in the GPU work (nsprof.analyze.iterations)

    def to_json(self) -> dict:
        what = "the NVTX range that repeats on one thread and runs to the last kernel launch" \
            if self.source == "markers" else "iterations found in the GPU work: the capture marks none"
        starts = np.asarray(self.instance_starts, dtype=np.int64)
        first = int(np.searchsorted(starts, self.start_ns)) + 1 if len(starts) else 2
        return {"range": self.range, "instances": self.instances, "start_ns": self.start_ns, "source": self.source,
                "rule": f"from iteration {first} of {self.instances} of {self.range} ({what})"}


HARNESS_RULES = {
    "xla-autotuner": "XLA's autotuner: stream_executor's redzone checks, delay kernels, buffer fills and result "
                     "comparisons",
    "l2-flush": "a fill long enough to write the whole L2, launched before each launch of another kernel: "
                "a benchmark's cache flush (triton.testing.do_bench zeroes 256 MB)",
    "before-steady-state": "launched only before the steady state (the program's loop from its second iteration, or "
                           "the first after its warm-up): start-up, compilation and autotuning",
    "autotune-trials": "an autotuner's trials: launch configurations of a kernel tried one after another, each in "
                       "one run, and dropped for the one it returned to (Triton's @triton.autotune)",
}
HarnessKey = str | Configuration  # a kernel name, or one launch configuration of a kernel


def program_harness(export: GpuTimeline, steady: SteadyState | None) -> dict[HarnessKey, str]:
    """Kernel name, or (kernel, grid, block) -> the rule (HARNESS_RULES) that makes it harness
    work, for one export whose steady state is `steady` (steady_state)."""
    # each launch's name as a code into `names` (millions of launches share a few hundred names)
    codes, uniques = pd.factorize(export.kernels["kernel"])
    names = [str(name) for name in uniques]
    found: dict[HarnessKey, str] = {}
    for name in names:
        if XLA_AUTOTUNER.search(name):
            found[name] = "xla-autotuner"
    for name in l2_flushes(export):
        found.setdefault(name, "l2-flush")
    if steady is not None:
        before = export.kernels["start_ns"].to_numpy(dtype=np.int64) < steady.start_ns
        late = set(np.unique(codes[~before]))
        for code in np.unique(codes[before]):
            if code >= 0 and code not in late:
                found.setdefault(names[code], "before-steady-state")
    for configuration in autotune_trials(export, {name for name in found if isinstance(name, str)}):
        found.setdefault(configuration, "autotune-trials")
    return found


def l2_flushes(export: GpuTimeline) -> set[str]:
    """The fills that flush the L2 before each launch of another kernel (the `l2-flush` rule)."""
    kernels = export.kernels
    codes, uniques = pd.factorize(kernels["kernel"])
    fills = [code for code, name in enumerate(uniques) if FILL.search(_base(str(name)))]
    seconds_to_fill = _l2_fill_ns(export)
    if not fills or seconds_to_fill is None:
        return set()
    # launches in stream order, arrays only (a copy of the whole table costs seconds at 10M launches)
    stream = kernels["stream_id"].to_numpy()
    order = np.lexsort((kernels["start_ns"].to_numpy(), stream))
    code, stream, duration = codes[order], stream[order], kernels["duration_ns"].to_numpy()[order]
    following = np.r_[code[1:], -1]
    following[:-1][stream[1:] != stream[:-1]] = -1  # the last launch of its stream: nothing follows
    flushes = set()
    for fill in fills:
        mine = code == fill
        if mine.sum() < FLUSH_MIN_LAUNCHES:
            continue
        before_other = ((following[mine] >= 0) & (following[mine] != fill)).mean()
        if before_other >= FLUSH_BEFORE_SHARE and np.median(duration[mine]) >= seconds_to_fill:
            flushes.add(str(uniques[fill]))
    return flushes


def _l2_fill_ns(export: GpuTimeline) -> float | None:
    """The least time that writing the whole L2 takes at the GPU's memory bandwidth (nsys's
    TARGET_INFO_GPU), or None where the export does not say."""
    gpus = export.gpus
    if gpus.empty or not {"l2_cache_bytes", "memory_bandwidth_bytes_per_s"} <= set(gpus):
        return None
    l2 = pd.to_numeric(gpus["l2_cache_bytes"], errors="coerce").max()
    bandwidth = pd.to_numeric(gpus["memory_bandwidth_bytes_per_s"], errors="coerce").max()
    if not (l2 > 0 and bandwidth > 0):
        return None
    return float(1e9 * l2 / bandwidth)


def _base(name: str) -> str:
    """A kernel's name and template arguments, without its parameter list."""
    return name.split("(", 1)[0] if "<" not in name else name


def steady_state(export: GpuTimeline, prefer: int | None = None) -> SteadyState | None:
    """The program's steady state (module docstring), or None without a repeating range. The
    iteration range is the one that repeats (STEADY_MIN_INSTANCES or more instances on one thread,
    none inside another) and runs to the program's end (_runs_to_the_end), over the longest span:
    a compiler's ranges repeat too (XLA compiles module after module) but end before the program's
    last steps, and ranges inside a step (XLA's thunks) span less. With `prefer`, a range of that
    many instances or more outranks a longer one of fewer (a decode step marked in each of four
    `generate` calls)."""
    ranges = export.nvtx.dropna(subset=["start_ns", "end_ns", "global_tid"])
    ranges = ranges[ranges["kind"] == "push_pop"]
    last_launch = _last_launch_ns(export)
    if ranges.empty or last_launch is None:
        return None
    frame = pd.DataFrame({"family": family_column(ranges["range"]), "thread": ranges["global_tid"].to_numpy(),
                          "start": ranges["start_ns"].to_numpy(dtype=np.int64),
                          "end": ranges["end_ns"].to_numpy(dtype=np.int64)}).sort_values("start", kind="stable")
    best: SteadyState | None = None
    best_rank = (False, -1)
    launches: np.ndarray | None = None
    for (family, _), loop in frame.groupby(["family", "thread"], sort=False):
        if len(loop) < STEADY_MIN_INSTANCES:
            continue
        starts, ends = loop["start"].to_numpy(), loop["end"].to_numpy()
        if (starts[1:] < ends[:-1]).any():
            continue  # nested in itself or overlapping: not a loop's iterations
        # instances opened after the last launch hold nothing (torch.profiler's step after the last step)
        held = int(np.searchsorted(starts, last_launch, side="right"))
        if held < STEADY_MIN_INSTANCES:
            continue
        starts, ends = starts[:held], ends[:held]
        if last_launch > ends[-1]:
            launches = _launch_starts(export) if launches is None else launches
            if not _runs_to_the_end(starts, ends, launches):
                continue
        rank = (prefer is not None and held >= prefer, int(ends[-1] - starts[0]))
        if rank > best_rank:
            best, best_rank = SteadyState(str(family), held, int(starts[1]), starts.astype(np.int64)), rank
    return best


def _runs_to_the_end(starts: np.ndarray, ends: np.ndarray, launches: np.ndarray) -> bool:
    """Whether a range whose last instance closed before the program's last launch still marks its
    loop to the end: fewer launches follow that instance than an instance holds (the median), as
    after a forward pass marked as the step, the token's sampling unmarked; a compiler's ranges end
    with the whole loop still to run."""
    after = len(launches) - int(np.searchsorted(launches, ends[-1], side="right"))
    within = np.searchsorted(launches, ends, side="right") - np.searchsorted(launches, starts, side="left")
    return after < float(np.median(within))


def _launch_starts(export: GpuTimeline) -> np.ndarray:
    """When each of the capture's launch calls started (CPU clock), in order."""
    launching = call_kinds(pd.Categorical(export.runtime["api"])) == KINDS.index(LAUNCH)
    return np.sort(export.runtime["start_ns"].to_numpy(np.int64)[launching])


def _last_launch_ns(export: GpuTimeline) -> int | None:
    """When the API call that launched the program's last kernel started (CPU clock)."""
    kernels = export.kernels.dropna(subset=["correlation_id"])
    if kernels.empty:
        return None
    last = kernels.loc[kernels["start_ns"].idxmax()]
    runtime = export.runtime
    # correlation ids are per process: the process part of the packed ids (nsprof.parse.model.THREAD_IDS)
    calls = runtime[(runtime["correlation_id"] == last["correlation_id"])
                    & (runtime["global_tid"] // THREAD_IDS == last["global_pid"] // THREAD_IDS)]
    return int(calls["start_ns"].max()) if len(calls) else None
