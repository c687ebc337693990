"""The h6 probe (benchmarks/gpu/experiments/h6_plans.py): its candidate tiles and its check of a ring's shared memory,
for the tests that hold them to the kernel and the launcher; the script lives outside the package, so it is loaded
from its file."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

from nsprof.ladder.registry import get_stage

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def probe():
    spec = importlib.util.spec_from_file_location("h6_plans", ROOT / "benchmarks" / "gpu" / "experiments" / "h6_plans.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def h6_candidates():
    return probe().candidates(get_stage("hgemm", "h6").tiles)
