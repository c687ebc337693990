"""What nsprof reads from a capture, named after the data rather than the tool that wrote it. A
format is a reader (nsprof.parse.readers) that makes one of these:

- GpuTimeline: what ran on the GPU and when (kernels, graph launches, copies, memsets), the CUDA
  API calls that launched it or waited for it (synchronizations), NVTX ranges, thread names and
  the GPUs. nsys's exports and reports are read into it
  (nsprof.parse.nsys_sqlite.COLUMNS describes the columns); another tracer's trace would be too.
- LaunchCounters: hardware counters per profiled kernel launch, their units, and the profiler's
  rule results (ncu's reports and CSV pages; nsprof.parse.ncu_csv describes the columns).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

RULE_FIELDS = ("id", "section", "rule", "type", "message", "speedup_type", "speedup_pct")


@dataclass(frozen=True)
class GpuTimeline:
    """One capture's GPU timeline as DataFrames (nsprof.parse.nsys_sqlite.COLUMNS: their columns)."""

    path: Path
    nsys_version: str | None  # the version of the tool that wrote it, where it says
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
