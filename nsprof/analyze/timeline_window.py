"""Which stretch of an nsys capture a timeline draws by default (pure functions).

A capture often opens with seconds of start-up and compilation (torch.compile), a few copies at
its very start, and the GPU work proper in its last percent: drawn whole, that work is a sliver.
The default window is, in this order:

1. the GPU work (kernels, copies, memsets, graph launches); while one idle stretch of the GPU
   covers more than half of that, the side of it that spans less time is left out (the start-up
   copies before a compilation, say), so no idle stretch is ever more than half the window;
2. widened to take in the NVTX ranges open over that work, by at most a quarter of its length on
   either side (a range around the whole program is cut at the window's edge);
3. with a margin of MARGIN on either side, inside the capture.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from nsprof.analyze.gpu_events import capture_origin, merged_intervals
from nsprof.errors import UsageError

NVTX_REACH = 1 / 4  # how far NVTX ranges may widen the GPU work's stretch, as a fraction of it
MARGIN = 0.02


@dataclass(frozen=True)
class TimelineWindow:
    start_ns: int  # on the capture's clock
    end_ns: int
    left_out: int  # GPU operations outside the window
    idle_ns: int  # the longest idle stretch of the GPU left out with them (0 when none)


def capture_span(events: pd.DataFrame, ranges: pd.DataFrame) -> tuple[int, int]:
    """From the first GPU operation or NVTX range to the end of the last (an unclosed range ends nowhere)."""
    start = capture_origin(events, ranges)
    ends = [int(frame["end_ns"].max()) for frame in (events, ranges) if frame["end_ns"].notna().any()]
    return start, max([*ends, start + 1])


def default_window(events: pd.DataFrame, ranges: pd.DataFrame) -> TimelineWindow:
    """The window of the module's rule; the whole capture when it has no GPU work."""
    first, last = capture_span(events, ranges)
    if events.empty:
        return TimelineWindow(first, last, 0, 0)
    busy_start, busy_end = merged_intervals(events["start_ns"].to_numpy(np.int64), events["end_ns"].to_numpy(np.int64))
    low, high, idle = 0, len(busy_start) - 1, 0
    while high > low:
        gaps = busy_start[low + 1:high + 1] - busy_end[low:high]
        at = low + int(np.argmax(gaps))
        if 2 * gaps[at - low] <= busy_end[high] - busy_start[low]:
            break
        idle = max(idle, int(gaps[at - low]))
        if busy_end[at] - busy_start[low] <= busy_end[high] - busy_start[at + 1]:  # a tie keeps the later work
            low = at + 1
        else:
            high = at
    work_start, work_end = int(busy_start[low]), int(busy_end[high])
    length = work_end - work_start
    starts = ranges["start_ns"].to_numpy(np.float64)
    ends = ranges["end_ns"].fillna(last).to_numpy(np.float64)
    open_over = (ends > work_start) & (starts < work_end)
    reach = int(length * NVTX_REACH)
    opened = int(starts[open_over].min()) if open_over.any() else work_start
    closed = int(ends[open_over].max()) if open_over.any() else work_end
    start = max(min(opened, work_start), work_start - reach)
    end = min(max(closed, work_end), work_end + reach)
    start, end = start - int((end - start) * MARGIN), end + int((end - start) * MARGIN)
    start, end = max(start, first), min(max(end, start + 1), last)
    left_out = int(((events["end_ns"] <= start) | (events["start_ns"] >= end)).sum())
    return TimelineWindow(start, end, left_out, idle)


def within(frame, start: int, end: int):
    """The rows of events or NVTX ranges that overlap [start, end) (a range never closed runs on)."""
    ends = frame["end_ns"].astype("Float64").fillna(float("inf"))
    return frame[(ends > start) & (frame["start_ns"] < end)]


MAX_WINDOW_MS = 1e12  # about 30 years: any larger (or infinite) time is no bound of a capture


def window_from_text(text: str, capture: tuple[int, int], start: int, end: int) -> tuple[int, int]:
    """--window START:END in ms from the capture's start; an empty side keeps the current bound."""
    first, last = capture
    left, colon, right = text.partition(":")
    try:
        values = [None if not side.strip() else float(side) for side in (left, right)]
        if any(value is not None and not abs(value) <= MAX_WINDOW_MS for value in values):  # inf, nan, 1e300
            raise ValueError
        bounds = [None if value is None else first + round(value * 1e6) for value in values]
    except ValueError:
        bounds = None
    if not colon or bounds is None:
        raise UsageError(f"--window {text!r} is not START:END in milliseconds", "write it as 120:135, 120:, :135 or all")
    new_start = bounds[0] if bounds[0] is not None else start
    new_end = bounds[1] if bounds[1] is not None else end
    if new_end <= first or new_start >= last:  # before "ends before it starts": 5000: past the end is outside
        raise UsageError(f"--window {text!r} is outside the capture, which runs 0 to {(last - first) / 1e6:,.3f} ms",
                         "give a window inside it, or --window all")
    if new_end <= new_start:
        raise UsageError(f"--window {text!r} ends before it starts", "give START below END")
    return new_start, new_end


def check_window_has_work(window: str, events, ranges, start: int, end: int, capture: tuple[int, int]) -> None:
    """Refuse a --window that holds no GPU work and no NVTX range: the chart would be empty."""
    def overlapping(frame) -> bool:
        return bool(((frame["end_ns"].fillna(capture[1]) > start) & (frame["start_ns"] < end)).any())

    if overlapping(events) or overlapping(ranges):
        return
    work = f"{(events['start_ns'].min() - capture[0]) / 1e6:,.3f} to {(events['end_ns'].max() - capture[0]) / 1e6:,.3f} ms" \
        if len(events) else "nowhere"
    raise UsageError(f"--window {window!r} holds no GPU work and no NVTX range (the capture runs 0 to "
                     f"{(capture[1] - capture[0]) / 1e6:,.3f} ms, its GPU work {work})",
                     "give a window over them, or --window all")
