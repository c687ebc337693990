"""Assertions the CLI tests share."""


def one_line_error(result, exit_code: int = 1) -> str:
    """The command failed with `exit_code`, one line on stderr and no traceback; that line."""
    assert result.exit_code == exit_code, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]
