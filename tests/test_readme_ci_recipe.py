"""The manual's CI recipe for `nsprof history` (docs/history.md), simulated step by step over two pushes: the cache
restored, the `run:` steps in order (the GPU bench replaced by a committed bench record), the cache
saved where the recipe saves it, and the job failing at the first step that exits non-zero, as a
GitHub Actions job does. The first push must pass as the baseline; the second must compare."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from manual import page
from typer.testing import CliRunner

from nsprof.cli import app

ROOT = Path(__file__).resolve().parents[1]
HISTORY = page("history.md")
# what the bench step writes, from a real H200 run
RECORD = ROOT / "benchmarks" / "records" / "2026-11-24-h200-sgemm" / "h200-sgemm.json"


def recipe_steps() -> list[str]:
    """The recipe's steps after checkout: "restore", "save", or a `run:` command line."""
    block = HISTORY[HISTORY.index("```yaml\nname: performance"):].split("```", 2)[1]
    steps = []
    for line in block.splitlines():
        if "actions/cache/restore" in line:
            steps.append("restore")
        elif "actions/cache/save" in line:
            steps.append("save")
        elif match := re.match(r"\s*- run: (.*)", line):
            steps.append(match.group(1))
    return steps


def push(workspace: Path, cache: Path, steps: list[str]) -> tuple[bool, list[str]]:
    """One job: True when every step passed, and what the nsprof steps printed."""
    workspace.mkdir()
    database = workspace / ".nsprof" / "history.sqlite"
    printed = []
    for step in steps:
        if step == "restore":
            if cache.exists():
                database.parent.mkdir(exist_ok=True)
                shutil.copy(cache, database)
            continue
        if step == "save":
            shutil.copy(database, cache)
            continue
        argv = shlex.split(step)
        if argv[0] == "pip":
            continue
        if argv[:2] == ["nsprof", "bench"]:  # needs a GPU: its record, as --save-as writes it
            shutil.copy(RECORD, workspace / argv[argv.index("--save-as") + 1])
            continue
        argv = [str(workspace / arg) if arg.startswith((".nsprof", "bench.json")) else arg for arg in argv[1:]]
        result = CliRunner().invoke(app, argv, env={"COLUMNS": "100"})
        printed.append(result.output)
        if result.exit_code != 0:
            return False, printed
    return True, printed


def test_the_readmes_ci_recipe_passes_its_first_push_and_compares_on_the_second(tmp_path):
    steps = recipe_steps()
    assert steps[0] == "restore" and "save" in steps and any("history check" in step for step in steps)
    assert steps.index("save") < next(i for i, step in enumerate(steps) if "history check" in step)
    cache = tmp_path / "cache.sqlite"
    first, printed = push(tmp_path / "push1", cache, steps)
    assert first, printed
    assert "is the first on NVIDIA H200" in " ".join(printed[-1].split())
    second, printed = push(tmp_path / "push2", cache, steps)
    assert second, printed
    assert "compared" in printed[-1] and "first on" not in printed[-1]


def test_without_first_passes_the_first_push_fails_with_exit_4(tmp_path):
    steps = [step.replace(" --first-passes", "") for step in recipe_steps()]
    passed, printed = push(tmp_path / "push1", tmp_path / "cache.sqlite", steps)
    assert not passed and "no baseline to compare with" in " ".join(printed[-1].split())
