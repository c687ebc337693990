"""`nsprof timeline PATH`: a Gantt chart of an nsys capture, and its events as a Chrome trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from nsprof.errors import ParseError, UsageError
from nsprof.output import write_atomically


def timeline(
    path: Path = typer.Argument(..., help="An nsys capture: a profile directory, an .nsys-rep or a .sqlite export."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="FILE.png", help="Where to draw the chart. Default: reports/timeline-<name>.png."),
    range_: Optional[str] = typer.Option(None, "--range", metavar="NAME", help="Zoom to an NVTX range: from its first opening to the end of the GPU work launched inside it."),
    window: Optional[str] = typer.Option(None, "--window", metavar="START:END", help="Zoom to milliseconds from the start of the capture, e.g. 120:135 (either side may be left empty)."),
    trace: Optional[Path] = typer.Option(None, "--trace", metavar="FILE.json", help="Also write every event in the Chrome trace format (open it in ui.perfetto.dev or chrome://tracing)."),
    force: bool = typer.Option(False, "--force", help="Replace files that already exist."),
) -> None:
    """Draw where the GPU time went: one lane per CUDA stream (kernels, copies by direction, memsets,
    CUDA graph launches), the NVTX ranges of each thread above them.

    Any number of events stays readable: work closer together than a pixel is drawn as one bar."""
    import matplotlib.pyplot as plt  # matplotlib loads only for the commands that draw

    from nsprof.analyze.gpu_events import capture_origin, gpu_events, range_window
    from nsprof.parse import load_profile
    from nsprof.parse.sources import unique_names
    from nsprof.render.chrome_trace import chrome_trace
    from nsprof.render.timeline import timeline_figure

    profile = load_profile(path)
    if not profile.nsys:
        raise ParseError(f"{path}: no Nsight Systems capture to draw (a timeline needs nsys output)",
                         "Capture one with `nsprof profile --tool nsys`, or pass an .nsys-rep or .sqlite file")
    name = unique_names([Path(path)])[0]
    out = out or Path("reports") / f"timeline-{name}.png"
    targets = [out] + ([trace] if trace else [])
    existing = [str(target) for target in targets if target.exists()]
    if existing and not force:
        raise UsageError(f"{', '.join(existing)} already exist{'s' if len(existing) == 1 else ''}",
                         "pass --force to replace, or choose another --out / --trace")
    events = gpu_events(profile.nsys)
    ranges = _all_ranges(profile.nsys)
    origin = capture_origin(events, ranges)
    ends = [int(frame["end_ns"].max()) for frame in (events, ranges) if frame["end_ns"].notna().any()]
    start, end = origin, max(ends + [origin + 1])
    if range_:
        found = range_window(profile.nsys, events, range_)
        if found is None:
            known = ", ".join(sorted(set(ranges["range"]))[:8]) or "none"
            raise UsageError(f"no NVTX range named {range_!r} in {path}", f"the capture's ranges: {known}")
        start, end = found
    if window:
        start, end = _window(window, origin, start, end)
    if trace:
        gpus = {int(row.device_id): row.name for export in profile.nsys for row in export.gpus.itertuples() if row.name}
        document = chrome_trace(events, ranges, gpus)
        write_atomically(trace, json.dumps(document).encode())
        typer.echo(f"wrote {trace} ({sum(e['ph'] == 'X' for e in document['traceEvents']):,} events)")
    shown = int(((events["end_ns"] > start) & (events["start_ns"] < end)).sum())
    title = f"{name}: {shown:,} GPU operations, {(start - origin) / 1e6:,.3f} to {(end - origin) / 1e6:,.3f} ms"
    figure = timeline_figure(events, ranges, (start, end), origin, title)
    import io
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=150)
    plt.close(figure)
    write_atomically(out, buffer.getvalue())
    typer.echo(f"wrote {out}")


def _all_ranges(exports):
    import pandas as pd

    return pd.concat([export.nvtx for export in exports], ignore_index=True)


def _window(text: str, origin: int, start: int, end: int) -> tuple[int, int]:
    """START:END in ms from the capture's start; an empty side keeps the current bound."""
    left, colon, right = text.partition(":")
    try:
        bounds = [None if not side.strip() else origin + round(float(side) * 1e6) for side in (left, right)]
    except ValueError:
        bounds = None
    if not colon or bounds is None:
        raise UsageError(f"--window {text!r} is not START:END in milliseconds", "write it as 120:135, 120: or :135")
    new_start, new_end = bounds[0] if bounds[0] is not None else start, bounds[1] if bounds[1] is not None else end
    if new_end <= new_start:
        raise UsageError(f"--window {text!r} ends before it starts", "give START below END")
    return new_start, new_end
