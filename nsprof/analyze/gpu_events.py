"""Every GPU operation of an nsys capture in one table, and the NVTX ranges beside it (pure functions).

The timeline, the Chrome trace, GPU utilization and the pipeline's breakdown all read this one
table, so that they agree on what ran where.

`gpu_events` columns: `device_id`, `stream_id`, `kind` (KINDS: kernel, the copy directions, memset,
graph), `name` (the kernel's demangled name, "CUDA graph N", "memcpy Host-to-Device", "memset"), `start_ns`,
`end_ns`, `duration_ns` (on the capture's clock), `bytes` (copies and memsets; 0 otherwise),
`correlation_id`, `pid` (Linux process id), sorted by start.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from nsprof.analyze.categorical import as_categorical
from nsprof.parse.model import GpuTimeline, linux_pid

KERNEL, MEMSET, GRAPH = "kernel", "memset", "graph"
HTOD, DTOH, DTOD = "HtoD", "DtoH", "DtoD"
COPY_KINDS = {"Host-to-Device": HTOD, "Device-to-Host": DTOH, "Device-to-Device": DTOD}  # others: "copy <kind>"
KINDS = (KERNEL, GRAPH, HTOD, DTOH, DTOD, MEMSET)
COLUMNS = ("device_id", "stream_id", "kind", "name", "start_ns", "end_ns", "duration_ns", "bytes", "correlation_id", "pid")


def gpu_events(exports: list[GpuTimeline], columns: tuple[str, ...] = COLUMNS) -> pd.DataFrame:
    """Kernels, graph launches (graph-level tracing), copies and memsets of every export, by start
    (then end); only `columns` of COLUMNS (in their order), for a caller that reads a few of a
    10M-row table's. Each column is put in order as it is made: no unsorted copy of the table."""
    columns = tuple(column for column in COLUMNS if column in columns)
    parts = []
    for export in exports:
        # a copy's kind and name per direction, not per copy: a few directions for a million copies (the
        # names are distinct as the directions are: COPY_KINDS's are, and the rest carry the direction)
        kinds = pd.Categorical(export.memcpys["copy_kind"].astype(object).fillna("nan").astype(str))
        copy_kind = kinds.rename_categories([COPY_KINDS.get(kind, f"copy {kind}") for kind in kinds.categories])
        copy_name = kinds.rename_categories([f"memcpy {kind}" for kind in kinds.categories])
        parts += [part for part in (
            (export.kernels, KERNEL, export.kernels["kernel"], 0),
            (export.graphs, GRAPH, export.graphs["name"], 0),
            (export.memcpys, pd.Series(copy_kind, index=export.memcpys.index),
             pd.Series(copy_name, index=export.memcpys.index), export.memcpys["bytes"]),
            (export.memsets, MEMSET, pd.Series(MEMSET, index=export.memsets.index), export.memsets["bytes"]))
            if len(part[0])]
    if not parts:
        return pd.DataFrame({column: pd.Series(dtype=object if column in ("kind", "name") else "int64") for column in columns})

    def column(name: str):
        """One column over all parts, unsorted."""
        if name in ("kind", "name"):  # names and kinds as categories: a few hundred names for millions of events
            return union_categoricals([
                as_categorical(pd.Categorical.from_codes(np.zeros(len(events), dtype=np.int8), [kind])
                               if isinstance(kind, str) else kind) if name == "kind"
                else as_categorical(label.astype(object) if label.dtype != "category" else label)
                for events, kind, label, _ in parts], ignore_order=True)
        if name == "bytes":
            return np.concatenate([np.broadcast_to(np.asarray(size, dtype=np.int64), len(events))
                                   for events, _, _, size in parts])
        if name in ("correlation_id", "pid"):
            # int64, or objects (<NA>) where nsys left some out; a frame read without `pid` has nsys's serialized id
            return pd.array(np.concatenate([(events[name] if name in events else linux_pid(events["global_pid"]))
                                            .astype("Int64").array for events, _, _, _ in parts]), dtype="Int64").to_numpy()
        return np.concatenate([events[name].to_numpy(np.int64) for events, _, _, _ in parts])

    start, end = column("start_ns"), column("end_ns")
    order = np.lexsort((end, start))  # stable: by start, then end
    events = {}
    for name in columns:
        values = start if name == "start_ns" else end if name == "end_ns" else column(name)
        events[name] = values.take(order)
    del start, end
    return pd.DataFrame(events, copy=False)


def merged_intervals(starts: np.ndarray, ends: np.ndarray, tolerance_ns: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The union of [start, end) intervals as disjoint sorted intervals; intervals closer than
    `tolerance_ns` are joined too (a timeline joins what it could not draw apart)."""
    if len(starts) == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    starts, ends = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
    if not (starts[1:] >= starts[:-1]).all():  # most callers pass events by start already: no sort then
        order = np.argsort(starts, kind="stable")
        starts, ends = starts[order], ends[order]
    reach = np.maximum.accumulate(ends)
    new = np.r_[True, starts[1:] > reach[:-1] + tolerance_ns]
    last_of_group = np.r_[np.flatnonzero(new)[1:] - 1, len(starts) - 1]
    return starts[new], reach[last_of_group]


def covered_ns(starts: np.ndarray, ends: np.ndarray) -> int:
    """How long at least one interval is open."""
    merged_start, merged_end = merged_intervals(starts, ends)
    return int((merged_end - merged_start).sum())


def capture_origin(events: pd.DataFrame, ranges: pd.DataFrame) -> int:
    """Time zero of timelines and traces: the first GPU operation or NVTX range."""
    starts = [int(frame["start_ns"].dropna().min()) for frame in (events, ranges) if frame["start_ns"].notna().any()]
    return min(starts) if starts else 0


def range_window(exports: list[GpuTimeline], events: pd.DataFrame, name: str) -> tuple[int, int] | None:
    """From the first opening of NVTX range `name` (qualified, as `nsprof analyze` shows it, or bare)
    to the end of the last GPU work its process launched while an instance was open, or of the last
    instance, whichever is later. None when no range has that name."""
    window: tuple[int, int] | None = None
    for export in exports:
        ranges = export.nvtx[(export.nvtx["range"] == name) | (export.nvtx["name"] == name)].dropna(subset=["start_ns"])
        if ranges.empty:
            continue
        opened, closed = int(ranges["start_ns"].min()), int(ranges["end_ns"].max()) if ranges["end_ns"].notna().any() else None
        calls = export.runtime.dropna(subset=["correlation_id"])
        inside = np.zeros(len(calls), dtype=bool)
        for row in ranges.itertuples(index=False):
            stop = np.iinfo(np.int64).max if pd.isna(row.end_ns) else int(row.end_ns)
            inside |= ((calls["pid"] == row.pid) & (calls["start_ns"] >= int(row.start_ns))
                       & (calls["start_ns"] < stop)).to_numpy()
        launched = events[events["correlation_id"].isin(set(calls["correlation_id"][inside].astype("int64")))]
        last = max([closed or opened] + ([int(launched["end_ns"].max())] if len(launched) else []))
        window = (opened, last) if window is None else (min(window[0], opened), max(window[1], last))
    return window
