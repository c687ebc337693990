"""A Gantt chart of an nsys capture: one lane per CUDA stream (kernels, copies by direction,
memsets, graph launches), with the NVTX ranges of each thread as a band above.

Readable at any number of events: within a lane, work of one kind closer together than
MERGE_FRACTION of the window is drawn as one bar (a million kernels become a few hundred bars),
and every bar is at least that wide, so nothing that ran disappears.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # files only, never a window

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from nsprof.analyze.gpu_events import DTOD, DTOH, GRAPH, HTOD, KERNEL, MEMSET, merged_intervals  # noqa: E402

MERGE_FRACTION = 1 / 1500  # about a pixel of the figure's width
COLORS = {KERNEL: "#1f77b4", GRAPH: "#ff7f0e", HTOD: "#2ca02c", DTOH: "#d62728", DTOD: "#9467bd", MEMSET: "#7f7f7f"}
OTHER_COLOR = "#8c564b"
NVTX_COLOR = "#bcbd22"
LANE_INCHES = 0.32
PLOT_WIDTH_CHARS = 190  # characters of the label font across the plot (12 inches, 7-point text)


def timeline_figure(events: pd.DataFrame, ranges: pd.DataFrame, window: tuple[int, int], origin: int, title: str):
    """The figure for [window) (ns on the capture's clock); x in ms from `origin`."""
    start, end = window
    span = max(end - start, 1)
    tolerance = int(span * MERGE_FRACTION)
    events = events[(events["end_ns"] > start) & (events["start_ns"] < end)]
    ranges = ranges.dropna(subset=["start_ns"])
    ranges = ranges[(ranges["end_ns"].fillna(end) > start) & (ranges["start_ns"] < end)]
    nvtx_lanes = _nvtx_lanes(ranges)
    gpu_lanes = sorted(events.groupby(["device_id", "stream_id"]).groups) if len(events) else []
    lanes = len(nvtx_lanes) + len(gpu_lanes)
    figure, axes = plt.subplots(figsize=(12, max(2.5, 1.4 + LANE_INCHES * max(lanes, 1))), layout="constrained")
    to_ms = lambda ns: (np.asarray(ns, dtype=np.float64) - origin) / 1e6  # noqa: E731
    labels, y = [], 0
    used = set()
    for (device, stream) in reversed(gpu_lanes):
        lane = events[(events["device_id"] == device) & (events["stream_id"] == stream)]
        for kind, group in lane.groupby("kind", sort=False):
            bar_start, bar_end = merged_intervals(np.maximum(group["start_ns"], start), np.minimum(group["end_ns"], end), tolerance)
            widths = np.maximum(bar_end - bar_start, tolerance) / 1e6
            axes.broken_barh(list(zip(to_ms(bar_start), widths)), (y + 0.1, 0.8), color=COLORS.get(kind, OTHER_COLOR), linewidth=0)
            used.add(kind)
        labels.append(f"GPU {device} stream {stream}")
        y += 1
    for lane_name, lane in nvtx_lanes:
        for row in lane.itertuples(index=False):
            left, right = max(int(row.start_ns), start), min(int(end if pd.isna(row.end_ns) else row.end_ns), end)
            axes.broken_barh([(to_ms(left), max(right - left, tolerance) / 1e6)], (y + 0.1, 0.8),
                             facecolor=NVTX_COLOR, edgecolor="white", linewidth=0.5)
            label = _fitted(str(row.range), (right - left) / span * PLOT_WIDTH_CHARS)
            if label:
                axes.text(to_ms((left + right) / 2), y + 0.5, label, ha="center", va="center", fontsize=7, clip_on=True)
        labels.append(lane_name)
        y += 1
    axes.set_yticks(np.arange(len(labels)) + 0.5, labels, fontsize=8)
    axes.set_ylim(0, max(len(labels), 1))
    axes.set_xlim(to_ms(start), to_ms(end))
    axes.set_xlabel("time (ms from the start of the capture)")
    figure.suptitle(title, fontsize=11)
    axes.grid(axis="x", alpha=0.3)
    legend = [Patch(color=COLORS.get(kind, OTHER_COLOR), label=kind) for kind in (*COLORS, *sorted(used - set(COLORS))) if kind in used]
    if len(nvtx_lanes):
        legend.append(Patch(color=NVTX_COLOR, label="NVTX range"))
    if legend:
        axes.legend(handles=legend, loc="lower left", bbox_to_anchor=(0, 1.0), ncol=len(legend), fontsize=8, frameon=False,
                    borderaxespad=0.2)
    return figure


def _fitted(text: str, room: float) -> str | None:
    """The label cut to `room` characters (with an ellipsis), or None when not even a few fit."""
    room = int(room) - 1
    if room >= len(text):
        return text
    return text[: room - 1] + "…" if room >= 6 else None


def _nvtx_lanes(ranges: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """One lane per thread and nesting depth (outermost at the top): ranges of one thread that
    overlap go to different lanes."""
    lanes = []
    for (pid, tid), thread in ranges.groupby(["pid", "tid"], sort=True):
        thread = thread.sort_values("start_ns", kind="stable")
        lane_ends: list[int] = []  # per depth, where its last range ends
        depth = []
        for start, stop in zip(thread["start_ns"], thread["end_ns"]):
            stop = np.iinfo(np.int64).max if pd.isna(stop) else int(stop)
            free = next((i for i, lane_end in enumerate(lane_ends) if lane_end <= start), None)
            if free is None:
                lane_ends.append(stop)
                free = len(lane_ends) - 1
            lane_ends[free] = stop
            depth.append(free)
        thread = thread.assign(depth=depth)
        for level in sorted(set(depth), reverse=True):
            lanes.append((f"NVTX thread {tid}" + (f" ({level + 1})" if level else ""), thread[thread["depth"] == level]))
    return lanes
