"""What nsprof reads from a capture, named after the data rather than the tool that wrote it. A
format is a reader (nsprof.parse.readers) that makes one of these:

- GpuTimeline: what ran on the GPU and when (kernels, graph launches, copies, memsets), the CUDA
  API calls that launched it or waited for it (synchronizations), NVTX ranges, thread names and
  the GPUs, and what the host did (CPU samples with their call chains, OS runtime calls), in the
  columns TIMELINE_COLUMNS declares (type, unit, meaning), which every reader's timeline is
  checked against on load (timeline_problems): nsys's exports and reports are read into it, and
  another tracer's trace would be too.
- LaunchCounters: hardware counters per profiled kernel launch, their units, and the profiler's
  rule results (ncu's reports and CSV pages; nsprof.parse.ncu_csv describes the columns).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
from pandas.api import types

RULE_FIELDS = ("id", "section", "rule", "type", "message", "speedup_type", "speedup_pct")


class Column(NamedTuple):
    """One column of the model: its type ("int64", "int32", "Int64": integers, nullable for the last;
    "category" and "text": names), its unit ("ns", "byte", "id", "count", ...; "" for names) and
    what it means."""

    type: str
    unit: str
    meaning: str
    framework: bool = False  # recorded by a framework's profiler (torch.profiler), not by CUDA's tools


# Timestamps are nanoseconds on the capture's own clock. A reader may give a subset of a table's
# columns (the analyses that need fewer ask for fewer), never a column not declared here.
TIMELINE_COLUMNS: dict[str, dict[str, Column]] = {
    "kernels": {
        "start_ns": Column("int64", "ns", "kernel start on the GPU"),
        "end_ns": Column("int64", "ns", "kernel end on the GPU"),
        "duration_ns": Column("int64", "ns", "end_ns - start_ns"),
        "device_id": Column("int32", "id", "CUDA device the kernel ran on"),
        "stream_id": Column("int32", "id", "CUDA stream"),
        "correlation_id": Column("Int64", "id",
                "links the kernel to the API call that launched it (runtime.correlation_id)"),
        "global_pid": Column("Int64", "id", "the process, packed: pid * THREAD_IDS (nsys adds a machine part above it)"),
        "pid": Column("Int64", "id", "Linux process id"),
        "kernel": Column("category", "", "demangled function name"),
        "short_name": Column("category", "", "function name without template arguments and parameters"),
        "mangled_name": Column("category", "",
                "the symbol as compiled (ncu --kernel-name-base mangled matches it); <NA> where the "
                "export lacks it"),
        "grid_x": Column("int32", "count", "grid size in blocks, x"),
        "grid_y": Column("int32", "count", "grid size, y"),
        "grid_z": Column("int32", "count", "grid size, z"),
        "block_x": Column("int32", "count", "block size in threads, x"),
        "block_y": Column("int32", "count", "block size, y"),
        "block_z": Column("int32", "count", "block size, z"),
        "registers_per_thread": Column("int32", "count", "registers per thread"),
        "static_smem_bytes": Column("int32", "byte", "static shared memory per block"),
        "dynamic_smem_bytes": Column("int32", "byte", "dynamic shared memory per block"),
        "operator": Column("category", "",
                "the framework operator that launched it (torch.profiler: the innermost cpu_op, aten::mm)",
                framework=True),
    },
    "memcpys": {
        "start_ns": Column("int64", "ns", "copy start"),
        "end_ns": Column("int64", "ns", "copy end"),
        "duration_ns": Column("int64", "ns", "end_ns - start_ns"),
        "device_id": Column("int32", "id", "CUDA device"),
        "stream_id": Column("int32", "id", "CUDA stream"),
        "correlation_id": Column("Int64", "id", "links the copy to its API call"),
        "global_pid": Column("Int64", "id", "the process, packed: pid * THREAD_IDS (nsys adds a machine part above it)"),
        "pid": Column("Int64", "id", "Linux process id"),
        "bytes": Column("int64", "byte", "bytes copied"),
        "copy_kind": Column("category", "", "direction, e.g. Host-to-Device"),
        "src_kind": Column("category", "", "memory copied from: Pageable, Pinned, Device, ..."),
        "dst_kind": Column("category", "", "memory copied to"),
    },
    "memsets": {
        "start_ns": Column("int64", "ns", "memset start"),
        "end_ns": Column("int64", "ns", "memset end"),
        "duration_ns": Column("int64", "ns", "end_ns - start_ns"),
        "device_id": Column("int32", "id", "CUDA device"),
        "stream_id": Column("int32", "id", "CUDA stream"),
        "correlation_id": Column("Int64", "id", "links the memset to its API call"),
        "global_pid": Column("Int64", "id", "the process, packed: pid * THREAD_IDS (nsys adds a machine part above it)"),
        "pid": Column("Int64", "id", "Linux process id"),
        "bytes": Column("int64", "byte", "bytes set"),
    },
    "runtime": {
        "start_ns": Column("int64", "ns", "API call entry on the CPU"),
        "end_ns": Column("int64", "ns", "API call return"),
        "duration_ns": Column("int64", "ns", "end_ns - start_ns"),
        "correlation_id": Column("Int64", "id", "shared with the GPU work this call started"),
        "global_tid": Column("Int64", "id", "the thread, packed: global_pid + tid (linux_pid, linux_tid unpack it)"),
        "pid": Column("Int64", "id", "Linux process id"),
        "tid": Column("Int64", "id", "Linux thread id"),
        "api": Column("category", "", "CUDA runtime or driver function, e.g. cudaLaunchKernel_v7000"),
    },
    "nvtx": {
        "start_ns": Column("Int64", "ns", "range opened (CPU)"),
        "end_ns": Column("Int64", "ns", "range closed; <NA> if it never was"),
        "duration_ns": Column("Int64", "ns", "end_ns - start_ns"),
        "kind": Column("text", "", "push_pop (one thread's stack) or start_end (may end on another thread)"),
        "domain": Column("text", "", "NVTX domain; None for the default domain"),
        "name": Column("text", "", "range message"),
        "range": Column("text", "",
                "name, prefixed 'domain:' outside the default domain (nsprof:sgemm/v6/512x512x512)"),
        "global_tid": Column("Int64", "id", "the packed id of the thread that opened the range"),
        "pid": Column("Int64", "id", "Linux process id"),
        "tid": Column("Int64", "id", "Linux thread id"),
    },
    "graphs": {
        "start_ns": Column("int64", "ns", "graph execution start on the GPU"),
        "end_ns": Column("int64", "ns", "graph execution end"),
        "duration_ns": Column("int64", "ns", "end_ns - start_ns"),
        "device_id": Column("int32", "id", "CUDA device"),
        "stream_id": Column("int32", "id", "CUDA stream"),
        "correlation_id": Column("Int64", "id", "links the execution to its cudaGraphLaunch call"),
        "global_pid": Column("Int64", "id", "the process, packed: pid * THREAD_IDS (nsys adds a machine part above it)"),
        "pid": Column("Int64", "id", "Linux process id"),
        "graph_id": Column("int64", "id", "the graph launched"),
        "graph_exec_id": Column("int64", "id", "its executable instance"),
        "name": Column("text", "",
                "'CUDA graph <graph_id>': a graph traced at graph level (nsys's default) is one GPU operation "
                "whose kernels are not in `kernels`; --cuda-graph-trace=node traces them"),
    },
    "syncs": {
        "start_ns": Column("int64", "ns", "synchronization start (CPU clock)"),
        "end_ns": Column("int64", "ns", "synchronization end"),
        "duration_ns": Column("int64", "ns", "end_ns - start_ns"),
        "device_id": Column("int32", "id", "CUDA device"),
        "stream_id": Column("int32", "id",
                "CUDA stream (of a stream synchronization or wait; <NA> for a context synchronization)"),
        "correlation_id": Column("Int64", "id", "links the synchronization to its API call (runtime.correlation_id)"),
        "global_pid": Column("Int64", "id", "the process, packed: pid * THREAD_IDS (nsys adds a machine part above it)"),
        "pid": Column("Int64", "id", "Linux process id"),
        "sync_type": Column("category", "",
                "what was waited for: Event sync, Stream wait event, Stream sync, Context sync, ..."),
    },
    "samples": {
        "sample_id": Column("int64", "id", "the sample (frames.sample_id: its call chain)"),
        "start_ns": Column("int64", "ns", "when the thread was sampled (CPU clock)"),
        "global_tid": Column("int64", "id", "the thread sampled, packed as runtime.global_tid"),
    },
    "frames": {
        "sample_id": Column("int64", "id", "the sample the frame belongs to"),
        "depth": Column("int32", "count", "the frame's depth in the call chain: 0 for the leaf"),
        "symbol": Column("category", "", "the function, where resolved"),
        "module": Column("category", "", "the library or executable it lies in"),
    },
    "os_calls": {
        "start_ns": Column("int64", "ns", "OS runtime call entry (poll, futex, read, ioctl, ...)"),
        "end_ns": Column("int64", "ns", "its return"),
        "global_tid": Column("int64", "id", "the calling thread, packed as runtime.global_tid"),
        "name": Column("category", "", "the call"),
    },
    "threads": {
        "global_tid": Column("int64", "id", "the thread, packed: global_pid + tid (linux_pid, linux_tid unpack it)"),
        "pid": Column("int64", "id", "Linux process id"),
        "tid": Column("int64", "id", "Linux thread id"),
        "name": Column("text", "", "the thread's name (ThreadNames), e.g. python3 or pt_autograd_0"),
    },
    "gpus": {
        "device_id": Column("Int64", "id", "CUDA device id"),
        "name": Column("text", "", "marketing name, e.g. NVIDIA H200"),
        "chip": Column("text", "", "chip name, e.g. GH100"),
        "bus_location": Column("text", "", "PCI bus location"),
        "sm_count": Column("Int64", "count", "streaming multiprocessors"),
        "clock_hz": Column("Int64", "Hz", "SM clock"),
        "memory_bytes": Column("Int64", "byte", "device memory"),
        "memory_bandwidth_bytes_per_s": Column("Int64", "byte/s", "DRAM bandwidth (driver-reported)"),
        "l2_cache_bytes": Column("Int64", "byte", "L2 cache size"),
        "compute_capability": Column("text", "", "e.g. 9.0"),
        "uuid": Column("text", "", "the GPU's UUID: tells two cards of one model apart"),
    },
}


# A CUDA call that launches GPU work (a kernel or a graph), by its name without nsys's version suffix (_v7000)
LAUNCH_API = re.compile(r"^(cuda|cu)(LaunchKernel|LaunchCooperativeKernel|GraphLaunch|LaunchKernelEx)")

# A process and a thread as one id: global_pid = pid * THREAD_IDS, global_tid = global_pid + tid (nsys
# serializes them so, with a machine part above; every reader packs its tool's ids alike).
THREAD_IDS = 0x1000000


def linux_pid(serialized):
    """The Linux process id in a packed global_pid or global_tid: an array, a Series or an int alike."""
    return serialized // THREAD_IDS % THREAD_IDS


def linux_tid(serialized):
    """The Linux thread id in a packed global_tid."""
    return serialized % THREAD_IDS


def id_values(column: pd.Series) -> np.ndarray:
    """An id column's values as int64 with -1 for NULL, without a copy where the column holds its
    NULLs as -1 under the mask (as the nsys reader makes them): a 10M-call table's ids are 80 MB a
    copy."""
    values = column.array
    if isinstance(values, pd.arrays.IntegerArray) and values.dtype == "Int64":
        data = values._data  # the reader's own -1s under the mask; check it, it costs no copy
        if not values._mask.any() or (data[values._mask] == -1).all():
            return data
    return column.to_numpy(dtype=np.int64, na_value=-1)


def timeline_problems(timeline: GpuTimeline) -> list[str]:
    """Where a reader's timeline breaks the model: a table column TIMELINE_COLUMNS does not declare,
    or one whose values are not of its declared type (empty tables are not typed)."""
    found = []
    for table, declared in TIMELINE_COLUMNS.items():
        frame = getattr(timeline, table)
        for name in frame.columns:
            if name not in declared:
                found.append(f"{table}.{name} is not a column of the model")
            elif len(frame) and not _of_type(frame[name], declared[name].type):
                found.append(f"{table}.{name} holds {frame[name].dtype}, not {declared[name].type}")
    return found


def _of_type(column: pd.Series, declared: str) -> bool:
    if declared == "Int64" and types.is_object_dtype(column.dtype):  # nullable: Python ints and None/NA
        return all(value is None or value is pd.NA or isinstance(value, int) for value in column)
    if declared in ("int64", "int32", "Int64"):
        return types.is_integer_dtype(column.dtype)
    return isinstance(column.dtype, pd.CategoricalDtype) or types.is_string_dtype(column.dtype) \
        or types.is_object_dtype(column.dtype)


@dataclass(frozen=True)
class GpuTimeline:
    """One capture's GPU timeline as DataFrames, one per table of TIMELINE_COLUMNS."""

    path: Path
    tool_version: str | None  # the version of the tool that wrote it, where it says
    kernels: pd.DataFrame
    memcpys: pd.DataFrame
    memsets: pd.DataFrame
    runtime: pd.DataFrame
    nvtx: pd.DataFrame
    gpus: pd.DataFrame
    graphs: pd.DataFrame  # graph launches traced at graph level; empty with node-level tracing
    # the host side: synchronizations the CUDA API waited in, and thread names (empty where not captured)
    syncs: pd.DataFrame = field(default_factory=pd.DataFrame)
    threads: pd.DataFrame = field(default_factory=pd.DataFrame)
    tool: str = "nsys"  # what wrote it, as tables name their source: nsys, torch.profiler
    # kinds of CUDA call (nsprof.analyze.host_calls.KINDS) the tool does not record: counted, they would read as none
    untraced: tuple[str, ...] = ()
    # what the tool reported failing while it processed the capture (nsys's ProcessEventsError rows), once each time
    processing_errors: tuple[str, ...] = ()
    # what the host did (nsys's CPU samples with their call chains, OS runtime calls): empty where not captured
    samples: pd.DataFrame = field(default_factory=pd.DataFrame)
    frames: pd.DataFrame = field(default_factory=pd.DataFrame)
    os_calls: pd.DataFrame = field(default_factory=pd.DataFrame)


RECAPTURE = ("capture again without OS runtime tracing: under nsys 2025.3.1 a JAX program lost its kernels with nsys's "
             "defaults and with `-t cuda,nvtx,osrt`, and kept them with `-t cuda,nvtx` (what `nsprof profile` runs); "
             "or trace the program with its framework's profiler (torch.profiler, jax.profiler)")


def lost_work(timeline: GpuTimeline) -> str | None:
    """What says a timeline lost its GPU work, or None: no kernel and no graph, though its tool
    reported failing while processing it (a JAX program under nsys 2025.3.1's defaults: 7
    ProcessEventsError rows, 7,703 NVTX ranges and no kernel table); or no GPU work at all, though it
    holds kernel launch calls (a profiler that dropped its GPU records)."""
    if len(timeline.kernels) or len(timeline.graphs):
        return _timeless(timeline)
    runtime, errors = timeline.runtime, timeline.processing_errors
    names = pd.Categorical(runtime["api"]) if "api" in runtime else pd.Categorical([])
    launching = [code for code, name in enumerate(names.categories) if LAUNCH_API.search(str(name))]
    launches = int(np.isin(names.codes, launching).sum())
    if not errors and not (launches and timeline.memcpys.empty and timeline.memsets.empty):
        return None
    said = f"{launches:,} kernel launch calls and no kernel" if launches else "no kernel"
    if errors:
        said += f"; {reported_errors(errors, timeline.tool, 'it')}"
    return f"the capture lost its GPU work: {said}, so nothing in it can be judged"


INSTANT_OPERATIONS = 100  # this many all starting at one nanosecond is no capture (two streams' kernels may)


def _timeless(timeline: GpuTimeline) -> str | None:
    """What says a timeline's GPU work lost its times, or None: its kernels, graphs, copies and
    memsets all last 0 ns (a GPU busy 0.0% would be judged from nothing), or, INSTANT_OPERATIONS or
    more, all start at one instant."""
    tables = [table for table in (timeline.kernels, timeline.graphs, timeline.memcpys, timeline.memsets) if len(table)]
    count = sum(len(table) for table in tables)
    said = None
    if all("duration_ns" in table for table in tables) and not any(table["duration_ns"].to_numpy().any() for table in tables):
        said = "all last 0 ns"
    elif count >= INSTANT_OPERATIONS and all("start_ns" in table for table in tables) and \
            len({value for table in tables for value in (table["start_ns"].min(), table["start_ns"].max())}) == 1:
        said = "all start at one instant"
    return None if said is None else \
        f"the capture lost its GPU work's times: its {count:,} GPU operations {said}, so nothing in it can be judged"


def reported_errors(errors: tuple[str, ...], tool: str, what: str) -> str:
    """'nsys reported 7 errors while processing WHAT (the commonest, and N other kinds)'."""
    counted = pd.Series(errors).value_counts()
    others = len(counted) - 1
    return (f"{tool} reported {len(errors):,} error{'s' if len(errors) > 1 else ''} while processing {what} "
            f"({counted.index[0]}" + (f", and {others} other kind{'s' if others > 1 else ''}" if others else "") + ")")


@dataclass(frozen=True)
class LaunchCounters:
    """One capture's counters per kernel launch: `kernels` (nsprof.parse.ncu_csv: its columns), each
    metric's base unit and the rule results."""

    source: str
    page: str  # "raw", "details" (ncu's CSV pages) or "report" (an .ncu-rep)
    kernels: pd.DataFrame
    units: dict[str, str]  # metric column -> base unit (ns, byte, byte/second, %, ...)
    rules: pd.DataFrame = field(default_factory=lambda: rule_frame([]))  # RULE_FIELDS, one row per rule result


def rule_frame(rows: list[dict]) -> pd.DataFrame:
    """ncu's rule results as a table of RULE_FIELDS (rows: dicts with those keys)."""
    frame = pd.DataFrame(rows, columns=list(RULE_FIELDS))
    frame["speedup_pct"] = pd.to_numeric(frame["speedup_pct"], errors="coerce").astype(float)
    return frame


@dataclass(frozen=True)
class CpuRung:
    """A capture's CPU stages, timed on the host beside it (bench-cpu.json: `nsprof bench` records
    with wall-clock medians, some skipped as too slow at a size), the host they ran on (`env`), and
    the host's roofs measured in the same capture (ceilings-cpu.json, `nsprof ceilings --cpu`), if any."""

    results: list[dict]
    env: dict
    ceilings: dict | None = None
