"""The analysis of a timeline that no tool wrote: two steps of a program built by hand (kernels, the
calls that launched them, a pinned copy and NVTX ranges, every time in the test), analyzed as any
capture is. The oracle is the arithmetic on the rows the test wrote, not a reader."""

from __future__ import annotations

from pathlib import Path

import pytest
from timeline_builder import call, copy, kernel, nvtx_range, timeline

from nsprof.analyze.capture_analysis import CaptureAnalysis
from nsprof.parse.profile import Capture

US = 1_000  # ns


def two_steps():
    """Step s at 1000 us * s: a copy in (10 us), gemm (40 us), relu (5 us), then the next step."""
    kernels, runtime, nvtx, copies = [], [], [], []
    for step in range(2):
        t = (1 + step) * 1000 * US
        correlation = 10 * step
        runtime += [call("cudaMemcpyAsync_v3020", t, t + 2 * US, correlation + 1),
                    call("cudaLaunchKernel_v7000", t + 3 * US, t + 5 * US, correlation + 2),
                    call("cudaLaunchKernel_v7000", t + 6 * US, t + 8 * US, correlation + 3)]
        copies.append(copy(t + 2 * US, t + 12 * US, correlation + 1, 4 << 20))
        kernels += [kernel("gemm", t + 12 * US, t + 52 * US, correlation + 2),
                    kernel("relu", t + 52 * US, t + 57 * US, correlation + 3)]
        nvtx += [nvtx_range("step", t, t + 60 * US), nvtx_range("forward", t + 2.5 * US, t + 9 * US)]
    return timeline(kernels, runtime, nvtx, copies)


def test_the_kernel_and_copy_summaries_are_the_rows_summed():
    analysis = CaptureAnalysis(Capture(timelines=[two_steps()]))
    summary = analysis.kernel_summary.set_index("kernel")
    assert summary.loc["gemm", "count"] == 2 and summary.loc["gemm", "total_ns"] == 2 * 40 * US
    assert summary.loc["relu", "count"] == 2 and summary.loc["relu", "total_ns"] == 2 * 5 * US
    assert summary.loc["gemm", "pct"] == 100 * 40 / 45 and summary.loc["gemm", "median_ns"] == 40 * US
    (copies,) = analysis.memcpy_summary.to_dict("records")
    assert (copies["kind"], copies["count"], copies["bytes"], copies["total_ns"]) == ("Host-to-Device", 2, 8 << 20, 20 * US)
    assert copies["pageable_count"] == 0


def test_utilization_is_the_busy_time_over_the_span_and_the_gap_is_named():
    """Busy: 2 x (10 + 40 + 5) us; span: from the first copy's start to the last kernel's end; the one
    idle gap lies between step 1's relu and step 2's copy."""
    (gpu,) = CaptureAnalysis(Capture(timelines=[two_steps()])).gpu_utilization
    assert gpu["busy_ns"] == 110 * US and gpu["span_ns"] == (2057 - 1002) * US
    (gap,) = gpu["idle_gaps"]
    assert gap["duration_ns"] == (2002 - 1057) * US and (gap["after"], gap["before"]) == ("relu", "memcpy Host-to-Device")


def test_each_range_gets_the_gpu_work_its_calls_launched():
    """step's calls launched the copy and both kernels (55 us of GPU work a step); forward's only the
    two kernels, launched inside it (45 us), though they ran after it closed."""
    ranges = CaptureAnalysis(Capture(timelines=[two_steps()])).ranges.set_index("range")
    assert ranges.loc["step", "count"] == 2 and ranges.loc["forward", "count"] == 2
    assert ranges.loc["step", "gpu_time_ns"] == 2 * 55 * US
    assert ranges.loc["forward", "gpu_time_ns"] == 2 * 45 * US
    assert ranges.loc["forward", "kernels"] == 4 and ranges.loc["step", "kernels"] == 4


def test_the_hand_built_timeline_is_in_the_model_and_a_stray_column_is_named():
    """The model declares every column with its type; a timeline with a column it does not declare,
    or a name where a time belongs, is named column by column (a reader is checked so on load)."""
    from dataclasses import replace

    from nsprof.parse.model import timeline_problems

    built = two_steps()
    assert timeline_problems(built) == []
    stray = replace(built, kernels=built.kernels.assign(color="red"),
                    runtime=built.runtime.assign(start_ns=built.runtime["start_ns"].astype(str)))
    column, times = timeline_problems(stray)
    assert column == "kernels.color is not a column of the model"
    assert times.startswith("runtime.start_ns holds ") and times.endswith(", not int64")  # str or object


def test_a_part_is_computed_when_first_asked_for_and_kept_lets_the_frames_go():
    analysis = CaptureAnalysis(Capture(timelines=[two_steps()]))
    ranges = analysis.ranges
    assert not {"kernel_summary", "hot_kernels", "unattributed"} & vars(analysis).keys()  # asked for nothing else
    assert "_part_calls" in vars(analysis)  # the launch-call join waits for its other reader ...
    assert analysis.unattributed["kernels"] == 0
    assert "_part_calls" not in vars(analysis)  # ... and is let go once both have read it
    assert repr(analysis) == ("CaptureAnalysis(1 timeline(s), 0 counter file(s); "
                              "computed: range_instances, ranges, unattributed)")
    kept = analysis.kept(["ranges", "gpu_utilization"])
    assert repr(kept) == "CaptureAnalysis(frames let go; computed: ranges, gpu_utilization)"
    assert kept.ranges is ranges and kept.gpu_utilization[0]["busy_ns"] == 110 * US
    with pytest.raises(RuntimeError, match="kept only ranges, gpu_utilization"):
        _ = kept.kernel_summary


def test_the_parts_each_command_keeps_are_parts_of_the_analysis():
    from nsprof.analyze.capture_analysis import parts_of
    from nsprof.ladder_analysis.capture import LadderCaptureAnalysis

    for kind in (CaptureAnalysis, LadderCaptureAnalysis):
        assert set(kind.DIFF_PARTS) <= set(parts_of(kind)) and set(kind.SHOWN_PARTS) <= set(parts_of(kind))
    parts = parts_of(LadderCaptureAnalysis)
    assert {"work", "stages"} <= set(LadderCaptureAnalysis.SHOWN_PARTS) - set(CaptureAnalysis.SHOWN_PARTS)
    assert {"ranges", "hot_kernels", "host", "copies"} <= set(parts_of(CaptureAnalysis))
    assert "stages" not in parts_of(CaptureAnalysis) and "stages" in parts  # the generic analysis knows no ladder


def test_diff_and_analyze_read_one_analysis_of_a_real_capture():
    """A diff's run keeps only the parts diff compares; they are the parts `analyze` shows, computed once."""
    from nsprof.profile_analysis import analyzed_profile, diff_analysis

    export = Path(__file__).parent / "data" / "diff-pairs" / "train-a.sqlite"
    shown, compared = analyzed_profile(export)[1], diff_analysis(export)
    assert shown.gpu_utilization == compared.gpu_utilization and shown.host == compared.host
    assert len(compared.launch_times) == shown.kernel_summary["count"].sum() > 1000  # every launch, once each
    with pytest.raises(RuntimeError):
        _ = compared.hot_kernels  # analyze's, not diff's
    with pytest.raises(RuntimeError):
        _ = shown.launch_times  # diff's, not analyze's
