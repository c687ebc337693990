"""The verdict on a program's host side and its fixes (pure functions over nsprof.analyze.host_side's
figures). One rule, stated with the verdict: a GPU busy at least BUSY_PCT of the window is GPU-bound,
or transfer-bound when copies are most of its busy time; below that, the cause of most idle time
(IDLE_CAUSES) names the verdict (VERDICT_OF_CAUSE). Each host-side cause is a fix whose saving is no
larger than the idle time it caused (the GPU cannot gain more than it waited), and pageable copies
are held against the pinned rate.
"""

from __future__ import annotations

from nsprof.analyze.framework import CUPY, JAX
from nsprof.analyze.host_activity import INTERPRETER, NUMERICAL
from nsprof.analyze.host_idle import (
    COPY_WAITED,
    HOST_WORK,
    HOST_WORK_NS,
    LAUNCHING,
    LOADED,
    QUEUED,
    UNMATCHED,
    WAITED,
)

BUSY_PCT = 80.0  # at least this busy over the window: GPU-bound
COPY_SHARE = 0.5  # copies at least this share of the busy time: transfer-bound
PINNED_SAMPLE_BYTES = 1 << 20  # pinned copies this large or larger show the bus's rate (smaller ones, its latency)
IDLE_CAUSES = {
    LAUNCHING: "the host had not yet launched the next work: it was in CUDA calls or its own code between launches",
    HOST_WORK: f"the host ran its own code for over {HOST_WORK_NS / 1e3:.0f} us before launching the next work "
               "(data preparation, Python)",
    WAITED: "the host waited for the GPU to finish (a synchronization), so nothing was queued when it did",
    COPY_WAITED: "the host waited in a blocking copy (pageable memory, or a copy not named Async)",
    LOADED: "the host was loading modules or allocating memory",
    QUEUED: "the next work was already launched and waited on something else (another stream, an event, launch "
            "latency)",
    UNMATCHED: "the next work has no launch call in the capture",
}
GPU_BOUND, HOST_BOUND, HOST_WORK_BOUND, SYNC_BOUND, TRANSFER_BOUND, STARTUP_BOUND, UNDECIDED = (
    "GPU-bound", "host-bound (launch overhead)", "host-bound (the host's own work)", "synchronization-bound",
    "transfer-bound", "dominated by start-up and compilation",
    "undecided: the capture links most of the GPU's work to no launch call (its correlation ids are missing)")
VERDICT_OF_CAUSE = {LAUNCHING: HOST_BOUND, HOST_WORK: HOST_WORK_BOUND, WAITED: SYNC_BOUND, COPY_WAITED: TRANSFER_BOUND,
                    LOADED: STARTUP_BOUND, QUEUED: GPU_BOUND, UNMATCHED: UNDECIDED}
RULE = (f"GPU busy >= {BUSY_PCT:.0f}% of the window: GPU-bound (transfer-bound if copies are >= "
        f"{100 * COPY_SHARE:.0f}% of busy time); otherwise the cause of most GPU idle time decides")
FIXES = {
    LAUNCHING: "launch fewer, larger pieces of work: CUDA graphs (torch.cuda.CUDAGraph, "
               "torch.compile(mode=\"reduce-overhead\")), fused kernels",
    HOST_WORK: "move the host's work off the critical path: a data loader with worker processes "
               "(torch.utils.data.DataLoader(num_workers=N, pin_memory=True)), or prepare the next batch while the GPU "
               "works",
    WAITED: "move synchronizations out of the loop: keep values on the GPU (no .item(), .cpu(), print of a tensor "
            "per step), overlap the host's work with the GPU's",
    COPY_WAITED: "copy from pinned memory with non-blocking copies (tensor.pin_memory(), cudaMallocHost), "
                 "overlapped with compute",
    LOADED: "load and allocate before the loop: warm up once (CUDA_MODULE_LOADING=EAGER), reuse buffers or a "
            "caching allocator",
}
# A framework's own words for the fixes (nsprof.analyze.framework says which): torch's names mean nothing to a
# JAX or CuPy program
JAX_FIXES = {
    LAUNCHING: "launch fewer, larger pieces of work: jit the whole step as one function (XLA fuses it and runs it "
               "as command buffers, CUDA graphs), scan over steps with jax.lax.scan",
    HOST_WORK: "move the host's work off the critical path: make the next batches in worker threads or processes "
               "while the step runs (a prefetching loader: grain, tf.data, concurrent.futures), or make them on the "
               "GPU (jax.random)",
    WAITED: "read values less often: keep the loss on the GPU and read it every N steps (float(x), np.asarray(x), "
            "jax.device_get and printing an array wait for the step)",
}
CUPY_FIXES = {
    LAUNCHING: "launch fewer, larger pieces of work: fuse elementwise steps (cupy.fuse, cupy.ElementwiseKernel, "
               "cupy.RawKernel), capture the loop once as a CUDA graph (cupy.cuda.Stream.begin_capture)",
    HOST_WORK: "move the host's work off the critical path: prepare the next batch in worker threads while the GPU "
               "works, or make it on the GPU (cupy.random)",
    WAITED: "read values less often: every .get(), cupy.asnumpy(x), float(x) or print of an array waits for the "
            "GPU; keep them on the GPU and read every N steps",
    COPY_WAITED: "copy from pinned memory (cupyx.empty_pinned) with asynchronous copies on a stream "
                 "(ndarray.set(array, stream=...)), overlapped with compute",
}
FRAMEWORK_FIXES = {JAX: JAX_FIXES, CUPY: CUPY_FIXES}
# where the host's samples say what it did (nsprof.analyze.host_activity's fixes, PyTorch's words), the framework's
FRAMEWORK_ACTIVITY_FIXES = {
    JAX: {INTERPRETER: JAX_FIXES[LAUNCHING], NUMERICAL: JAX_FIXES[HOST_WORK]},
    CUPY: {INTERPRETER: CUPY_FIXES[LAUNCHING], NUMERICAL: CUPY_FIXES[HOST_WORK]},
}


def busiest(host: dict) -> dict:
    """The device of host_side's figures that the verdict speaks of: the busiest."""
    return max(host["devices"], key=lambda device: device["busy_ns"])


def verdict(host: dict) -> dict:
    """The verdict (module docstring) of host_side's figures: `verdict`, `rule`, `evidence`."""
    busiest_device = busiest(host)
    busy_pct = busiest_device["busy_pct"]
    copy_share = busiest_device["copy_busy_ns"] / busiest_device["busy_ns"] if busiest_device["busy_ns"] else 0.0
    causes = busiest_device["idle_causes"]
    top_cause = max(causes, key=causes.__getitem__) if any(causes.values()) else None
    if busy_pct >= BUSY_PCT or top_cause is None:
        said = TRANSFER_BOUND if copy_share >= COPY_SHARE else GPU_BOUND
    else:
        said = VERDICT_OF_CAUSE[top_cause]
        if said == GPU_BOUND and copy_share >= COPY_SHARE:
            said = TRANSFER_BOUND
    idle = busiest_device["idle_ns"]
    evidence = {"device_id": busiest_device["device_id"], "busy_pct": busy_pct, "copy_share_pct": 100 * copy_share,
                "idle_ns": idle, "top_idle_cause": top_cause,
                "top_idle_cause_pct": 100 * causes[top_cause] / idle if top_cause and idle else None}
    return {"verdict": said, "rule": RULE, "evidence": evidence}


def host_fixes(host: dict) -> list[dict]:
    """Each host-side cause of idle time as a fix: what, its saving (the idle time it caused on the
    busiest device: the GPU cannot gain more than it waited), what bounds it, and the evidence."""
    causes = busiest(host)["idle_causes"]
    launches, waits, copies = host["launches"], host["waits"], host["copies"]
    evidence = {
        LAUNCHING: f"{launches['count']:,} launches ({_rate(launches['per_s'])}), median kernel "
                   f"{_us(launches['median_kernel_ns'])}, {_us(launches['median_between_ns'])} of host time between "
                   f"launches, queue empty at {_pct(launches['empty_queue_pct'])} of them",
        HOST_WORK: f"host gaps over {HOST_WORK_NS / 1e3:.0f} us between launches",
        WAITED: f"{waits['count']:,} waits, {_us(waits['host_ns'], 0)} blocked"
                + (f" ({', '.join(api['api'] for api in waits['apis'][:2])})" if waits["apis"] else ""),
        COPY_WAITED: f"{copies['blocking_calls']:,} blocking copies, {_us(copies['blocking_host_ns'], 0)} blocked; "
                     f"{copies['pageable_count']:,} pageable ({copies['pageable_bytes'] / 1e6:,.1f} MB)",
        LOADED: f"{host['loading']['count']:,} module loading and {host['allocation']['count']:,} allocation calls, "
                f"{_us(host['loading']['host_ns'] + host['allocation']['host_ns'], 0)}",
    }
    fixes = [{"kind": "host", "cause": cause, "fix": _fix(cause, host.get("activity"), host.get("framework")),
              "saving_ns": int(causes[cause]),
              "bound": "the idle it caused", "evidence": evidence[cause] + _sampled(cause, host.get("activity"))}
             for cause in FIXES if causes.get(cause, 0) > 0]
    # a few bytes copied from pageable memory cost latency, not bandwidth: a wait, counted as one above
    fixes += [_pageable_fix(direction, host.get("framework")) for direction in copies["pageable"]
              if direction["bytes"] >= PINNED_SAMPLE_BYTES]
    return sorted(fixes, key=lambda fix: -fix["saving_ns"])


SAMPLED_CAUSES = (HOST_WORK, LAUNCHING)  # the host was busy: its samples say with what, and the fix follows


def _fix(cause: str, activity: dict | None, framework: str | None) -> str:
    """The fix of a cause of idle time; for the host's own work and launch overhead, the fix of what
    the host's samples in the GPU's idle time show it did most (nsprof.analyze.host_activity); in
    the words of the program's framework (FRAMEWORK_FIXES, FRAMEWORK_ACTIVITY_FIXES)."""
    top = _top_activity(activity)
    if cause in SAMPLED_CAUSES and top is not None and top.get("fix"):
        return FRAMEWORK_ACTIVITY_FIXES.get(framework or "", {}).get(top["activity"], top["fix"])
    return FRAMEWORK_FIXES.get(framework or "", {}).get(cause, FIXES[cause])


def _sampled(cause: str, activity: dict | None) -> str:
    top = _top_activity(activity)
    if cause not in SAMPLED_CAUSES or top is None:
        return ""
    return (f"; in the GPU's idle time the host ran {top['activity']} ({top['pct']:.0f}% of "
            f"{activity['samples']:,} samples, in {', '.join(top['top'][:2])})")  # type: ignore[index]


def _top_activity(activity: dict | None) -> dict | None:
    """The activity with most samples that has a fix (the profiler's own and `other` have none)."""
    if not activity:
        return None
    return next((row for row in activity["activities"] if row.get("fix")), None)


PAGEABLE = "pageable copies"


def _pageable_fix(direction: dict, framework: str | None) -> dict:
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
            "fix": FRAMEWORK_FIXES.get(framework or "", {}).get(COPY_WAITED, FIXES[COPY_WAITED]),
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
