"""A diff's sides: `Side` (one capture and its further runs, or an `nsprof bench` record), and
each run's kernel launches and range and stage instances, the frames a diff compares."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from nsprof.analyze.capture_analysis import CaptureAnalysis
from nsprof.analyze.families import family_column
from nsprof.diff.compiled import compile_work
from nsprof.diff.noise import range_kind
from nsprof.errors import UsageError
from nsprof.ladder_analysis.work import work_key
from nsprof.ranges import parse_stage_range

UNNAMED_GPU = "an unnamed GPU"  # a capture's GPU where it names none


@dataclass(frozen=True)
class Side:
    """One side of a diff: a capture's analysis (with the parts diff compares kept: its DIFF_PARTS),
    or an `nsprof bench` record."""

    name: str
    analysis: CaptureAnalysis | None = None
    bench: dict | None = None  # {"env", "results", ...} as `nsprof bench --save-as` writes it
    runs: tuple[Side, ...] = ()  # the program's further runs, each a capture of its own (not bench records)

    def run_count(self) -> int:
        """How many runs the side holds: a bench record's runs, else this capture and its further runs."""
        if self.bench is not None:
            return int(self.bench.get("runs") or 1)
        return 1 + len(self.runs)

    def analyzed(self) -> CaptureAnalysis:
        """The capture's analysis (diff_captures reads it only when neither side is a bench record)."""
        if self.analysis is None:
            raise TypeError(f"{self.name} is a bench record, not a profile")
        return self.analysis

    def gpus(self) -> list[str]:
        """The GPUs this capture and its further runs ran on, by name (UNNAMED_GPU where a run names
        none), sorted: more than one, and the runs pool machines of different kinds."""
        return sorted({run.analyzed().gpu or UNNAMED_GPU for run in (self, *self.runs)})


def machines_apart(a: Side, b: Side) -> bool:
    """Whether the two sides ran on no GPU in common (by UUID; False where a capture does not say):
    then neither side's runs measure the variation between the machines."""
    ids = [{gpu for run in (side, *side.runs) if run.analysis is not None for gpu in run.analysis.gpu_ids}
           for side in (a, b)]
    return bool(ids[0]) and bool(ids[1]) and not ids[0] & ids[1]


def run_frames(capture: Side, attribution: str = "thread") -> list[dict[str, pd.DataFrame]]:
    """Per run of `capture`, its kernels' launch times (and launch configurations) and its copy
    and other ranges' GPU times (stages among the ranges), as (key, value_ns) frames:
    noise.measure_noise's input."""
    frames = []
    for run in (capture, *capture.runs):
        found = run_instances(run, attribution)
        ranges = pd.concat([found["ranges"], found["stages"]], ignore_index=True) \
            .rename(columns={"gpu_time_ns": "value_ns"})
        copies = ranges["kind"] != "ranges"
        launches = found["launches"]
        frames.append({"kernels": pd.DataFrame({"key": launches["name"], "value_ns": launches["value_ns"],
                                                "config": launches.get("config", ""), "kind": "kernels"}),
                       "copies": ranges[copies][["key", "value_ns", "kind"]],
                       "ranges": ranges[~copies][["key", "value_ns", "kind"]]})
    return frames


def side_instances(capture: Side, attribution: str) -> dict:
    """run_instances of every run of a side, each frame numbering its run in `run` (0 the first)."""
    per_run = [run_instances(run, attribution) for run in (capture, *capture.runs)]
    side = {"source": per_run[0]["source"], "compiling": sum(found["compiling"] for found in per_run)}
    for part in ("launches", "ranges", "stages"):
        side[part] = pd.concat([found[part].assign(run=number) for number, found in enumerate(per_run)], ignore_index=True)
    return side


def run_instances(capture: Side, attribution: str) -> dict:
    """Per-launch kernel times ("launches": name, start_ns, value_ns, and "source"),
    and per-instance range and stage figures ("ranges", "stages": key, gpu_time_ns, duration_ns)."""
    analysis = capture.analyzed()
    if analysis.launch_times is not None and analysis.range_instances is not None:
        launches, source, attributed = analysis.launch_times, analysis.timeline_tool, analysis.range_instances
        # gpu_time_ns is kernel_ns + copy_ns already (nvtx_attribution; the diff once added copy_ns again)
        none = pd.Series(0.0, index=attributed.index)
        copies, pageable = (attributed.get(column, none) for column in ("copy_ns", "pageable_ns"))
        gpu_time = attributed["gpu_time_ns"]
        # ranges pair by family (nsprof.analyze.families): XLA's ids differ between runs of one program
        instances = pd.DataFrame({"key": family_column(attributed["range"]), "gpu_time_ns": gpu_time,
                                  "duration_ns": attributed["duration_ns"].astype("float64"),
                                  "kind": range_kind(copies, gpu_time, pageable)})
        stage_keys = {key for key in pd.unique(instances["key"]) if parse_stage_range(key) is not None}
        is_stage = instances["key"].isin(stage_keys).to_numpy()
        ranges, stages = instances[~is_stage], instances[is_stage]
        compiling = compile_work(launches, source, ranges["key"])
        launches = launches[~compiling]
    elif analysis.kernels is not None:
        kernels = analysis.kernels
        launches = pd.DataFrame({"name": kernels["kernel"].astype(str),
                                 "start_ns": np.arange(len(kernels)), "value_ns": kernels["duration_ns"]}).dropna()
        source = "ncu"
        keys = pd.Series([work_key(nvtx, kernel) for nvtx, kernel in zip(kernels["nvtx"], kernels["kernel"])])
        on_stage = keys.map(lambda key: parse_stage_range(key) is not None).to_numpy(dtype=bool)
        # ncu runs each launch alone, so a stage's GPU time per launch is that launch's duration
        stages = pd.DataFrame({"key": keys[on_stage].to_numpy(), "gpu_time_ns": kernels["duration_ns"].to_numpy()[on_stage],
                               "duration_ns": np.nan, "kind": "ranges"})
        ranges = pd.DataFrame(columns=["key", "gpu_time_ns", "duration_ns", "kind"])
        compiling = pd.Series(False)
    else:
        raise UsageError(f"{capture.name}: no kernel launches to compare", "pass an nsys or ncu capture")
    return {"launches": launches, "source": source, "ranges": ranges, "stages": stages,
            "compiling": int(compiling.sum())}
