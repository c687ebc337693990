"""The `nsprof` command line: thin Typer commands over the library.

Project errors (nsprof.errors) are caught once, here, and printed as one line on stderr
with exit code 1 (2 for usage errors) and no traceback.
"""

from __future__ import annotations

import errno
import re
import sys
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from nsprof import __version__
from nsprof.commands.analyze import analyze
from nsprof.commands.bench import bench
from nsprof.commands.ceilings import ceilings
from nsprof.commands.diff import diff
from nsprof.commands.doctor import doctor
from nsprof.commands.explain import explain
from nsprof.commands.history import add as history_add
from nsprof.commands.history import check as history_check
from nsprof.commands.history import history_app
from nsprof.commands.history import show as history_show
from nsprof.commands.noise import noise
from nsprof.commands.pipeline import pipeline
from nsprof.commands.profile import profile
from nsprof.commands.report import report
from nsprof.commands.roofline import roofline
from nsprof.commands.stages import stages
from nsprof.commands.timeline import timeline
from nsprof.console import error_line
from nsprof.errors import NsprofError


def _never_at_hyphens() -> None:
    """Click wraps help text with textwrap's default of breaking after hyphens, which splits the
    names a user copies (`.ncu-` / `rep`, `register-` / `tiling`): its wrapper is made to break at
    spaces alone. Click's help formatter imports the wrapper from its _textwrap on every call (the
    Click this Typer uses: its own copy in newer Typer versions)."""
    import importlib

    try:
        _textwrap = importlib.import_module(typer.BadParameter.__module__.rpartition(".")[0] + "._textwrap")
    except ImportError:  # another Click: its help may split at hyphens, nothing else changes
        return

    wrapper: Any = _textwrap.TextWrapper  # (a module found at run time: typed as Any)

    class AtSpaces(wrapper):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **{**kwargs, "break_on_hyphens": False})

    setattr(_textwrap, "TextWrapper", AtSpaces)  # noqa: B010  (the module is only known at run time)


_never_at_hyphens()

# Click's exception classes, as this Typer has them (newer Typer versions carry their own click).
# (type[Any]: which click they come from is known only at run time)
_USAGE_ERROR: type[Any] = next(cls for cls in typer.BadParameter.__mro__ if cls.__name__ == "UsageError")
_CLICK_EXCEPTION: type[Any] = next(cls for cls in typer.BadParameter.__mro__ if cls.__name__ == "ClickException")


class _Group(TyperGroup):
    def main(self, *args, standalone_mode: bool = True, **kwargs):
        """Usage errors and Ctrl-C as one line on stderr (exit 2 and 130), never a box or a traceback."""
        try:
            code = super().main(*args, **{**kwargs, "standalone_mode": False})
        except _USAGE_ERROR as err:
            if type(err).__name__ == "NoArgsIsHelpError" and err.ctx:  # bare `nsprof`: the help, as --help prints it
                typer.echo(err.ctx.get_help())
                code = 2
                if standalone_mode:
                    sys.exit(code)
                return code
            where = err.ctx.command_path if err.ctx else "nsprof"
            error_line(f"{_sentence(err.format_message())} See '{where} --help'.")
            code = 2
        except (typer.Abort, KeyboardInterrupt):
            _say_interrupted()
            code = 130
        except _CLICK_EXCEPTION as err:
            error_line(_sentence(err.format_message()))
            code = err.exit_code
        code = code if isinstance(code, int) else 0
        if standalone_mode:
            sys.exit(code)
        return code

    def make_context(self, *args, **kwargs):
        try:
            return super().make_context(*args, **kwargs)
        except KeyboardInterrupt:  # while the arguments are parsed: Typer would exit 130 without a word
            _say_interrupted()
            raise typer.Exit(130) from None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except NsprofError as err:
            error_line(err.for_cli())
            raise typer.Exit(err.exit_code) from None
        except OSError as err:  # a path that cannot be read or written
            where = f"{user_path(err)}: " if err.filename else ""
            fix = "Free space there, or write elsewhere" if err.errno == errno.ENOSPC else \
                "Check the path and its permissions"
            error_line(f"{where}{err.strerror or err}. {fix}.")
            raise typer.Exit(1) from None
        except KeyboardInterrupt:  # Typer would turn it into a silent exit 130
            _say_interrupted()
            raise typer.Exit(130) from None


class _Option(TyperOption):
    def display_type(self, ctx) -> str:
        """What follows an option that takes a value when it has no metavar: its choices, N for a
        number, PATH for a path, else its name in capitals; never Typer's <str> or <int> tags."""
        desc = self.type_descriptor
        if desc.is_choice:
            return "[" + "|".join(str(getattr(c, "value", c)) for c in desc.choices or ()) + "]"
        if desc.annotation is int:
            return "N"
        if desc.is_path:
            return "PATH"
        return max(self.opts, key=len).lstrip("-").upper()


class _Argument(TyperArgument):
    @property
    def display_name_raw(self) -> str:  # help, usage line and error messages: PATH, as Click names it
        return self.metavar or self.name.upper()

    def display_type(self, ctx) -> str:  # the name alone, no <path> tag after it
        return ""

    def get_usage_pieces(self, ctx) -> list[str]:
        """PATH when required, [OUT] when not (Typer writes {path}); a metavar in brackets as written."""
        name = self.display_name_raw + ("..." if self.nargs != 1 and not self.metavar else "")
        return [name if self.required or name.startswith("[") else f"[{name}]"]


class _Command(TyperCommand):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Typer builds the parameters itself and takes no class for them: give its own ours, so
        # every command's help shows metavars instead of type tags.
        for param in self.params:
            if type(param) is TyperOption:
                param.__class__ = _Option
            elif type(param) is TyperArgument:
                param.__class__ = _Argument


app = typer.Typer(
    cls=_Group,
    name="nsprof",
    help="Run, verify, profile and explain ladders of CUDA kernels (SGEMM, HGEMM, SGEMV) with Nsight tools, "
         "and analyze the nsys and ncu captures of any program.",
    epilog="The manual, every command with real output: docs/README.md in nsprof's repository.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: paragraphs wrapped to the terminal, no boxes
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"nsprof {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """Run, verify, profile and explain ladders of CUDA kernels (SGEMM, HGEMM, SGEMV) with Nsight tools, and
    analyze the nsys and ncu captures of any program."""


# Every command in the order a user meets them (the ladder, running it, profiling it, reading the
# results) with its page of the manual (docs/ in nsprof's repository), named at the foot of its
# --help: a new command is one line here.
COMMANDS = ((stages, "ladders/sgemm.md"), (bench, "bench.md"), (profile, "profile.md"), (pipeline, "pipeline.md"),
            (analyze, "analyze.md"), (diff, "diff.md"), (noise, "diff.md"), (timeline, "timeline.md"),
            (roofline, "roofline-report.md"), (report, "roofline-report.md"), (explain, "explain.md"),
            (ceilings, "ceilings.md"), (doctor, "README.md"))
HISTORY_COMMANDS, HISTORY_PAGE = (history_add, history_show, history_check), "history.md"  # `nsprof history add|show|check`


def _manual(page: str) -> str:
    return f"The manual: docs/{page} in nsprof's repository (all of it: docs/README.md)."


for command, page in COMMANDS:
    app.command(cls=_Command, epilog=_manual(page))(command)
for subcommand in HISTORY_COMMANDS:
    history_app.command(cls=_Command, epilog=_manual(HISTORY_PAGE))(subcommand)
app.add_typer(history_app, name="history")


def main() -> None:
    app()


# The hidden names nsprof writes under before moving a result into place (tempfile's 8 random
# characters): a staging directory .nsprof-<pid>-XXXXXXXX (.nsprof-XXXXXXXX before it carried the
# writer's pid), a file .NAME-XXXXXXXX beside NAME.
_STAGING_DIRECTORY = re.compile(r"\.nsprof-(?:\d+-)?[a-z0-9_]{8}")
_STAGING_FILE = re.compile(r"\.(.+)-[a-z0-9_]{8}")


def user_path(err: OSError) -> str:
    """The path an OSError is about, as the user knows it: the result being written, never the
    temporary name it was staged under."""
    if err.filename2 is not None:  # os.replace(staged, target): the target is the user's
        return str(err.filename2)
    parts = []
    for part in Path(err.filename).parts:
        if _STAGING_DIRECTORY.fullmatch(part):
            continue
        staged_file = _STAGING_FILE.fullmatch(part)
        parts.append(staged_file.group(1) if staged_file else part)
    return str(Path(*parts)) if parts else str(err.filename)


def _say_interrupted() -> None:
    error_line("interrupted")


def _sentence(message: str) -> str:
    message = " ".join(message.split())
    return message if message.endswith((".", "!", "?")) else message + "."
