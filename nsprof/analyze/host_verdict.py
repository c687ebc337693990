"""The verdict on a program's host side and its fixes (pure functions over nsprof.analyze.host_side's
figures). One rule, stated with the verdict: a GPU busy at least BUSY_PCT of the window is GPU-bound,
or transfer-bound when copies are most of its busy time; below that, the cause of most idle time
names the verdict. Each cause is one rule of IDLE_RULES: its condition, meaning, verdict, evidence and
fix in each framework's words; a fix saves no more than the idle time its cause made (the GPU
cannot gain more than it waited), and pageable copies are held against the pinned rate. A new cause
is one rule here, its branch in the gap classifier (nsprof.analyze.host_idle) and a test.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from nsprof.analyze.framework import CUPY, JAX
from nsprof.analyze.host_activity import INTERPRETER, NUMERICAL
from nsprof.analyze.host_idle import (
    COPY_WAITED,
    HOST_WORK,
    HOST_WORK_NS,
    LAUNCHING,
    LOADED,
    LOADING_SHARE,
    QUEUED,
    UNMATCHED,
    WAITED,
)
from nsprof.analyze.host_types import (
    Activity,
    ActivityShare,
    DeviceFigures,
    Fix,
    HostFigures,
    PageableCopies,
    Verdict,
    VerdictEvidence,
)

BUSY_PCT = 80.0  # at least this busy over the window: GPU-bound
COPY_SHARE = 0.5  # copies at least this share of the busy time: transfer-bound
PINNED_SAMPLE_BYTES = 1 << 20  # pinned copies this large or larger show the bus's rate (smaller ones, its latency)
GPU_BOUND, HOST_BOUND, HOST_WORK_BOUND, SYNC_BOUND, TRANSFER_BOUND, STARTUP_BOUND, UNDECIDED = (
    "GPU-bound", "host-bound (launch overhead)", "host-bound (the host's own work)", "synchronization-bound",
    "transfer-bound", "dominated by start-up and compilation",
    "undecided: the capture links most of the GPU's work to no launch call (its correlation ids are missing)")
RULE = (f"GPU busy >= {BUSY_PCT:.0f}% of the window: GPU-bound (transfer-bound if copies are >= "
        f"{100 * COPY_SHARE:.0f}% of busy time); otherwise the cause of most GPU idle time decides")


@dataclass(frozen=True)
class IdleCause:
    """One cause of the GPU's idle time, as a rule: which gaps are its (`condition`, stated here; the
    gap classifier, nsprof.analyze.host_idle, applies it), what it means, the verdict it names when
    it caused most idle time, the evidence shown beside its fix (from host_side's figures), and the
    fix in PyTorch's words and in other frameworks' (`framework_fixes`). A cause without a fix is
    not the host's to fix; every fix saves at most the idle time its cause made (SAVING_BOUND)."""

    cause: str  # the classifier's name for it (nsprof.analyze.host_idle.CAUSES)
    condition: str
    meaning: str
    verdict: str
    fix: str | None = None
    framework_fixes: Mapping[str, str] = field(default_factory=dict)
    evidence: Callable[[HostFigures], str] | None = None
    sampled: bool = False  # the host was busy: what its samples show it did picks the fix (host_activity)

    def fix_in(self, framework: str | None) -> str:
        """The fix in the words of the program's framework (nsprof.analyze.framework), else PyTorch's."""
        return self.framework_fixes.get(framework or "", self.fix or "")


SAVING_BOUND = "the idle it caused"  # the GPU cannot gain more than it waited
IDLE_RULES = (
    IdleCause(LAUNCHING, f"the next work's launch call was still running when the GPU ran dry, or started after it "
                         f"with at most {HOST_WORK_NS / 1e3:.0f} us of the gap left to the host",
              "the host had not yet launched the next work: it was in CUDA calls or its own code between launches",
              HOST_BOUND,
              "launch fewer, larger pieces of work: CUDA graphs (torch.cuda.CUDAGraph, "
              "torch.compile(mode=\"reduce-overhead\")), fused kernels",
              {JAX: "launch fewer, larger pieces of work: jit the whole step as one function (XLA fuses it and runs it "
                    "as command buffers, CUDA graphs), scan over steps with jax.lax.scan",
               CUPY: "launch fewer, larger pieces of work: fuse elementwise steps (cupy.fuse, cupy.ElementwiseKernel, "
                     "cupy.RawKernel), capture the loop once as a CUDA graph (cupy.cuda.Stream.begin_capture)"},
              lambda host: (f"{host['launches']['count']:,} launches ({_rate(host['launches']['per_s'])}), median kernel "
                            f"{_us(host['launches']['median_kernel_ns'])}, {_us(host['launches']['median_between_ns'])} "
                            "of host time between launches, queue empty at "
                            f"{_pct(host['launches']['empty_queue_pct'])} of them"),
              sampled=True),
    IdleCause(HOST_WORK, f"the next work's launch call started after the GPU ran dry, with more than "
                         f"{HOST_WORK_NS / 1e3:.0f} us of the gap left to the host",
              f"the host ran its own code for over {HOST_WORK_NS / 1e3:.0f} us before launching the next work "
              "(data preparation, Python)",
              HOST_WORK_BOUND,
              "move the host's work off the critical path: a data loader with worker processes "
              "(torch.utils.data.DataLoader(num_workers=N, pin_memory=True)), or prepare the next batch while the GPU "
              "works",
              {JAX: "move the host's work off the critical path: make the next batches in worker threads or processes "
                    "while the step runs (a prefetching loader: grain, tf.data, concurrent.futures), or make them on "
                    "the GPU (jax.random)",
               CUPY: "move the host's work off the critical path: prepare the next batch in worker threads while the "
                     "GPU works, or make it on the GPU (cupy.random)"},
              lambda host: f"host gaps over {HOST_WORK_NS / 1e3:.0f} us between launches",
              sampled=True),
    IdleCause(WAITED, "the launching thread was blocked in a wait when the GPU ran dry and returned before the launch "
                      "call: the wait is charged the time it was blocked while the GPU still worked",
              "the host waited for the GPU to finish (a synchronization), so nothing was queued when it did",
              SYNC_BOUND,
              "move synchronizations out of the loop: keep values on the GPU (no .item(), .cpu(), print of a tensor "
              "per step), overlap the host's work with the GPU's",
              {JAX: "read values less often: keep the loss on the GPU and read it every N steps (float(x), "
                    "np.asarray(x), jax.device_get and printing an array wait for the step)",
               CUPY: "read values less often: every .get(), cupy.asnumpy(x), float(x) or print of an array waits for "
                     "the GPU; keep them on the GPU and read every N steps"},
              lambda host: (f"{host['waits']['count']:,} waits, {_us(host['waits']['host_ns'], 0)} blocked"
                            + (f" ({', '.join(api['api'] for api in host['waits']['apis'][:2])})"
                               if host["waits"]["apis"] else ""))),
    IdleCause(COPY_WAITED, "a synchronization whose wait was a blocking copy",
              "the host waited in a blocking copy (pageable memory, or a copy not named Async)",
              TRANSFER_BOUND,
              "copy from pinned memory with non-blocking copies (tensor.pin_memory(), cudaMallocHost), "
              "overlapped with compute",
              {CUPY: "copy from pinned memory (cupyx.empty_pinned) with asynchronous copies on a stream "
                     "(ndarray.set(array, stream=...)), overlapped with compute"},
              lambda host: (f"{host['copies']['blocking_calls']:,} blocking copies, "
                            f"{_us(host['copies']['blocking_host_ns'], 0)} blocked; "
                            f"{host['copies']['pageable_count']:,} pageable "
                            f"({host['copies']['pageable_bytes'] / 1e6:,.1f} MB)")),
    IdleCause(LOADED, f"module loading or allocation calls filled {100 * LOADING_SHARE:.0f}% or more of the host's "
                      "time before the launch call",
              "the host was loading modules or allocating memory",
              STARTUP_BOUND,
              "load and allocate before the loop: warm up once (CUDA_MODULE_LOADING=EAGER), reuse buffers or a "
              "caching allocator",
              evidence=lambda host: (f"{host['loading']['count']:,} module loading and "
                                     f"{host['allocation']['count']:,} allocation calls, "
                                     f"{_us(host['loading']['host_ns'] + host['allocation']['host_ns'], 0)}")),
    IdleCause(QUEUED, "the next work's launch call had returned before the GPU ran dry",
              "the next work was already launched and waited on something else (another stream, an event, launch "
              "latency)",
              GPU_BOUND),
    IdleCause(UNMATCHED, "the next work has no launch call", "the next work has no launch call in the capture",
              UNDECIDED),
)
RULE_OF = {rule.cause: rule for rule in IDLE_RULES}
IDLE_CAUSES = {rule.cause: rule.meaning for rule in IDLE_RULES}  # what each cause means, as pages say it
# where the host's samples say what it did (nsprof.analyze.host_activity's fixes, PyTorch's words), the framework's
FRAMEWORK_ACTIVITY_FIXES = {
    framework: {INTERPRETER: RULE_OF[LAUNCHING].fix_in(framework), NUMERICAL: RULE_OF[HOST_WORK].fix_in(framework)}
    for framework in (JAX, CUPY)}


def busiest(host: HostFigures) -> DeviceFigures:
    """The device of host_side's figures that the verdict speaks of: the busiest."""
    return max(host["devices"], key=lambda device: device["busy_ns"])


def verdict(host: HostFigures) -> Verdict:
    """The verdict (module docstring) of host_side's figures: `verdict`, `rule`, `evidence`."""
    busiest_device = busiest(host)
    busy_pct = busiest_device["busy_pct"]
    copy_share = busiest_device["copy_busy_ns"] / busiest_device["busy_ns"] if busiest_device["busy_ns"] else 0.0
    causes = busiest_device["idle_causes"]
    top_cause = max(causes, key=causes.__getitem__) if any(causes.values()) else None
    if busy_pct >= BUSY_PCT or top_cause is None:
        said = TRANSFER_BOUND if copy_share >= COPY_SHARE else GPU_BOUND
    else:
        said = RULE_OF[top_cause].verdict
        if said == GPU_BOUND and copy_share >= COPY_SHARE:
            said = TRANSFER_BOUND
    idle = busiest_device["idle_ns"]
    evidence: VerdictEvidence = {"device_id": busiest_device["device_id"], "busy_pct": busy_pct,
                                 "copy_share_pct": 100 * copy_share, "idle_ns": idle, "top_idle_cause": top_cause,
                                 "top_idle_cause_pct": 100 * causes[top_cause] / idle if top_cause and idle else None}
    return {"verdict": said, "rule": RULE, "evidence": evidence}


def host_fixes(host: HostFigures) -> list[Fix]:
    """Each cause of idle time that has a fix (IDLE_RULES), as a fix: what, its saving (the idle time
    it caused on the busiest device), what bounds it, and the evidence."""
    causes = busiest(host)["idle_causes"]
    activity, framework = host.get("activity"), host.get("framework")
    fixes: list[Fix] = [{"kind": "host", "cause": rule.cause, "fix": _fix(rule, activity, framework),
                         "saving_ns": int(causes[rule.cause]), "bound": SAVING_BOUND,
                         "evidence": rule.evidence(host) + _sampled(rule, activity)}
                        for rule in IDLE_RULES if rule.fix and rule.evidence and causes.get(rule.cause, 0) > 0]
    # a few bytes copied from pageable memory cost latency, not bandwidth: a wait, counted as one above
    fixes += [_pageable_fix(direction, framework) for direction in host["copies"]["pageable"]
              if direction["bytes"] >= PINNED_SAMPLE_BYTES]
    return sorted(fixes, key=lambda fix: -fix["saving_ns"])


def _fix(rule: IdleCause, activity: Activity | None, framework: str | None) -> str:
    """The rule's fix; for a sampled cause (the host's own work, launch overhead), the fix of what the
    host's samples in the GPU's idle time show it did most (nsprof.analyze.host_activity); in the
    words of the program's framework (IdleCause.fix_in, FRAMEWORK_ACTIVITY_FIXES)."""
    top = _top_activity(activity)
    if rule.sampled and top is not None and top["fix"]:
        return FRAMEWORK_ACTIVITY_FIXES.get(framework or "", {}).get(top["activity"], top["fix"])
    return rule.fix_in(framework)


def _sampled(rule: IdleCause, activity: Activity | None) -> str:
    top = _top_activity(activity)
    if not rule.sampled or top is None:
        return ""
    return (f"; in the GPU's idle time the host ran {top['activity']} ({top['pct']:.0f}% of "
            f"{activity['samples']:,} samples, in {', '.join(top['top'][:2])})")  # type: ignore[index]


def _top_activity(activity: Activity | None) -> ActivityShare | None:
    """The activity with most samples that has a fix (the profiler's own and `other` have none)."""
    if not activity:
        return None
    return next((row for row in activity["activities"] if row.get("fix")), None)


PAGEABLE = "pageable copies"


def _pageable_fix(direction: PageableCopies, framework: str | None) -> Fix:
    """Pageable copies of one direction as a fix: pinned memory moves them at the pinned rate, so the
    saving is at most their time less their bytes at that rate (their whole time where no rate is known)."""
    rate = direction["pinned_bytes_per_s"]
    floor = 1e9 * direction["bytes"] / rate if rate else 0.0
    saving = max(0, int(direction["gpu_ns"] - floor))
    bound = f"their time at {rate / 1e9:,.1f} GB/s" if rate else "their whole time"
    pinned = (f"pinned rate: {direction['rate_source']}" if rate else
              "no pinned rate known (nsprof ceilings measures the bus)")
    achieved = 1e9 * direction["bytes"] / direction["gpu_ns"] if direction["gpu_ns"] else 0.0
    return {"kind": "copy", "cause": f"{PAGEABLE} {direction['direction']}",
            "fix": RULE_OF[COPY_WAITED].fix_in(framework),
            "saving_ns": saving, "bound": bound,
            "evidence": f"{direction['count']:,} {'copy' if direction['count'] == 1 else 'copies'}, "
                        f"{direction['bytes'] / 1e6:,.1f} MB at {achieved / 1e9:,.1f} GB/s; "
                        f"{pinned}"}


def _us(ns, digits: int = 1) -> str:
    if ns is None:
        return "-"
    return f"{ns / 1e3:,.{digits}f} us" if ns < 1e7 else f"{ns / 1e6:,.1f} ms"


def _rate(per_s) -> str:
    return "-" if per_s is None else f"{per_s:,.0f}/s"


def _pct(value) -> str:
    return "-" if value is None else f"{value:.0f}%"
