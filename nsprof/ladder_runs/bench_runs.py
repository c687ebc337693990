"""`nsprof bench --runs N`: the same bench in N fresh processes (nsprof.workload), merged into one record.

One process times every launch under one CUDA context, one set of clocks and one memory layout;
another process can land elsewhere (a TF32 stage ran 3% apart in two runs). Each run's median is
kept per stage and size as `run_medians_ms`, so `nsprof diff` can measure the variation between
runs (nsprof.diff.statistics.compare_runs) instead of assuming it away.
"""

from __future__ import annotations

import json
import statistics
import subprocess
from collections.abc import Callable

from nsprof.errors import NsprofError

RECORD_KEY = ("op", "stage", "size")
BACK_TO_BACK = ("back_to_back_ms", "pct_cublas_back_to_back")


def run_in_fresh_processes(argv: list[str], runs: int, progress: Callable[[str], None]) -> list[dict]:
    """The bench documents of `runs` processes run one after another."""
    documents = []
    for run in range(1, runs + 1):
        progress(f"bench run {run}/{runs} in a fresh process")
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode not in (0, 1):  # 1: a stage failed verification, which the record says
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise NsprofError(f"bench run {run} of {runs} exited with code {done.returncode}: {last}",
                              "run `nsprof bench` with the same options once to see the whole error")
        documents.append(json.loads(done.stdout))
    return documents


def merged(documents: list[dict]) -> dict:
    """The first run's document, each record given `run_medians_ms` (every run's median, in run
    order) and `median_ms` their median, and where every run paired it with the library,
    `run_pct_cublas` and `pct_cublas` their median (and the back-to-back figures theirs, where every run has
    them); a stage that failed or was not timed in any run
    keeps that run's status."""
    first = documents[0]
    by_key = [{tuple(r[k] for k in RECORD_KEY): r for r in document["results"]} for document in documents]
    for record in first["results"]:
        key = tuple(record[k] for k in RECORD_KEY)
        runs = [found.get(key) for found in by_key]
        bad = next((run for run in runs if run is None or run["status"] != "ok"), None)
        if bad is not None:
            record["status"] = bad["status"] if bad else "not run"
            record["message"] = (bad or {}).get("message") or "missing from one of the runs"
            record["median_ms"] = None
            continue
        _merge_timings(record, [run for run in runs if run is not None])
    first["runs"] = len(documents)
    return first


def _merge_timings(record: dict, runs: list[dict]) -> None:
    """One record's timings from every run's (all timed): the medians, the paired % cuBLAS where every run paired
    it, and the back-to-back figures where every run has them."""
    medians = [run["median_ms"] for run in runs]
    record["run_medians_ms"] = medians
    record["median_ms"] = statistics.median(medians)
    percents = _every_runs(runs, "pct_cublas")
    if all(run.get("pct_cublas_method") == "paired" for run in runs) and percents:
        record["run_pct_cublas"] = percents  # each run's own pairs: the spread of % cuBLAS between runs
        record["pct_cublas"] = statistics.median(percents)
    for figure in BACK_TO_BACK:  # --back-to-back: the median of the runs'
        if values := _every_runs(runs, figure):
            record[figure] = statistics.median(values)


def _every_runs(runs: list[dict], key: str) -> list[float]:
    """Every run's `key`, in run order; empty where a run has none."""
    values = [float(run[key]) for run in runs if run.get(key) is not None]
    return values if len(values) == len(runs) else []
