"""`nsprof timeline PATH`: a Gantt chart of an nsys capture, and its events as a Chrome trace."""

from __future__ import annotations

from pathlib import Path

import typer

from nsprof import api


def timeline(
    path: Path = typer.Argument(..., help="An nsys capture: a profile directory, an .nsys-rep or a .sqlite export."),
    out: Path | None = typer.Option(
        None, "--out", metavar="FILE.png",
        help="Where to draw the chart: a .png, .svg or .pdf file, or a directory to hold timeline-<name>.png "
             "(timeline-<name>-<range or window>.png for --range or --window). Default: reports/."),
    range_: str | None = typer.Option(None, "--range", metavar="NAME", help="Zoom to an NVTX range: from its first opening "
                                                                            "to the end of the GPU work launched inside it."),
    window: str | None = typer.Option(
        None, "--window", metavar="START:END|all",
        help="Draw milliseconds from the start of the capture, e.g. 120:135 (either side may be left empty), "
             "or `all` for the whole capture. Default: where the GPU work and NVTX ranges are (said on stderr)."),
    trace: Path | None = typer.Option(
        None, "--trace", metavar="FILE.json",
        help="Also write the events in the Chrome trace format (open it in ui.perfetto.dev or "
             "chrome://tracing): every event, or with --range or --window those in the window drawn."),
    force: bool = typer.Option(False, "--force", help="Also replace files in the way that nsprof did not write, or that "
                                                      "were edited since (its own earlier files are replaced anyway)."),
) -> None:
    """Draw where the GPU time went: one lane per CUDA stream (kernels, copies by direction, memsets, CUDA graph
    launches), the NVTX ranges of each thread above them, one lane per nesting depth.

    By default the chart leaves out start-up and compilation: it spans the GPU work and the NVTX ranges open
    over it, dropping work cut off by an idle stretch longer than all the rest. Any number of events stays
    readable: work closer together than a pixel is drawn as one bar, and no bar is thinner than two pixels; a
    bar of GPU work is as opaque as the share of its width the work filled. In a directory, a chart of another
    capture of the same name is kept: the new one takes the next free name (timeline-raw-2.png)."""
    timeline = api.load_timeline(path, range_, window)
    written_files = api.write_timeline(timeline, out, trace=trace, force=force)
    typer.echo(timeline.caption, err=True)
    for written in written_files:
        if trace is not None and written == Path(trace):
            which = ", those in the window drawn)" if timeline.zoomed else ")"
            typer.echo(f"wrote {written} ({timeline.trace_events:,} events{which}")
        else:
            typer.echo(f"wrote {written}")
