"""The package stays easy to live in: no function above a cyclomatic complexity of MAX_COMPLEXITY
(radon's count, as `radon cc -s nsprof` prints it) and no module above MAX_LINES lines."""

from __future__ import annotations

from pathlib import Path

import pytest

radon = pytest.importorskip("radon.complexity")

PACKAGE = Path(__file__).parents[1] / "nsprof"
MAX_COMPLEXITY = 25
MAX_LINES = 500
MODULES = sorted(PACKAGE.rglob("*.py"))


def functions(blocks: list) -> list:
    """radon's blocks with the methods of its classes and the functions nested in each."""
    found = []
    for block in blocks:
        nested = [*getattr(block, "methods", ()), *getattr(block, "closures", ())]
        found += ([] if hasattr(block, "methods") else [block]) + functions(nested)
    return found


def test_no_function_is_too_complex():
    found = [f"{module.relative_to(PACKAGE.parent)}:{block.lineno} {block.fullname} ({block.complexity})"
             for module in MODULES for block in functions(radon.cc_visit(module.read_text(encoding="utf-8")))
             if block.complexity > MAX_COMPLEXITY]
    assert found == [], f"split these (radon cc -s): {found}"


def test_no_module_is_too_long():
    found = [f"{module.relative_to(PACKAGE.parent)} ({lines})" for module in MODULES
             if (lines := len(module.read_text(encoding="utf-8").splitlines())) > MAX_LINES]
    assert found == [], f"split these by job: {found}"
