"""What `history add` keeps of a bench record or a capture: the median of each run per stage,
kernel and range, and the versions it ran with.

- A bench record (`nsprof bench --save-as`, with --runs or not): each timed stage and size,
  `op/stage/size`, of kind "bench", by its runs' medians (run_medians_ms) or its one median. The entry's
  kind is "bench", or "bench on cold inputs" where the record's launches rotated among copies of their
  buffers (nsprof.launch.rotation; nsprof.ladder_runs.bench_types.timed_inputs): a check compares records
  timed the same way only, since a product that fits in the L2 runs faster on one set.
- A capture (a profile, with its runs when taken with --runs, or a directory of captures of one
  program): each kernel, copy range and range by its median in each run, named by its family
  (nsprof.analyze.families: XLA's numbered names are one); the ladder's stage ranges as kind
  "stage", `op/stage/size` (their GPU time under nsys: another clock than bench's CUDA events,
  so a series never mixes the two); and a program's host side (nsprof.diff.host), of kind
  "host": its time, GPU idle time by cause and host time between launches per iteration of its
  repeating range, where every run has one.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

import pandas as pd

from nsprof.analyze.families import family_column
from nsprof.history.store import Measurement
from nsprof.ladder_runs.bench_types import timed_inputs
from nsprof.printable import printable
from nsprof.ranges import parse_stage_range

KINDS = ("bench", "stage", "kernel", "range", "host")
COLD_BENCH = "bench on cold inputs"  # the entry kind of a bench record on rotated buffers (module docstring)


def summarize(path: Path, side, attribution: str = "thread") -> tuple[dict, list[Measurement]]:
    """The entry fields (no commit or branch yet) and the measurements of the record or capture at
    `path`, read as one side of a diff (`side`: nsprof.diff.Side, with its bench record
    or its runs; nsprof.verbs.diff.diff_side opens it through the front door)."""
    if side.bench is not None:
        return _bench(path, side.bench)
    return _capture(path, side, attribution)


def _bench(path: Path, record: dict) -> tuple[dict, list[Measurement]]:
    env = record.get("env") or {}
    found = []
    for result in record["results"]:
        if result.get("status") != "ok" or result.get("median_ms") is None:
            continue
        medians = result.get("run_medians_ms") or [result["median_ms"]]
        found.append(Measurement("bench", f"{result['op']}/{result['stage']}/{result['size']}",
                                 tuple(median * 1e6 for median in medians)))
    entry = {"created": record.get("created"), "gpu": env.get("device"), "driver": env.get("driver"),
             "cuda": env.get("runtime_cuda"), "tools": json.dumps({"cupy": env.get("cupy")}), "source": str(path),
             "kind": COLD_BENCH if timed_inputs(record) == "cold" else "bench"}
    return entry, found


def _capture(path: Path, side, attribution: str) -> tuple[dict, list[Measurement]]:
    from nsprof.diff import run_frames

    per_run = []
    for number, frames in enumerate(run_frames(side, attribution)):
        kernels = frames["kernels"].assign(kind="kernel")
        ranges = pd.concat([frames["copies"], frames["ranges"]]).assign(kind="range")
        both = pd.concat([kernels, ranges], ignore_index=True)
        both["key"] = family_column(both["key"])
        stages = both["key"].map(parse_stage_range)
        is_stage = stages.notna().to_numpy(dtype=bool)
        both.loc[is_stage, "kind"] = "stage"
        both.loc[is_stage, "key"] = [f"{s['op']}/{s['stage']}/{s['size']}" for s in stages[is_stage]]
        per_run.append(both.groupby(["kind", "key"])["value_ns"].median().rename(number))
    medians = pd.concat(per_run, axis=1)
    found = [Measurement(kind, key, tuple(float(v) for v in row.dropna()))
             for (kind, key), row in medians.iterrows() if row.notna().any()]
    found += _host(side)
    analysis = side.analyzed()
    manifest = analysis.manifest or {}
    software = manifest.get("software") or {}
    tools = {name: (info or {}).get("version") for name, info in (manifest.get("tools") or {}).items()}
    entry = {"created": manifest.get("started"), "gpu": analysis.gpu, "driver": software.get("driver"),
             "cuda": software.get("runtime_cuda"), "tools": json.dumps(tools), "source": str(path), "kind": "capture"}
    return entry, found


def _host(side) -> list[Measurement]:
    """The host side's times per iteration in each run (nsprof.diff.host's figures): none
    where a run has no host side or no repeating range."""
    from nsprof.diff.host import QUANTITIES, host_figures

    runs = (side, *side.runs)
    figures = [found for found in (host_figures(run.analyzed().host) for run in runs) if found is not None]
    if len(figures) < len(runs):
        return []
    return [Measurement("host", f"{label} per iteration" if unit == "ns" else f"{label} (median)",
                        tuple(float(run[key] or 0.0) for run in figures))  # none is None: checked below
            for key, label, unit in QUANTITIES if unit in ("ns", "median") and all(run[key] is not None for run in figures)]


def git_fields(commit: str | None, branch: str | None, where: Path | None = None) -> dict:
    """The commit and branch given, else those of the git checkout at `where` (default: the
    working directory; None outside a checkout)."""
    def ask(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=where or Path.cwd(), capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() or None if done.returncode == 0 else None

    found = {"commit_id": commit or ask("rev-parse", "HEAD"), "branch": branch or ask("rev-parse", "--abbrev-ref", "HEAD")}
    # stored as they print: a control character in a name given or in git's answer never reaches a terminal
    return {key: None if value is None else printable(value) for key, value in found.items()}


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
