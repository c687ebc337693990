"""The README's "A first look, without a GPU" block, the manual's `timeline --range` example (docs/timeline.md)
and its Python example (docs/python.md), read from the pages themselves and run as written, twice
over, in a fresh directory: a user regenerating their reports gets them regenerated. The directory
sees the repository's profiles/ through a symbolic link (nothing copied); everything the commands
write lands in it."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from manual import README, REPO, page, section
from typer.testing import CliRunner

from nsprof.cli import app


def without_a_gpu() -> list[list[str]]:
    """The first indented block of "## Without a GPU": one nsprof command a line."""
    block = re.search(r"\n\n((?:    nsprof .*\n)+)", section(README, "A first look, without a GPU"))[1]
    return [shlex.split(line)[1:] for line in block.splitlines()]


def range_example() -> list[str]:
    [line] = re.findall(r"^\$ (nsprof timeline .*--range .*)$", page("timeline.md"), re.MULTILINE)
    return shlex.split(line)[1:]


def python_example() -> str:
    """The `>>>` lines of docs/python.md's example, but the one that needs a GPU."""
    block = re.search(r"```python\n(.*?)```", page("python.md"), re.DOTALL)[1]
    return "\n".join(line[4:] for line in block.splitlines() if line.startswith(">>> ") and "on a GPU" not in line)


def test_the_readme_gives_what_this_test_runs():
    commands = without_a_gpu()
    assert [c[0] for c in commands] == ["analyze", "roofline", "report", "explain", "explain", "explain", "timeline",
                                        "explain", "explain", "explain"]
    assert range_example()[0] == "timeline" and "write_roofline" in python_example()


@pytest.fixture
def fresh_directory(tmp_path, monkeypatch):
    (tmp_path / "profiles").symlink_to(REPO / "profiles")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_readme_block_runs_twice_and_then_the_python_example(fresh_directory):
    runner = CliRunner()
    written = {1: [], 2: []}
    for run in written:
        for args in [*without_a_gpu(), range_example()]:
            result = runner.invoke(app, args)
            assert result.exit_code == 0, (run, args, result.output)
            written[run] += [line.split()[1] for line in result.stdout.splitlines() if line.startswith("wrote ")]
    assert written[1] == written[2] and all(Path(path).is_file() for path in written[1])
    # what the README shows the range example writing is what it writes (the trace's event count too)
    timeline = page("timeline.md")
    shown = timeline[timeline.index("$ nsprof timeline profiles/examples/h200-pipeline-1024 --range"):].split("```")[0]
    assert [line for line in shown.splitlines() if line.startswith("wrote ")] == \
        [line for line in runner.invoke(app, range_example()).stdout.splitlines() if line.startswith("wrote ")]
    reports = fresh_directory / "reports"
    charts = sorted(p.name for p in reports.glob("timeline-*.png"))
    assert len(charts) == 2  # the range's chart did not replace the whole capture's
    assert (reports / "roofline.png").is_file() and (reports / "h200-sgemm-1024" / "index.html").is_file()

    before = (reports / "roofline.csv").stat().st_mtime_ns
    namespace: dict = {}
    exec(compile(python_example(), "docs/python.md", "exec"), namespace)  # after the CLI block
    exec(compile(python_example(), "docs/python.md", "exec"), namespace)  # and again
    assert (reports / "roofline.csv").stat().st_mtime_ns > before
    assert (reports / "t.png").read_bytes()[:4] == b"\x89PNG" and (reports / "t.json").is_file()


@pytest.mark.parametrize("command", [
    "nsprof diff tests/data/runs/ab-base tests/data/runs/ab-slower",
    "nsprof diff profiles/examples/h200-sgemm-1024 --stages v5,v6",
    "nsprof diff tests/data/diff-pairs/compile-block-eager.sqlite profiles/examples/h200-program-torch-compile/nsys.sqlite",
    "nsprof diff benchmarks/records/2026-11-24-h200-sgemm/h200-sgemm.json profiles/examples/h200-sgemm-1024/bench-nsys.json",
])
def test_the_readmes_diff_examples_are_what_diff_prints(command, monkeypatch):
    """The manual's output under `$ COMMAND` (docs/diff.md), to its closing fence, is what the command prints at
    100 columns from the repository's root: an example that the code has moved past fails here."""
    monkeypatch.chdir(REPO)
    diff = page("diff.md")
    shown = diff[diff.index(f"$ {command}\n") + len(command) + 3:]
    shown = shown[:shown.index("\n```")]
    result = CliRunner().invoke(app, shlex.split(command)[1:], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    assert result.stdout.rstrip("\n") == shown


def test_the_readme_lists_every_explain_topic_in_order():
    from nsprof.explain.topics import TOPICS

    explain = page("explain.md")
    listed = explain[explain.index("`nsprof explain --list` lists the topics: "):].split(": ", 1)[1].split(".")[0]
    assert [topic.strip() for topic in " ".join(listed.split()).split(",")] == list(TOPICS)


def test_the_readmes_first_analysis_is_what_analyze_prints(monkeypatch):
    """The README's first table is the start of what `nsprof analyze` prints at 100 columns."""
    command = "nsprof analyze profiles/examples/h200-sgemm-1024"
    monkeypatch.chdir(REPO)
    shown = README[README.index(f"$ {command}\n") + len(command) + 3:]
    shown = shown[:shown.index("\n```")]
    result = CliRunner().invoke(app, shlex.split(command)[1:], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(shown + "\n")


def test_the_readmes_own_program_commands_run_in_a_clone(monkeypatch):
    """The README's "Your own program" block: each command that needs no GPU runs as written."""
    block = re.search(r"\n\n((?:    nsprof .*\n)+)", section(README, "Your own program"))[1]
    commands = [shlex.split(line.split("#")[0])[1:] for line in block.splitlines() if "on a GPU" not in line]
    assert [args[0] for args in commands] == ["analyze", "diff"]
    monkeypatch.chdir(REPO)
    for args in commands:
        result = CliRunner().invoke(app, args, env={"COLUMNS": "100"})
        assert result.exit_code == 0, (args, result.output)
    # the same step run twice, unchanged: the README says the diff calls nothing
    assert re.search(r"(\d+) kernels: \1 same\. (\d+) ranges: \2 same\.", " ".join(result.stdout.split()))
