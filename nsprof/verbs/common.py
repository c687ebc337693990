"""What several verbs share: where nothing is written, paths given or not, the runs a verb may repeat,
the workloads that run in a process of their own (nsprof.workload), and where the history database is."""

from __future__ import annotations

from pathlib import Path

from nsprof.errors import UsageError
from nsprof.paths import REPORTS_DIR


def outside_profiles(target: str | Path) -> None:
    """Refuse to write into a profile (a capture is evidence: it keeps only what the tools wrote)."""
    from nsprof.parse.profile import enclosing_profile

    profile = enclosing_profile(Path(target))
    if profile is not None:
        raise UsageError(f"{target} is inside the profile {profile}: nsprof writes nothing into a profile",
                         f"choose another output directory (the default is {REPORTS_DIR}/)")


def path_or_none(value: str | Path | None) -> Path | None:
    return None if value is None else Path(value)


def check_runs(runs: int) -> None:
    """`--runs` of profile and bench: 1 to MAX_RUNS fresh processes."""
    from nsprof.capture.commands import MAX_RUNS

    if not 1 <= runs <= MAX_RUNS:
        raise UsageError(f"--runs {runs}: need 1 to {MAX_RUNS} runs", "pass --runs 5, say, to measure the variation "
                                                                     "between runs")


WORKLOADS = ("bench", "pipeline")  # what nsprof.workload runs in a process of its own


def workload_argv(job: str, options: dict) -> list[str]:
    """The command line that runs `job` of nsprof.workload with `options`, the keyword arguments of
    nsprof.api's function of that name, in a fresh process (data, not a command line of the CLI)."""
    import json
    import sys

    if job not in WORKLOADS:
        raise ValueError(f"no such workload: {job}")
    return [sys.executable, "-m", "nsprof.workload", job, json.dumps(options, sort_keys=True)]

def history_path(db: str | Path | None = None) -> Path:
    """The history database: `db`, else history.sqlite in nsprof's data directory."""
    from nsprof.history.store import HISTORY_FILE
    from nsprof.paths import data_dir

    return Path(db) if db is not None else data_dir() / HISTORY_FILE
