"""The package's layers as a contract (docs/architecture.md): import-linter's layers contract in
pyproject.toml (a module imports only its own layer and those below, directly or through others),
run here; every module in one of its layers; and no two modules importing each other, directly or
around a circle, at load time."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "nsprof"


def contract() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11 and later
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    return next(found for found in contracts if found["id"] == "layers")


def layer_modules() -> list[set[str]]:
    """Each layer of the contract, highest first, as the full names of its modules."""
    return [{f"nsprof.{name.strip()}" for name in entry.split(":")} for entry in contract()["layers"]]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def layer(module: str) -> int:
    found = [index for index, modules in enumerate(layer_modules())
             if any(module == name or module.startswith(name + ".") for name in modules)]
    assert len(found) == 1, f"{module} is in {len(found)} layers of pyproject.toml's contract, not one"
    return found[0]


def imports_at_load(path: Path) -> set[str]:
    """The nsprof modules a file imports at its top level (a name imported from a package that is a
    module of its own counts as that module)."""
    nodes = ast.parse(path.read_text(encoding="utf-8")).body
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("nsprof")}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("nsprof"):
            module = node.module or ""
            found |= {f"{module}.{alias.name}" if f"{module}.{alias.name}" in MODULES else module for alias in node.names}
    return found


def containers() -> set[str]:
    """The packages in no layer whose own __init__ imports nothing: they only hold modules of
    several layers (nsprof alone: every other package sits on one layer)."""
    return {module for module, path in MODULES.items() if path.name == "__init__.py" and not imports_at_load(path)
            and not any(module == name or module.startswith(name + ".") for modules in layer_modules() for name in modules)}


def test_every_module_is_in_a_layer():
    assert containers() == {"nsprof"}
    for module in set(MODULES) - containers():
        layer(module)


def test_the_layers_contract_holds():
    """import-linter checks the contract (it names each import that breaks it)."""
    pytest.importorskip("importlinter")
    from importlinter.cli import lint_imports

    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0


def test_no_import_circle_at_load_time():
    graph = {module: imports_at_load(path) & set(MODULES) for module, path in MODULES.items()}
    for start in sorted(graph):
        stack, seen = [(start, (start,))], set()
        while stack:
            module, trail = stack.pop()
            for target in graph[module]:
                assert target != start, " -> ".join((*trail, target))
                if target not in seen:
                    seen.add(target)
                    stack.append((target, (*trail, target)))
