"""Nsight Compute metric sets: named presets (data) plus raw metric names, as `--metrics` takes them.

Every name was checked against `ncu --query-metrics --chip gh100`; the launch__* attributes are
not counters and are not listed there, but ncu reports them. Each preset keeps
gpu__time_duration.sum so that every capture can be placed on a roofline.
"""

from __future__ import annotations

from nsprof.errors import UsageError

_TIME = "gpu__time_duration.sum"
_MEMORY = [
    "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum", "l1tex__t_bytes.sum",
]
_FP32 = [
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
]
_TENSOR = ["sm__ops_path_tensor_src_fp16.sum", "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32.sum"]
_SMEM = [
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
]
_UTILIZATION = ["sm__throughput.avg.pct_of_peak_sustained_elapsed", "sm__warps_active.avg.pct_of_peak_sustained_active"]
_LAUNCH = ["launch__registers_per_thread", "launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic"]

PRESETS: dict[str, list[str]] = {
    # what `nsprof analyze` needs for FLOP/s, bandwidth, intensity and bank conflicts of every stage
    "default": [_TIME, *_MEMORY, *_FP32, *_TENSOR, *_SMEM, *_UTILIZATION, *_LAUNCH],
    "memory": [_TIME, *_MEMORY, "lts__t_sector_hit_rate.pct", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
               "smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum"],
    "compute": [_TIME, *_FP32, *_TENSOR, *_UTILIZATION, "sm__inst_executed_pipe_fma.sum",
                "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"],
    "smem": [_TIME, *_SMEM],
    # why warps did not issue (cycles stalled per issued instruction): v7 should cut short_scoreboard
    # (shared-memory latency), v8 long_scoreboard (global) and barrier
    "stalls": [_TIME, *[f"smsp__average_warp_latency_issue_stalled_{reason}.ratio" for reason in (
                   "short_scoreboard", "long_scoreboard", "barrier", "mio_throttle", "math_pipe_throttle",
                   "not_selected", "wait", "dispatch_stall")],
               "smsp__issue_active.avg.pct_of_peak_sustained_active", "sm__warps_active.avg.pct_of_peak_sustained_active"],
}


def resolve_metrics(values: list[str] | None) -> list[str]:
    """Expand presets and raw names ("default,smem", "memory,launch__grid_size") in order, without repeats.

    A raw metric name always holds a double underscore (unit__counter); anything else must be a preset.
    """
    tokens = [t.strip() for v in (values or ["default"]) for t in v.split(",") if t.strip()]
    if not tokens:
        raise UsageError("no metric given", f"pass --metrics with a preset ({', '.join(PRESETS)}) or raw ncu metric names")
    metrics: list[str] = []
    for token in tokens:
        if token in PRESETS:
            names = PRESETS[token]
        elif "__" in token:
            names = [token]
        else:
            raise UsageError(f"unknown metric preset '{token}'",
                             f"choose from {', '.join(PRESETS)} or give raw ncu metric names such as dram__bytes_read.sum")
        metrics.extend(n for n in names if n not in metrics)
    return metrics
