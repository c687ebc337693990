"""A Gantt chart of an nsys capture: one lane per CUDA stream (kernels, copies by direction,
memsets, graph launches), with the NVTX ranges of each thread as a band above, one lane per
nesting depth, and for a program's capture one lane per GPU below, its idle gaps coloured by why
it waited (nsprof.analyze.host_idle's causes).

Readable and quick at any number of events: each lane is one collection of rectangles, so the
cost grows with the events, not faster; within a GPU lane, work of one kind closer together than
a pixel is drawn as one bar (a million kernels become a few hundred bars); every bar is at least
MIN_BAR_PIXELS wide, so nothing that ran disappears at any zoom, nested NVTX ranges included, and a
bar of GPU work is as opaque as the share of its drawn width that work filled, so that a lane is
never drawn busier than the GPU was (1.7 us kernels two pixels apart read pale, not solid).
Neighbouring NVTX ranges alternate two shades rather than being parted by edges, which would
cover a thin bar. Labels go on bars wide enough for a word, cut so that bars stay told apart.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # files only, never a window

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.collections import PolyCollection
from matplotlib.patches import Patch

from nsprof.analyze.gpu_events import DTOD, DTOH, GRAPH, HTOD, KERNEL, MEMSET, merged_intervals
from nsprof.analyze.iterations import Iterations
from nsprof.analyze.phases import Phase
from nsprof.kernel_names import kernel_label
from nsprof.render.bar_labels import fitted, shared_parts

PIXEL_FRACTION = 1 / 1500  # about a pixel of the plot's width
MIN_BAR_PIXELS = 2
MIN_DENSITY = 0.15  # the palest a bar of GPU work is drawn (the share of its width the work filled, below this)
COLORS = {KERNEL: "#1f77b4", GRAPH: "#ff7f0e", HTOD: "#2ca02c", DTOH: "#d62728", DTOD: "#9467bd", MEMSET: "#7f7f7f"}
OTHER_COLOR = "#8c564b"
NVTX_COLORS = ("#bcbd22", "#dbdb8d")  # neighbouring ranges alternate
LANE_INCHES = 0.32
BAR = (0.1, 0.8)  # a bar's offset and height within its lane
PLOT_WIDTH_CHARS = 175  # characters of the label font across the plot (12 inches, 7-point text), with room to spare
LABEL_CHARS = 3  # the fewest characters worth a label
WHOLE = "the whole capture"
PHASE_COLORS = {"start-up": "#dbdb8d", "loop": "#9edae5", "tail": "#e7e7e7"}
ITERATION_COLORS = ("#17becf", "#1f77b4", "#c7c7c7")  # alternating iterations; the warm-up ones (start-up)
IDLE_COLORS = {"launch overhead": "#ff9896", "host work": "#c5b0d5", "synchronization": "#d62728",
               "blocking copy": "#8c564b", "module loading and allocation": "#e377c2", "queued": "#c7c7c7",
               "unmatched": "#f7f7f7"}
LABELLED = (KERNEL, GRAPH)
LEGEND_COLUMNS = 6  # a row of the legend above the plot: more entries wrap  # copies and memsets are told by their colour


def timeline_figure(events: pd.DataFrame, ranges: pd.DataFrame, window: tuple[int, int], origin: int, title: str,
                    caption: str | None = None, idle: pd.DataFrame | None = None, iterations: Iterations | None = None,
                    phases: tuple[Phase, ...] = ()):
    """The figure for [window) (ns on the capture's clock); x in ms from `origin`. `idle`: the GPU's
    idle gaps by cause (device_id, start_ns, end_ns, cause), drawn as a lane per GPU below its streams;
    `iterations` and `phases`: a program's loop, a lane each at the bottom (iterations in alternating
    shades, the warm-up ones lighter; start-up, loop and tail)."""
    start, end = window
    span = max(end - start, 1)
    pixel = span * PIXEL_FRACTION
    every_event, every_range = events, ranges
    events = events[(events["end_ns"] > start) & (events["start_ns"] < end)]
    ranges = ranges.dropna(subset=["start_ns"])
    ranges = ranges[(ranges["end_ns"].fillna(end) > start) & (ranges["start_ns"] < end)]
    nvtx_lanes = _nvtx_lanes(ranges)
    gpu_lanes = sorted(events.groupby(["device_id", "stream_id"]).groups) if len(events) else []
    idle_devices = sorted(idle["device_id"].unique()) if idle is not None and len(idle) else []
    lanes = len(nvtx_lanes) + len(gpu_lanes) + len(idle_devices) + (iterations is not None) + bool(phases)
    figure, axes = plt.subplots(figsize=(12, max(2.5, 1.4 + LANE_INCHES * max(lanes, 1))), layout="constrained")
    bars = _Bars(axes, start, end, origin, pixel)
    kernel_parts = shared_parts(kernel_label(name) for name in every_event["name"].unique())  # stable as one zooms
    range_parts = shared_parts(str(name) for name in every_range["range"].dropna().unique())
    labels: list[str] = []
    used: set[str] = set()
    causes: set[str] = set()
    if phases:
        for phase in phases:
            bars.add(len(labels), np.array([phase.start_ns]), np.array([phase.end_ns]), PHASE_COLORS[phase.name])
            bars.label(len(labels), phase.start_ns, phase.end_ns, phase.name, {}, "black")
        bars.draw()
        labels.append("phases")
    if iterations is not None:
        starts = iterations.starts_ns
        ends = np.r_[starts[1:], iterations.end_ns]
        shade = np.where(np.arange(len(starts)) < iterations.steady_from, 2, np.arange(len(starts)) % 2)
        bars.add(len(labels), starts, ends, np.array(ITERATION_COLORS)[shade])
        bars.draw()
        labels.append(f"iterations ({iterations.source})")
    for device in reversed(idle_devices):
        assert idle is not None
        gaps = idle[idle["device_id"] == device]
        for cause, group in gaps.groupby("cause", sort=False):
            bars.add(len(labels), group["start_ns"].to_numpy(np.int64), group["end_ns"].to_numpy(np.int64),
                     IDLE_COLORS.get(str(cause), OTHER_COLOR))
            causes.add(str(cause))
        bars.draw()
        labels.append(f"GPU {device} idle: why")
    for (device, stream) in reversed(gpu_lanes):
        lane = events[(events["device_id"] == device) & (events["stream_id"] == stream)]
        for kind, group in lane.groupby("kind", sort=False):
            group = group.sort_values("start_ns", kind="stable")
            bar_start, bar_end = merged_intervals(group["start_ns"].to_numpy(np.int64), group["end_ns"].to_numpy(np.int64),
                                                  int(pixel))
            bars.add(len(labels), bar_start, bar_end, _shaded(COLORS.get(kind, OTHER_COLOR), group, bar_start, bar_end,
                                                               MIN_BAR_PIXELS * pixel))
            wide = bars.wide(bar_start, bar_end) & (kind in LABELLED)
            for left, right, name in _single_name_bars(group, bar_start[wide], bar_end[wide]):
                bars.label(len(labels), left, right, kernel_label(name), kernel_parts, "white")
            used.add(kind)
        bars.draw()
        labels.append(f"GPU {device} stream {stream}")
    for lane_name, lane in nvtx_lanes:
        lane_start = lane["start_ns"].to_numpy(np.int64)
        lane_end = lane["end_ns"].fillna(end).to_numpy(np.float64).astype(np.int64)
        bars.add(len(labels), lane_start, lane_end, np.array(NVTX_COLORS)[np.arange(len(lane)) % 2])
        bars.draw()
        wide = bars.wide(lane_start, lane_end)
        for left, right, name in zip(lane_start[wide], lane_end[wide], lane["range"].to_numpy()[wide]):
            bars.label(len(labels), int(left), int(right), str(name), range_parts, "black")
        labels.append(lane_name)
    axes.set_yticks(np.arange(len(labels)) + 0.5, labels, fontsize=8)
    axes.set_ylim(0, max(len(labels), 1))
    axes.set_xlim(float(bars.ms(start)), float(bars.ms(end)))
    axes.set_xlabel("time (ms from the start of the capture)")
    figure.suptitle(title, fontsize=11)
    if caption:
        figure.supxlabel(caption, fontsize=8)
    axes.grid(axis="x", alpha=0.3)
    legend = [Patch(color=COLORS.get(kind, OTHER_COLOR), label=kind)
              for kind in (*COLORS, *sorted(used - set(COLORS))) if kind in used]
    if len(nvtx_lanes):
        legend.append(Patch(color=NVTX_COLORS[0], label="NVTX range"))
    legend += [Patch(color=color, label=f"idle: {cause}") for cause, color in IDLE_COLORS.items() if cause in causes]
    if legend:
        axes.legend(handles=legend, loc="lower left", bbox_to_anchor=(0, 1.0), ncol=min(len(legend), LEGEND_COLUMNS),
                    fontsize=8, frameon=False, borderaxespad=0.2)
    return figure


def window_caption(window: tuple[int, int], capture: tuple[int, int], why: str) -> str:
    """'window 3,546.0-3,823.9 ms: <why>; --window all for the whole 3,824 ms capture' (ms from the
    capture's start, to a precision that shows the window's length to 4 digits)."""
    (start, end), (first, last) = window, capture
    digits = max(0, 3 - int(np.floor(np.log10(max(end - start, 1) / 1e6))))
    text = f"window {(start - first) / 1e6:,.{digits}f}-{(end - first) / 1e6:,.{digits}f} ms: {why}"
    if start > first or end < last:
        whole_digits = digits if last - first < 1e7 else 0  # a capture of 10 ms or more in whole ms
        text += f"; --window all for the whole {(last - first) / 1e6:,.{whole_digits}f} ms capture"
    elif why != WHOLE:
        text += f" ({WHOLE})"
    return text


def default_reason(left_out: int, idle_ns: int) -> str:
    """Why the default window is where it is (nsprof.analyze.timeline_window's rule, in words)."""
    if not left_out:
        return "where the GPU work and NVTX ranges are"
    return (f"where the GPU work and NVTX ranges are ({left_out:,} GPU operation{'s' if left_out > 1 else ''} "
            f"left out, across an idle stretch of {idle_ns / 1e6:,.1f} ms)")


class _Bars:
    """Collects a lane's rectangles, clipped to the window and at least MIN_BAR_PIXELS wide, and
    draws them as one collection; puts labels on those wide enough."""

    def __init__(self, axes, start: int, end: int, origin: int, pixel: float):
        self.axes, self.start, self.end, self.origin, self.pixel = axes, start, end, origin, pixel
        self.parts: list[tuple[np.ndarray, np.ndarray, int, str | np.ndarray]] = []

    def ms(self, ns) -> np.ndarray:
        return (np.asarray(ns, dtype=np.float64) - self.origin) / 1e6

    def add(self, lane: int, starts: np.ndarray, ends: np.ndarray, color: str | np.ndarray) -> None:
        """Bars in `lane`, of one colour or one each, drawn in the order given."""
        narrowest = MIN_BAR_PIXELS * self.pixel
        left = np.minimum(np.maximum(starts, self.start), self.end - narrowest).astype(np.float64)  # none lost at the edge
        right = np.maximum(np.minimum(ends, self.end), left + narrowest)
        self.parts.append((left, right, lane, color))

    def draw(self) -> None:
        """One PolyCollection for every rectangle added since the last call."""
        if not self.parts:
            return
        left = np.concatenate([part[0] for part in self.parts])
        right = np.concatenate([part[1] for part in self.parts])
        lane = np.concatenate([np.full(len(part[0]), part[2], dtype=np.float64) for part in self.parts])
        colors = np.concatenate([np.broadcast_to(part[3], len(part[0])) for part in self.parts])
        x0, x1 = self.ms(left), self.ms(right)
        y0, y1 = lane + BAR[0], lane + BAR[0] + BAR[1]
        corners = np.stack([np.column_stack(corner) for corner in ((x0, y0), (x0, y1), (x1, y1), (x1, y0))], axis=1)
        # matplotlib's stubs ask for a sequence of polygons; an (n, 4, 2) array is one, as it documents
        polygons = PolyCollection(corners, facecolors=colors, edgecolors="none", linewidths=0,  # type: ignore[arg-type]
                                  gid="timeline-bars")
        self.axes.add_collection(polygons, autolim=False)
        self.parts = []

    def wide(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Which bars may be wide enough for a label (in the window)."""
        shown = np.minimum(ends, self.end) - np.maximum(starts, self.start)
        return shown >= (LABEL_CHARS + 1) / PLOT_WIDTH_CHARS * (self.end - self.start)

    def label(self, lane: int, left: int, right: int, name: str, parts: dict, color: str) -> None:
        left, right = max(left, self.start), min(right, self.end)
        room = (right - left) / (self.end - self.start) * PLOT_WIDTH_CHARS - 1
        text = fitted(name, room, parts.get(name, ())) if room >= LABEL_CHARS else None
        if text:
            self.axes.text(float(self.ms((left + right) / 2)), lane + 0.5, text, ha="center", va="center", fontsize=7,
                           color=color, clip_on=True)


def _shaded(color: str, group: pd.DataFrame, bar_start: np.ndarray, bar_end: np.ndarray, narrowest: float) -> np.ndarray:
    """Each bar's colour, as opaque as the share of its drawn width the work filled (at least
    MIN_DENSITY): a bar of 1.7 us kernels drawn two pixels wide is pale, not solid (`group` sorted
    by start; each bar is a union of its events, merged_intervals')."""
    starts = group["start_ns"].to_numpy(np.int64)
    busy = np.r_[0, np.cumsum((group["end_ns"] - group["start_ns"]).to_numpy(np.float64))]
    first, stop = np.searchsorted(starts, bar_start, "left"), np.searchsorted(starts, bar_end, "left")
    drawn = np.maximum(bar_end - bar_start, narrowest)
    density = np.clip((busy[stop] - busy[first]) / drawn, MIN_DENSITY, 1.0)
    return np.array([f"{color}{round(255 * share):02x}" for share in density], dtype=object)


def _single_name_bars(group: pd.DataFrame, bar_start: np.ndarray, bar_end: np.ndarray):
    """(start, end, name) of the bars whose events all have one name (`group` sorted by start)."""
    starts = group["start_ns"].to_numpy(np.int64)
    names = group["name"].to_numpy(dtype=object)
    for left, right in zip(bar_start, bar_end):
        first, stop = np.searchsorted(starts, [left, right])
        inside = set(names[first:stop])
        if len(inside) == 1:
            yield int(left), int(right), str(inside.pop())


def _nvtx_lanes(ranges: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """One lane per thread and nesting depth (outermost at the top): ranges of one thread that
    overlap go to different lanes."""
    lanes = []
    for (_pid, tid), thread in ranges.groupby(["pid", "tid"], sort=True):
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
