"""The project's exceptions: each carries the problem and the fix, and the CLI prints them
as one line on stderr (no traceback) with exit code 1, or 2 for usage errors."""

from __future__ import annotations

# Not an error: `nsprof profile` kept a partial profile (the program ran under nsys, then died under
# ncu; nsprof.capture.partial) and printed it as usual. 1 stays for failures, 2 usage, 130 Ctrl-C.
PARTIAL_EXIT_CODE = 3
# `nsprof diff --fail-if-slower`: the two sides shared nothing, so the gate compared nothing (a CI
# job must not pass on that, nor read it as a regression: a code of its own).
NOTHING_COMPARED_EXIT_CODE = 4


class NsprofError(Exception):
    """Base class: `problem` says what is wrong, `fix` says what to do about it."""

    exit_code = 1

    def __init__(self, problem: str, fix: str | None = None, cli_fix: str | None = None):
        self.problem = problem.rstrip(".")
        self.fix = fix
        self.cli_fix = cli_fix  # the fix in the command line's words (--force) where they differ from Python's (force=True)
        super().__init__(str(self))

    def __str__(self) -> str:
        return self._sentence(self.fix)

    def for_cli(self) -> str:
        """The message as the command line prints it."""
        return self._sentence(self.cli_fix or self.fix)

    def _sentence(self, fix: str | None) -> str:
        if not fix:
            return f"{self.problem}."
        first = fix.split(" ", 1)[0]
        # a fix that opens with a command keeps its spelling ("nsprof diff A B", not "Nsprof diff A B")
        opens_with_command = first in _COMMANDS or first.startswith(("-", "`", "$"))
        return f"{self.problem}. {fix if opens_with_command else fix[0].upper() + fix[1:]}"


_COMMANDS = frozenset({"nsprof", "nsys", "ncu", "pip", "python", "python3", "git", "apt-get", "dask", "export"})


class UsageError(NsprofError):
    """A bad option value or argument (exit code 2, like Click's own usage errors)."""

    exit_code = 2


class GpuUnavailableError(NsprofError):
    """CuPy is missing, or no CUDA device is visible."""


class KernelBuildError(NsprofError):
    """A stage's CUDA source failed to compile."""


class ToolNotFoundError(NsprofError):
    """nsys or ncu could not be found."""


class ParseError(NsprofError):
    """A file is not what nsprof expected (not SQLite, not ncu CSV, truncated...)."""


class MissingPathError(ParseError):
    """A path the user gave does not exist: a bad argument (exit code 2, as UsageError)."""

    exit_code = 2


class SchedulerError(NsprofError):
    """The Dask scheduler given for many captures cannot be reached."""
