"""The GPU operations a program's loop is looked for in (nsprof.analyze.iterations): one process's
operations in launch order, each as a symbol with its launch sizes and one without, and what names
a symbol. A capture of more than MAX_FIND_OPERATIONS operations gives its last ones."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nsprof.analyze.launch_configs import LAUNCH_SIZES, combined_codes
from nsprof.analyze.program_harness import XLA_AUTOTUNER
from nsprof.parse.model import GpuTimeline, id_values, linux_pid

MAX_FIND_OPERATIONS = 1_000_000  # the loop is found in the last this many operations, then followed back


@dataclass(frozen=True)
class Operations:
    """One process's last GPU operations (those that started at `since_ns` or later: at most about
    MAX_FIND_OPERATIONS) in launch order: a symbol with launch sizes (`exact`) and without
    (`named`), GPU start and end, correlation id (-1 where none), and where each came from (`table`,
    an index into `tables`, and `row`, its position there); `describers`: per table, its symbols'
    first code, how many it has, and what names one; `earlier`: how many operations started before."""

    exact: np.ndarray
    named: np.ndarray
    start: np.ndarray
    end: np.ndarray
    correlation: np.ndarray
    table: np.ndarray
    row: np.ndarray
    pid: int
    tables: tuple[tuple[pd.DataFrame, str], ...]
    describers: tuple[tuple[int, int, Callable[[int], str]], ...]
    work_below: int  # the symbols of kernels and graphs are those below it (copies and memsets above)
    earlier: int

    def label(self, symbol: int) -> str:
        for offset, width, describe in self.describers:
            if offset <= symbol < offset + width:
                return describe(symbol - offset)
        return f"operation {symbol}"


def loop_operations(export: GpuTimeline) -> Operations | None:
    """The GPU operations of the capture's busiest process (by operations) that started in its last
    MAX_FIND_OPERATIONS, in launch order (a 10M-kernel capture's loop is found in its tail)."""
    tables = tuple((frame, kind) for frame, kind in ((export.kernels, "kernel"), (export.graphs, "graph"),
                                                     (export.memcpys, "copy"), (export.memsets, "memset")) if len(frame))
    if not tables:
        return None
    since = _tail_start([frame["start_ns"].to_numpy() for frame, _ in tables])
    tails = [np.flatnonzero(frame["start_ns"].to_numpy() >= since) for frame, _ in tables]
    values, counts = np.unique(np.concatenate([pids(frame.iloc[rows]) for (frame, _), rows in zip(tables, tails)]),
                               return_counts=True)
    pid = int(values[np.argmax(counts)])
    parts: dict[str, list[np.ndarray]] = {name: [] for name in ("exact", "named", "start", "end", "correlation",
                                                                  "table", "row")}
    describers = []
    offset = work_below = 0
    for index, ((frame, kind), rows) in enumerate(zip(tables, tails)):
        tail = frame.iloc[rows]
        mine = pids(tail) == pid
        if kind == "kernel":  # XLA's autotuner times candidates in loops of its own: start-up, never the program's
            mine &= ~_autotuner(tail["kernel"])
        part, rows = (tail, rows) if mine.all() else (tail[mine], rows[mine])
        if not len(part):
            continue
        exact, named, describe = _symbols(part, kind)
        width = int(max(exact.max(), named.max())) + 1
        parts["exact"].append(exact.astype(np.int64) + offset)
        parts["named"].append(named.astype(np.int64) + offset)
        describers.append((offset, width, describe))
        offset += width
        work_below = offset if kind in ("kernel", "graph") else work_below
        parts["start"].append(part["start_ns"].to_numpy(np.int64))
        parts["end"].append(part["end_ns"].to_numpy(np.int64))
        parts["correlation"].append(part["correlation_id"].to_numpy(dtype=np.int64, na_value=-1))
        parts["table"].append(np.full(len(part), index, dtype=np.int8))
        parts["row"].append(rows)
    joined = {name: np.concatenate(arrays) for name, arrays in parts.items()}
    correlation = joined["correlation"]
    order = np.argsort(correlation, kind="stable") if (correlation >= 0).all() \
        else np.lexsort((joined["end"], joined["start"]))
    exact, named, start, end, correlation, table, row = (joined[name][order] for name in parts)
    earlier = sum(len(frame) for frame, _ in tables) - sum(len(rows) for rows in tails)
    return Operations(exact, named, start, end, correlation, table, row, pid, tables, tuple(describers), work_below,
                       earlier)


def _tail_start(starts: list[np.ndarray]) -> int:
    """The start of the MAX_FIND_OPERATIONS-th last operation among the tables' (the earliest start
    where there are fewer)."""
    every = np.concatenate(starts)
    if len(every) <= MAX_FIND_OPERATIONS:
        return int(every.min())
    return int(np.partition(every, len(every) - MAX_FIND_OPERATIONS)[len(every) - MAX_FIND_OPERATIONS])


def _autotuner(kernels: pd.Series) -> np.ndarray:
    """Which launches are XLA's autotuner's (judged per distinct name)."""
    names = pd.Categorical(kernels)
    tuner = [code for code, name in enumerate(names.categories) if XLA_AUTOTUNER.search(str(name))]
    return np.isin(names.codes, tuner) if tuner else np.zeros(len(kernels), dtype=bool)


def process_ids(frame: pd.DataFrame) -> np.ndarray:
    """The distinct packed process ids of a table (its min and max where they are equal: no sort)."""
    column = id_values(frame["global_pid"]) if "global_pid" in frame else pids(frame)
    if not len(column) or column.min() == column.max():
        return column[:1]
    return np.unique(column)


def pids(frame: pd.DataFrame) -> np.ndarray:
    """Each row's Linux process id (from `pid`, else from the serialized `global_pid`)."""
    if "pid" in frame:
        return frame["pid"].to_numpy(dtype=np.int64, na_value=-1)
    return linux_pid(frame["global_pid"].to_numpy(dtype=np.int64, na_value=-1))


def _symbols(part: pd.DataFrame, kind: str):
    """Each operation's symbol with and without its sizes, and a describer of a symbol."""
    if kind == "kernel":
        names = pd.Categorical(part["kernel"])
        name_codes = names.codes.astype(np.int64)
        sizes = [part[column].to_numpy() for column in LAUNCH_SIZES if column in part]
        exact = combined_codes(sizes, name_codes.copy()) if sizes else name_codes
        exact_codes, exact_uniques = pd.factorize(exact)
        first_of = np.empty(len(exact_uniques), dtype=np.int64)
        first_of[exact_codes[::-1]] = np.arange(len(exact_codes) - 1, -1, -1)  # the last written is the first
        # the exact codes are numbered apart from the names' codes: offset them past the names
        exact_symbol = exact_codes.astype(np.int64) + len(names.categories)

        def describe(symbol: int) -> str:
            if symbol < len(names.categories):
                return str(names.categories[symbol])
            row = part.iloc[int(first_of[symbol - len(names.categories)])]
            grid = ",".join(str(int(row[c])) for c in LAUNCH_SIZES[:3] if c in part)
            block = ",".join(str(int(row[c])) for c in LAUNCH_SIZES[3:] if c in part)
            return f"{row['kernel']} <<<({grid}), ({block})>>>" if grid else str(row["kernel"])

        return exact_symbol, name_codes, describe
    if kind == "graph":
        ids = part["graph_id"].to_numpy(np.int64) if "graph_id" in part else np.zeros(len(part), dtype=np.int64)
        codes, uniques = pd.factorize(ids)
        # by name every graph is alike: torch.compile's graph trees replay one step's work as a different
        # graph call after call (a static-cache decode alternates two), and nsys's default traces graphs whole
        return codes + 1, np.zeros(len(codes), dtype=np.int64), \
            lambda symbol: f"CUDA graph {uniques[symbol - 1]}" if symbol else "a CUDA graph"
    key = (part["copy_kind"].astype(str) + " " + part["bytes"].astype(str)) if kind == "copy" else part["bytes"].astype(str)
    codes, uniques = pd.factorize(key)
    word = "memcpy" if kind == "copy" else "memset"
    return codes, codes, lambda symbol: f"{word} {uniques[symbol]} B"
