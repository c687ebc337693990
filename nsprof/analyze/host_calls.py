"""What each CUDA API call of a capture did for the host, by its name: launched GPU work, waited for
it, copied, loaded modules, allocated memory, or something else (pure functions).

nsys names runtime calls with a version suffix (`cudaLaunchKernel_v7000`) and driver calls without
one (`cuLaunchKernel`); the kinds match the name without the suffix. A call blocks the host where
its name says it synchronizes, or where it is a copy that blocks: to or from pageable memory, or
not named Async. CUDA's synchronization records (nsys's CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) do not
decide it: an H200's captures record `cudaEventQuery`, which polls and returns, as an event
synchronization, and `cudaStreamWaitEvent`, which makes a stream wait and not the host, as one too.

A 10M-launch capture has 10M calls: they stay the runtime table's own arrays (kinds as one byte a
call, computed per API name), with one sorted index to find the call of a GPU operation; only the
calls of the other kinds, which are few, become a table (`HostCalls.others`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from nsprof.parse.model import LAUNCH_API, GpuTimeline, id_values, linux_pid

LAUNCH, WAIT, COPY, LOADING, ALLOCATION, OTHER = "launch", "wait", "copy", "module loading", "allocation", "other"
KINDS = (LAUNCH, WAIT, COPY, LOADING, ALLOCATION, OTHER)
API_KINDS = (
    (LAUNCH, LAUNCH_API),
    # jax.profiler names the host's read of a device array's value (float(loss), np.asarray, device_get),
    # which waits for the work that makes it, after numpy's call rather than CUDA's
    (WAIT, re.compile(r"Synchronize|^np\.asarray\(jax\.Array\)$")),
    (COPY, re.compile(r"^(cuda|cu)Mem(cpy|set)")),
    # lazy loading (CUDA_MODULE_LOADING=LAZY, CUDA 12's default) loads each kernel's module at its first launch
    # (queries such as cuKernelGetName or cuKernelGetAttribute are part of each launch, not loading)
    (LOADING, re.compile(r"^(cu(Library|Module)(Load|Unload|GetKernel|GetFunction|GetModule)|cu(Kernel|Func)Set"
                         r"Attribute|cudaFuncSetAttribute|cuKernelGetFunction|cuLink|cudaGetFuncBySymbol)")),
    (ALLOCATION, re.compile(r"^(cuda(Malloc|Free|HostAlloc|HostRegister|HostUnregister)|cuMem(Alloc|Free|HostAlloc|"
                            r"HostRegister|Create|Release|Map|Unmap|AddressReserve|AddressFree|SetAccess))")),
)
_SUFFIX = re.compile(r"_v\d+$")
PROCESS = 1 << 32  # (process, correlation id) as one int64: correlation ids are per process, and below 2**32


def api_kind(name: str) -> str:
    """The kind (LAUNCH, WAIT, COPY, LOADING, ALLOCATION or OTHER) of one API name."""
    base = _SUFFIX.sub("", name)
    return next((kind for kind, pattern in API_KINDS if pattern.search(base)), OTHER)


def call_kinds(api: pd.Categorical) -> np.ndarray:
    """Each call's kind (an index into KINDS), judged per API name, not per call (a call with no
    name is OTHER)."""
    by_name = [KINDS.index(api_kind(str(name))) for name in api.categories] + [KINDS.index(OTHER)]
    return np.array(by_name, dtype=np.int8)[api.codes]


@dataclass(frozen=True)
class HostCalls:
    """An export's CUDA API calls by kind: per call of the runtime table (in its order) `start`,
    `end`, `thread` (nsys's serialized id), `kind` (an index into KINDS) and `api` (categorical);
    `keys`/`rows`: the calls with a correlation id by (process, correlation id), sorted, for `find`;
    `others`: the calls of kinds WAIT, COPY, LOADING and ALLOCATION as a table by start
    (start_ns, end_ns, duration_ns, global_tid, api, kind, blocking, pageable)."""

    start: np.ndarray
    end: np.ndarray
    thread: np.ndarray
    kind: np.ndarray
    api: pd.Categorical
    keys: np.ndarray
    rows: np.ndarray
    others: pd.DataFrame

    def find(self, process: np.ndarray, correlation: np.ndarray) -> np.ndarray:
        """The row of the call of each (Linux process id, correlation id), or -1 where none."""
        return _find(self.keys, self.rows, process, correlation)

    # a device's and each of its streams' idle causes read these: grouped once (cached_property writes
    # the instance's __dict__, which a frozen dataclass leaves open)
    @cached_property
    def blocking_by_thread(self) -> dict[int, pd.DataFrame]:
        """The blocking calls of `others` per thread (by start)."""
        return _by_thread(self.others[self.others["blocking"].to_numpy()])

    @cached_property
    def loading_by_thread(self) -> dict[int, pd.DataFrame]:
        """The module loading and allocation calls of `others` per thread (by start)."""
        return _by_thread(self.others[self.others["kind"].isin([LOADING, ALLOCATION]).to_numpy()])


def _by_thread(calls: pd.DataFrame) -> dict[int, pd.DataFrame]:
    return {int(tid): group for tid, group in calls.groupby("global_tid", sort=False)}


def _find(keys: np.ndarray, rows: np.ndarray, process: np.ndarray, correlation: np.ndarray) -> np.ndarray:
    """HostCalls.find over sorted `keys` and their `rows`."""
    wanted = process.astype(np.int64) * PROCESS + correlation.astype(np.int64)
    if not len(keys):
        return np.full(len(wanted), -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return np.where(keys[at] == wanted, rows[at], -1)


def host_calls(export: GpuTimeline) -> HostCalls:
    """The export's calls by kind (HostCalls). A copy blocks the host (`blocking`) where it has a
    pageable side or is not named Async; every WAIT call blocks."""
    runtime = export.runtime
    api = pd.Categorical(runtime["api"])
    categories = [str(name) for name in api.categories]
    codes = api.codes
    kind = call_kinds(api)
    thread, correlation = id_values(runtime["global_tid"]), id_values(runtime["correlation_id"])
    start, end = runtime["start_ns"].to_numpy(dtype=np.int64), runtime["end_ns"].to_numpy(dtype=np.int64)
    has_id = np.flatnonzero(correlation >= 0)
    keys = linux_pid(thread[has_id]) * PROCESS + correlation[has_id]
    order = np.argsort(keys, kind="stable")
    rows = has_id[order].astype(np.int32 if len(kind) < 2**31 else np.int64)
    keys = keys[order]
    del has_id, order
    other = np.flatnonzero((kind != KINDS.index(OTHER)) & (kind != KINDS.index(LAUNCH)))
    other = other[np.argsort(start[other], kind="stable")]
    is_copy = kind[other] == KINDS.index(COPY)
    copies = export.memcpys
    pageable_rows = _find(keys, rows, copies["pid"].to_numpy(dtype=np.int64, na_value=-1) if "pid" in copies else
                               linux_pid(copies["global_pid"].to_numpy(dtype=np.int64, na_value=-1)),
                               copies["correlation_id"].to_numpy(dtype=np.int64, na_value=-1))[pageable_copies(copies)]
    pageable = is_copy & np.isin(other, pageable_rows)
    unsuffixed = np.array(["Async" not in name for name in categories] + [False])[codes[other]]
    others = pd.DataFrame({
        "start_ns": start[other], "end_ns": end[other], "duration_ns": end[other] - start[other],
        "global_tid": thread[other], "api": api[other], "kind": pd.Categorical.from_codes(kind[other], categories=list(KINDS)),
        "blocking": (kind[other] == KINDS.index(WAIT)) | (is_copy & (pageable | unsuffixed)), "pageable": pageable})
    return HostCalls(start, end, thread, kind, api, keys, rows, others)


def pageable_copies(copies: pd.DataFrame) -> np.ndarray:
    """Which copies have a pageable side (none where the export does not say)."""
    if not {"src_kind", "dst_kind"} <= set(copies):
        return np.zeros(len(copies), dtype=bool)
    return (copies["src_kind"].astype(object).eq("Pageable") | copies["dst_kind"].astype(object).eq("Pageable")).to_numpy()
