"""benchmarks/synthetic_export.write_xla_export: a small export shaped like an XLA capture, checked
with benchmarks/export_shape.py and read by nsprof's own loader."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from export_shape import shape  # noqa: E402
from synthetic_export import write_xla_export  # noqa: E402

from nsprof.parse.nsys_sqlite import load_nsys  # noqa: E402


def test_xla_export_is_nested_with_many_distinct_names(tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    counts = write_xla_export(a, kernels=2_000, ranges=5_000, names=3_000, steps=10)
    write_xla_export(b, kernels=2_000, ranges=5_000, names=3_000, steps=10, run=1)
    assert counts["CUPTI_ACTIVITY_KIND_KERNEL"] == 2_000
    found = shape(a)
    nvtx, kernels, steps = found["nvtx"], found["kernels"], found["steps"]
    assert abs(nvtx["push_pop"] - 5_000) < 50 and nvtx["start_end"] == 0
    assert 2_000 < nvtx["distinct_names"] < 4_000  # about as many as asked
    assert nvtx["max_depth"] >= 5 and nvtx["threads"] == 17
    assert nvtx["names_with_xla_args_share"] > 0.95 and {"XlaPass", "Thunk", "step"} <= set(nvtx["per_prefix"])
    assert 0.35 < kernels["graph"]["share"] < 0.5 and kernels["launch_calls"] < kernels["count"]
    assert found["runtime"]["calls"] > 3 * kernels["count"] and found["runtime"]["threads"] == 22
    # a compile-and-autotune first step, then steady steps alike
    assert steps["count"] == 10 and steps["kernels_first"] > 5 * steps["kernels_rest"]["median"]
    assert steps["kernels_rest"]["min"] == steps["kernels_rest"]["max"]
    # nsprof reads it: every range (qualified by its domain) and kernel, graph kernels sharing a launch
    export = load_nsys(a)
    assert len(export.kernels) == 2_000 and len(export.nvtx) == nvtx["ranges"]
    assert {"TSL", "train"} == set(export.nvtx["domain"].dropna())
    assert export.kernels["correlation_id"].nunique() == kernels["launch_calls"]
    # another run of the program: the steps' names the same, the autotuning compiles' not
    names_a, names_b = set(export.nvtx["name"]), set(load_nsys(b).nvtx["name"])
    shared = names_a & names_b
    assert any(name.startswith("Thunk:#name=jit(train_step)") for name in shared)
    assert 0.1 < len(shared) / len(names_a) < 0.6
