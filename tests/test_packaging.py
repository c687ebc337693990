"""The wheel must carry every subpackage and the kernel sources."""

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]


def test_every_subpackage_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {"nsprof." + ".".join(p.parent.relative_to(ROOT / "nsprof").parts)
               for p in (ROOT / "nsprof").rglob("__init__.py") if p.parent != ROOT / "nsprof"}
    assert on_disk | {"nsprof", "nsprof.kernels"} == set(config["packages"])
    assert config["package-dir"] == {"nsprof.kernels": "kernels"}
    patterns = config["package-data"]["nsprof.kernels"]
    sources = [p.relative_to(ROOT / "kernels") for p in (ROOT / "kernels").rglob("*") if p.suffix in (".cu", ".cuh", ".py")]
    assert sources and all(any(source.match(pattern) for pattern in patterns) for source in sources)


def test_the_readme_runs_the_checks_ci_runs_and_the_test_extra_installs_them():
    command = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert f"\n    {command}\n" in (ROOT / "README.md").read_text()
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    installed = {requirement.split(">")[0].split("<")[0].split("=")[0] for requirement in extra}
    tools = {step.split()[0] for step in command.split("&&")} - {"pip", "python"}
    assert tools == {"ruff", "mypy"} and tools <= installed
