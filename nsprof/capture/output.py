"""Reading what nsys and ncu print while they run: ncu's `==PROF==` progress lines (kernel,
launch, replay passes; nsprof.ncu_log reads them) and the failures worth a clear message (no
counter permission, nothing profiled)."""

from __future__ import annotations

from nsprof.ncu_log import LINE_END, NO_KERNELS, parse_profiling_line

PERMISSION_ERROR = "ERR_NVGPUCTRPERM"
# NVIDIA's documented fixes: https://developer.nvidia.com/ERR_NVGPUCTRPERM
PERMISSION_FIX = (
    "Run as root (sudo) or with CAP_SYS_ADMIN (CAP_PERFMON from driver R565), or let every user read them: "
    "put 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in a file under /etc/modprobe.d and reboot "
    "(see https://developer.nvidia.com/ERR_NVGPUCTRPERM)"
)


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
        lines = LINE_END.split(self._partial + text)  # nsys redraws its progress bars with \r
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
