"""`analyze`: one capture's analysis, or many captures' on Dask, and the report of many."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from nsprof.verbs.common import outside_profiles, path_or_none

if TYPE_CHECKING:  # loaded with the calls that need them: `nsprof --help` stays fast
    from nsprof.analyze.capture_analysis import CaptureAnalysis
    from nsprof.many import ManyCaptures


def analyze(path: str | Path, ceilings: str | Path | None = None, attribution: str = "thread") -> CaptureAnalysis:
    """A profile directory or one nsys or ncu file, opened through the front door
    (nsprof.parse.captures): ranges, kernels and stages, with % of peak against the GPU's ceilings
    (measured where saved, see nsprof.ceilings.resolve.resolve_ceiling). `attribution` ("thread" or
    "process") says whose CUDA calls an NVTX range counts (nsprof.analyze.nvtx_attribution). A bench
    record or a directory of profiles is no one capture: a ParseError says what to pass."""
    from nsprof.profile_analysis import opened

    return opened(path, path_or_none(ceilings), attribution)[1]


def analyze_many(directory: str | Path, scheduler: str | None = None, workers: int | None = None,
                 memory_limit: str | None = None, step_range: str | None = None, progress: bool = False) -> ManyCaptures:
    """A directory of several nsys captures (one per rank or run), each analyzed as a Dask task on a
    local cluster of `workers` processes with `memory_limit` each, or on the cluster at `scheduler`
    (an address or a scheduler file). Returns nsprof.many.ManyCaptures: captures, kernels (merged),
    step_range and stragglers. The directory is opened through the front door
    (nsprof.parse.captures.open_captures): anything else is a UsageError saying what it is."""
    from nsprof.errors import UsageError
    from nsprof.many import WORKER_MEMORY
    from nsprof.many import analyze_many as run
    from nsprof.parse.captures import RANKS, open_captures

    captures = open_captures(directory)
    if captures.kind != RANKS:
        raise UsageError(f"{directory}: a {captures.kind}, not a directory of several nsys captures",
                         "pass a directory that holds one nsys export or report per rank; analyze one capture "
                         "with nsprof analyze")
    return run(captures, scheduler, workers, memory_limit or WORKER_MEMORY, step_range, progress)


def is_many_captures(path: str | Path) -> bool:
    """Whether `path` is a directory of several nsys captures (and no profile manifest)."""
    from nsprof.parse.captures import is_many

    return is_many(Path(path))


def write_captures_report(result, directory: str | Path, force: bool = False) -> list[Path]:
    """DIRECTORY/index.html, report.md and the per-rank chart of analyze_many's result, written as
    a set (nsprof.output.write_set): an earlier report there is kept unless `force`."""
    from nsprof.output import write_set
    from nsprof.render.captures import CHART_FILE, captures_blocks, rank_chart
    from nsprof.render.document import Heading
    from nsprof.render.document_writers import to_html, to_markdown

    outside_profiles(directory)
    chart = rank_chart(result)
    title = f"{len(result.captures)} captures"
    blocks = [Heading(1, title), *captures_blocks(result, 100, chart)]
    files = {"index.html": to_html(blocks, title).encode(), "report.md": to_markdown(blocks).encode(), CHART_FILE: chart}
    return write_set(Path(directory), files, force)
