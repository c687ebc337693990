"""The loop of two programs' captures compared (nsprof.analyze.iterations): the time an iteration
takes in each side's steady state, the change with a 95% interval, and start-up on its own line.
Where a side has no loop, None: a diff then leads with its kernels.

An iteration's time is the host's as much as the GPU's, and it moves between runs of an unchanged
program more than its iterations within one run say (two unchanged runs of a training step: +12.7%,
interval +8.6% to +19.3%, tests/data/diff-pairs/train-a and train-b). So with one run a side the
change is shown with its interval over the iterations (statistics.compare_samples) and `not
called`; with two runs a side or more, it is compared between runs (statistics.compare_runs:
each run's median) and called faster or slower when that interval excludes 0 and the change is
at least min_change_pct."""

from __future__ import annotations

import numpy as np
import pandas as pd

from nsprof.analyze.iterations import Loop
from nsprof.analyze.phases import STARTUP, Phase
from nsprof.diff.statistics import compare_runs, compare_samples
from nsprof.diff.types import LoopChange

FASTER, SLOWER, SAME, NOT_CALLED = "faster", "slower", "same", "not called"


def loop_change(a: list[tuple[Loop | None, tuple[Phase, ...]]], b: list[tuple[Loop | None, tuple[Phase, ...]]],
                min_change_pct: float) -> LoopChange | None:
    """The change of the loop between two sides, each a list of its runs' (loop, phases): the module
    docstring says when it is called."""
    sides = []
    for runs in (a, b):
        iterations = [loop.iterations for loop, _ in runs if loop is not None and loop.iterations is not None]
        if len(iterations) != len(runs) or not runs:
            return None
        spans = [it.spans_ns[it.steady_from:].astype(np.float64) for it in iterations]
        startups = [phase.span_ns for _, phases in runs for phase in phases if phase.name == STARTUP]
        sides.append((spans, iterations[0].source, float(np.mean(startups)) if startups else None))
    across_runs = min(len(a), len(b)) >= 2
    frames = [pd.DataFrame({"key": "iteration", "run": np.repeat(np.arange(len(spans)), [len(s) for s in spans]),
                            "value_ns": np.concatenate(spans)}) for spans, _, _ in sides]
    stats = compare_runs(frames[0], frames[1], count_must_hold=False) if across_runs else compare_samples(*frames)
    row = stats.loc["iteration"]
    low, high = (float(row["ci_low_pct"]), float(row["ci_high_pct"])) if row["testable"] else (None, None)
    change = float(row["change_pct"])
    called = low is not None and high is not None and (low > 0 or high < 0) and abs(change) >= min_change_pct
    status = NOT_CALLED if not across_runs else (SLOWER if change > 0 else FASTER) if called else SAME
    (spans_a, source_a, startup_a), (spans_b, source_b, startup_b) = sides
    return {"a_count": sum(map(len, spans_a)), "b_count": sum(map(len, spans_b)), "a_median_ns": float(row["a_median_ns"]),
            "b_median_ns": float(row["b_median_ns"]), "change_pct": change, "ci_low_pct": low, "ci_high_pct": high,
            "status": status, "a_source": source_a, "b_source": source_b, "a_startup_ns": startup_a,
            "b_startup_ns": startup_b}
