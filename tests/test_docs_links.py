"""Every relative link of the README and the manual (docs/) leads to a file that exists, and every
page of the manual is reachable from its index: a page moved or renamed without its links fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_every_relative_link_exists(page):
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)  # not inside code blocks
    targets = [target for target in LINK.findall(text) if "://" not in target and not target.startswith("mailto:")]
    missing = [target for target in targets if not (page.parent / target).exists()]
    assert not missing, missing


def test_every_page_of_the_manual_is_linked_from_its_index():
    index = (REPO / "docs" / "README.md").read_text(encoding="utf-8")
    linked = {(REPO / "docs" / target).resolve() for target in LINK.findall(index)}
    pages = {page.resolve() for page in (REPO / "docs").rglob("*.md")} - {(REPO / "docs" / "README.md").resolve()}
    assert pages <= linked, sorted(str(p.relative_to(REPO)) for p in pages - linked)
