"""Every command's --help: the options and arguments by name and metavar, never Typer's <str> tags."""

import re
from pathlib import Path

import pytest
import typer
from cli_checks import one_line_error
from typer.core import TyperArgument, TyperOption
from typer.testing import CliRunner

from nsprof.cli import app

runner = CliRunner()
GROUP = typer.main.get_command(app)


def leaves(group, prefix: tuple[str, ...] = ()):
    """Every command that runs, by the words that name it: `history add` under its group."""
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from leaves(command, (*prefix, name))
        else:
            yield " ".join((*prefix, name)), command


LEAVES = dict(leaves(GROUP))
DOCS = Path(__file__).resolve().parents[1] / "docs"
COMMANDS = sorted(LEAVES)
TAGS = ("<str>", "<path>", "<int>", "<bool>", "<float>", "<int range>", "<list[", "<file>", "<directory>")


def help_of(name):
    result = runner.invoke(app, [*name.split(), "--help"], terminal_width=200)  # one line per option
    assert result.exit_code == 0, result.output
    return result.stdout


def test_every_command_is_checked():
    assert len(COMMANDS) == 16 and {"timeline", "diff", "noise", "history add", "history show", "history check"} <= set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_help_has_no_type_tags(name):
    text = help_of(name)
    assert [tag for tag in TAGS if tag in text] == []
    command = LEAVES[name]
    ctx = command.make_context(name, ["--help"], resilient_parsing=True)
    for param in command.params:
        if hasattr(TyperOption, "display_type"):  # Typer 0.2x: the very tag it would have written
            base = TyperArgument if param.param_type_name == "argument" else TyperOption
            assert base.display_type(param, ctx) not in text, param.name


@pytest.mark.parametrize("name", COMMANDS)
def test_help_names_every_option_and_argument(name):
    text = help_of(name)
    usage = text.splitlines()[0]
    assert usage.startswith("Usage: ") and "{" not in usage  # Typer writes a required argument as {path}
    options = {}
    for line in text.splitlines():
        if re.match(r"\s{2}-", line):
            column, _, _ = line.strip().partition("  ")  # the name column: "-s, --stage STAGE"
            options[column.split(" ")[0].rstrip(",")] = column
    for param in LEAVES[name].params:
        if param.param_type_name == "argument":
            shown = param.metavar or param.name.upper()
            assert re.search(rf"^  {re.escape(shown)}\s", text, re.M), (shown, text)
            assert shown in usage or f"[{shown}]" in usage
            continue
        column = next(c for c in options.values() if param.opts[0] in c.replace(",", " ").split())
        for opt in param.opts + param.secondary_opts:
            assert opt in column
        value = column.split(" ")[-1]
        if param.is_flag:
            assert value.startswith("-"), column  # a flag takes nothing
        elif param.metavar:
            assert column.endswith(f" {param.metavar}"), column
        else:
            assert re.fullmatch(r"[A-Z][A-Z-]*|N|PATH|\[[a-z0-9|-]+\]", value), column


def test_metavars_as_written():
    assert "--out FILE.png" in help_of("timeline")
    assert re.search(r"^  PATH\s+An nsys capture", help_of("timeline"), re.M)
    assert "--tool [nsys|ncu|both]" in help_of("profile")
    assert "--width N" in help_of("explain")
    assert help_of("explain").startswith("Usage: nsprof explain [OPTIONS] [TOPIC]\n")
    assert help_of("analyze").startswith("Usage: nsprof analyze [OPTIONS] PATH\n")
    assert help_of("profile").startswith("Usage: nsprof profile [OPTIONS] [-- CMD [ARGS]...]\n")


@pytest.mark.parametrize("width", ["0", "-4"])
def test_width_below_one_is_a_usage_error(width):
    # 0 used to fall back to 4 bytes silently
    result = runner.invoke(app, ["explain", "bank-conflicts", "--width", width])
    line = one_line_error(result, 2)
    assert line.startswith("error: Invalid value for '--width'") and "--help" in line


def test_width_in_range_still_works():
    result = runner.invoke(app, ["explain", "bank-conflicts", "--width", "8", "--json"])
    assert result.exit_code == 0, result.output
    assert "8-byte" in result.stdout


@pytest.mark.parametrize("name", ["analyze", "profile", "explain"])
def test_help_never_splits_a_name_at_its_hyphen(name):
    """`.ncu-rep` and `register-tiling` stay whole at 80 columns (Click wraps after hyphens)."""
    text = runner.invoke(app, [name, "--help"], terminal_width=80).stdout
    assert not [line for line in text.splitlines() if line.rstrip().endswith("-") and line.rstrip()[-2:-1].isalnum()]
    assert ".ncu-rep" in text



@pytest.mark.parametrize("name", COMMANDS)
def test_every_commands_help_names_its_page_of_the_manual(name):
    """The foot of each command's --help names a page of docs/ that exists and shows the command."""
    result = runner.invoke(app, [*name.split(), "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    page = re.search(r"The manual: docs/(\S+) in nsprof's repository", result.stdout)[1]
    text = (DOCS / page).read_text(encoding="utf-8")
    assert f"nsprof {name.split()[0]}" in text, (name, page)
