from __future__ import annotations

import datetime as dt
from enum import Enum
from pathlib import Path

import typer

from nsprof import api
from nsprof.capture.partial import partial_status
from nsprof.capture.program import DEFAULT_LAUNCH_COUNT, DEFAULT_TOP, ProgramRequest
from nsprof.capture.request import DEFAULT_REPEAT
from nsprof.console import progress_line
from nsprof.errors import PARTIAL_EXIT_CODE
from nsprof.metric_catalog import PRESETS
from nsprof.profile_layout import CPU_TOOL

METRICS_HELP = f"ncu metrics: presets ({', '.join(PRESETS)}) and raw metric names, comma separated. Default: default."


class ToolChoice(str, Enum):
    nsys = "nsys"
    ncu = "ncu"
    both = "both"


class ClockControl(str, Enum):
    none = "none"
    base = "base"


def profile(
    program: list[str] | None = typer.Argument(
        None, metavar="[-- CMD [ARGS]...]",
        help="Your own program instead of the ladder, after --: nsprof profile -- python train.py --epochs 1."),
    stage: list[str] | None = typer.Option(None, "--stage", "-s", help="Stage(s): v6, several (v1,v6 or "
                                                                       "repeated), or all. Default: all."),
    size: list[str] | None = typer.Option(None, "--size", help="N for N^3, or MxNxK; several as 1024,4096. Default: 4096."),
    op: str | None = typer.Option(None, "--op", help="Which ladder. Default: sgemm."),
    tool: ToolChoice = typer.Option(ToolChoice.both, "--tool", help="Nsight Systems (timeline), "
                                                                    "Nsight Compute (metrics) or both."),
    out: Path = typer.Option(Path("profiles"), "--out", help="Where the profile directory "
                                                             "<op>-<stages>-<sizes>-<time> is created."),
    force: bool = typer.Option(False, "--force", help="Replace a profile directory of the same name."),
    dry_run_: bool = typer.Option(False, "--dry-run", help="Print the command lines, one per line, and "
                                                           "run nothing (needs no GPU and no tools)."),
    metrics: list[str] | None = typer.Option(None, "--metrics", help=METRICS_HELP),
    clock_control: ClockControl = typer.Option(
        ClockControl.none, "--clock-control",
        help="ncu --clock-control: none keeps the GPU's own clocks; base locks them to base."),
    repeat: int | None = typer.Option(
        None, "--repeat", min=1,
        help=f"Measured launches per stage and size. Default: {DEFAULT_REPEAT['nsys']} "
             f"under nsys, {DEFAULT_REPEAT['ncu']} under ncu (each is replayed)."),
    runs: int = typer.Option(
        1, "--runs", metavar="N",
        help="Run nsys N times, each in a fresh process (runs 2..N go in runs/), and ncu once: `nsprof diff` "
             "then measures the variation between runs instead of assuming it away."),
    nsys: str | None = typer.Option(None, "--nsys", metavar="PATH", help="The nsys executable. Default: "
                                                                         "$NSPROF_NSYS, then PATH."),
    ncu: str | None = typer.Option(None, "--ncu", metavar="PATH", help="The ncu executable. Default: $NSPROF_NCU, then PATH."),
    ranges: list[str] | None = typer.Option(
        None, "--range", metavar="NAME",
        help="Your program: ncu profiles only launches inside this NVTX push/pop range (repeatable; DOMAIN@NAME/ "
             "for ncu's own syntax). Launches from another thread (PyTorch's backward pass) are not inside it."),
    kernel: str | None = typer.Option(None, "--kernel", metavar="REGEX", help="Your program: ncu profiles only "
                                                                              "kernels whose name matches REGEX."),
    launch_count: int | None = typer.Option(
        None, "--launch-count", metavar="N",
        help="Your program: ncu profiles at most N launches (each is replayed dozens of times). Default: "
             f"{DEFAULT_LAUNCH_COUNT} when --range or --kernel is given; without any of the three, the hot kernels nsys found."),
    top: int | None = typer.Option(
        None, "--top", metavar="N",
        help="Your program: ncu profiles the fewest kernels that make 80% "
             f"of nsys's kernel time, at most N. Default: {DEFAULT_TOP}."),
) -> None:
    """Run the ladder's stages, or your own program, under Nsight Systems and/or Nsight Compute into a new profile directory.

    Stages: the workload is `nsprof bench` (verify, then time each stage); each measured launch sits in an NVTX
    range nsprof@<op>/<stage>/<MxNxK>, and ncu profiles only those ranges.

    Your program (after --): nsys traces all of it (the kernels inside CUDA graphs too), then ncu collects
    nsprof's metrics and its Speed Of Light, launch and occupancy sections on the hot kernels nsys found: the
    fewest that make 80% of kernel time (at most --top), one steady-state launch of each launch configuration.
    --range, --kernel and --launch-count choose the launches by hand instead.

    CPU stages chosen with GPU ones (all stages, or v0,v1,...) run after the tools, on the host and without a
    profiler: bench-cpu.json holds their times, ceilings-cpu.json the host's roofs measured beside them, so that
    analyze and report show how far below the GPU stages the CPU sits.

    The directory holds the tool reports (nsys.nsys-rep, nsys.sqlite, ncu.ncu-rep and its CSV pages), their logs
    (with the program's output), bench-<tool>.json for stages, and manifest.json: what ran, on what, and how it
    ended.

    Exit code 1 when a tool or the program fails or a stage fails verification; 3 when the program ran
    under nsys but died under ncu: the profile keeps nsys's half, and a line says what to try; 130 when
    interrupted.
    """
    request = api.profile_request(program, stage, size, op, tool=tool.value, metrics=metrics,
                                  clock_control=clock_control.value, repeat=repeat, ranges=ranges, kernel=kernel,
                                  launch_count=launch_count, top=top, runs=runs)
    if dry_run_:
        for line in api.profile_commands(request, out, nsys, ncu):
            typer.echo(line)
        if isinstance(request, ProgramRequest) and request.guided:
            typer.echo(f"# then ncu on the hot kernels nsys finds: the fewest that make 80% of kernel time, at most "
                       f"{request.top}, one steady-state launch per configuration (see the manifest's \"guided\")")
        return
    with progress_line() as progress:
        directory, manifest = api.profile(request, out, nsys, ncu, force=force, progress=progress)
    for line in summary_lines(directory, manifest):
        typer.echo(line)
    api.check_verified(directory, manifest)
    if manifest.get("partial"):
        raise typer.Exit(PARTIAL_EXIT_CODE)


def summary_lines(directory: Path, manifest: dict) -> list[str]:
    """What `nsprof profile` prints once it has run: each tool's reports, the CPU stages, the hot
    kernels ncu chose, the verification, how a partial profile ended, and what to run next."""
    lines = [f"profile written to {directory} (status: {manifest['status']})"]
    lines += [_tool_line(name, tool, manifest) for name, tool in manifest["tools"].items()]
    lines += _cpu_lines(manifest) + _guided_lines(manifest) + _verification_lines(manifest)
    if partial := manifest.get("partial"):
        lines.append(partial_line(partial))
    lines.append(f"next: nsprof analyze {directory}")
    return lines


def _tool_line(name: str, tool: dict, manifest: dict) -> str:
    """One tool's line: its version, the reports it wrote, how long it ran, its further runs, and ncu's replay passes."""
    steps = [c for c in manifest["commands"] if c["tool"] == name]
    line = f"  {name} {tool['version']}: {_written(steps, manifest) or 'no report'} in {_seconds(steps):.0f} s"
    further = sum(c["step"] == "run" for c in steps)
    if further:
        line += f", and {further} more run{'s' if further > 1 else ''} in runs/"
    passes = [p["passes"] for p in manifest["replay_passes"]]
    if name == "ncu" and passes:
        spread = str(min(passes)) if min(passes) == max(passes) else f"{min(passes)}-{max(passes)}"
        line += f"; {len(passes)} launches profiled, {spread} replay passes each"
    return line


def _written(steps: list[dict], manifest: dict) -> str:
    """The files `steps` wrote that the profile holds, comma separated ("" for none)."""
    # only what is there: a step that died wrote nothing whole (a partial capture)
    return ", ".join(f for c in steps for f in c["outputs"] if f in manifest["outputs"])


def _cpu_lines(manifest: dict) -> list[str]:
    """The CPU stages and the host's roofs, timed without a profiler, and their problems."""
    if not (cpu := [c for c in manifest["commands"] if c["tool"] == CPU_TOOL]):
        return []
    return [f"  CPU stages ({', '.join(manifest.get('cpu_stages') or [])}) and the host's roofs, timed "
            f"without a profiler: {_written(cpu, manifest) or 'nothing'} in {_seconds(cpu):.0f} s",
            *(f"  CPU: {problem}" for problem in manifest.get("cpu_problems", []))]


def _guided_lines(manifest: dict) -> list[str]:
    """The hot kernels ncu chose from nsys's timeline, or why ncu did not run."""
    if (guided := manifest.get("guided")) and guided["kernels"]:
        return [f"  ncu chose {len(guided['kernels'])} hot kernels and configurations from nsys, "
                f"{guided['covered_pct']:.0f}% of kernel time"]
    if guided:
        return ["  ncu did not run: nsys saw no kernel to hand it (none was launched, or the export "
                "names none by its mangled symbol); choose by hand with --kernel or --launch-count"]
    return []


def _verification_lines(manifest: dict) -> list[str]:
    """Each stage and size verified, once: a failure over an ok (each tool's workload verified the same stages)."""
    seen: dict[tuple, dict] = {}
    for v in manifest["verification"]:
        if (v["stage"], v["size"]) not in seen or v["status"] != "ok":
            seen[(v["stage"], v["size"])] = v
    if not seen:
        return []
    return ["  verification: " + ", ".join(
        f"{v['stage']} {v['size']} {v['status']}" + (f" ({v['rel_error']:.1e})" if v["rel_error"] is not None else "")
        for v in seen.values())]


def partial_line(partial: dict) -> str:
    """One line on a program that died under ncu after nsys traced it: how, where, and what to try
    (the manifest's "partial" entry, nsprof.capture.partial)."""
    where = (f'after ncu reported kernel "{partial["last_kernel"]}"' if partial["last_kernel"]
             else "before ncu profiled any kernel")
    return (f"{partial_status(partial)} {where}, so the profile holds nsys's timeline only. Try --tool nsys "
            "(the timeline alone), or --kernel REGEX or --launch-count N to profile fewer launches")


def _seconds(steps: list[dict]) -> float:
    times = [(dt.datetime.fromisoformat(c["started"]), dt.datetime.fromisoformat(c["finished"]))
             for c in steps if c["started"] and c["finished"]]
    return sum((end - start).total_seconds() for start, end in times)
