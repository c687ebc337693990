"""The HTML pages nsprof writes (report, diff), rendered by a real browser: Debian's Chromium,
headless, driven by Playwright for Python. On the committed examples: no console error, every
figure loads, and at a phone's width and a desktop's the page never scrolls sideways (a wide
table scrolls inside its own box) and its text stays a readable size."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nsprof.cli import app

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "profiles" / "examples"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
playwright = pytest.importorskip("playwright.sync_api", reason="needs Playwright for Python (pip install -e '.[test]')")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (Debian: apt-get install chromium)")
WIDTHS = {"phone": 375, "desktop": 1280}
SMALLEST_TEXT_PX = 11  # 0.9em of the browser's default 16 px is 14.4


@pytest.fixture(scope="module")
def browser():
    # the flags a closed network and a root user need (no sandbox, no calls home)
    flags = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--no-first-run"]
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, headless=True, args=flags)
        yield launched
        launched.close()


def pages(tmp_path: Path) -> dict[str, Path]:
    """A ladder report, a report of a user's program and a diff page, written from the examples."""
    runner = CliRunner()
    for args in (["report", str(tmp_path / "reports"), "--from", str(EXAMPLES / "h200-sgemm-1024")],
                 ["report", str(tmp_path / "reports"), "--from", str(EXAMPLES / "h200-program-torch-train")],
                 ["diff", str(ROOT / "tests" / "data" / "runs" / "ab-base"), str(ROOT / "tests" / "data" / "runs" / "ab-slower"),
                  "--out", str(tmp_path / "diff")]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
    return {"sgemm report": tmp_path / "reports" / "h200-sgemm-1024" / "index.html",
            "program report": tmp_path / "reports" / "h200-program-torch-train" / "index.html",
            "diff": tmp_path / "diff" / "index.html"}


def test_the_pages_render_whole_at_a_phones_width_and_a_desktops(browser, tmp_path):
    for name, page_file in pages(tmp_path).items():
        for label, width in WIDTHS.items():
            page = browser.new_page(viewport={"width": width, "height": 900})
            errors: list[str] = []
            page.on("console", lambda message, seen=errors: seen.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error, seen=errors: seen.append(str(error)))
            page.goto(page_file.as_uri(), wait_until="load")
            facts = page.evaluate("""() => ({
                page: document.documentElement.scrollWidth,
                view: window.innerWidth,
                images: [...document.images].map(i => [i.alt, i.complete && i.naturalWidth > 0]),
                tables: document.querySelectorAll('table').length,
                loose: [...document.querySelectorAll('table')].filter(t => !t.closest('div.wide')).length,
                smallest: Math.min(...[...document.querySelectorAll('td, th, p, li')]
                                   .map(e => parseFloat(getComputedStyle(e).fontSize))),
            })""")
            where = f"{name} at {label} width"
            assert errors == [], where
            assert facts["images"] and all(loaded for _, loaded in facts["images"]), (where, facts["images"])
            assert facts["tables"] > 0 and facts["loose"] == 0, where
            assert facts["page"] <= facts["view"], (where, facts["page"], facts["view"])  # no sideways scroll
            assert facts["smallest"] >= SMALLEST_TEXT_PX, where
            page.close()


def test_a_wide_table_scrolls_inside_its_box_on_a_phone(browser, tmp_path):
    page = browser.new_page(viewport={"width": WIDTHS["phone"], "height": 900})
    page.goto(pages(tmp_path)["sgemm report"].as_uri(), wait_until="load")
    boxes = page.evaluate("""() => [...document.querySelectorAll('div.wide')].map(d =>
        [d.scrollWidth > d.clientWidth, getComputedStyle(d).overflowX])""")
    assert any(wider for wider, _ in boxes)  # the stage table does not fit 375 px: it scrolls, not the page
    assert {overflow for _, overflow in boxes} == {"auto"}
    page.close()
