"""One capture from start to end: check the GPU, NVTX and the tools, create the profile directory,
run each command, and keep the manifest up to date whatever happens."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from nsprof.capture import layout
from nsprof.capture.checks import require_nvtx
from nsprof.capture.commands import Command, build_commands
from nsprof.capture.manifest import (
    MANIFEST,
    finish_manifest,
    new_command_entry,
    new_manifest,
    new_program_manifest,
    now,
    verification_records,
    write_manifest,
)
from nsprof.capture.output import PERMISSION_FIX, ToolOutput
from nsprof.capture.partial import ProgramDiedUnderNcu, died_under_ncu, exit_code_words, partial_record, partial_status
from nsprof.capture.program import GuidedChoice, ProgramRequest, program_commands
from nsprof.capture.request import ProfileRequest
from nsprof.capture.run import run_command
from nsprof.capture.tools import FoundTool, find_tool, locate_tool
from nsprof.errors import GpuUnavailableError, NsprofError, ToolNotFoundError
from nsprof.launch import gpu
from nsprof.profile_layout import CPU_TOOL

Progress = Callable[[str], None]


class ProfileInterrupted(NsprofError):
    """Ctrl-C during a capture: the child was stopped and what it captured is kept."""

    exit_code = 130


class VerificationFailed(NsprofError):
    """A stage failed the workload's own verification, so its launches were neither measured nor profiled."""


def dry_run(request: ProfileRequest | ProgramRequest, out: Path, tool_options: dict[str, str | None]) -> list[Command]:
    """The commands a capture would run; a tool that cannot be found is shown by its bare name,
    unless --nsys/--ncu named it: a path the user typed that does not work is an error."""
    paths = {}
    for name in request.tools:
        try:
            paths[name] = find_tool(name, tool_options.get(name)).path
        except ToolNotFoundError:
            if tool_options.get(name):
                raise
            paths[name] = name
    directory = out / layout.directory_name(request, layout.timestamp())
    if isinstance(request, ProgramRequest):
        return program_commands(request, paths, directory)
    return build_commands(request, paths, directory)


# A guided capture's chooser: nsys's SQLite export and the most kernels to pick -> what ncu profiles
# (nsprof.verbs.capture.choose_hot_kernels: parse and analyze, which this layer does not import).
Chooser = Callable[[Path, int], GuidedChoice]


def capture_program(request: ProgramRequest, out: Path, tool_options: dict[str, str | None], *, force: bool = False,
                    progress: Progress | None = None, chooser: Chooser | None = None) -> tuple[Path, dict]:
    """Run the user's program under the tools into a new directory under `out`. The GPU is named in
    the manifest where CuPy can read it; the program itself needs no CuPy. A guided request needs
    `chooser`: after nsys, it picks the kernels ncu profiles (nsprof.capture.program). A program that
    dies under ncu after nsys traced it leaves a partial capture (nsprof.capture.partial)."""
    try:
        env = gpu.device_info()
    except GpuUnavailableError:
        env = {}
    tools = {name: locate_tool(name, tool_options.get(name)) for name in request.tools}
    directory = layout.create_directory(out / layout.directory_name(request, layout.timestamp()), force)
    paths = {name: tool.path for name, tool in tools.items()}
    commands = program_commands(request, paths, directory)
    manifest = new_program_manifest(request, env, tools, commands)

    def then(done: Command) -> list[Command]:
        """After nsys, a guided capture's ncu commands for the hot kernels nsys saw."""
        if not (request.guided and done.tool == "nsys" and done.step == "profile"):
            return []
        if chooser is None:
            raise NsprofError("a guided capture needs a chooser of hot kernels", "call it through nsprof.api")
        choice = chooser(done.outputs[-1], request.top)  # nsys.sqlite
        manifest["guided"] = choice.to_json()
        if not choice.names:
            return []
        return program_commands(request, paths, directory, choice)[len(commands):]

    return directory, execute(commands, manifest, directory, progress, then)


def capture(request: ProfileRequest, out: Path, tool_options: dict[str, str | None], *, force: bool = False,
            progress: Progress | None = None) -> tuple[Path, dict]:
    """Check everything, then create the directory under `out` and run the capture in it."""
    env = gpu.device_info()  # GpuUnavailableError without CuPy or a GPU
    require_nvtx()
    tools = {name: locate_tool(name, tool_options.get(name)) for name in request.tools}
    directory = layout.create_directory(out / layout.directory_name(request, layout.timestamp()), force)
    return directory, run_capture(request, tools, directory, env, progress)


def run_capture(request: ProfileRequest, tools: dict[str, FoundTool], directory: Path, env: dict,
                progress: Progress | None = None) -> dict:
    """Run every command into `directory`; return the manifest (status "ok" or "verification failed").

    A tool failure raises NsprofError (status "failed: <problem>"), Ctrl-C ProfileInterrupted; the
    manifest is written in every case, and nothing captured so far is removed.
    """
    commands = build_commands(request, {name: tool.path for name, tool in tools.items()}, directory)
    return execute(commands, new_manifest(request, env, tools, commands), directory, progress)


def execute(commands: list[Command], manifest: dict, directory: Path, progress: Progress | None = None,
            then: Callable[[Command], list[Command]] | None = None) -> dict:
    """Run `commands` into `directory`, keeping `manifest` written: see run_capture. `then` gives
    the commands to run after one that finished (a guided capture's ncu steps), added to both.
    A program that ran under nsys but died under ncu ends the capture early with status "partial: ..."
    and a "partial" entry (nsprof.capture.partial): returned, not raised, as its nsys half is whole."""
    write_manifest(manifest, directory)
    queue = list(commands)
    try:
        number = 0
        while number < len(queue):
            command, entry = queue[number], manifest["commands"][number]
            number += 1
            label = f"{command.tool} {command.step} [{number}/{len(queue)}]"
            _run_step(command, entry, manifest, directory, label, progress or (lambda _: None))
            added = then(command) if then else []
            queue += added
            manifest["commands"] += [new_command_entry(c) for c in added]
        failed = [v for v in manifest["verification"] if v["status"] == "failed"]
        manifest["status"] = "verification failed" if failed else "ok"
    except ProgramDiedUnderNcu as died:
        manifest["status"], manifest["partial"] = partial_status(died.record), died.record
    except KeyboardInterrupt:
        manifest["status"] = "interrupted"
        raise ProfileInterrupted(f"interrupted; what was captured is kept in {directory}",
                                 f"see {directory / MANIFEST}") from None
    except VerificationFailed:
        manifest["status"] = "verification failed"
        raise
    except NsprofError as err:
        manifest["status"] = f"failed: {err.problem}"
        raise
    except Exception as err:  # a bug: the manifest still says what happened
        manifest["status"] = f"failed: {type(err).__name__}: {err}"
        raise
    finally:
        finish_manifest(manifest, directory)
    return manifest


def _run_step(command: Command, entry: dict, manifest: dict, directory: Path, label: str, progress: Progress) -> None:
    output = ToolOutput(command.tool)
    progress(f"{label}: starting")
    entry["started"] = now()
    write_manifest(manifest, directory)
    try:
        code = run_command(command, output, lambda: progress(f"{label}: {output.activity}"))
    finally:  # an interrupted step still records what it got through
        entry["finished"] = now()
        manifest["replay_passes"].extend(output.replay_passes)
    entry["exit_code"] = code
    if command.step == "profile":
        manifest["verification"].extend(verification_records(directory, command.tool))
        if "program" in manifest:  # nsys and ncu exit with the program's own status
            manifest["program"]["exit_codes"][command.tool] = code
    _check_step(command, code, output, manifest)


def _check_cpu_step(command: Command, code: int, manifest: dict) -> None:
    """The CPU stages and the host's roofs ride along with a capture: a step of theirs that fails
    (bench exits 1 for a stage that erred, such as one without a C compiler) never fails the GPU
    capture. Its failure is noted in the manifest ("cpu_problems"), and output it left half-written
    (a stdout cut short) is removed, so that no reader meets it; records bench wrote are kept."""
    if code == 0:
        return
    manifest.setdefault("cpu_problems", []).append(f"{command.step} exited with {exit_code_words(code)}: see {command.log.name}")
    if command.stdout is not None:
        command.stdout.unlink(missing_ok=True)


def _check_step(command: Command, code: int, output: ToolOutput, manifest: dict) -> None:
    """Raise when the step left nothing usable behind. A profile step's non-zero exit that the
    workload's own verification explains (bench exits 1 when a stage fails) is not a tool failure;
    a program that died under ncu after nsys traced it raises ProgramDiedUnderNcu (a partial capture)."""
    name = "ncu --import" if command.step == "export" else command.tool
    see_log = f"see {command.log}"
    if output.permission_denied:
        raise NsprofError("ncu cannot read the GPU performance counters (ERR_NVGPUCTRPERM)", PERMISSION_FIX)
    if died_under_ncu(command, code, manifest):
        raise ProgramDiedUnderNcu(partial_record(command, code))
    verification_failed = any(v["status"] == "failed" for v in manifest["verification"])
    if code != 0 and command.step == "profile" and "program" in manifest:
        raise NsprofError(f"the program exited with {exit_code_words(code)} under {command.tool}",
                          f"its output is in {command.log}; what was captured is kept beside it")
    if command.tool == CPU_TOOL:
        _check_cpu_step(command, code, manifest)
        return
    if code != 0 and not (command.step == "profile" and verification_failed):
        raise NsprofError(f"{name} exited with {exit_code_words(code)}", see_log)
    missing = ", ".join(p.name for p in command.outputs if not p.is_file() or p.stat().st_size == 0)
    if not missing:
        return
    if verification_failed:
        raise VerificationFailed(f"{name} left {missing} missing or empty after a stage failed verification",
                                 "see the verification records in the manifest, and nsprof bench for that stage")
    if output.no_kernels_profiled:
        raise NsprofError("ncu profiled no kernels: no launch matched its NVTX filter",
                          f"check that `python -c 'import nvtx'` works for the workload, and {see_log}")
    raise NsprofError(f"{name} left {missing} missing or empty", see_log)
