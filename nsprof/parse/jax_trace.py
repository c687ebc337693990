"""Read jax.profiler's traces into the model's GpuTimeline, as the nsys and Kineto readers do: the
Chrome-format trace (`vm.trace.json.gz`) that `jax.profiler.start_trace(DIR)` writes under
DIR/plugins/profile/<time>/ (XLA's profiler, through CUPTI), or the Perfetto trace beside it
(`perfetto_trace.json.gz`, with create_perfetto_trace=True): the same events in the same JSON,
read alike (in a directory holding both, the first).

What the trace holds, and where it goes:

- Processes named `/device:GPU:N` (metadata) hold the GPU's work, one thread per stream
  (`Stream #14(...)`): an event named `Memset...` with `Memset_details` -> memsets (`num_bytes`);
  `Memcpy...` with `memcpy_details` -> memcpys (`size`, `kind_src`, `kind_dst`; the direction from the
  name: MemcpyH2D, MemcpyD2H, MemcpyD2D, MemcpyOther); any other -> kernels, with `kernel_details`
  (registers, static and dynamic shared memory, grid, block) and XLA's module and op as the
  framework's operator (`jit_train_step:fusion_3`). Kernels that XLA replays inside a command buffer
  (a CUDA graph) are traced one by one, with `cuda_graph_id`.
- The process `/host:CPU`: its events with a `correlation_id` are the host's CUDA calls. The launch
  of a kernel is named after the kernel there; it becomes `cuLaunchKernel` (a memset's call
  `cuMemsetD8Async`, a copy's `cuMemcpyAsync`), the others (cuMemHostAlloc, ...) keep their names.
  `CommonPjRtLoadedExecutable::Execute (MODULE)`, one execution of a compiled XLA program, becomes
  the range XLA itself opens under nsys, `TSL:XlaModule:#hlo_module=MODULE#`: the iterations of a
  program's loop (nsprof.analyze.iterations), one per call of its jitted step. A
  `jax.profiler.StepTraceAnnotation` (an event with `step_num`) is a range of its own name.
  Threads are named as the trace names them (`python3`, `tf_pjrt_compile_thread_pool/...`) and
  numbered 1, 2, ... in the order met (the trace's ids are 32-bit hashes). The Python tracer's
  events (names starting `$`) are left out.
- Ids: the trace numbers its own processes (the host is one process); a GPU event's process is the
  host's. Times: `ts` and `dur` are microseconds with three decimals, exact nanoseconds as Kineto's.

  The host's read of an array's value (`np.asarray(jax.Array)`: float(loss), np.asarray,
  jax.device_get), which waits for the work that makes it, is a call too, a wait
  (nsprof.analyze.host_calls); the trace names no other synchronization.

Left out: the trace names no module loading calls, no mangled names, no graph launches as GPU
operations. XPlane (`vm.xplane.pb`) is not read: it is a protobuf whose schema lives in XLA's
sources, read by XProf and TensorBoard's profile plugin alone, and the JSON beside it holds the same
events.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from nsprof.errors import MissingPathError, ParseError
from nsprof.kernel_names import base_name
from nsprof.parse.chrome_trace import (
    MAX_BYTES,
    MAX_ID,
    chosen_columns,
    empty,
    ordered,
    reason,
    shown,
    timed,
    timed_event,
    trace_events,
    trace_head,
)
from nsprof.parse.model import THREAD_IDS, GpuTimeline, lost_work
from nsprof.paths import missing_reason, special_file_reason
from nsprof.printable import printable

TOOL = "jax.profiler"
PERFETTO_NAME = "perfetto_trace.json.gz"  # start_trace(..., create_perfetto_trace=True): the same events
SUFFIXES = (".trace.json.gz", ".trace.json", PERFETTO_NAME)
UNTRACED = ("module loading",)
WAIT_FOR_VALUE = "np.asarray(jax.Array)"  # the host reads an array's value, and waits for it (host_calls)
RETRACE = ("Trace again with jax.profiler.start_trace(DIR) ... jax.profiler.stop_trace() and pass "
           "DIR/plugins/profile/<time>/vm.trace.json.gz")
DISPATCH = "PjRtCApiLoadedExecutable::Execute"  # JAX hands a compiled module to XLA's GPU plugin to run
EXECUTE = re.compile(r"^CommonPjRtLoadedExecutable::Execute \((.+)\)$")
XLA_MODULE_RANGE = "TSL:XlaModule:#hlo_module={}#"  # as XLA names the range under nsys
_DEVICE = re.compile(r"^/device:GPU:(\d+)$")
_DETAIL = re.compile(r"(\w+):(\S+)")
_DIRECTIONS = {"MemcpyH2D": "Host-to-Device", "MemcpyD2H": "Device-to-Host", "MemcpyD2D": "Device-to-Device",
               "MemcpyP2P": "Peer-to-Peer"}
_KINDS = {"pageable": "Pageable", "pinned": "Pinned", "device": "Device", "managed": "Managed"}
_CALLS = {"kernels": "cuLaunchKernel", "memsets": "cuMemsetD8Async", "memcpys": "cuMemcpyAsync"}


def is_trace(path: Path) -> bool:
    """Whether a .json or .json.gz file is jax.profiler's trace: a Chrome trace whose processes are
    named `/host:CPU` or `/device:GPU:N` (its metadata comes first)."""
    head = trace_head(path)
    return head is not None and b'"schemaVersion"' not in head and (b'"/host:CPU"' in head or b'"/device:GPU:' in head)


def load_jax_trace(path: str | Path, columns: Mapping[str, Iterable[str]] | None = None) -> GpuTimeline:
    """The GpuTimeline of a jax.profiler trace (the module docstring); `columns`: per table, the
    only columns to give (nsprof.parse.readers.Columns)."""
    path = Path(path)
    if not path.exists():
        raise MissingPathError(f"{path}: {missing_reason(path)}", "Pass a jax.profiler trace (vm.trace.json.gz)")
    if special := special_file_reason(path):
        raise ParseError(f"{path}: {special}; a jax.profiler trace is a JSON file", RETRACE)
    import ijson

    events = _Events()
    try:
        for event in trace_events(path):
            events.add(event)
        tables = events.tables()
    except (ijson.JSONError, OSError, EOFError, UnicodeDecodeError, ValueError, TypeError) as err:
        raise ParseError(f"{path}: unreadable jax.profiler trace ({reason(err)})", RETRACE) from None
    if not events.devices and not events.host:
        raise ParseError(f"{path}: a Chrome trace, but not jax.profiler's (no /host:CPU or /device:GPU process)",
                         RETRACE)
    if events.untimed:
        raise ParseError(f"{path}: {events.untimed:,} events without a time, with a negative duration or with a time "
                         "or duration no trace holds; the trace is damaged", RETRACE)
    if events.out_of_range:
        raise ParseError(f"{path}: {len(events.out_of_range):,} GPU events with a size no GPU has (the first: "
                         f"{events.out_of_range[0]}); the trace is damaged", RETRACE)
    if not any(len(tables[table]) for table in ("kernels", "memcpys", "memsets")):
        _refuse_without_gpu_work(path, events.executions, tables["runtime"]["correlation_id"].notna().any())
    chosen = chosen_columns(tables, columns)
    timeline = GpuTimeline(path=path, tool_version=TOOL, gpus=empty("gpus"), graphs=empty("graphs"),
                           syncs=empty("syncs"), tool=TOOL, untraced=UNTRACED, **chosen)
    if lost := lost_work(timeline):
        raise ParseError(f"{path}: {lost}", RETRACE)
    return timeline


def _refuse_without_gpu_work(path: Path, executions: int, cuda_calls: bool) -> None:
    """A trace with no GPU work: refused where it holds no CUDA call either, naming why."""
    if executions:  # the host ran the program, and CUPTI recorded nothing of it
        raise ParseError(f"{path}: JAX ran its compiled modules {executions:,} times, but the trace holds no GPU "
                         "work and no CUDA call: CUPTI, which records them, serves one profiler at a time, and "
                         "another (nsys, ncu) held it", "Trace the program with jax.profiler outside nsys and ncu, "
                         "or capture it with nsys alone (nsprof profile --tool nsys -- python3 PROGRAM)")
    if not cuda_calls:
        raise ParseError(f"{path}: the trace holds no GPU work and no CUDA call: it was taken around none of the "
                         "program's work on the GPU", "Trace the steps that run on the GPU: " + RETRACE)


class _Events:
    """The trace's events, gathered column by column as they stream past."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
        self.devices: dict[int, int] = {}  # the trace's pid -> CUDA device
        self.host: int | None = None  # the trace's pid of /host:CPU
        self.thread_names: dict[int, str] = {}  # by the model's thread id (_thread)
        self.threads: dict[object, int] = {}  # the trace's thread id -> the model's
        self.untimed = 0
        self.out_of_range: list[str] = []  # GPU events with a size no GPU has: what it was, for each
        self.executions = 0  # the modules JAX handed to XLA to run (DISPATCH)
        self._pending: list[dict] = []  # events before their process was named (metadata comes first)

    def add(self, event: dict) -> None:
        phase = event.get("ph")
        if phase == "M":
            self._metadata(event)
        elif phase == "X":
            self._complete(event)

    def _metadata(self, event: dict) -> None:
        pid, name, label = event.get("pid"), event.get("name"), (event.get("args") or {}).get("name")
        if name == "process_name" and isinstance(pid, int) and isinstance(label, str):
            if (device := _DEVICE.match(label)) is not None:
                self.devices[pid] = int(device.group(1))
            elif label == "/host:CPU":
                self.host = pid
        elif (name == "thread_name" and isinstance(event.get("tid"), int) and isinstance(label, str)
              and pid not in self.devices):  # a device's threads are its streams
            self.thread_names[self._thread(event["tid"])] = label

    def _complete(self, event: dict) -> None:
        name = shown(event.get("name", ""))
        pid = event.get("pid")
        if name.startswith("$"):  # the Python tracer's own events
            return
        start, duration = event.get("ts"), event.get("dur", 0)
        if not timed_event(start, duration):
            self.untimed += 1
            return
        args = event.get("args") or {}
        if pid in self.devices:
            self._gpu(event, name, args)
        elif pid == self.host:
            self._host(event, name, args)

    def _gpu(self, event: dict, name: str, args: dict) -> None:
        if name.startswith("Memset") and "Memset_details" in args:
            table, details = "memsets", _details(args["Memset_details"])
        elif name.startswith("Memcpy") and "memcpy_details" in args:
            table, details = "memcpys", _details(args["memcpy_details"])
        else:
            table, details = "kernels", _details(args.get("kernel_details", ""))
        if field := _out_of_range(details):
            self.out_of_range.append(field)
            return
        row = self.rows[table]
        row["ts"].append(event["ts"])
        row["dur"].append(event.get("dur", 0))
        row["correlation_id"].append(_int(args.get("correlation_id")))
        row["device_id"].append(self.devices[event["pid"]])
        row["stream_id"].append(event.get("tid", 0))
        row["name"].append(name)
        if table == "kernels":
            grid, block = _triple(details.get("grid")), _triple(details.get("block"))
            for axis in range(3):
                row[f"grid_{'xyz'[axis]}"].append(grid[axis])
                row[f"block_{'xyz'[axis]}"].append(block[axis])
            row["registers_per_thread"].append(_int(details.get("regs")) or 0)
            row["static_smem_bytes"].append(_int(details.get("static_shared")) or 0)
            row["dynamic_smem_bytes"].append(_int(details.get("dynamic_shared")) or 0)
            module, op = args.get("hlo_module"), args.get("hlo_op")
            row["operator"].append(shown(f"{module}:{op}") if module and op else None)
        elif table == "memcpys":
            row["bytes"].append(_int(details.get("size")) or 0)
            row["copy_kind"].append(_DIRECTIONS.get(name, "Other"))
            row["src_kind"].append(_KINDS.get(details.get("kind_src", ""), details.get("kind_src")))
            row["dst_kind"].append(_KINDS.get(details.get("kind_dst", ""), details.get("kind_dst")))
        else:
            row["bytes"].append(_int(details.get("num_bytes")) or 0)

    def _host(self, event: dict, name: str, args: dict) -> None:
        correlation = _int(args.get("correlation_id"))
        self.executions += name == DISPATCH  # traced by the PJRT plugin's interface, with or without CUPTI
        if correlation is not None or name == WAIT_FOR_VALUE:
            table = "runtime"
        elif (execute := EXECUTE.match(name)) is not None:
            table, name = "nvtx", XLA_MODULE_RANGE.format(execute.group(1))
        elif "step_num" in args:
            table = "nvtx"
        else:
            return
        row = self.rows[table]
        row["ts"].append(event["ts"])
        row["dur"].append(event.get("dur", 0))
        row["correlation_id"].append(correlation)
        row["tid"].append(self._thread(event.get("tid", 0)))
        row["name"].append(name)

    def _thread(self, tid) -> int:
        """The trace's thread id (a 32-bit hash) as a small one, 1, 2, ... in the order met: the model
        packs a thread into its process's id (THREAD_IDS), which a hash overflows."""
        return self.threads.setdefault(tid, len(self.threads) + 1)

    def tables(self) -> dict[str, pd.DataFrame]:
        """The model's tables of what streamed past."""
        pid = self.host if self.host is not None else 0
        tables = {}
        calls = {}
        for table in ("kernels", "memcpys", "memsets"):
            frame = self._times(table).assign(
                device_id=np.asarray(self.rows[table].get("device_id", []), dtype=np.int32),
                stream_id=np.asarray(self.rows[table].get("stream_id", []), dtype=np.int64).astype(np.int32),
                pid=pd.array([pid] * len(self.rows[table].get("ts", [])), dtype="Int64"))
            frame["global_pid"] = frame["pid"] * THREAD_IDS
            for column, values in self.rows[table].items():
                if column not in ("ts", "dur", "correlation_id", "device_id", "stream_id", "name"):
                    frame[column] = values
            tables[table] = frame
            calls.update(dict.fromkeys(frame["correlation_id"].dropna().astype(np.int64), _CALLS[table]))
        kernels = tables["kernels"]
        names = pd.Categorical(self.rows["kernels"].get("name", []))
        kernels["kernel"] = names
        short = [base_name(name) for name in names.categories]
        kernels["short_name"] = pd.Categorical([short[code] for code in names.codes])
        kernels["mangled_name"] = pd.Categorical([None] * len(kernels))
        for column in (*(f"{kind}_{axis}" for kind in ("grid", "block") for axis in "xyz"), "registers_per_thread",
                       "static_smem_bytes", "dynamic_smem_bytes"):
            kernels[column] = np.asarray(kernels.get(column, []), dtype=np.int64).astype(np.int32)
        kernels["operator"] = pd.Categorical(kernels.get("operator", []))
        for table, columns in (("memcpys", ("copy_kind", "src_kind", "dst_kind")), ("memsets", ())):
            frame = tables[table]
            frame["bytes"] = np.asarray(frame.get("bytes", []), dtype=np.int64)
            for column in columns:
                frame[column] = pd.Categorical(frame.get(column, []))
        runtime = self._host_frame("runtime", pid)
        runtime["api"] = pd.Categorical([calls.get(c, name) if c is not pd.NA else name for c, name in
                                         zip(runtime["correlation_id"], self.rows["runtime"].get("name", []))])
        nvtx = self._host_frame("nvtx", pid)
        nvtx = nvtx.assign(kind="push_pop", domain=None, name=self.rows["nvtx"].get("name", []))
        nvtx["range"] = nvtx["name"]
        for column in ("start_ns", "end_ns", "duration_ns"):
            nvtx[column] = nvtx[column].astype("Int64")
        threads = pd.DataFrame([(pid * THREAD_IDS + tid, pid, tid, name) for tid, name in self.thread_names.items()],
                               columns=["global_tid", "pid", "tid", "name"]).astype(
            {"global_tid": np.int64, "pid": np.int64, "tid": np.int64})
        return {**{table: ordered(table, frame) for table, frame in tables.items()},
                "runtime": ordered("runtime", runtime), "nvtx": ordered("nvtx", nvtx),
                "threads": ordered("threads", threads)}

    def _times(self, table: str) -> pd.DataFrame:
        rows = self.rows[table]
        return timed(rows.get("ts", []), rows.get("dur", []), pd.array(rows.get("correlation_id", []), dtype="Int64"))

    def _host_frame(self, table: str, pid: int) -> pd.DataFrame:
        frame = self._times(table)
        tid = pd.array(self.rows[table].get("tid", []), dtype="Int64")
        return frame.assign(pid=pd.array([pid] * len(frame), dtype="Int64"), tid=tid, global_tid=pid * THREAD_IDS + tid)


def _out_of_range(details: dict[str, str]) -> str | None:
    """The first size of a GPU event's details (grid, block, registers, shared memory, bytes) that is
    past what CUDA gives, as `name value`; None where all are within it."""
    limits = {"grid": MAX_ID, "block": MAX_ID, "regs": MAX_ID, "static_shared": MAX_ID, "dynamic_shared": MAX_ID,
              "size": MAX_BYTES, "num_bytes": MAX_BYTES}
    for name, limit in limits.items():
        parts = details.get(name, "0").split(",")
        if any(part.isdigit() and int(part) > limit for part in parts):
            return f"{name} {printable(details[name])[:40]}"
    return None


def _details(text) -> dict[str, str]:
    """'regs:24 grid:4096,1,1 block:128,1,1' -> {'regs': '24', 'grid': '4096,1,1', ...}."""
    return dict(_DETAIL.findall(text)) if isinstance(text, str) else {}


def _triple(text: str | None) -> list[int]:
    parts = (text or "").split(",")
    return [int(part) for part in parts] if len(parts) == 3 and all(part.isdigit() for part in parts) else [0, 0, 0]


def _int(value) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, str) and value.isdigit() else None

