"""What the host did, from an nsys export taken with nsys's defaults: CPU samples with their call
chains (COMPOSITE_EVENTS, SAMPLING_CALLCHAINS: one sample about every millisecond or two per
running thread, each with its frames from the leaf, stackDepth 0, up) and OS runtime calls
(OSRT_API: poll, futex and condition waits, reads, ioctls). Absent where the capture was taken
without them (`-t cuda,nvtx`, `-s none`): empty tables, and the analysis says what option gives
them. Read into the model's `samples`, `frames` and `os_calls` (nsprof.parse.model)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

SAMPLES_SQL = "SELECT id AS sample_id, start AS start_ns, globalTid AS global_tid FROM COMPOSITE_EVENTS"
FRAMES_SQL = "SELECT id AS sample_id, stackDepth AS depth, symbol, module FROM SAMPLING_CALLCHAINS"
OS_CALLS_SQL = "SELECT start AS start_ns, end AS end_ns, globalTid AS global_tid, nameId AS name FROM OSRT_API"

Frame = Callable[[sqlite3.Connection, Path, str], pd.DataFrame]
Names = Callable[[pd.Series, pd.Series, Path, str], pd.Categorical]


def host_tables(conn: sqlite3.Connection, path: Path, tables: set[str], strings: pd.Series, frame: Frame,
                names: Names) -> dict[str, pd.DataFrame]:
    """`samples`, `frames` and `os_calls` of the export (empty where it holds none), with names as
    categoricals (`names`: nsys_sqlite's StringIds reader; `frame`: its query to a DataFrame)."""
    samples = frame(conn, path, SAMPLES_SQL) if {"COMPOSITE_EVENTS", "SAMPLING_CALLCHAINS"} <= tables else None
    frames = frame(conn, path, FRAMES_SQL) if samples is not None else None
    os_calls = frame(conn, path, OS_CALLS_SQL) if "OSRT_API" in tables else None
    out = {"samples": _typed(samples, {"sample_id": np.int64, "start_ns": np.int64, "global_tid": np.int64}),
           "frames": _typed(frames, {"sample_id": np.int64, "depth": np.int32}),
           "os_calls": _typed(os_calls, {"start_ns": np.int64, "end_ns": np.int64, "global_tid": np.int64})}
    for column in ("symbol", "module"):
        out["frames"][column] = names(frames[column], strings, path, f"sampled {column}") if frames is not None \
            else pd.Categorical([])
    out["os_calls"]["name"] = names(os_calls["name"], strings, path, "OS runtime call") if os_calls is not None \
        else pd.Categorical([])
    return out


def _typed(frame: pd.DataFrame | None, types: dict) -> pd.DataFrame:
    if frame is None:
        return pd.DataFrame({column: pd.Series(dtype=kind) for column, kind in types.items()})
    return frame.astype(types)
