"""The public API does what the commands do, from Python (as in a notebook)."""

import sys
from pathlib import Path

import pandas as pd
import pytest

from nsprof import api
from nsprof.errors import GpuUnavailableError, ParseError, UsageError

EXAMPLE = Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h200-sgemm-1024"


def test_analyze_returns_the_tables_analyze_prints():
    analysis = api.analyze(EXAMPLE)
    assert analysis.gpu and "H200" in analysis.gpu
    assert list(analysis.stages["stage"]) == [f"v{i}" for i in range(1, 11)]
    v6 = analysis.kernels[analysis.kernels["kernel"] == "sgemm_v6"]
    assert len(v6) == 3 and (v6["flops"] == 2 * 1024**3).all()


def test_roofline_and_report_files(tmp_path):
    ladder = api.load_ladder([EXAMPLE])
    written = api.write_roofline(ladder, tmp_path / "roof")
    assert [p.name for p in written] == ["roofline.png", "roofline.svg", "roofline.csv"]
    assert set(pd.read_csv(written[2])["label"]) >= {f"v{i}" for i in range(1, 11)}
    report = api.write_report(ladder, tmp_path / "report")
    assert {p.name for p in report} >= {"index.html", "report.md"}


def test_bad_input_raises_project_errors(monkeypatch, tmp_path):
    with pytest.raises(ParseError):
        api.analyze(tmp_path / "missing")
    with pytest.raises(UsageError):
        api.bench(["v99"])
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(GpuUnavailableError):
        api.bench(["v6"], ["64"])
