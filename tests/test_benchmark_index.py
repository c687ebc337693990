"""benchmarks/records/README.md is what benchmarks/index.py generates from the folders (so it cannot go
stale), and every record folder keeps the layout: DATE-MACHINE-TOPIC, one .md with its JSON beside it
(or named in index.WITHOUT_JSON), the JSON's own date the folder's, every experiment described."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import index  # noqa: E402

RECORDS = index.folders(index.RECORDS)


def test_the_committed_index_is_what_index_py_generates():
    assert index.INDEX.read_text(encoding="utf-8") == index.generate(), "run: python3 benchmarks/index.py"


def test_no_folder_breaks_the_layouts_rules():
    assert index.problems() == []


@pytest.mark.parametrize("folder", RECORDS, ids=[folder.name for folder in RECORDS])
def test_every_record_holds_an_md_with_a_json_beside_it(folder):
    assert index.FOLDER.fullmatch(folder.name), folder.name
    [md] = folder.glob("*.md")
    record = index.record_json(folder, md)
    if folder.name in index.WITHOUT_JSON:  # and the index says so on its row
        [row] = [line for line in index.INDEX.read_text(encoding="utf-8").splitlines()
                 if line.startswith(f"| [{folder.name}]({folder.name}/{md.name}) |")]
        assert record is None and row.endswith("| none: the numbers are in the .md |")
        return
    assert record is not None and record.parent == folder
    doc = json.loads(record.read_text())
    assert index.json_date(doc) in (None, folder.name[:10])


def test_the_index_lists_every_folder_and_only_links_to_what_exists():
    text = index.INDEX.read_text(encoding="utf-8")
    for folder in RECORDS + index.folders(index.EXPERIMENTS):
        assert f"[{folder.name}](" in text
    for target in re.findall(r"\]\(([^)]+)\)", text):
        assert (index.RECORDS / target).exists(), target
