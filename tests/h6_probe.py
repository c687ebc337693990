"""The h6 probe (benchmarks/gpu/experiments/h6_plans.py): its candidate tiles and its check of a ring's shared memory,
for the tests that hold them to the kernel and the launcher; the script lives outside the package, so it is loaded
from its file."""

from __future__ import annotations

from script_files import script

from nsprof.ladder.registry import get_stage


def probe():
    return script("benchmarks/gpu/experiments/h6_plans.py")


def h6_candidates():
    return probe().candidates(get_stage("hgemm", "h6").tiles)
