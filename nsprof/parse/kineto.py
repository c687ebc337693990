"""Read PyTorch profiler traces (Kineto's Chrome-trace JSON: `prof.export_chrome_trace("t.json")`,
and TensorBoard's `*.pt.trace.json.gz`) into the model's GpuTimeline, as the nsys reader does.

What Kineto writes, and where it goes:

- `kernel`, `gpu_memcpy`, `gpu_memset` events -> kernels, memcpys, memsets (device, stream, grid,
  block, registers, bytes; the copy's direction and memory kinds from its name, `Memcpy HtoD
  (Pageable -> Device)`). A kernel's `operator` is the `cpu_op` whose "External id" it carries:
  the innermost PyTorch operator open when it was launched.
- `cuda_runtime` and `cuda_driver` events -> runtime calls; `cuda_sync` -> syncs (recorded with
  `enable_cuda_sync_events`); `user_annotation` (`record_function`) -> ranges, one thread's stack
  each (push_pop); thread_name metadata -> threads; `deviceProperties` -> gpus.
- Ids: GPU events carry the device and stream where a host event carries the process and thread;
  a GPU event's process is that of the call with its correlation id. Processes and threads are
  packed as nsys packs them (pid << 24 | tid): the model's one key for "this thread of this process".
- Times: `ts` and `dur` are microseconds with three decimals; they become integer nanoseconds
  exactly (the whole microseconds and the fraction converted apart: 5e12 us times 1000 is past
  float64's exact integers).

Left out: Kineto records no module loading calls (UNTRACED), no mangled names, no split of static
and dynamic shared memory, no graph launches as GPU operations (the kernels of a graph are traced
one by one) and no counters.

The JSON is streamed (ijson, its C backend; imported on first use, so that reading nsys needs
none): memory grows with the events kept, not with the file, whose CPU operators are most of it.
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
    opened,
    ordered,
    reason,
    shown,
    timed,
    timed_event,
    trace_events,
    trace_head,
    whole,
)
from nsprof.parse.model import THREAD_IDS, GpuTimeline, lost_work
from nsprof.paths import missing_reason, special_file_reason
from nsprof.printable import printable

TOOL = "torch.profiler"
SUFFIXES = (".json", ".json.gz")
# Kineto records the runtime API and only the driver's launch calls: cuLibraryLoadData and the
# like, which lazy loading makes at a kernel's first launch, are not in the trace
UNTRACED = ("module loading",)
RETRACE = ("Trace again with torch.profiler (activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) and "
           "prof.export_chrome_trace(\"trace.json\")")
GPU_CATEGORIES = {"kernel": "kernels", "gpu_memcpy": "memcpys", "gpu_memset": "memsets", "cuda_sync": "syncs"}
HOST_CATEGORIES = {"cuda_runtime": "runtime", "cuda_driver": "runtime", "user_annotation": "nvtx"}
_COPY = re.compile(r"Memcpy (\w)to(\w) \(([\w ]+) -> ([\w ]+)\)")
_ENDS = {"H": "Host", "D": "Device", "P": "Peer", "A": "Array"}
_JSON_EVENTS = {"start_array": "a JSON list", "number": "a number", "string": "a string", "boolean": "a boolean",
                "null": "null"}  # ijson's events, as a document's top level is named
_THREAD_NAME = re.compile(r"thread \d+ \((.*)\)$")  # Kineto's "thread 508 (python3)": nsys names it python3


def is_trace(path: Path) -> bool:
    """Whether a .json or .json.gz file is a torch.profiler trace: its start names "traceEvents"
    and Kineto's "schemaVersion" (other Chrome traces, `nsprof timeline --trace`'s among them, are
    not taken for captures; named by the user, the reader says what they are)."""
    head = trace_head(path)
    return head is not None and b'"schemaVersion"' in head


def load_kineto(path: str | Path, columns: Mapping[str, Iterable[str]] | None = None) -> GpuTimeline:
    """The GpuTimeline of a torch.profiler trace (the module docstring); `columns`: per table, the
    only columns to give (nsprof.parse.readers.Columns), of those Kineto records."""
    path = Path(path)
    if not path.exists():
        raise MissingPathError(f"{path}: {missing_reason(path)}", "Pass a torch.profiler trace (.json or .json.gz)")
    if special := special_file_reason(path):
        raise ParseError(f"{path}: {special}; a torch.profiler trace is a JSON file", RETRACE)
    import ijson

    try:
        header = _header(path)
        events = _events(path)
        tables = events.tables()
    except (ijson.JSONError, OSError, EOFError, UnicodeDecodeError, ValueError, TypeError) as err:
        raise ParseError(f"{path}: unreadable torch.profiler trace ({reason(err)})", RETRACE) from None
    if not events.seen:
        raise ParseError(f"{path}: its traceEvents holds no event (torch.profiler writes a list of JSON objects); the "
                         "trace is damaged or empty", RETRACE)
    if events.untimed:
        raise ParseError(f"{path}: {events.untimed:,} GPU or CUDA events without a time, with a negative duration or "
                         "with a time or duration no trace holds; the trace is damaged", RETRACE)
    if events.out_of_range:
        raise ParseError(f"{path}: {len(events.out_of_range):,} GPU events with a size or id no GPU has (the first: "
                         f"{events.out_of_range[0]}); the trace is damaged", RETRACE)
    if "schemaVersion" not in header and not events.kinds_seen & {"cpu_op", "kernel", "cuda_runtime"}:
        raise ParseError(f"{path}: a Chrome trace, but not torch.profiler's (no Kineto metadata, no CPU operators, "
                         "kernels or CUDA calls)", "nsprof reads traces that torch.profiler writes; " + RETRACE)
    chosen = chosen_columns(tables, columns)
    cupti = header.get("cupti_version")
    timeline = GpuTimeline(path=path, tool_version=f"torch.profiler (CUPTI {cupti})" if cupti else "torch.profiler",
                           gpus=_gpus(header.get("deviceProperties")), graphs=empty("graphs"), tool=TOOL,
                           untraced=UNTRACED, **chosen)
    if lost := lost_work(timeline):  # a profiler cycle that lost its kernels (CUPTI's buffers, a crash)
        raise ParseError(f"{path}: {lost}", RETRACE)
    return timeline


def _header(path: Path) -> dict:
    """The document's keys before "traceEvents" (Kineto writes its metadata there)."""
    import ijson

    header: dict = {}
    key, builder = None, None
    with opened(path, guarded=True) as stream:
        for prefix, event, value in ijson.parse(stream, use_float=True):
            if prefix == "" and event in ("map_key", "end_map"):
                if key is not None and builder is not None:
                    header[key] = builder.value
                if event == "end_map" or value == "traceEvents":
                    break
                key, builder = value, ijson.ObjectBuilder()
            elif prefix == "" and event != "start_map":
                raise ParseError(f"{path}: holds {_JSON_EVENTS.get(event, event)}, not the JSON object "
                                 "torch.profiler writes", RETRACE)
            elif builder is not None:
                builder.event(event, value)
    return header


class _Events:
    """The trace's events, gathered column by column as they stream past."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
        self.kinds_seen: set[str] = set()
        self.thread_names: dict[tuple[int, int], str] = {}
        self.gpu_processes: set[int] = set()
        self.operators: dict[int, str] = {}  # External id -> cpu_op name
        self.untimed = 0  # events of a table with no number for a start, or a negative duration: damage
        self.out_of_range: list[str] = []  # GPU events with a size or id no GPU has: what it was, for each
        self.seen = 0  # events that are JSON objects

    def add(self, event: dict) -> None:
        phase, category = event.get("ph"), event.get("cat")
        if phase == "M":
            self._metadata(event)
            return
        if phase != "X" or not isinstance(category, str):
            return
        self.kinds_seen.add(category)
        args = event.get("args") or {}
        if category == "cpu_op":
            if isinstance(external := args.get("External id"), int):
                self.operators[external] = shown(event.get("name"))
            return
        table = GPU_CATEGORIES.get(category) or HOST_CATEGORIES.get(category)
        if table is None:
            return
        start, duration = event.get("ts"), event.get("dur", 0)
        if not timed_event(start, duration):
            self.untimed += 1
            return
        if table in GPU_CATEGORIES.values() and (field := _out_of_range(event, args, category)):
            self.out_of_range.append(field)
            return
        row = self.rows[table]
        row["ts"].append(start)
        row["dur"].append(duration)
        row["name"].append(shown(event.get("name", "")))
        row["correlation_id"].append(args.get("correlation"))
        if table in GPU_CATEGORIES.values():
            row["device_id"].append(args.get("device", event.get("pid")))
            row["stream_id"].append(args.get("stream", event.get("tid")))
            if category == "kernel":
                row["external_id"].append(args.get("External id"))
                for axis, (grid, block) in enumerate(zip(_triple(args.get("grid")), _triple(args.get("block")))):
                    row[f"grid_{'xyz'[axis]}"].append(grid)
                    row[f"block_{'xyz'[axis]}"].append(block)
                row["registers_per_thread"].append(args.get("registers per thread", 0))
            elif category == "cuda_sync":
                row["sync_kind"].append(args.get("cuda_sync_kind"))
            else:  # a copy or a memset
                row["bytes"].append(args.get("bytes", 0))
        else:
            row["pid"].append(event.get("pid"))
            row["tid"].append(event.get("tid"))

    def _metadata(self, event: dict) -> None:
        pid, tid, name = event.get("pid"), event.get("tid"), event.get("name")
        label = (event.get("args") or {}).get("name" if name != "process_labels" else "labels")
        if name == "process_labels" and isinstance(label, str) and label.startswith("GPU") and isinstance(pid, int):
            self.gpu_processes.add(pid)
        elif name == "thread_name" and isinstance(pid, int) and isinstance(tid, int) and isinstance(label, str):
            named = _THREAD_NAME.match(label)
            self.thread_names[(pid, tid)] = printable(named.group(1) if named else label)

    def tables(self) -> dict[str, pd.DataFrame]:
        """The model's tables of what streamed past (a table's columns as the model declares them)."""
        runtime = self._host("runtime")
        process_of = dict(zip(runtime["correlation_id"].dropna().astype(np.int64),
                              runtime.loc[runtime["correlation_id"].notna(), "pid"].astype(np.int64)))
        main_pid = _main_process(runtime, self.thread_names, self.gpu_processes)
        kernels = self._gpu("kernels", process_of, main_pid)
        names = pd.Categorical(self.rows["kernels"]["name"])
        kernels["kernel"] = names
        short = [base_name(name) for name in names.categories]  # once per name, not per launch
        kernels["short_name"] = pd.Categorical([short[code] for code in names.codes])
        kernels["mangled_name"] = pd.Categorical([None] * len(kernels))
        for column in (*(f"{kind}_{axis}" for kind in ("grid", "block") for axis in "xyz"), "registers_per_thread"):
            kernels[column] = np.asarray(self.rows["kernels"].get(column, []), dtype=np.int64).astype(np.int32)
        externals = self.rows["kernels"].get("external_id", [])
        kernels["operator"] = pd.Categorical([self.operators.get(e) if isinstance(e, int) else None for e in externals])
        memcpys = self._gpu("memcpys", process_of, main_pid)
        memcpys["bytes"] = np.asarray(self.rows["memcpys"].get("bytes", []), dtype=np.int64)
        copies = [_copy_kinds(name) for name in self.rows["memcpys"].get("name", [])]
        for position, column in enumerate(("copy_kind", "src_kind", "dst_kind")):
            memcpys[column] = pd.Categorical([kinds[position] for kinds in copies])
        memsets = self._gpu("memsets", process_of, main_pid)
        memsets["bytes"] = np.asarray(self.rows["memsets"].get("bytes", []), dtype=np.int64)
        syncs = self._gpu("syncs", process_of, main_pid)
        syncs["sync_type"] = pd.Categorical([str(kind or name).capitalize() for kind, name in
                                             zip(self.rows["syncs"].get("sync_kind", []), self.rows["syncs"].get("name", []))])
        runtime["api"] = pd.Categorical(self.rows["runtime"].get("name", []))
        nvtx = self._host("nvtx")
        nvtx = nvtx.assign(kind="push_pop", domain=None, name=self.rows["nvtx"].get("name", []))
        nvtx["range"] = nvtx["name"]
        for column in ("start_ns", "end_ns", "duration_ns"):
            nvtx[column] = nvtx[column].astype("Int64")
        return {"kernels": ordered("kernels", kernels), "memcpys": ordered("memcpys", memcpys),
                "memsets": ordered("memsets", memsets), "runtime": ordered("runtime", runtime),
                "nvtx": ordered("nvtx", nvtx), "syncs": ordered("syncs", syncs), "threads": self._threads()}

    def _times(self, table: str) -> pd.DataFrame:
        rows = self.rows[table]
        return timed(rows.get("ts", []), rows.get("dur", []), _ids(rows.get("correlation_id", [])))

    def _host(self, table: str) -> pd.DataFrame:
        frame = self._times(table)
        pid, tid = _ids(self.rows[table].get("pid", [])), _ids(self.rows[table].get("tid", []))
        return frame.assign(pid=pid, tid=tid, global_tid=pid * THREAD_IDS + tid)

    def _gpu(self, table: str, process_of: dict[int, int], main_pid: int | None) -> pd.DataFrame:
        frame = self._times(table)
        rows = self.rows[table]
        pid = pd.array([process_of.get(c, main_pid) if c is not pd.NA else main_pid
                        for c in frame["correlation_id"]], dtype="Int64")
        return frame.assign(device_id=np.asarray(rows.get("device_id", []), dtype=np.int64).astype(np.int32),
                            stream_id=np.asarray(rows.get("stream_id", []), dtype=np.int64).astype(np.int32),
                            pid=pid, global_pid=pid * THREAD_IDS)

    def _threads(self) -> pd.DataFrame:
        threads = [(pid * THREAD_IDS + tid, pid, tid, name) for (pid, tid), name in self.thread_names.items()
                   if pid not in self.gpu_processes and pid >= 0]
        return ordered("threads", pd.DataFrame(threads, columns=["global_tid", "pid", "tid", "name"]).astype(
            {"global_tid": np.int64, "pid": np.int64, "tid": np.int64}))


def _events(path: Path) -> _Events:
    events = _Events()
    for event in trace_events(path):
        events.seen += 1
        events.add(event)
    return events


def _out_of_range(event: dict, args: dict, category: str) -> str | None:
    """The first id or size of a GPU event that is not a whole number CUDA could give, as
    `name value`; None where all are. Every GPU event passes here: the common one (small ints) is
    cleared at once, and only the others are looked at field by field."""
    device, stream = args.get("device", event.get("pid")), args.get("stream", event.get("tid"))
    sound = _small(device, -1, MAX_ID) and _small(stream, -1, MAX_ID)
    if category == "kernel":
        sound = sound and _small(args.get("registers per thread", 0), 0, MAX_ID) and \
            all(_small(size, 0, MAX_ID) for key in ("grid", "block") for size in _listed(args.get(key)))
    elif category != "cuda_sync":
        sound = sound and _small(args.get("bytes", 0), 0, MAX_BYTES)
    return None if sound else _first_out_of_range(event, args, category)


def _small(value, low: int, limit: int) -> bool:
    return type(value) is int and low <= value <= limit


def _listed(value) -> list:
    return value if isinstance(value, list) else []


def _first_out_of_range(event: dict, args: dict, category: str) -> str | None:
    """_out_of_range's answer, field by field (a whole float such as 128.0 is sound too)."""
    # Kineto writes -1 for a device or stream it does not know (a synchronization's)
    fields = [("device", args.get("device", event.get("pid")), MAX_ID, -1),
              ("stream", args.get("stream", event.get("tid")), MAX_ID, -1)]
    if category == "kernel":
        fields += [("registers per thread", args.get("registers per thread", 0), MAX_ID, 0)]
        for key in ("grid", "block"):
            sizes = args.get(key)
            fields += [(f"{key}[{axis}]", size, MAX_ID, 0) for axis, size in enumerate(_listed(sizes))]
    elif category != "cuda_sync":
        fields += [("bytes", args.get("bytes", 0), MAX_BYTES, 0)]
    return next((f"{name} {printable(str(value))[:40]}" for name, value, limit, low in fields
                 if not whole(value, limit, low)), None)


def _ids(values: list) -> pd.arrays.IntegerArray:
    return pd.array([value if isinstance(value, int) and not isinstance(value, bool) else None for value in values],
                    dtype="Int64")


def _triple(value) -> list[int]:
    return [int(v) for v in value][:3] if isinstance(value, list) and len(value) == 3 else [0, 0, 0]


def _copy_kinds(name: str) -> tuple[str | None, str | None, str | None]:
    """'Memcpy HtoD (Pageable -> Device)' -> ('Host-to-Device', 'Pageable', 'Device'), as nsys labels them."""
    match = _COPY.match(name)
    if match is None:
        return None, None, None
    source, target, src_kind, dst_kind = match.groups()
    return f"{_ENDS.get(source, source)}-to-{_ENDS.get(target, target)}", src_kind, dst_kind


def _main_process(runtime: pd.DataFrame, thread_names: dict, gpu_processes: set[int]) -> int | None:
    """The process whose calls launched most GPU work: a GPU event without a call takes it."""
    if len(runtime):
        return int(runtime["pid"].mode().iloc[0])
    hosts = sorted({pid for pid, _ in thread_names if pid not in gpu_processes and pid >= 0})
    return hosts[0] if hosts else None


def _gpus(properties) -> pd.DataFrame:
    devices = [device for device in properties if isinstance(device, dict)] if isinstance(properties, list) else []

    def number(device: dict, key: str):
        value = device.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    frame = pd.DataFrame({
        "device_id": pd.array([number(d, "id") for d in devices], dtype="Int64"),
        "name": [printable(str(d.get("name", ""))) for d in devices],
        "sm_count": pd.array([number(d, "numSms") for d in devices], dtype="Int64"),
        "memory_bytes": pd.array([number(d, "totalGlobalMem") for d in devices], dtype="Int64"),
        "compute_capability": [f"{d.get('computeMajor')}.{d.get('computeMinor')}" if "computeMajor" in d else None
                               for d in devices],
    })
    return ordered("gpus", frame)
