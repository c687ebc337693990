"""A partial capture of the user's program: nsys traced it, then its run under ncu died (JAX programs
exit with SIGSEGV under ncu on some machines, whatever nsprof asks of ncu). The nsys half is whole,
so the directory is kept for `nsprof analyze`; what ncu left half-written is renamed so that nothing
reads it as a whole report, and the manifest says what happened:

    "status": "partial: the program crashed under ncu (SIGSEGV)",
    "partial": {"tool": "ncu", "signal": "SIGSEGV", "exit_code": 139, "last_kernel": null,
                "incomplete": [], "try": ["--tool nsys", "--kernel REGEX", "--launch-count N"]}

A program that fails under nsys (by itself, or by a crash) is still a failure: there is no half to keep.
"""

from __future__ import annotations

import signal
from pathlib import Path

from nsprof.capture.commands import Command
from nsprof.ncu_log import last_profiled_kernel

INCOMPLETE_SUFFIX = ".incomplete"  # not a suffix nsprof.parse reads
# What to try instead, as `nsprof profile` options: the timeline alone, or fewer launches for ncu to replay.
TRY_INSTEAD = ("--tool nsys", "--kernel REGEX", "--launch-count N")


class ProgramDiedUnderNcu(Exception):
    """Ends a capture early with its nsys half kept: not an error to the caller (nsprof.capture.session)."""

    def __init__(self, record: dict):
        super().__init__(partial_status(record))
        self.record = record


def died_under_ncu(command: Command, code: int, manifest: dict) -> bool:
    """Whether a step's non-zero exit leaves a partial profile: ncu's run of the user's program
    ended badly after nsys's run of it had succeeded."""
    if code == 0 or command.tool != "ncu" or command.step != "profile" or "program" not in manifest:
        return False
    return manifest["program"]["exit_codes"].get("nsys") == 0


def signal_name(code: int) -> str | None:
    """The signal that ended a process, from its exit code: -N as Python reports a child killed by
    signal N, 128+N as a shell (and ncu, passing on its program's) reports it. None for a plain exit."""
    number = -code if code < 0 else code - 128
    try:
        return signal.Signals(number).name
    except ValueError:  # not a signal's number: a plain exit code
        return None


def exit_code_words(code: int) -> str:
    """'code 139 (SIGSEGV)', or 'code 3' for a plain exit: to follow 'exited with'."""
    name = signal_name(code)
    return f"code {code} ({name})" if name else f"code {code}"


def set_aside_incomplete(command: Command) -> list[str]:
    """Rename the outputs a step left behind when it died (NAME.incomplete): they may be cut short.
    Returns their new names."""
    renamed = []
    for path in command.outputs:
        if path.is_file():
            target = path.with_name(path.name + INCOMPLETE_SUFFIX)
            path.replace(target)
            renamed.append(target.name)
    return renamed


def partial_record(command: Command, code: int) -> dict:
    """The manifest's "partial" entry for a step that died: which tool, how it ended, the last kernel
    its log names, what was set aside, and what to try. Sets its incomplete outputs aside."""
    return {"tool": command.tool, "signal": signal_name(code), "exit_code": code,
            "last_kernel": last_profiled_kernel(_read_log(command.log)),
            "incomplete": set_aside_incomplete(command), "try": list(TRY_INSTEAD)}


def partial_status(record: dict) -> str:
    """The manifest's status of a partial capture: 'partial: the program crashed under ncu (SIGSEGV)'."""
    if record["signal"]:
        return f"partial: the program crashed under {record['tool']} ({record['signal']})"
    return f"partial: the program exited with code {record['exit_code']} under {record['tool']}"


def _read_log(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:  # no log: the tool never started writing
        return ""
