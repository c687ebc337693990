"""Two `nsprof bench` records compared: their stages, by the runs' medians or by each record's
summary (median, quartiles and launch count)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from nsprof.diff.caveats import bench_warnings, runs_warnings
from nsprof.diff.judge import Judge
from nsprof.diff.result import DiffResult
from nsprof.diff.sides import Side
from nsprof.diff.stages import rekeyed, stage_rows
from nsprof.diff.statistics import RUNS_METHOD, SUMMARY_METHOD, compare_runs, compare_summaries


def bench_diff(a: Side, b: Side, judge: Judge, stage_pair: tuple[str, str] | None, runs: dict) -> DiffResult:
    """Two `nsprof bench` records: by their runs' medians where both kept them (bench --runs),
    else by each record's median, quartiles and launch count."""
    assert a.bench is not None and b.bench is not None
    with_runs = all(any(r.get("run_medians_ms") for r in bench["results"]) for bench in (a.bench, b.bench))
    frames = [_bench_runs_frame(a.bench), _bench_runs_frame(b.bench)] if with_runs else \
        [_bench_frame(a.bench), _bench_frame(b.bench)]
    if stage_pair:
        frames = [rekeyed(frame, stage, stage_pair) for frame, stage in zip(frames, stage_pair)]
    common = set(frames[0]["key"]) & set(frames[1]["key"])
    only = [len(set(frame["key"]) - common) for frame in frames]
    skipped = [f"{n} stage and size record{'s' if n > 1 else ''} only in {side}, not compared"
               for n, side in zip(only, "AB") if n]
    frames = [frame[frame["key"].isin(common)] for frame in frames]
    stats = compare_runs(*frames) if with_runs else compare_summaries(*frames)
    stages = stage_rows(judge.called(stats, "kernels"), {}, {}, judge, stage_pair, {})
    warnings = bench_warnings(a.bench, b.bench) + skipped + runs_warnings(judge, runs)
    return DiffResult(a.name, b.name, [], [], stages, [], [], warnings, RUNS_METHOD if with_runs else SUMMARY_METHOD,
                      judge.min_change_pct, stage_pair, {"a": "bench", "b": "bench"}, runs, judge.noise, apart=judge.apart)


def _bench_frame(bench: dict) -> pd.DataFrame:
    """(key, median_ns, q1_ns, q3_ns, runs): each stage's summary in a bench record."""
    rows = [r for r in bench["results"] if r.get("status") == "ok" and r.get("median_ms") is not None]
    frame = pd.DataFrame({
        "key": [f"nsprof:{r['op']}/{r['stage']}/{r['size']}" for r in rows],
        "median_ns": [r["median_ms"] * 1e6 for r in rows],
        "q1_ns": [(r.get("q1_ms") or np.nan) * 1e6 for r in rows],
        "q3_ns": [(r.get("q3_ms") or np.nan) * 1e6 for r in rows],
        "runs": [r.get("runs") or 0 for r in rows]})
    return frame.drop_duplicates("key", keep="last")


def _bench_runs_frame(bench: dict) -> pd.DataFrame:
    """(key, run, value_ns): each run's median of each stage of a `bench --runs` record."""
    rows = [(f"nsprof:{r['op']}/{r['stage']}/{r['size']}", run, median * 1e6)
            for r in bench["results"] if r.get("status") == "ok"
            for run, median in enumerate(r.get("run_medians_ms") or [])]
    return pd.DataFrame(rows, columns=["key", "run", "value_ns"]).drop_duplicates(["key", "run"], keep="last")
