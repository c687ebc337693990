"""ncu's log (what it prints while it runs, kept as ncu.log in a profile directory): its
`==PROF== Profiling` line for each kernel launch it profiled, complete once the replay passes end."""

from __future__ import annotations

import re
from collections.abc import Iterable

# ==PROF== Profiling "sgemm_v6" - 0: 0%....50%....100% - 9 passes
# ==PROF== Profiling "cupy_fill" - 0 (1/1): 0%....50%....100% - 1 pass   (with --launch-count)
# ==PROF== Profiling "triton_poi_fused_gelu_view_2": 0%....50%....100% - 13 passes   (--filter-mode per-launch-config)
# (the dots arrive one by one, so the line stays incomplete while the launch is replayed)
_PROFILING = re.compile(r'^==PROF== Profiling "(?P<kernel>.*)"(?: - (?P<launch>\d+)(?: \(\d+/\d+\))?)?:(?P<rest>.*)$')
LINE_END = re.compile(r"\r\n|\n|\r")  # ncu redraws its progress with \r
_PASSES = re.compile(r" - (?P<passes>\d+) pass(?:es)?\s*$")
NO_KERNELS = "No kernels were profiled"  # ncu's warning when its filters matched no launch


def parse_profiling_line(line: str) -> dict | None:
    """{"kernel", "launch", "passes"} from one ==PROF== Profiling line; passes is None until it completes,
    launch None where ncu numbers no launch (its guided capture's per-launch-config filter)."""
    match = _PROFILING.match(line.strip())
    if not match:
        return None
    passes = _PASSES.search(match["rest"])
    return {"kernel": match["kernel"], "launch": int(match["launch"]) if match["launch"] else None,
            "passes": int(passes["passes"]) if passes else None}


def last_profiled_kernel(log: str) -> str | None:
    """The kernel of ncu's last ==PROF== Profiling line in its log, finished or not (a crash mid-replay
    leaves the line without its passes); None when ncu reported no kernel."""
    kernels = [launch["kernel"] for line in LINE_END.split(log) if (launch := parse_profiling_line(line))]
    return kernels[-1] if kernels else None


def profiled_launches(lines: Iterable[str]) -> int:
    """How many launches the log's lines say ncu finished profiling (their lines end in the passes)."""
    return sum(1 for line in lines if (launch := parse_profiling_line(line)) and launch["passes"])
