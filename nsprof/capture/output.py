"""Reading what nsys and ncu print while they run: ncu's `==PROF==` progress lines (kernel,
launch, replay passes) and the failures worth a clear message (no counter permission, nothing profiled);
and, after a crash, the last kernel ncu's log names."""

from __future__ import annotations

import re

# ==PROF== Profiling "sgemm_v6" - 0: 0%....50%....100% - 9 passes
# ==PROF== Profiling "cupy_fill" - 0 (1/1): 0%....50%....100% - 1 pass   (with --launch-count)
# ==PROF== Profiling "triton_poi_fused_gelu_view_2": 0%....50%....100% - 13 passes   (--filter-mode per-launch-config)
# (the dots arrive one by one, so the line stays incomplete while the launch is replayed)
_PROFILING = re.compile(r'^==PROF== Profiling "(?P<kernel>.*)"(?: - (?P<launch>\d+)(?: \(\d+/\d+\))?)?:(?P<rest>.*)$')
_LINE_END = re.compile(r"\r\n|\n|\r")
_PASSES = re.compile(r" - (?P<passes>\d+) pass(?:es)?\s*$")
PERMISSION_ERROR = "ERR_NVGPUCTRPERM"
NO_KERNELS = "No kernels were profiled"
# NVIDIA's documented fixes: https://developer.nvidia.com/ERR_NVGPUCTRPERM
PERMISSION_FIX = (
    "Run as root (sudo) or with CAP_SYS_ADMIN (CAP_PERFMON from driver R565), or let every user read them: "
    "put 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in a file under /etc/modprobe.d and reboot "
    "(see https://developer.nvidia.com/ERR_NVGPUCTRPERM)"
)


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
    kernels = [launch["kernel"] for line in _LINE_END.split(log) if (launch := parse_profiling_line(line))]
    return kernels[-1] if kernels else None


class ToolOutput:
    """Follows one tool's output as it streams in, chunk by chunk."""

    def __init__(self, tool: str):
        self.tool = tool
        self.replay_passes: list[dict] = []
        self.permission_denied = False
        self.no_kernels_profiled = False
        self.activity = "starting"  # what the progress display shows
        self._partial = ""

    def feed(self, text: str) -> None:
        lines = _LINE_END.split(self._partial + text)  # nsys redraws its progress bars with \r
        self._partial = lines.pop()
        for line in lines:
            self._line(line, complete=True)
        if self._partial:
            self._line(self._partial, complete=False)

    def close(self) -> None:
        """The stream ended: a last line without a newline still counts."""
        if self._partial:
            self._line(self._partial, complete=True)
            self._partial = ""

    def _line(self, line: str, complete: bool) -> None:
        if PERMISSION_ERROR in line:
            self.permission_denied = True
        if NO_KERNELS in line:
            self.no_kernels_profiled = True
        launch = parse_profiling_line(line)
        if launch:
            self.activity = launch["kernel"] + (f" (launch {launch['launch']})" if launch["launch"] is not None else "")
            if complete and launch["passes"] is not None:
                self.replay_passes.append(launch)
                self.activity += f", {launch['passes']} passes"
        elif complete and line.strip() and (self.tool != "ncu" or line.startswith("==")):
            # under ncu the workload's own output would hide which kernel is being replayed
            self.activity = line.strip()[:80]
