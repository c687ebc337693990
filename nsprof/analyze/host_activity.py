"""What the host did while the GPU waited, from what nsys's default capture already holds: CPU
samples with their call chains and OS runtime calls (nsprof.parse.nsys_host). Pure functions.

Over the steady state's window (nsprof.analyze.host_side's, which hands over its idle stretches and
the threads that made launch calls there), the GPU's idle stretches are where the host decides the pace. The
samples of the launching threads (those that made launch calls there: PyTorch launches its
backward pass from a thread of its own, which waits while the main thread prepares the next batch)
that fall in them are each given an activity by ACTIVITY_RULES: walking its call chain from the
leaf up, the first frame whose module or symbol a rule names decides; a chain of the interpreter's
frames alone is Python; one named by no rule is `other`. The OS runtime calls in them that wait
(poll, futex, condition and semaphore waits, sleeps) of the thread with the most samples there are
summed apart: a sample is taken of a running thread, so a wait shows in those calls, not in the
samples. The fix follows the activity (ACTIVITY_FIXES): worker processes where the host prepared
data, CUDA graphs or compilation where the interpreter and the CUDA calls held the GPU, compile
once where it compiled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nsprof.analyze.gpu_events import merged_intervals
from nsprof.analyze.host_types import Activity as ActivityJson
from nsprof.parse.model import GpuTimeline

NUMERICAL, INTERPRETER, CUDA_CALLS, COMPILING, LIBRARY, PROFILER, OTHER = (
    "numerical work on the host", "Python and each operation's dispatch", "CUDA calls", "compiling",
    "library set-up", "the profiler", "other")


@dataclass(frozen=True)
class ActivityRule:
    activity: str
    pattern: re.Pattern[str]  # searched in a frame's module, then its symbol
    says: str


ACTIVITY_RULES = (  # in order: a frame matching an earlier rule is not looked at by a later one
    ActivityRule(COMPILING, re.compile(r"nvrtc|ptxas|nvJitLink|libLLVM|llvm::|mlir::|triton|inductor|xla::gpu::Compile|"
                                       r"libnvptxcompiler|cicc", re.IGNORECASE),
                 "nvrtc, ptxas, LLVM and MLIR, Triton, inductor, XLA's compiler"),
    ActivityRule(LIBRARY, re.compile(r"cudnn|cublasLt?|cusolver|cufft", re.IGNORECASE),
                 "cuDNN, cuBLAS(Lt), cuSOLVER, cuFFT: heuristics, autotuning, set-up"),
    ActivityRule(NUMERICAL, re.compile(r"numpy|_multiarray_umath|_pcg64|_generator|_mt19937|openblas|libmkl|libgomp|"
                                       r"scipy|\bPIL\b|cv2|libjpeg|libpng|at::native::.*(cpu_kernel|_kernel_impl)|at::vec::|"
                                       r"mkldnn|dnnl", re.IGNORECASE),
                 "numpy, its random generators, BLAS, OpenMP threads, torch's CPU kernels, image libraries"),
    ActivityRule(CUDA_CALLS, re.compile(r"libcuda\.|libcudart|libcupti", re.IGNORECASE),
                 "the CUDA driver and runtime: launches, copies, synchronizations"),
    ActivityRule(INTERPRETER, re.compile(r"libtorch|libc10|cupy_backends|cupy/_core|jaxlib", re.IGNORECASE),
                 "a framework's dispatch of each operation (PyTorch's libtorch and c10, CuPy's core)"),
    ActivityRule(PROFILER, re.compile(r"libToolsInjection|nsys|libnvtx", re.IGNORECASE), "nsys's own injection"),
)
PYTHON = re.compile(r"python3|libpython", re.IGNORECASE)
IMPORTING = "importing modules"
# a frame of Python's import machinery or the dynamic loader: the sample is part of an import, whatever its leaf
IMPORT_FRAMES = re.compile(r"^(PyImport_ImportModule\w*|import_find_and_load|_imp_create_dynamic\w*|dlopen\w*|"
                           r"_dl_map_object\w*)$")
WAIT_CALLS = re.compile(r"^(poll|ppoll|epoll_wait|epoll_pwait|select|pselect|futex|pthread_cond_(timed)?wait|sem_(timed)?wait|"
                        r"pthread_mutex_lock|nanosleep|clock_nanosleep|usleep|sleep|waitpid|wait4|pthread_join)")
ACTIVITY_FIXES = {
    NUMERICAL: "move the host's data preparation off the critical path: DataLoader(num_workers=N, pin_memory=True), "
               "or prepare the next batch while the GPU works",
    INTERPRETER: "launch fewer, larger pieces of work from Python: CUDA graphs (torch.cuda.CUDAGraph, "
                 "torch.compile(mode=\"reduce-overhead\")), fused kernels",
    CUDA_CALLS: "launch fewer, larger pieces of work: CUDA graphs, fused kernels; keep synchronizations out of the loop",
    COMPILING: "compile once, before the loop: warm up every shape first, cache compiled kernels, keep shapes static",
    LIBRARY: "choose algorithms once, before the loop: warm up (cudnn.benchmark's trials), keep shapes static",
}


@dataclass(frozen=True)
class Activity:
    activity: str
    samples: int
    pct: float  # of the thread's samples in the gaps
    top: tuple[str, ...]  # the modules (or symbols) most of them ran in


@dataclass(frozen=True)
class HostActivity:
    """The launching threads' samples in the GPU's idle stretches of the window, by activity, and the
    waits there (OS runtime calls, name -> host ns) of `thread`, the one with most samples there."""

    thread: int  # nsys's global thread id
    threads: int  # launching threads sampled
    samples: int
    sample_interval_ns: float
    activities: tuple[Activity, ...]
    waits_ns: tuple[tuple[str, int], ...]
    idle_ns: int  # the GPU's idle time in the window that the samples were taken in

    @property
    def top(self) -> Activity | None:
        return self.activities[0] if self.activities else None

    def to_json(self) -> ActivityJson:
        return {"thread": self.thread, "threads": self.threads, "samples": self.samples,
                "sample_interval_ns": self.sample_interval_ns, "idle_ns": self.idle_ns,
                "activities": [{"activity": a.activity, "samples": a.samples, "pct": a.pct, "top": list(a.top),
                                "fix": ACTIVITY_FIXES.get(a.activity)} for a in self.activities],
                "waits": [{"call": name, "host_ns": ns} for name, ns in self.waits_ns]}


NO_SAMPLES = ("the capture holds no CPU samples: nsys takes them unless told not to (its default `-s process-tree`, "
              "which `nsprof profile` keeps; drop `-s none`); `-t ...,osrt` adds the host's waits")


def host_activity(export: GpuTimeline, gaps: tuple[np.ndarray, np.ndarray], threads: np.ndarray) -> HostActivity | None:
    """What the launching `threads` did in the GPU's idle stretches `gaps` (idle_stretches; module
    docstring); None where the capture holds no samples of them there."""
    samples, frames = export.samples, export.frames
    if samples.empty or frames.empty or not len(threads):
        return None
    mine = samples[np.isin(samples["global_tid"].to_numpy(), threads)]
    times = mine["start_ns"].to_numpy(np.int64)
    inside = _in(times, gaps)
    if not inside.any():
        return None
    sampled = mine["global_tid"].to_numpy(np.int64)
    busiest_values, busiest_counts = np.unique(sampled[inside], return_counts=True)
    thread = int(busiest_values[np.argmax(busiest_counts)])
    own = np.sort(times[sampled == thread])
    interval = float(np.median(np.diff(own))) if len(own) > 1 else 0.0
    ids = mine["sample_id"].to_numpy(np.int64)[inside]
    activity, where = sample_activities(frames, ids)
    counted = pd.DataFrame({"activity": activity, "where": where}).groupby("activity")
    total = len(ids)
    activities = sorted((Activity(str(name), len(group), 100 * len(group) / total,
                                  tuple(group["where"].value_counts().index[:3].astype(str)))
                         for name, group in counted), key=lambda a: -a.samples)
    return HostActivity(thread, len(busiest_values), total, interval, tuple(activities), _waits(export, thread, gaps),
                        int((gaps[1] - gaps[0]).sum()))


def idle_stretches(starts: np.ndarray, ends: np.ndarray, window: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The GPU's idle stretches in `window`: the gaps between the merged busy intervals of the GPU
    operations [starts, ends) clipped to it."""
    start, end = window
    busy_start, busy_end = merged_intervals(np.maximum(starts, start), np.minimum(ends, end))
    gap_start, gap_end = np.r_[start, busy_end], np.r_[busy_start, end]
    keep = gap_end > gap_start
    return gap_start[keep], gap_end[keep]


def _in(times: np.ndarray, gaps: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Which times fall in one of the disjoint, sorted `gaps`."""
    at = np.searchsorted(gaps[0], times, side="right") - 1
    return (at >= 0) & (times < gaps[1][np.maximum(at, 0)])


def sample_activities(frames: pd.DataFrame, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each sample's activity and the module (or symbol) that decided it, by ACTIVITY_RULES over its
    frames from the leaf up (rules judged per distinct module and symbol, not per frame)."""
    chains = frames[np.isin(frames["sample_id"].to_numpy(), ids)]
    modules, symbols = pd.Categorical(chains["module"]), pd.Categorical(chains["symbol"])
    rule_of_module = np.array([_rule(str(name)) for name in modules.categories] + [len(ACTIVITY_RULES) + 1])
    rule_of_symbol = np.array([_rule(str(name)) for name in symbols.categories] + [len(ACTIVITY_RULES) + 1])
    rule = np.minimum(rule_of_module[modules.codes], rule_of_symbol[symbols.codes])
    python = np.array([bool(PYTHON.search(str(name))) for name in modules.categories] + [False])[modules.codes]
    table = pd.DataFrame({"sample": chains["sample_id"].to_numpy(), "depth": chains["depth"].to_numpy(),
                          "rule": rule, "python": python, "module": modules.astype(str)})
    named = table[table["rule"] < len(ACTIVITY_RULES)].sort_values(["sample", "depth"]).drop_duplicates("sample")
    decided = named.set_index("sample")
    activity = np.full(len(ids), OTHER, dtype=object)
    where = np.full(len(ids), "", dtype=object)
    found = decided.reindex(ids)
    has = found["rule"].notna().to_numpy()
    activity[has] = [ACTIVITY_RULES[int(r)].activity for r in found["rule"].to_numpy()[has]]
    where[has] = [_short(str(module)) for module in found["module"].to_numpy()[has]]
    pythonic = table.groupby("sample")["python"].any().reindex(ids, fill_value=False).to_numpy()
    activity[~has & pythonic] = INTERPRETER
    where[~has & pythonic] = "python"
    leaf = table[table["depth"] == 0].drop_duplicates("sample").set_index("sample")["module"].reindex(ids)
    rest = ~has & ~pythonic
    where[rest] = [_short(str(module)) for module in leaf.to_numpy()[rest]]
    return activity, where


def importing(frames: pd.DataFrame, ids: np.ndarray) -> np.ndarray:
    """Which samples `ids` ran inside an import (a frame of IMPORT_FRAMES anywhere in the chain)."""
    chains = frames[np.isin(frames["sample_id"].to_numpy(), ids)]
    symbols = pd.Categorical(chains["symbol"])
    is_import = np.array([bool(IMPORT_FRAMES.search(str(name))) for name in symbols.categories] + [False])
    return np.isin(ids, chains["sample_id"].to_numpy()[is_import[symbols.codes]])


def _short(module: str) -> str:
    """A module's file name without its folders: libcuda.so.580.159.04, _generator.cpython-312-....so."""
    return module.rsplit("/", 1)[-1]


def _rule(name: str) -> int:
    """The index of the first rule naming `name`, or len(ACTIVITY_RULES) + 1."""
    return next((index for index, rule in enumerate(ACTIVITY_RULES) if rule.pattern.search(name)), len(ACTIVITY_RULES) + 1)


def _waits(export: GpuTimeline, thread: int, gaps: tuple[np.ndarray, np.ndarray]) -> tuple[tuple[str, int], ...]:
    """The thread's waiting OS runtime calls, by name, their time inside `gaps` (most first)."""
    calls = export.os_calls
    if calls.empty:
        return ()
    calls = calls[calls["global_tid"].to_numpy() == thread]
    names = calls["name"].astype(str).to_numpy()
    waiting = np.array([bool(WAIT_CALLS.search(name)) for name in names], dtype=bool)
    totals: dict[str, int] = {}
    for name, low, high in zip(names[waiting], calls["start_ns"].to_numpy()[waiting], calls["end_ns"].to_numpy()[waiting]):
        first, last = np.searchsorted(gaps[1], low, side="right"), np.searchsorted(gaps[0], high)
        overlap = np.minimum(gaps[1][first:last], high) - np.maximum(gaps[0][first:last], low)
        totals[name] = totals.get(name, 0) + int(np.maximum(overlap, 0).sum())
    return tuple(sorted(((name, ns) for name, ns in totals.items() if ns > 0), key=lambda item: -item[1]))
