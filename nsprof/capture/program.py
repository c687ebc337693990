"""Capturing the user's own program: `nsprof profile -- python train.py --epochs 1`.

The program runs under nsys (timeline: kernels, copies, NVTX ranges, and the kernels inside CUDA
graphs, traced node by node) and under ncu with nsprof's default metric preset plus ncu's Speed Of
Light, launch and occupancy sections (their rule results are ncu's advice), so that `nsprof
analyze` can compute everything it knows.

Which launches ncu profiles (it replays each dozens of times, so it gets few):

- guided (the default with both tools): nsys runs first; its hot kernels, the fewest that make up
  80% of kernel time, at most `top` (nsprof.analyze.hot_kernels.hot_rows), are handed to ncu by
  their mangled names, each launch configuration of them on a steady-state launch: the first
  `skip` launches of every configuration are passed over (ncu --filter-mode per-launch-config).
  The manifest's "guided" entry records what was chosen and why.
- chosen by hand: at most `launch_count` launches, optionally only inside NVTX ranges (`ranges`)
  and of kernels whose name matches `kernel`; any of those options turns the guide off.

The profile directory is the same self-describing one the ladder's captures make; its manifest
records the program's command line and exit status, and the tools' logs hold its output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from nsprof.capture.commands import Command, further_runs
from nsprof.capture.metrics import resolve_metrics
from nsprof.capture.request import CLOCK_CONTROLS, TOOL_CHOICES
from nsprof.errors import UsageError
from nsprof.profile_layout import NCU_CSV, NCU_DETAILS_CSV, NCU_REPORT, NSYS_REPORT, TRITON_CACHE

NCU_SECTIONS = ("SpeedOfLight", "LaunchStats", "Occupancy")
DEFAULT_LAUNCH_COUNT = 50  # ncu replays each launch dozens of times: a training loop has thousands
DEFAULT_TOP = 100  # the guided capture's hot kernels, at most (nsprof.analyze.hot_kernels.DEFAULT_TOP)
STEADY_SKIP = 2  # launches of each configuration passed over before the one ncu profiles (start-up, caches)
NODE_TRACE = ("--cuda-graph-trace=node",)  # kernels inside CUDA graphs seen by name


@dataclass(frozen=True)
class GuidedChoice:
    """What the guided capture hands to ncu, chosen from nsys's trace."""

    kernels: tuple[dict, ...]  # kernel, mangled_name, grid, block, launches, total_ns, pct: the hot rows
    covered_pct: float  # their share of the program's kernel time
    skip: int  # launches of each configuration passed over
    rule: str  # why these, in words

    @property
    def names(self) -> list[str]:
        return list(dict.fromkeys(k["mangled_name"] for k in self.kernels if k["mangled_name"]))

    def ncu_filters(self) -> list[str]:
        """ncu's options that select these kernels' steady-state launches, one per configuration."""
        pattern = "|".join(re.escape(name) for name in self.names)
        return ["--kernel-name-base", "mangled", "--kernel-name", f"regex:^(?:{pattern})$",
                "--filter-mode", "per-launch-config", "--launch-skip", str(self.skip), "--launch-count", "1"]

    def to_json(self) -> dict:
        return {"rule": self.rule, "covered_pct": self.covered_pct, "skip_per_configuration": self.skip,
                "kernels": list(self.kernels)}


@dataclass(frozen=True)
class ProgramRequest:
    argv: tuple[str, ...]
    tools: tuple[str, ...]  # in the order they run: nsys first
    metrics: tuple[str, ...]  # ncu only
    clock_control: str
    ranges: tuple[str, ...]  # ncu profiles only launches inside these NVTX ranges (none: anywhere)
    kernel: str | None  # ncu profiles only kernels whose name matches this regular expression
    launch_count: int
    label: str | None = None  # names the directory instead of the program (nsprof pipeline's capture)
    nsys_options: tuple[str, ...] = ()  # added to nsys profile's options
    guided: bool = False  # ncu profiles the hot kernels nsys found (module docstring)
    top: int = DEFAULT_TOP
    runs: int = 1  # nsys runs, each in a fresh process (nsprof.capture.commands.further_runs)
    env: tuple[tuple[str, str], ...] = ()  # set for the program besides (nsprof pipeline's: its timing unheld)

    @property
    def name(self) -> str:
        """The program's name for the directory: the label, the script of `python x.py`, else the executable's."""
        if self.label:
            return self.label
        named = next((Path(word).stem for word in self.argv[1:] if word.endswith(".py")), Path(self.argv[0]).name)
        return re.sub(r"[^A-Za-z0-9._-]+", "-", named).strip("-.") or "program"


def build_program_request(argv: list[str], tool: str = "both", metrics: list[str] | None = None,
                          clock_control: str = "none", ranges: list[str] | None = None, kernel: str | None = None,
                          launch_count: int | None = None, top: int | None = None) -> ProgramRequest:
    """Validate what the user typed; every mistake is a UsageError (exit code 2)."""
    if not argv:
        raise UsageError("no program given after --", "write the command to profile after --: nsprof profile -- python train.py")
    tools = TOOL_CHOICES[tool]
    if clock_control not in CLOCK_CONTROLS:
        raise UsageError(f"unknown clock control '{clock_control}'", f"choose one of: {', '.join(CLOCK_CONTROLS)}")
    if "ncu" not in tools and (metrics or ranges or kernel or launch_count is not None or clock_control != "none"):
        raise UsageError("--metrics, --range, --kernel, --launch-count and --clock-control apply to ncu only",
                         "drop them or pass --tool ncu or --tool both")
    if kernel is not None:
        try:
            re.compile(kernel)
        except re.error as err:
            raise UsageError(f"--kernel {kernel!r} is not a regular expression ({err})",
                             "escape its special characters") from None
    if launch_count is not None and launch_count < 1:
        raise UsageError(f"--launch-count {launch_count}: ncu must profile at least one launch", "pass 1 or more")
    by_hand = bool(ranges or kernel or launch_count is not None)
    guided = tools == ("nsys", "ncu") and not by_hand
    if top is not None and not guided:
        raise UsageError("--top picks the hot kernels nsys finds for ncu: it needs both tools and no "
                         "--range, --kernel or --launch-count", "drop --top, or those options")
    if top is not None and top < 1:
        raise UsageError(f"--top {top}: ncu must profile at least one kernel", "pass 1 or more")
    return ProgramRequest(
        argv=tuple(argv), tools=tools, metrics=tuple(resolve_metrics(metrics)) if "ncu" in tools else (),
        clock_control=clock_control, ranges=tuple(ranges or ()), kernel=kernel,
        launch_count=DEFAULT_LAUNCH_COUNT if launch_count is None else launch_count,
        nsys_options=NODE_TRACE, guided=guided, top=DEFAULT_TOP if top is None else top,
    )


def nvtx_filter(name: str) -> str:
    """ncu's --nvtx-include for a range the user named: a push/pop range (a trailing '/'), as
    torch.cuda.nvtx.range_push and nvtx.annotate make, unless the name is already in ncu's syntax
    (it holds '@' for a domain or ends in '/')."""
    return name if "@" in name or name.endswith("/") else f"{name}/"


def program_commands(request: ProgramRequest, tool_paths: dict[str, str], directory: Path,
                     choice: GuidedChoice | None = None) -> list[Command]:
    """Every command of the capture, in the order it runs (nsys, then ncu and its CSV exports).
    A guided capture's ncu commands wait for nsys's `choice`: without one, only nsys's are given."""
    if request.guided:
        nsys_only = program_commands(replace(request, guided=False, tools=("nsys",)), tool_paths, directory)
        if choice is None:
            return nsys_only
        return nsys_only + _ncu_commands(request, tool_paths["ncu"], directory, choice.ncu_filters())
    commands = []
    if "nsys" in request.tools:
        report = directory / NSYS_REPORT
        argv = [tool_paths["nsys"], "profile", "-t", "cuda,nvtx", *request.nsys_options, "--export=sqlite", "-o", str(report),
                "--force-overwrite=false", *request.argv]
        commands.append(Command("nsys", "profile", tuple(argv), directory / "nsys.log",
                                (report.with_suffix(".nsys-rep"), report.with_suffix(".sqlite")),
                                env=triton_cache(directory) + request.env))
        commands += further_runs(commands, request.runs, directory)
    if "ncu" in request.tools:
        filters = [arg for name in request.ranges for arg in ("--nvtx-include", nvtx_filter(name))]
        if request.kernel:
            filters += ["--kernel-name", f"regex:{request.kernel}"]
        commands += _ncu_commands(request, tool_paths["ncu"], directory,
                                  [*filters, "--launch-count", str(request.launch_count)])
    return commands


def triton_cache(directory: Path) -> tuple[tuple[str, str], ...]:
    """Where the program's Triton compiles to during the nsys run: the profile's own TRITON_CACHE_DIR
    (TRITON_CACHE), so that the metadata Triton keeps of every kernel it compiled (warps, stages,
    shared memory, its source) travels with the capture (nsprof.parse.triton_cache); a fresh cache
    also means every kernel the program uses is compiled, and seen, in this run."""
    return (("TRITON_CACHE_DIR", str(directory / TRITON_CACHE)),)


def _ncu_commands(request: ProgramRequest, ncu: str, directory: Path, filters: list[str]) -> list[Command]:
    """ncu on the launches `filters` select, with nsprof's metrics and ncu's sections, then its CSV pages."""
    report = directory / NCU_REPORT
    rep, log = report.with_suffix(".ncu-rep"), directory / "ncu.log"
    sections = [arg for section in NCU_SECTIONS for arg in ("--section", section)]
    argv = [ncu, "--clock-control", request.clock_control, "--nvtx", *filters, *sections,
            "--metrics", ",".join(request.metrics), "-o", str(report), *request.argv]
    commands = [Command("ncu", "profile", tuple(argv), log, (rep,), env=request.env)]
    for page, csv_file, units in (("raw", NCU_CSV, ["--print-units", "base"]), ("details", NCU_DETAILS_CSV, [])):
        export = [ncu, "--import", str(rep), "--csv", "--page", page, *units]
        commands.append(Command("ncu", "export", tuple(export), log, (directory / csv_file,), stdout=directory / csv_file))
    return commands
