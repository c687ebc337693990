"""The exact command lines a capture runs: nsprof's own `bench` as the workload, under nsys or ncu.

Nothing here runs anything, so `--dry-run` and the tests see exactly what a real run executes.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nsprof.capture.request import ProfileRequest
from nsprof.launch import HOLD_VARIABLE
from nsprof.profile_layout import CPU_CEILINGS, CPU_TOOL, NCU_CSV, NCU_REPORT, NSYS_REPORT, RUNS_DIR, bench_results_name
from nsprof.ranges import NVTX_DOMAIN, range_name
from nsprof.sizes import Size, short_size

if TYPE_CHECKING:
    from nsprof.ladder.registry import Stage

MAX_RUNS = 100


@dataclass(frozen=True)
class Command:
    tool: str  # "nsys", "ncu", or CPU_TOOL (the host alone)
    step: str  # "profile", or "export" for ncu --import
    argv: tuple[str, ...]
    log: Path  # where the child's output (stderr only, when stdout is redirected) is streamed
    outputs: tuple[Path, ...]  # files the step must leave behind
    stdout: Path | None = None  # the step's stdout goes to this file instead of the log
    env: tuple[tuple[str, str], ...] = ()  # variables set for the step beside nsprof's own environment

    @property
    def shell(self) -> str:
        line = shlex.join(self.argv)
        if self.env:
            line = " ".join(f"{name}={shlex.quote(value)}" for name, value in self.env) + " " + line
        return f"{line} > {shlex.quote(str(self.stdout))}" if self.stdout else line

    def to_json(self) -> dict:
        return {"tool": self.tool, "step": self.step, "argv": list(self.argv), "shell": self.shell, "env": dict(self.env),
                "log": self.log.name, "stdout": self.stdout.name if self.stdout else None,
                "outputs": [p.name for p in self.outputs]}


def bench_results_file(directory: Path, tool: str) -> Path:
    return directory / bench_results_name(tool)


def _bench_argv(request: ProfileRequest, stages, tool: str, directory: Path, timing: tuple[str, ...] = ()) -> list[str]:
    return [sys.executable, "-m", "nsprof", "bench", "--op", request.op, "--stage", ",".join(s.stage for s in stages),
            "--size", ",".join(short_size(s) for s in request.sizes), *timing, "--no-baseline",
            "--save-as", str(bench_results_file(directory, tool))]


def workload_argv(request: ProfileRequest, tool: str, directory: Path) -> list[str]:
    """`nsprof bench`: it verifies each stage (range verify/...) and then times it (range op/stage/MxNxK).
    After an nsys pass, the ncu pass reuses the Triton configurations and the library algorithms it
    kept (a tuning under ncu's instrumentation can keep another one, and the tools would measure
    different kernels)."""
    tuned = ["--tuned", str(bench_results_file(directory, "nsys"))] \
        if tool == "ncu" and "nsys" in request.tools and any(s.kind.tuned for s in request.stages) else []
    # no pairing with the library: a capture measures each stage's own launches, inside its own range
    timing = ("--repeat", str(request.repeat[tool]), "--warmup", str(request.warmup), "--no-paired")
    return [*_bench_argv(request, request.stages, tool, directory, timing), *tuned]


def nvtx_include(stage: Stage, size: Size) -> str:
    """ncu's filter for the measured range of one stage and size: nsprof@sgemm\\/v6\\/4096x4096x4096/.

    In --nvtx-include '/' separates nested push/pop ranges and a trailing '/' marks a push/pop range,
    so the '/' inside our range names are escaped. Exact names, not a regex: an unanchored regex
    would also match the verification range verify/sgemm/v6/...
    """
    escaped = range_name(stage.op, stage.stage, size).replace("/", "\\/")
    return f"{NVTX_DOMAIN}@{escaped}/"


# The workload's timed launches go in one run, with no hold kernels of nsprof.launch.measure._timed between them:
# the profilers must see the launches asked for (ncu replays each one; a hold would show in nsys's timeline).
UNHELD_ENV = ((HOLD_VARIABLE, "0"),)


def nsys_commands(request: ProfileRequest, nsys: str, directory: Path) -> list[Command]:
    report = directory / NSYS_REPORT
    argv = [nsys, "profile", "-t", "cuda,nvtx", "--export=sqlite", "-o", str(report), "--force-overwrite=false",
            *workload_argv(request, "nsys", directory)]
    outputs = (report.with_suffix(".nsys-rep"), report.with_suffix(".sqlite"))
    return [Command("nsys", "profile", tuple(argv), directory / "nsys.log", outputs, env=UNHELD_ENV)]


def ncu_commands(request: ProfileRequest, ncu: str, directory: Path) -> list[Command]:
    report = directory / NCU_REPORT
    includes = [arg for stage in request.stages for size in request.sizes
                for arg in ("--nvtx-include", nvtx_include(stage, size))]
    profile = [ncu, "--clock-control", request.clock_control, "--nvtx", *includes,
               "--metrics", ",".join(request.metrics), "-o", str(report), *workload_argv(request, "ncu", directory)]
    rep = report.with_suffix(".ncu-rep")
    # Base units: the default (auto) scaling rounds values to a few digits.
    export = [ncu, "--import", str(rep), "--csv", "--page", "raw", "--print-units", "base"]
    log = directory / "ncu.log"
    return [
        Command("ncu", "profile", tuple(profile), log, (rep,), env=UNHELD_ENV),
        Command("ncu", "export", tuple(export), log, (directory / NCU_CSV,), stdout=directory / NCU_CSV),
    ]


def cpu_commands(request: ProfileRequest, directory: Path) -> list[Command]:
    """For CPU stages chosen with the GPU ones: `nsprof bench` of them on the host (bench-cpu.json:
    wall-clock times; each skips the sizes where it would take too long) and the host's own roofs
    (`nsprof ceilings --cpu`), measured in the same capture so that they are compared side by side.
    No profiler: there is no GPU work in them."""
    if not request.cpu_stages:
        return []
    ceilings = [sys.executable, "-m", "nsprof", "ceilings", "--cpu", "--json", "--no-save"]
    return [Command(CPU_TOOL, "profile", tuple(_bench_argv(request, request.cpu_stages, CPU_TOOL, directory)),
                    directory / "cpu.log", (bench_results_file(directory, CPU_TOOL),)),
            Command(CPU_TOOL, "ceilings", tuple(ceilings), directory / "cpu-ceilings.log", (directory / CPU_CEILINGS,),
                    stdout=directory / CPU_CEILINGS)]


def build_commands(request: ProfileRequest, tool_paths: dict[str, str], directory: Path) -> list[Command]:
    """Every command of a capture, in the order it runs (nsys and its further runs, then ncu, then
    the CPU stages and the host's roofs)."""
    commands = nsys_commands(request, tool_paths["nsys"], directory) if "nsys" in request.tools else []
    commands += further_runs(commands, request.runs, directory)
    commands += ncu_commands(request, tool_paths["ncu"], directory) if "ncu" in request.tools else []
    return commands + cpu_commands(request, directory)


def further_runs(nsys: list[Command], runs: int, directory: Path) -> list[Command]:
    """Runs 2..`runs` of the nsys step (the first of `nsys`), each the same command line in a fresh
    process, writing runs/nsys-K.* and, for stages, runs/bench-nsys-K.json: the variation between
    runs that `nsprof diff` measures. Their step is "run": only the first run's verification is
    recorded, and only the first hands a guided capture its hot kernels."""
    if not nsys or runs < 2:
        return []
    first = nsys[0]
    commands = []
    for run in range(2, runs + 1):
        report = directory / RUNS_DIR / f"{NSYS_REPORT}-{run}"
        renamed = {str(directory / NSYS_REPORT): str(report),
                   str(bench_results_file(directory, "nsys")): str(directory / RUNS_DIR / bench_results_name("nsys", run))}
        commands.append(Command("nsys", "run", tuple(renamed.get(arg, arg) for arg in first.argv),
                                report.with_suffix(".log"), (report.with_suffix(".nsys-rep"), report.with_suffix(".sqlite")),
                                env=first.env))
    return commands
