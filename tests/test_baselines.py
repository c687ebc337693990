"""% of cuBLAS in bench records: each stage against cuBLAS in its own precision (Op.baselines), and
the caption that names the baselines when there are two."""

import pytest

from nsprof.ladder.registry import get_stage
from nsprof.ladder_runs.bench import _add_pct_cublas, _record
from nsprof.render.bench_table import baseline_note


def _timed(name: str, size: tuple[int, int, int], ms: float | None) -> dict:
    rec = _record(get_stage("sgemm", name), size)
    if ms is not None:
        rec["status"], rec["median_ms"] = "ok", ms
    return rec


def test_each_record_names_its_precisions_baseline_and_is_compared_with_it_alone():
    size = (512, 512, 512)
    records = [_timed("v9", size, 1.0), _timed("v9t", size, 0.25), _timed("v8", size, 2.0), _timed("v10", size, 1.0),
               _timed("v11", size, 0.5)]
    _add_pct_cublas(records)
    by = {r["stage"]: r for r in records}
    assert [by[s]["baseline"] for s in ("v8", "v9", "v9t", "v10", "v11")] == ["v9", "v9", "v9t", "v9t", "v9t"]
    assert by["v8"]["pct_cublas"] == pytest.approx(50)  # 1.0 ms of FP32 cuBLAS over 2.0
    assert by["v10"]["pct_cublas"] == pytest.approx(25) and by["v11"]["pct_cublas"] == pytest.approx(50)  # of 0.25 ms
    assert by["v9"]["pct_cublas"] == pytest.approx(100) and by["v9t"]["pct_cublas"] == pytest.approx(100)


def test_no_percentage_without_the_baseline_of_that_precision_at_that_size():
    records = [_timed("v9", (512,) * 3, 1.0), _timed("v10", (512,) * 3, 1.0), _timed("v9t", (1024,) * 3, 1.0),
               _timed("v11", (512,) * 3, None)]
    _add_pct_cublas(records)
    assert [r["pct_cublas"] for r in records] == [pytest.approx(100), None, pytest.approx(100), None]


def test_the_table_caption_names_the_baselines_only_when_there_are_two():
    size = (512, 512, 512)
    both = [_timed("v9", size, 1.0), _timed("v8", size, 1.0), _timed("v9t", size, 1.0), _timed("v11", size, 1.0)]
    assert baseline_note(both) == "% cuBLAS: of v9 (cuBLAS) for fp32 stages, of v9t (cuBLAS TF32) for tf32 stages"
    assert baseline_note(both[:2]) is None
