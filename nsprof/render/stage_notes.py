"""What a stage table's numbers rest on, said once for `nsprof analyze` and the report: stages whose
FLOPs the capture did not count, stages whose launch takes longer on the CPU than on the GPU, and
the CPU stages timed beside the capture."""

from __future__ import annotations

import pandas as pd

from nsprof.ladder_analysis.work import WALL_CLOCK
from nsprof.render import format as fmt

PEAK_SAID = "% peak: of the units the stage's precision runs on (FP32 pipes for fp32, tensor cores for tf32 and fp16)"


def stage_notes(stages: pd.DataFrame) -> list[str]:
    """The sentences that apply to these stages (nsprof.ladder_analysis.work's work columns), if any."""
    return [note for note in (declared_flops_note(stages), host_bound_note(stages), cpu_stages_note(stages)) if note]


def cpu_stages_note(stages: pd.DataFrame) -> str | None:
    """CPU stages: where their time comes from, what their % of peak is of, the speed-ups, and the
    sizes where one was not run."""
    if "time_source" not in stages:
        return None
    messages = stages["cpu_message"] if "cpu_message" in stages else pd.Series(None, index=stages.index)
    on_cpu = stages[(stages["time_source"] == WALL_CLOCK) | messages.notna()]
    if on_cpu.empty:
        return None
    note = ("wall clock: a CPU stage's median run on the host, timed beside the capture without a profiler "
            "(bench-cpu.json); its % peak is of the host's FP32 roof (its BLAS, `nsprof ceilings --cpu`, measured "
            "beside it); x CPU loop, x CPU BLAS: how many times faster than the serial CPU loop and the CPU's BLAS at "
            "the same size")
    skipped = [f"{row['label']} at {fmt.problem_size(row['size'])}: {row['cpu_message']}"
               for _, row in on_cpu.iterrows() if isinstance(row.get("cpu_message"), str)]
    return note + "".join(f"; {line}" for line in skipped)


def declared_flops_note(stages: pd.DataFrame) -> str | None:
    """Stages whose own precision's FLOPs ncu did not count: their FLOP/B uses the op's declared FLOPs."""
    if "flops_source" not in stages:
        return None
    declared = stages[stages["flops_source"] == "declared"]
    if declared.empty:
        return None
    precisions = " and ".join(sorted({str(p).upper() for p in declared["precision"].dropna()}))
    return (f"{', '.join(declared['label'])}: this capture did not count their {precisions} FLOPs (flops_source: "
            "declared; profile again with nsprof's default metrics), so their FLOP/B and roofline points use the "
            "op's declared FLOPs per launch, not measured ones")


def host_bound_note(stages: pd.DataFrame) -> str | None:
    """Stages whose NVTX range stays open longer on the CPU than their kernels run on the GPU."""
    if "host_ns_per_launch" not in stages:
        return None
    host = pd.to_numeric(stages["host_ns_per_launch"], errors="coerce")
    gpu = pd.to_numeric(stages["nsys_time_per_launch_ns"], errors="coerce")
    bound = stages[host > gpu]
    if bound.empty:
        return None
    listed = ", ".join(f"{row['label']} ({fmt.duration_ns(row['host_ns_per_launch'])} on the CPU, "
                       f"{fmt.duration_ns(row['nsys_time_per_launch_ns'])} on the GPU)" for _, row in bound.iterrows())
    return (f"{listed} per call (median): host-bound, the GPU waits for the launch, so CUDA events around the "
            "call (nsprof bench) time the host's work too, while nsys's time is the kernels' alone")
