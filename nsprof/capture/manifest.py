"""manifest.json: what a profile directory holds and how it was made, so that analysis needs only
the directory. Written when the capture starts (status "running") and rewritten at the end, so
that a crash or Ctrl-C still leaves one behind.

"ceilings" is a copy of the ceilings `nsprof ceilings` measured on this GPU (from nsprof's data
directory, with "copied_from" naming the file), null where none were saved or the GPU is not known
before the capture: % of peak then uses what the profile was captured under, wherever it is read."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from nsprof import __version__
from nsprof.capture.commands import Command, bench_results_file
from nsprof.capture.request import ProfileRequest
from nsprof.capture.tools import FoundTool
from nsprof.ceilings.files import manifest_copy
from nsprof.profile_layout import MANIFEST, MANIFEST_VERSION, RUNS_DIR
from nsprof.ranges import NVTX_DOMAIN, range_name

DEVICE_KEYS = ("compute_capability", "sm_count", "sm_clock_max_mhz", "memory_gib", "l2_mib")
SOFTWARE_KEYS = ("driver", "driver_cuda", "runtime_cuda", "cupy", "python")


def now() -> str:
    return dt.datetime.now().astimezone().isoformat(timespec="seconds")


def new_manifest(request: ProfileRequest, env: dict, tools: dict[str, FoundTool], commands: list[Command]) -> dict:
    """The manifest before anything ran. `env` is nsprof.launch.gpu.device_info()."""
    return _manifest(env, tools, commands, request.metrics, request.clock_control if "ncu" in request.tools else None, {
        "op": request.op,
        "dtype": request.dtype,
        "stages": [s.stage for s in request.stages],
        "cpu_stages": [s.stage for s in request.cpu_stages],
        "sizes": request.size_labels,
    }, {
        "repeat": dict(request.repeat),
        "warmup": request.warmup,
        "runs": request.runs,
        "nvtx": {"domain": NVTX_DOMAIN,
                 "ranges": [range_name(stage.op, stage.stage, size) for stage in request.stages for size in request.sizes]},
    })


def new_program_manifest(request, env: dict, tools: dict[str, FoundTool], commands: list[Command]) -> dict:
    """The manifest of a capture of the user's program (nsprof.capture.program.ProgramRequest)
    before anything ran; `env` is device_info() where CuPy could read the GPU, else {} (nsys and
    ncu name the GPU in their own output)."""
    uses_ncu = "ncu" in request.tools
    return _manifest(env, tools, commands, request.metrics, request.clock_control if uses_ncu else None,
                     {"program": {"argv": list(request.argv), "exit_codes": {}}},
                     {"ncu_filters": _ncu_filters(request) if uses_ncu else None, "runs": request.runs})


def _ncu_filters(request) -> dict:
    """How the launches ncu profiles are chosen: guided (the chosen kernels follow in "guided") or by hand."""
    if request.guided:
        return {"guided": True, "top": request.top}
    return {"guided": False, "ranges": list(request.ranges), "kernel": request.kernel,
            "launch_count": request.launch_count}


def _manifest(env: dict, tools: dict[str, FoundTool], commands: list[Command], metrics, clock_control: str | None,
              what: dict, how: dict) -> dict:
    """The fields every manifest has, with `what` ran after the times and `how` after the tools."""
    return {
        "manifest_version": MANIFEST_VERSION,
        "nsprof_version": __version__,
        "status": "running",
        "started": now(),
        "finished": None,
        **what,
        "device": {"name": env.get("device"), **{k: env.get(k) for k in DEVICE_KEYS}},
        "software": {k: env.get(k) for k in SOFTWARE_KEYS},
        "host": env.get("host"),
        "ceilings": manifest_copy(env.get("device")),
        "tools": {name: tool.to_json() for name, tool in tools.items()},
        **how,
        "metrics": list(metrics),
        "clock_control": clock_control,
        "commands": [new_command_entry(c) for c in commands],
        "replay_passes": [],
        "verification": [],
        "outputs": [],
    }


def new_command_entry(command: Command) -> dict:
    """A command's record before it ran."""
    return {**command.to_json(), "exit_code": None, "started": None, "finished": None}


def verification_records(directory: Path, tool: str) -> list[dict]:
    """Per stage and size, what the workload's own verification found (from bench-<tool>.json)."""
    path = bench_results_file(directory, tool)
    try:
        results = json.loads(path.read_text(encoding="utf-8"))["results"]
    except (OSError, ValueError, KeyError, TypeError, RecursionError):  # not written (stopped early) or cut short
        return []
    return [{"tool": tool, **{k: r.get(k) for k in ("stage", "size", "status", "rel_error", "tolerance", "message")}}
            for r in results]


def finish_manifest(manifest: dict, directory: Path) -> None:
    manifest["finished"] = now()
    runs = directory / RUNS_DIR  # --runs: the further runs' files, by their path in the directory
    manifest["outputs"] = sorted(str(p.relative_to(directory)) for p in [*directory.iterdir(), *_listed(runs)]
                                 # hidden: bookkeeping (nsprof.output)
                                 if p.is_file() and p.name != MANIFEST and not p.name.startswith("."))
    write_manifest(manifest, directory)


def _listed(directory: Path) -> list[Path]:
    return list(directory.iterdir()) if directory.is_dir() else []


def write_manifest(manifest: dict, directory: Path) -> Path:
    """Replace manifest.json in one step, so that a reader never sees half a file."""
    path = directory / MANIFEST
    tmp = path.with_name(MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
