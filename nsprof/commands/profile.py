from __future__ import annotations

import datetime as dt
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from nsprof.capture.request import DEFAULT_REPEAT, build_request
from nsprof.capture.session import VerificationFailed, capture, dry_run
from nsprof.console import stderr
from nsprof.launch import gpu
from nsprof.metric_catalog import PRESETS


class ToolChoice(str, Enum):
    nsys = "nsys"
    ncu = "ncu"
    both = "both"


class ClockControl(str, Enum):
    none = "none"
    base = "base"


def profile(
    stage: Optional[List[str]] = typer.Option(None, "--stage", "-s", help="Stage(s): v6, several (v1,v6 or repeated), or all. Default: all."),
    size: Optional[List[str]] = typer.Option(None, "--size", help="N for N^3, or MxNxK; several as 1024,4096. Default: 4096."),
    op: str = typer.Option("sgemm", "--op", help="Which ladder."),
    tool: ToolChoice = typer.Option(ToolChoice.both, "--tool", help="Nsight Systems (timeline), Nsight Compute (metrics) or both."),
    out: Path = typer.Option(Path("profiles"), "--out", help="Where the profile directory <op>-<stages>-<sizes>-<time> is created."),
    force: bool = typer.Option(False, "--force", help="Replace a profile directory of the same name."),
    dry_run_: bool = typer.Option(False, "--dry-run", help="Print the command lines, one per line, and run nothing (needs no GPU and no tools)."),
    metrics: Optional[List[str]] = typer.Option(None, "--metrics", help=f"ncu metrics: presets ({', '.join(PRESETS)}) and raw metric names, comma separated. Default: default."),
    clock_control: ClockControl = typer.Option(ClockControl.none, "--clock-control", help="ncu --clock-control: none keeps the GPU's own clocks; base locks them to base."),
    repeat: Optional[int] = typer.Option(None, "--repeat", min=1, help=f"Measured launches per stage and size. Default: {DEFAULT_REPEAT['nsys']} under nsys, {DEFAULT_REPEAT['ncu']} under ncu (each is replayed)."),
    nsys: Optional[str] = typer.Option(None, "--nsys", metavar="PATH", help="The nsys executable. Default: $NSPROF_NSYS, then PATH."),
    ncu: Optional[str] = typer.Option(None, "--ncu", metavar="PATH", help="The ncu executable. Default: $NSPROF_NCU, then PATH."),
) -> None:
    """Run stages under Nsight Systems and/or Nsight Compute into a new profile directory.

    The workload is `nsprof bench` (verify, then time each stage); each measured launch sits in an NVTX range nsprof@<op>/<stage>/<MxNxK>, and ncu profiles only those ranges.

    The directory holds the tool reports (nsys.nsys-rep, nsys.sqlite, ncu.ncu-rep, ncu-raw.csv), their logs, the workload's results (bench-<tool>.json) and manifest.json: what ran, on what, and how it ended.

    Exit code 1 when a tool fails or a stage fails verification, 130 when interrupted.
    """
    request = build_request(op, stage, size, tool.value, metrics, clock_control.value, repeat)
    tool_options = {"nsys": nsys, "ncu": ncu}
    if dry_run_:
        for command in dry_run(request, out, tool_options):
            typer.echo(command.shell)
        return
    gpu.device_info()  # without CuPy or a GPU: the one-line error, before any progress display
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=stderr(), transient=True) as bar:
        task = bar.add_task("checking the GPU and the tools", total=None)
        directory, manifest = capture(request, out, tool_options, force=force,
                                      progress=lambda msg: bar.update(task, description=msg))
    for line in summary_lines(directory, manifest):
        typer.echo(line)
    failed = [v for v in manifest["verification"] if v["status"] == "failed"]
    if failed:
        first = failed[0]
        raise VerificationFailed(
            f"{first['stage']} {first['size']} failed verification ({first['message']})",
            f"its launches were not measured, so {directory} has no ranges for it; check it with nsprof bench --stage {first['stage']}",
        )


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
