from __future__ import annotations

import datetime as dt
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from nsprof.capture.program import DEFAULT_LAUNCH_COUNT, DEFAULT_TOP, build_program_request
from nsprof.capture.request import DEFAULT_REPEAT, build_request
from nsprof.console import stderr
from nsprof.errors import UsageError
from nsprof.metric_catalog import PRESETS


class ToolChoice(str, Enum):
    nsys = "nsys"
    ncu = "ncu"
    both = "both"


class ClockControl(str, Enum):
    none = "none"
    base = "base"


def profile(
    program: Optional[List[str]] = typer.Argument(
        None, metavar="[-- CMD [ARGS]...]",
        help="Your own program instead of the ladder, after --: nsprof profile -- python train.py --epochs 1."),
    stage: Optional[List[str]] = typer.Option(None, "--stage", "-s", help="Stage(s): v6, several (v1,v6 or repeated), or all. Default: all."),
    size: Optional[List[str]] = typer.Option(None, "--size", help="N for N^3, or MxNxK; several as 1024,4096. Default: 4096."),
    op: Optional[str] = typer.Option(None, "--op", help="Which ladder. Default: sgemm."),
    tool: ToolChoice = typer.Option(ToolChoice.both, "--tool", help="Nsight Systems (timeline), Nsight Compute (metrics) or both."),
    out: Path = typer.Option(Path("profiles"), "--out", help="Where the profile directory <op>-<stages>-<sizes>-<time> is created."),
    force: bool = typer.Option(False, "--force", help="Replace a profile directory of the same name."),
    dry_run_: bool = typer.Option(False, "--dry-run", help="Print the command lines, one per line, and run nothing (needs no GPU and no tools)."),
    metrics: Optional[List[str]] = typer.Option(None, "--metrics", help=f"ncu metrics: presets ({', '.join(PRESETS)}) and raw metric names, comma separated. Default: default."),
    clock_control: ClockControl = typer.Option(ClockControl.none, "--clock-control", help="ncu --clock-control: none keeps the GPU's own clocks; base locks them to base."),
    repeat: Optional[int] = typer.Option(None, "--repeat", min=1, help=f"Measured launches per stage and size. Default: {DEFAULT_REPEAT['nsys']} under nsys, {DEFAULT_REPEAT['ncu']} under ncu (each is replayed)."),
    nsys: Optional[str] = typer.Option(None, "--nsys", metavar="PATH", help="The nsys executable. Default: $NSPROF_NSYS, then PATH."),
    ncu: Optional[str] = typer.Option(None, "--ncu", metavar="PATH", help="The ncu executable. Default: $NSPROF_NCU, then PATH."),
    ranges: Optional[List[str]] = typer.Option(None, "--range", metavar="NAME", help="Your program: ncu profiles only launches inside this NVTX push/pop range (repeatable; DOMAIN@NAME/ for ncu's own syntax). Launches from another thread (PyTorch's backward pass) are not inside it."),
    kernel: Optional[str] = typer.Option(None, "--kernel", metavar="REGEX", help="Your program: ncu profiles only kernels whose name matches REGEX."),
    launch_count: Optional[int] = typer.Option(None, "--launch-count", metavar="N", help=f"Your program: ncu profiles at most N launches (each is replayed dozens of times). Default: {DEFAULT_LAUNCH_COUNT} when --range or --kernel is given; without any of the three, the hot kernels nsys found."),
    top: Optional[int] = typer.Option(None, "--top", metavar="N", help=f"Your program: ncu profiles the fewest kernels that make 80% of nsys's kernel time, at most N. Default: {DEFAULT_TOP}."),
) -> None:
    """Run the ladder's stages, or your own program, under Nsight Systems and/or Nsight Compute into a new profile directory.

    Stages: the workload is `nsprof bench` (verify, then time each stage); each measured launch sits in an NVTX range nsprof@<op>/<stage>/<MxNxK>, and ncu profiles only those ranges.

    Your program (after --): nsys traces all of it (the kernels inside CUDA graphs too), then ncu collects nsprof's metrics and its Speed Of Light, launch and occupancy sections on the hot kernels nsys found: the fewest that make 80% of kernel time (at most --top), one steady-state launch of each launch configuration. --range, --kernel and --launch-count choose the launches by hand instead.

    The directory holds the tool reports (nsys.nsys-rep, nsys.sqlite, ncu.ncu-rep and its CSV pages), their logs (with the program's output), bench-<tool>.json for stages, and manifest.json: what ran, on what, and how it ended.

    Exit code 1 when a tool or the program fails or a stage fails verification, 130 when interrupted.
    """
    from nsprof.capture.session import VerificationFailed, capture
    from nsprof.launch import gpu

    tool_options = {"nsys": nsys, "ncu": ncu}
    if program:  # your own program: the ladder's options do not apply
        ladder_only = [flag for flag, value in (("--stage", stage), ("--size", size), ("--op", op), ("--repeat", repeat))
                       if value]
        if ladder_only:
            raise UsageError(f"{', '.join(ladder_only)} {'is' if len(ladder_only) == 1 else 'are'} for the ladder's stages, "
                             "not for a program", "drop them, or drop the program after --")
        from nsprof.capture.session import capture_program

        from functools import partial

        from nsprof import api

        request = build_program_request(program, tool.value, metrics, clock_control.value, ranges, kernel, launch_count, top)
        _run(partial(capture_program, chooser=api.choose_hot_kernels), request, out, tool_options, force, dry_run_,
             "checking the tools")
        return
    if ranges or kernel or launch_count is not None or top is not None:
        raise UsageError("--range, --kernel, --launch-count and --top select launches of your own program",
                         "give the program after --: nsprof profile --range step -- python train.py")
    request = build_request(op or "sgemm", stage, size, tool.value, metrics, clock_control.value, repeat)
    if not dry_run_:
        gpu.device_info()  # without CuPy or a GPU: the one-line error, before any progress display
    result = _run(capture, request, out, tool_options, force, dry_run_, "checking the GPU and the tools")
    if result is None:
        return
    directory, manifest = result
    failed = [v for v in manifest["verification"] if v["status"] == "failed"]
    if failed:
        first = failed[0]
        raise VerificationFailed(
            f"{first['stage']} {first['size']} failed verification ({first['message']})",
            f"its launches were not measured, so {directory} has no ranges for it; check it with nsprof bench --stage {first['stage']}",
        )


def _run(run_capture, request, out: Path, tool_options: dict, force: bool, dry_run_: bool, starting: str):
    """Print the command lines (--dry-run, returns None), or capture with a progress line and print
    the summary; returns (directory, manifest)."""
    from nsprof.capture.session import dry_run

    if dry_run_:
        for command in dry_run(request, out, tool_options):
            typer.echo(command.shell)
        if getattr(request, "guided", False):
            typer.echo(f"# then ncu on the hot kernels nsys finds: the fewest that make 80% of kernel time, at most "
                       f"{request.top}, one steady-state launch per configuration (see the manifest's \"guided\")")
        return None
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=stderr(), transient=True) as bar:
        task = bar.add_task(starting, total=None)
        directory, manifest = run_capture(request, out, tool_options, force=force,
                                          progress=lambda msg: bar.update(task, description=msg))
    for line in summary_lines(directory, manifest):
        typer.echo(line)
    return directory, manifest


def summary_lines(directory: Path, manifest: dict) -> list[str]:
    lines = [f"profile written to {directory} (status: {manifest['status']})"]
    for name, tool in manifest["tools"].items():
        steps = [c for c in manifest["commands"] if c["tool"] == name]
        files = ", ".join(f for c in steps for f in c["outputs"])
        line = f"  {name} {tool['version']}: {files} in {_seconds(steps):.0f} s"
        passes = [p["passes"] for p in manifest["replay_passes"]]
        if name == "ncu" and passes:
            spread = str(min(passes)) if min(passes) == max(passes) else f"{min(passes)}-{max(passes)}"
            line += f"; {len(passes)} launches profiled, {spread} replay passes each"
        lines.append(line)
    if (guided := manifest.get("guided")) and guided["kernels"]:
        lines.append(f"  ncu chose {len(guided['kernels'])} hot kernels and configurations from nsys, "
                     f"{guided['covered_pct']:.0f}% of kernel time")
    elif guided:
        lines.append("  ncu did not run: nsys saw no kernel to hand it (none was launched, or the export "
                     "names none by its mangled symbol); choose by hand with --kernel or --launch-count")
    seen: dict[tuple, dict] = {}
    for v in manifest["verification"]:  # each tool's workload verified the same stages: show each once, a failure over an ok
        if (v["stage"], v["size"]) not in seen or v["status"] != "ok":
            seen[(v["stage"], v["size"])] = v
    if seen:
        lines.append("  verification: " + ", ".join(
            f"{v['stage']} {v['size']} {v['status']}" + (f" ({v['rel_error']:.1e})" if v["rel_error"] is not None else "")
            for v in seen.values()))
    lines.append(f"next: nsprof analyze {directory}")
    return lines


def _seconds(steps: list[dict]) -> float:
    times = [(dt.datetime.fromisoformat(c["started"]), dt.datetime.fromisoformat(c["finished"]))
             for c in steps if c["started"] and c["finished"]]
    return sum((end - start).total_seconds() for start, end in times)
