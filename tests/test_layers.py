"""The package's layers as a contract (docs/architecture.md): a module imports only its own layer and
those below, whether at the top of the file or inside a function, but for the upward arrows listed
with their reason; and no two modules import each other, directly or around a circle, at load time.

import-linter would state this as configuration; it is not among the packages this project can
install, so the contract is this test, run by the README's test command and so by CI."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "nsprof"

# lowest first; a module belongs to the longest prefix that names it
LAYERS = (
    ("shared facts", ("nsprof", "nsprof.errors", "nsprof.paths", "nsprof.printable", "nsprof.shorten", "nsprof.sizes",
                      "nsprof.ranges", "nsprof.metric_catalog", "nsprof.kernel_names", "nsprof.op_names",
                      "nsprof.console", "nsprof.access", "nsprof.ncu_log", "nsprof.triton_config", "nsprof.cpu_roles",
                      "nsprof.op_model", "nsprof.stage_kinds", "nsprof.output")),
    ("ops and registry", ("nsprof.ops", "nsprof.registry", "nsprof.cpu_speedups")),
    ("ceilings", ("nsprof.ceilings",)),
    ("launch and capture", ("nsprof.launch", "nsprof.capture", "nsprof.ceilings.measure", "nsprof.ceilings.cpu")),
    ("parse", ("nsprof.parse",)),
    ("analyze", ("nsprof.analyze",)),
    ("one capture's analysis, many, history", ("nsprof.profile_analysis", "nsprof.many", "nsprof.history")),
    ("render, explain", ("nsprof.render", "nsprof.explain")),
    ("verbs", ("nsprof.verbs", "nsprof.timeline")),
    ("api and commands", ("nsprof.api", "nsprof.commands", "nsprof.cli", "nsprof.workload", "nsprof.entry",
                          "nsprof.__main__")),
)
# the upward arrows kept, each with why
UPWARD = {
    ("nsprof.ceilings.percent", "nsprof.analyze.metrics"): "% of peak divides with the metrics' own NaN-aware ratio",
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def layer(module: str) -> int:
    found = [(len(prefix), index) for index, (_, prefixes) in enumerate(LAYERS) for prefix in prefixes
             if module == prefix or module.startswith(prefix + ".")]
    assert found, f"{module} is in no layer: add it to LAYERS"
    return max(found)[1]


def imports(path: Path, top_level_only: bool = False) -> set[str]:
    """The nsprof modules a file imports (a name imported from a package that is a module of its
    own counts as that module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("nsprof")}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("nsprof"):
            module = node.module or ""
            found |= {f"{module}.{alias.name}" if f"{module}.{alias.name}" in MODULES else module for alias in node.names}
    return found


def test_every_module_is_in_a_layer():
    for module in MODULES:
        layer(module)


def test_no_module_imports_a_higher_layer_but_the_arrows_kept():
    upward = {(module, target) for module, path in MODULES.items() for target in imports(path)
              if layer(target) > layer(module)}
    assert upward == set(UPWARD), sorted(upward - set(UPWARD))


def test_no_import_circle_at_load_time():
    graph = {module: imports(path, top_level_only=True) & set(MODULES) for module, path in MODULES.items()}
    for start in sorted(graph):
        stack, seen = [(start, (start,))], set()
        while stack:
            module, trail = stack.pop()
            for target in graph[module]:
                assert target != start, " -> ".join((*trail, target))
                if target not in seen:
                    seen.add(target)
                    stack.append((target, (*trail, target)))
