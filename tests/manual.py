"""The README and the manual (docs/) as the tests read them: a command or example shown there is
checked against what nsprof does."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def page(name: str) -> str:
    """A page of the manual: docs/NAME (e.g. "diff.md", "ladders/sgemm.md")."""
    return (REPO / "docs" / name).read_text(encoding="utf-8")


def section(text: str, title: str) -> str:
    """The `## TITLE` section of `text`, to the next `## ` heading."""
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 4)
    return text[start:] if end < 0 else text[start:end]
