"""Many captures as one job: each nsys capture of a directory analyzed as one Dask task, the results
reduced by nsprof.analyze.captures (the shape of `nsys recipe`: a mapper per report, a pandas reducer).

By default the tasks run on a distributed.LocalCluster of worker processes on this machine, each
with bounded memory; with `scheduler` (an address such as tcp://host:8786, or a scheduler file
written by `dask scheduler --scheduler-file`) they run on that cluster, whose workers must see the
same paths and have nsprof installed. Only small results travel back: a capture's row, its kernel
summary and its step table, never its events.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from nsprof.errors import NsprofError, ParseError, SchedulerError, UsageError
from nsprof.parse.captures import CaptureSet

if TYPE_CHECKING:
    from distributed import LocalCluster

# a rank in a file name: rank0, rank_3, rank-12, RANK3, or -r0 / _r1 / .r2 before the suffix or another part
RANK_PATTERNS = (re.compile(r"rank[_-]?(\d+)", re.IGNORECASE), re.compile(r"(?:^|[_.-])r(\d+)(?=$|[_.-])"))
WORKER_MEMORY = "4GiB"


@dataclass(frozen=True)
class CaptureResult:
    """What one task sends back (small): file, rank, the row, its kernel summary and step table."""

    file: str
    rank: int | None
    row: dict
    kernels: pd.DataFrame
    steps: pd.DataFrame


@dataclass(frozen=True)
class ManyCaptures:
    captures: pd.DataFrame  # nsprof.analyze.captures.CAPTURE_COLUMNS, by rank then file
    kernels: pd.DataFrame  # MERGED_COLUMNS
    step_range: str | None  # the step range compared across ranks, None without one
    stragglers: pd.DataFrame  # STRAGGLER_COLUMNS, one row per step
    scheduler: str  # where the tasks ran
    failed: tuple[str, ...] = ()  # "file: why" of each capture that could not be read (the others are above)


def ranks(names: list[str]) -> list[int | None]:
    """Each file's rank, from its name: rank0, rank_3, -r1 ...; otherwise, where the names differ
    only by one number (trace.0.sqlite, trace.1.sqlite, as nsys's %q{RANK} writes them), that number."""
    stems = [name.split(".sqlite")[0].split(".nsys-rep")[0] for name in names]
    found = [next((int(m.group(1)) for pattern in RANK_PATTERNS for m in [pattern.search(stem)] if m), None)
             for stem in stems]
    if all(rank is not None for rank in found) and len(set(found)) == len(found):
        return found
    shapes = [re.sub(r"\d+", "#", stem) for stem in stems]
    numbers = [re.findall(r"\d+", stem) for stem in stems]
    if len(set(shapes)) == 1 and numbers[0]:
        varying = [i for i in range(len(numbers[0])) if len({n[i] for n in numbers}) > 1]
        if len(varying) == 1:
            return [int(n[varying[0]]) for n in numbers]
    return found


def analyze_capture(path: str, rank: int | None, step_range: str | None = None) -> CaptureResult:
    """One task: a capture read and reduced to what the reducer needs (runs on a worker)."""
    from nsprof.analyze.capture_analysis import CaptureAnalysis
    from nsprof.analyze.captures import capture_row, communication, step_table
    from nsprof.parse.profile import Capture, load_timeline

    export = load_timeline(Path(path))
    analysis = CaptureAnalysis(Capture(timelines=[export]))  # the parts asked for below are computed, no others
    kernels = analysis.kernel_summary
    assert kernels is not None and analysis.memcpy_summary is not None and analysis.gpu_utilization is not None
    comm = communication(export)
    row = capture_row(export, kernels, analysis.memcpy_summary, analysis.gpu_utilization, comm)
    return CaptureResult(Path(path).name, rank, row, kernels, step_table(export, comm, step_range))


def analyze_many(captures: CaptureSet, scheduler: str | None = None, workers: int | None = None,
                 memory_limit: str = WORKER_MEMORY, step_range: str | None = None, progress: bool = True) -> ManyCaptures:
    """Every capture of a directory of captures (the front door's RANKS set) as one Dask task
    (module docstring), reduced."""
    from nsprof.analyze.captures import CAPTURE_COLUMNS, merged_kernels, stragglers

    directory, files = captures.path, list(captures.runs)
    if not files:
        raise UsageError(f"{directory}: no nsys capture (.sqlite or .nsys-rep) in this directory",
                         "pass a directory that holds one nsys export or report per rank")
    file_ranks = ranks([file.name for file in files])
    with _client(scheduler, workers, memory_limit) as client:
        # whole paths: a worker of a remote scheduler runs in a directory of its own
        futures = client.map(analyze_capture, [str(file.absolute()) for file in files], file_ranks,
                             step_range=step_range, pure=False)
        results, failed = _gather(client, dict(zip(futures, files)), progress)
        where = client.scheduler.address if scheduler is None else scheduler
    if not results:
        raise ParseError(f"{directory}: none of its {len(files)} captures could be read: {'; '.join(failed)}",
                         "re-export them (nsys export --type sqlite), or pass a directory of readable captures")
    results.sort(key=lambda result: (result.rank is None, result.rank if result.rank is not None else 0, result.file))
    captures = pd.DataFrame([{"file": r.file, "rank": r.rank, **r.row} for r in results])[list(CAPTURE_COLUMNS)]
    step_range_name, late = stragglers([r.steps for r in results], [(r.file, r.rank) for r in results])
    return ManyCaptures(captures, merged_kernels([r.kernels for r in results]), step_range_name, late,
                        "local cluster" if scheduler is None else where, tuple(failed))


class _client:
    """A distributed.Client on the scheduler given (an address or a scheduler file), or on a
    LocalCluster of `workers` processes (default: one per core, up to the captures) that it closes."""

    def __init__(self, scheduler: str | None, workers: int | None, memory_limit: str):
        self.scheduler, self.workers, self.memory_limit = scheduler, workers, memory_limit
        self.cluster: LocalCluster | None = None

    def __enter__(self):
        import logging

        from distributed import Client, LocalCluster

        _check_options(self.scheduler, self.memory_limit)

        # the cluster's chatter is not nsprof's output: a failed task is reported by nsprof, in one line
        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        try:
            if self.scheduler is None:
                self.cluster = LocalCluster(n_workers=self.workers or os.cpu_count() or 1, threads_per_worker=1,
                                            processes=True, memory_limit=self.memory_limit,
                                            # the scheduler's HTTP server starts even without a dashboard:
                                            # on a free port it never clashes with another cluster's 8787
                                            dashboard_address=":0",
                                            silence_logs=logging.CRITICAL)  # the workers' own logs too
                self.client = Client(self.cluster)
            elif Path(self.scheduler).is_file():
                self.client = _within(CONNECT_S, self.scheduler, lambda: Client(scheduler_file=self.scheduler, timeout="10s"))
            else:
                self.client = _within(CONNECT_S, self.scheduler, lambda: Client(self.scheduler, timeout="10s"))
        except OSError as err:
            raise SchedulerError(f"cannot reach the Dask scheduler {self.scheduler} ({err})",
                             "start one with `dask scheduler` and `dask worker ADDRESS`, or leave out --scheduler "
                             "for a local cluster") from None
        except (ValueError, TypeError, KeyError, AssertionError) as err:  # distributed's own checks of what it was given
            what = "scheduler file" if self.scheduler and Path(self.scheduler).is_file() else "scheduler address"
            raise SchedulerError(f"--scheduler {self.scheduler!r} is no {what} Dask can use "
                                 f"({type(err).__name__}: {str(err).splitlines()[0] if str(err) else 'unreadable'})",
                                 "give tcp://HOST:PORT or the file `dask scheduler --scheduler-file` wrote") from None
        return self.client

    def __exit__(self, *exc):
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


CONNECT_S = 30.0  # a scheduler that has not answered by then (a listener that accepts and never speaks) is gone


def _within(seconds: float, scheduler: str, connect):
    """connect(), or SchedulerError when it has not returned within `seconds`: distributed's own
    timeout does not bound a handshake that a listener accepts and never answers (it waited for
    minutes). The attempt is left to a daemon thread, which the exit does not wait for."""
    import threading

    outcome: dict = {}

    def attempt() -> None:
        try:
            outcome["client"] = connect()
        except BaseException as err:  # handed to the caller's thread below
            outcome["error"] = err

    thread = threading.Thread(target=attempt, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise SchedulerError(f"the Dask scheduler {scheduler} did not answer within {seconds:.0f} s",
                             "check that a Dask scheduler listens there (dask scheduler), or leave out --scheduler "
                             "for a local cluster")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["client"]


MIN_WORKER_MEMORY = 64 * 2**20  # below it a worker pauses forever instead of reading one capture


def _check_options(scheduler: str | None, memory_limit: str) -> None:
    """--scheduler and --worker-memory as Dask would refuse them later, in words, before any cluster
    starts (an empty address, a size that is no size or too small to read a capture)."""
    from dask.utils import parse_bytes

    if scheduler is not None and not scheduler.strip():
        raise UsageError("--scheduler is empty", "give tcp://HOST:PORT or a scheduler file, or leave it out")
    if scheduler is not None and not Path(scheduler).is_file() and "/" in scheduler and "://" not in scheduler:
        raise UsageError(f"--scheduler {scheduler!r}: no such scheduler file", "give tcp://HOST:PORT or an existing "
                         "file that `dask scheduler --scheduler-file` wrote")
    try:
        size = parse_bytes(memory_limit)
    except (ValueError, TypeError):
        raise UsageError(f"--worker-memory {memory_limit!r} is not a size", "write it as 4GiB or 512MiB") from None
    if size < MIN_WORKER_MEMORY:
        raise UsageError(f"--worker-memory {memory_limit} is too little for a worker to read a capture",
                         f"give at least {MIN_WORKER_MEMORY // 2**20} MiB (the default is {WORKER_MEMORY})")


def _gather(client, futures: dict, progress: bool) -> tuple[list[CaptureResult], list[str]]:
    """The tasks' results as they finish, with a progress bar on stderr, and "file: why" for each
    task that failed (its nsprof error, another error, or a worker that died under it): one bad
    capture among hundreds does not stop the others, and every bad one is named."""
    from distributed import as_completed
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    from nsprof.console import progress_bar

    results, failed = [], []
    bar = progress_bar(TextColumn("analyzing captures"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                       disable=not progress)
    with bar:
        task = bar.add_task("captures", total=len(futures))
        for future in as_completed(list(futures)):
            file = futures[future]
            try:
                results.append(future.result())
            except Exception as err:  # a task's failure is its capture's, named below; the others go on
                failed.append(f"{file.name}: {_why(err, file)}")
            bar.advance(task)
    return results, sorted(failed)


def _why(err: Exception, file: Path) -> str:
    """A failed task in words, without the path the line already names."""
    if type(err).__name__ == "KilledWorker":  # distributed's: the worker died under the task (memory, a crash)
        return "the worker analyzing it died (out of memory? raise --worker-memory)"
    text = err.problem if isinstance(err, NsprofError) else f"{type(err).__name__}: {err}"
    text = " ".join(str(text).split()).replace(f"{file}: ", "").replace(str(file), file.name)
    return text[:200]
