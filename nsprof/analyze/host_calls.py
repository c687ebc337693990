"""What each CUDA API call of a capture did for the host, by its name: launched GPU work, waited for
it, copied, loaded modules, allocated memory, or something else (pure functions).

nsys names runtime calls with a version suffix (`cudaLaunchKernel_v7000`) and driver calls without
one (`cuLaunchKernel`); the kinds match the name without the suffix. A call counts as a wait where
its name says it synchronizes, or where CUDA recorded a synchronization for it (nsys's
CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, joined by correlation id), or where it is a copy that blocks the
host: a copy to or from pageable memory, or one not named Async.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from nsprof.parse.model import GpuTimeline

LAUNCH, WAIT, COPY, LOADING, ALLOCATION, OTHER = "launch", "wait", "copy", "module loading", "allocation", "other"
KINDS = (LAUNCH, WAIT, COPY, LOADING, ALLOCATION, OTHER)
API_KINDS = (
    (LAUNCH, re.compile(r"^(cuda|cu)(LaunchKernel|LaunchCooperativeKernel|GraphLaunch|LaunchKernelEx)")),
    (WAIT, re.compile(r"Synchronize")),
    (COPY, re.compile(r"^(cuda|cu)Mem(cpy|set)")),
    # lazy loading (CUDA_MODULE_LOADING=LAZY, CUDA 12's default) loads each kernel's module at its first launch
    (LOADING, re.compile(r"^(cu(Library|Module)(Load|Unload|GetKernel|GetFunction|GetModule)|cu(Kernel|Func)(Set|Get)"
                         r"Attribute|cudaFuncSetAttribute|cuKernelGet(Function|Name)|cuLink|cudaGetFuncBySymbol)")),
    (ALLOCATION, re.compile(r"^(cuda(Malloc|Free|HostAlloc|HostRegister|HostUnregister)|cuMem(Alloc|Free|HostAlloc|"
                            r"HostRegister|Create|Release|Map|Unmap|AddressReserve|AddressFree|SetAccess))")),
)
_SUFFIX = re.compile(r"_v\d+$")


def api_kind(name: str) -> str:
    """The kind (LAUNCH, WAIT, COPY, LOADING, ALLOCATION or OTHER) of one API name."""
    base = _SUFFIX.sub("", name)
    return next((kind for kind, pattern in API_KINDS if pattern.search(base)), OTHER)


def host_calls(export: GpuTimeline) -> pd.DataFrame:
    """The export's CUDA API calls with their kind: `start_ns`, `end_ns`, `duration_ns`,
    `global_tid`, `pid`, `correlation_id` (<NA> where none), `api`, `kind` (api_kind, with copies
    that block the host and calls CUDA recorded a synchronization for counted as WAIT), `blocking`
    (the call waited for the GPU: WAIT, or a blocking copy), `pageable` (a copy with a pageable
    side), sorted by start."""
    runtime = export.runtime
    names = runtime["api"].astype("category")
    # per API name, not per call: a 10M-call capture has a few dozen names
    categories = [str(name) for name in names.cat.categories]
    codes = names.cat.codes.to_numpy()
    kind_codes = np.array([KINDS.index(api_kind(name)) for name in categories] + [KINDS.index(OTHER)], dtype=np.int8)
    kind_code = kind_codes[codes]  # code -1 (no name) takes the last: OTHER
    unsuffixed = np.array(["Async" not in name for name in categories] + [False])[codes]
    tid = runtime["global_tid"].to_numpy(dtype=np.int64, na_value=-1)
    correlation = runtime["correlation_id"].to_numpy(dtype=np.int64, na_value=-1)
    key = _keys(tid // 0x1000000, correlation)
    known = correlation >= 0
    copies = export.memcpys
    copy_keys = _keys(copies["global_pid"].to_numpy(dtype=np.int64, na_value=-1) // 0x1000000,
                      copies["correlation_id"].to_numpy(dtype=np.int64, na_value=-1))
    is_pageable = np.isin(key, copy_keys[pageable_copies(copies).to_numpy()]) & known
    synced = np.zeros(len(runtime), dtype=bool)
    if len(export.syncs) and "correlation_id" in export.syncs:
        sync_keys = _keys(export.syncs["global_pid"].to_numpy(dtype=np.int64, na_value=-1) // 0x1000000,
                          export.syncs["correlation_id"].to_numpy(dtype=np.int64, na_value=-1))
        synced = np.isin(key, sync_keys) & known
    is_copy = kind_code == KINDS.index(COPY)
    kind_code = np.where(synced & ~is_copy, KINDS.index(WAIT), kind_code)
    blocking = (kind_code == KINDS.index(WAIT)) | (is_copy & (is_pageable | unsuffixed | synced))
    calls = pd.DataFrame({
        "start_ns": runtime["start_ns"].to_numpy(dtype=np.int64), "end_ns": runtime["end_ns"].to_numpy(dtype=np.int64),
        "global_tid": tid, "pid": tid // 0x1000000 % 0x1000000,
        "correlation_id": runtime["correlation_id"].astype("Int64").to_numpy(),
        "api": names.array, "kind": pd.Categorical.from_codes(kind_code, categories=list(KINDS)),
        "blocking": blocking, "pageable": is_pageable})
    calls["duration_ns"] = calls["end_ns"] - calls["start_ns"]
    return calls.sort_values("start_ns", kind="stable", ignore_index=True)


def pageable_copies(copies: pd.DataFrame) -> pd.Series:
    """Which copies have a pageable side (none where the export does not say)."""
    if not {"src_kind", "dst_kind"} <= set(copies):
        return pd.Series(False, index=copies.index)
    return copies["src_kind"].astype(object).eq("Pageable") | copies["dst_kind"].astype(object).eq("Pageable")


def _keys(process: np.ndarray, correlation: np.ndarray) -> np.ndarray:
    """(process, correlation id) as one int64: correlation ids are per process, and below 2**32."""
    return process.astype(np.int64) * (1 << 32) + correlation.astype(np.int64)
