"""The NVTX range rows of a diff: per range family, its GPU time, or its own duration where it
launched no GPU work (never called: judge.not_called), with the own duration beside either."""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd

from nsprof.diff.judge import Judge, not_called
from nsprof.diff.rows import ROW_FIELDS, ordered, plain, records, values
from nsprof.diff.sides import Side
from nsprof.diff.types import RangeRow

LINKED_SHARE = 0.5  # of a side's kernels linked to their launch calls: fewer, and no range's GPU time can be told


def capture_range_rows(a: Side, b: Side, instances: dict, judge: Judge) -> tuple[list[RangeRow], list[str]]:
    """The range rows of two captures (`instances`: sides.side_instances of each), and a warning
    where a side links its GPU work to no CUDA call: its ranges then compare by their own durations."""
    unlinked = [side.upper() for side, capture in (("a", a), ("b", b)) if not _links_work_to_calls(capture)]
    # a side whose GPU work no range can own (no CUDA calls to link it through) would read "-100% faster"
    range_a, range_b = (instances[side]["ranges"] for side in ("a", "b"))
    if unlinked:
        range_a, range_b = range_a.assign(gpu_time_ns=0.0), range_b.assign(gpu_time_ns=0.0)
    ranges = range_rows(range_a, range_b, judge)
    if not (unlinked and ranges):
        return ranges, []
    return ranges, [f"{' and '.join(unlinked)} link{'s' if len(unlinked) == 1 else ''} the GPU's work to no CUDA "
                    "call (no runtime table, or correlation ids missing): no range's GPU time can be measured, so "
                    "ranges are compared by their own durations (not called); capture with nsys -t cuda "
                    "(nsprof profile does)"]


def range_rows(a: pd.DataFrame, b: pd.DataFrame, judge: Judge) -> list[RangeRow]:
    """Range rows from each side's range instances (key, run, gpu_time_ns, duration_ns, kind), largest changes first."""
    kinds = pd.concat([a, b]).drop_duplicates("key").set_index("key")["kind"]  # copies or ranges, A's first
    gpu = judge.called(judge.compare(*values(a, b, "gpu_time_ns")), kinds)
    own = not_called(judge.called(judge.compare(*values(a, b, "duration_ns")), kinds))
    # A range that launched no GPU work is compared by its own duration.
    no_work = (gpu["a_median_ns"].fillna(0) == 0) & (gpu["b_median_ns"].fillna(0) == 0)
    basis = pd.Series(np.where(no_work, "duration", "gpu_time"), index=gpu.index)
    main = gpu.where(~no_work, own.reindex(gpu.index), axis=0)
    main = ordered(main.assign(a_count=gpu["a_count"], b_count=gpu["b_count"]))
    rows = []
    for record in records(main, "range"):
        key = record["range"]
        record["basis"] = basis[key]
        record["duration"] = {column: plain(own.at[key, column]) for column in ROW_FIELDS if column in own}
        rows.append(record)
    return cast(list[RangeRow], rows)  # records() builds them from the called frame's columns


def _links_work_to_calls(capture: Side) -> bool:
    """Whether a side's capture links most of its GPU work to the CUDA calls that launched it (what
    gives a range its GPU time; the host side's `undecided` below it). An ncu-only side has no
    ranges to judge."""
    share = capture.analyzed().linked_share
    return share is None or share >= LINKED_SHARE
