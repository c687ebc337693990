"""The README's picture of the HTML report: the SGEMM example's report as headless Chromium draws
it at a desktop width (Playwright for Python driving Debian's Chromium, as tests/test_report_browser.py does).

    python3 benchmarks/report_screenshot.py   # writes benchmarks/pictures/report-screenshot.png
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright
from typer.testing import CliRunner

from nsprof.cli import app

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    with tempfile.TemporaryDirectory() as out:
        result = CliRunner().invoke(app, ["report", out, "--from", str(ROOT / "profiles" / "examples" / "h200-sgemm-1024")])
        assert result.exit_code == 0, result.output
        page_file = Path(out) / "h200-sgemm-1024" / "index.html"
        chromium = shutil.which("chromium") or "/usr/bin/chromium"
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1200, "height": 1500})
            page.goto(page_file.as_uri(), wait_until="load")
            page.screenshot(path=str(ROOT / "benchmarks" / "pictures" / "report-screenshot.png"))
            browser.close()


if __name__ == "__main__":
    main()
