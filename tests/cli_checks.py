"""Assertions and runs the CLI tests share."""

import csv
import json
from pathlib import Path

from typer.testing import CliRunner

from nsprof.cli import app


def one_line_error(result, exit_code: int = 1) -> str:
    """The command failed with `exit_code`, one line on stderr and no traceback; that line."""
    assert result.exit_code == exit_code, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def analysis_pages(capture: Path, out: Path) -> tuple[dict, str, list[dict]]:
    """What a capture reads as on every page, each command run once: `analyze --json`'s document,
    the Markdown `report` writes to `out` and the rows of the roofline.csv `roofline` writes there."""
    runner = CliRunner()
    analyzed = runner.invoke(app, ["analyze", str(capture), "--json"])
    assert analyzed.exit_code == 0, analyzed.output
    assert runner.invoke(app, ["report", str(out), "--from", str(capture)]).exit_code == 0
    assert runner.invoke(app, ["roofline", str(out), "--from", str(capture)]).exit_code == 0
    with open(out / "roofline.csv", newline="") as file:
        points = list(csv.DictReader(file))
    return json.loads(analyzed.stdout), (out / capture.name / "report.md").read_text(), points
