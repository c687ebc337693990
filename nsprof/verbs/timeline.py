"""`timeline`: what a timeline of an nsys capture draws, and the chart and trace written from it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from nsprof.errors import UsageError
from nsprof.verbs.common import outside_profiles, path_or_none

if TYPE_CHECKING:  # loaded with the calls that need them: `nsprof --help` stays fast
    from nsprof.timeline import Timeline


def load_timeline(path: str | Path, range_: str | None = None, window: str | None = None) -> Timeline:
    """What a timeline of an nsys capture draws (nsprof.timeline.Timeline): its GPU events and NVTX
    ranges, and the window: where the GPU work and NVTX ranges are (nsprof.analyze.timeline_window),
    an NVTX range `range_`, a START:END `window` in ms, or "all"; with the caption that says why."""
    from nsprof.timeline import load_timeline as load

    return load(Path(path), range_, window)


def write_timeline(timeline: Timeline | str | Path, out: str | Path | None = None, range_: str | None = None,
                   window: str | None = None, trace: str | Path | None = None, force: bool = False) -> list[Path]:
    """The Gantt chart of a timeline (from load_timeline, or of the capture at a path, with
    `range_` and `window` as load_timeline's) as PNG, SVG or PDF at `out` (default
    reports/timeline-<name>.png, with the range or window in the name), and with `trace` its events
    as a Chrome trace. Files nsprof wrote there before are replaced, any other file in the way is
    kept unless `force` (see nsprof.output); each is written whole or not at all. Returns the
    files written, the trace first."""
    from nsprof.output import check_outputs, write_outputs
    from nsprof.timeline import Timeline, chart_path, timeline_files

    view = timeline if isinstance(timeline, Timeline) else load_timeline(timeline, range_, window)
    chart = chart_path(view, out)
    if trace and Path(trace).resolve() == chart.resolve():
        raise UsageError(f"--out and --trace are the same file, {chart}: the chart would replace the events",
                         "give the trace a name of its own, such as events.json")
    targets = [chart] + ([Path(trace)] if trace else [])
    for target in targets:
        outside_profiles(target.parent)
    since = check_outputs(targets, force)
    files = timeline_files(view, chart, path_or_none(trace))  # everything is drawn before anything is written
    write_outputs(files, force, since)
    return list(files)
