"""The manual's "From Python" page (docs/python.md) names columns the frames really have."""

import re
from pathlib import Path

import pytest
from manual import page

from nsprof import api

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "profiles" / "examples" / "h200-sgemm-1024"
TORCH = ROOT / "profiles" / "examples" / "h200-program-torch-train"


def _documented() -> dict[str, set[str]]:
    """frame -> the backticked column names of its bullet in docs/python.md."""
    bullets = re.split(r"\n- ", page("python.md").split("What the frames hold")[1])[1:]
    found = {}
    for bullet in bullets:
        names = re.findall(r"`([a-z_.]+)`", bullet)
        for frame in [name for name in names if "." in name]:
            found[frame] = {name for name in names if "." not in name}
    return found


@pytest.fixture(scope="module")
def frames():
    analysis, torch = api.analyze(EXAMPLE), api.analyze(TORCH)
    ladder = api.load_ladder([EXAMPLE])
    return {"analysis.stages": analysis.stages, "analysis.kernels": analysis.kernels,
            "analysis.kernel_groups": analysis.kernel_groups, "analysis.ranges": analysis.ranges,
            "analysis.kernel_summary": analysis.kernel_summary, "analysis.memcpy_summary": analysis.memcpy_summary,
            "analysis.rules": torch.rules, "ladder.work": ladder.work, "ladder.points": ladder.points}


def test_every_documented_column_exists(frames):
    documented = _documented()
    assert set(documented) == set(frames)
    summaries = set(frames["analysis.kernel_summary"]) | set(frames["analysis.memcpy_summary"])
    for frame, columns in documented.items():
        have = summaries if frame.endswith("_summary") else set(frames[frame])
        assert columns <= have, (frame, sorted(columns - have))


def test_the_lazy_analysis_example_prints_what_the_page_shows(monkeypatch):
    """docs/python.md's second example, run as written: the value its last line prints, and only
    the part asked for computed."""
    monkeypatch.chdir(ROOT)
    block = re.findall(r"```python\n(.*?)```", page("python.md"), re.DOTALL)[1]
    lines = block.splitlines()
    namespace: dict = {}
    for line in lines[:-2]:
        exec(line.removeprefix(">>> "), namespace)
    assert repr(eval(lines[-2].removeprefix(">>> ").split("  #")[0], namespace)) == lines[-1]
    assert "copies" in vars(namespace["analysis"]) and "hot_kernels" not in vars(namespace["analysis"])
