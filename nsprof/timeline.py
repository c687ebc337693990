"""A timeline of an nsys capture: what it draws (its GPU events, NVTX ranges and the window, with
why), and the chart and Chrome trace drawn from it as bytes. api.load_timeline and
api.write_timeline are the use cases over it; choosing the window is nsprof.analyze.timeline_window's,
drawing nsprof.render.timeline's and nsprof.render.chrome_trace's."""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from nsprof.errors import ParseError, UsageError

if TYPE_CHECKING:
    from nsprof.analyze.iterations import Loop
    from nsprof.analyze.phases import Phase
from nsprof.paths import REPORTS_DIR

CHART_FORMATS = ("png", "svg", "pdf")  # what a timeline is drawn as, by --out's suffix (matplotlib writes each)


@dataclass
class Timeline:
    name: str  # the capture's slug (nsprof.parse.sources.unique_names): the chart's default file name
    nsys: list  # the capture's nsys exports (nsprof.parse.nsys_sqlite.GpuTimeline)
    events: pd.DataFrame  # GPU events (nsprof.analyze.gpu_events)
    ranges: pd.DataFrame  # NVTX ranges
    window: tuple[int, int]  # what the chart spans, ns on the capture's clock
    capture: tuple[int, int]  # what the capture spans
    caption: str  # the window and why it was chosen
    zoomed: bool  # a range or a window was asked for: the trace keeps to it
    range_: str | None = None
    window_text: str | None = None
    # one program's capture: its GPU idle gaps in the window by cause (nsprof.analyze.host_side.idle_marks)
    idle: pd.DataFrame | None = None
    # one program's capture: its loop's iterations and its phases (nsprof.analyze.iterations, phases)
    loop: Loop | None = None
    phases: tuple[Phase, ...] = ()
    source: str = ""  # the capture's absolute path: a chart names it in its PNG's metadata (chart_path)

    @cached_property
    def trace(self) -> dict:
        """The events (those in the window when zoomed) as a Chrome trace document."""
        from nsprof.analyze.timeline_window import within
        from nsprof.render.chrome_trace import chrome_trace

        gpus = {int(row.device_id): row.name for export in self.nsys for row in export.gpus.itertuples() if row.name}
        start, end = self.window
        events, ranges = (within(self.events, start, end), within(self.ranges, start, end)) if self.zoomed \
            else (self.events, self.ranges)
        return chrome_trace(events, ranges, gpus, origin=self.capture[0])

    @property
    def trace_events(self) -> int:
        """The trace's complete events (kernels, copies, ranges...)."""
        return sum(event["ph"] == "X" for event in self.trace["traceEvents"])


def load_timeline(path: Path, range_: str | None, window: str | None) -> Timeline:
    """The capture at `path` and the window to draw: the NVTX range `range_`, the START:END
    `window` in ms ("all": the whole capture), or by default where the GPU work and ranges are."""
    from nsprof.analyze.gpu_events import gpu_events, range_window
    from nsprof.analyze.host_side import idle_marks
    from nsprof.analyze.iterations import capture_loop
    from nsprof.analyze.phases import phases
    from nsprof.analyze.timeline_window import capture_span, check_window_has_work, default_window, window_from_text
    from nsprof.parse import load_profile
    from nsprof.parse.captures import RANKS, open_captures
    from nsprof.parse.ladder_stages import timeline_has_stages
    from nsprof.parse.sources import unique_names
    from nsprof.render.timeline import WHOLE, default_reason, window_caption

    captures = open_captures(path)
    profile = load_profile(path if captures.kind == RANKS else captures.first)  # a directory's captures drawn together
    if not profile.timelines:
        raise ParseError(f"{path}: no Nsight Systems capture to draw (a timeline needs nsys output)",
                         "Capture one with `nsprof profile --tool nsys`, or pass an .nsys-rep or .sqlite file")
    events = gpu_events(profile.timelines)
    ranges = pd.concat([export.nvtx for export in profile.timelines], ignore_index=True)
    capture = capture_span(events, ranges)
    (start, end), why = capture, WHOLE
    if range_:
        found = range_window(profile.timelines, events, range_)
        if found is None:
            known = sorted(set(ranges["range"]))
            raise UsageError(f"no NVTX range named {range_!r} in {path}", _ranges_hint(known, range_, path))
        (start, end), why = found, f"NVTX range {range_!r} and the GPU work launched inside it"
    whole = window is not None and window.strip().lower() == "all"
    if window and not whole:
        (start, end), why = window_from_text(window, capture, start, end), "as --window asked"
        check_window_has_work(window, events, ranges, start, end, capture)
    elif window is None and not range_:
        chosen = default_window(events, ranges)
        (start, end), why = (chosen.start_ns, chosen.end_ns), default_reason(chosen.left_out, chosen.idle_ns)
    one = profile.timelines[0] if len(profile.timelines) == 1 else None  # one program's: its idle gaps and loop
    idle = idle_marks(one, events, (start, end)) if one is not None else None
    loop = capture_loop(one) if one is not None and not timeline_has_stages(one) else None
    return Timeline(unique_names([path])[0], profile.timelines, events, ranges, (start, end), capture,
                    window_caption((start, end), capture, why), bool(range_) or (window is not None and not whole),
                    range_, window, idle, loop, phases(one, loop) if one is not None and loop is not None else (),
                    str(Path(path).absolute()))


def chart_path(timeline: Timeline, out: str | Path | None) -> Path:
    """Where the chart goes: `out`, or inside the directory `out` (default reports/) under its default name."""
    path = Path(out) if out else Path(REPORTS_DIR)
    if path.is_dir() or not path.suffix:
        path = _free_name(path / timeline_file_name(timeline.name, timeline.range_, timeline.window_text),
                          timeline.source)
    chart_format = path.suffix.lower().lstrip(".")
    if chart_format not in CHART_FORMATS:
        raise UsageError(f"--out {path}: nsprof draws a timeline as {', '.join('.' + f for f in CHART_FORMATS)}, "
                         f"not .{chart_format}", "name the file with one of those suffixes, or give a directory")
    return path


def _free_name(path: Path, source: str) -> Path:
    """`path`, or where a chart of another capture holds that name (three captures named raw.sqlite
    in three directories), the first of `-2`, `-3`, ... that is free or this capture's own chart: a
    default name never replaces another capture's chart."""
    candidate, number = path, 1
    while (other := chart_source(candidate)) is not None and other != source:
        number += 1
        candidate = path.with_name(f"{path.stem}-{number}{path.suffix}")
    return candidate


def chart_source(path: Path) -> str | None:
    """The capture a PNG chart nsprof drew names in its metadata (CHART_SOURCE), or None."""
    if path.suffix.lower() != ".png" or not path.is_file():
        return None
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            source = image.info.get(CHART_SOURCE)
    except (OSError, UnidentifiedImageError, ValueError):
        return None
    return source if isinstance(source, str) else None


def timeline_files(timeline: Timeline, chart: Path, trace: Path | None) -> dict[Path, bytes]:
    """The Chrome trace (with `trace`) and the chart, drawn in the format `chart`'s suffix names."""
    from nsprof.render.figure_file import figure_bytes
    from nsprof.render.timeline import timeline_figure

    files = {trace: json.dumps(timeline.trace).encode()} if trace else {}
    start, end = timeline.window
    events = timeline.events
    shown = int(((events["end_ns"] > start) & (events["start_ns"] < end)).sum())
    iterations = timeline.loop.iterations if timeline.loop is not None else None
    figure = timeline_figure(events, timeline.ranges, timeline.window, timeline.capture[0],
                             f"{timeline.name}: {shown:,} GPU operations", timeline.caption, idle=timeline.idle,
                             iterations=iterations, phases=timeline.phases)
    files[chart] = figure_bytes(figure, chart.suffix.lower().lstrip("."), {CHART_SOURCE: timeline.source})
    return files


def timeline_file_name(name: str, range_: str | None, window: str | None) -> str:
    """timeline-<name>.png, with the range or the window asked for (timeline-<name>-<range>.png,
    timeline-<name>-120-135ms.png), so that charts of one capture do not replace each other."""
    parts = [name]
    if range_:
        parts.append(range_)
    if window:
        parts.append("all" if window.strip().lower() == "all" else window.strip().replace(":", "-") + "ms")
    return "timeline-" + "-".join(re.sub(r"[^A-Za-z0-9._]+", "-", part).strip("-.") for part in parts) + ".png"


CHART_SOURCE = "Source"  # the PNG text key that names the capture a chart shows (a standard PNG keyword)
SHOWN_RANGES = 10  # a capture with more names only its nearest to the one asked for


def _ranges_hint(names: list[str], asked: str, path) -> str:
    """What to pass instead of a range the capture does not hold: every name where there are few,
    else the nearest to `asked` and where to find them all."""
    if not names:
        return "the capture has no NVTX ranges: draw it whole (leave out --range)"
    if len(names) <= SHOWN_RANGES:
        return f"the capture's ranges: {', '.join(names)}"
    nearest = sorted(names, key=lambda name: _likeness(asked, name), reverse=True)[:5]
    return (f"the capture has {len(names):,} ranges; the nearest: {', '.join(nearest)} "
            f"(all of them: nsprof analyze {path})")


def _likeness(asked: str, name: str) -> tuple[int, float]:
    """How near a range name is to the name asked for: first how many of its parts (between / : . _
    and spaces) the name holds, then how alike the two read (difflib), so that sgemm/v2/nosuch finds
    sgemm/v2/1024x1024x1024 before sgemm/v9/1024x1024x1024."""
    parts = [part for part in re.split(r"[/:._\s-]+", asked.lower()) if part]
    return sum(part in name.lower() for part in parts), difflib.SequenceMatcher(None, asked, name).ratio()
