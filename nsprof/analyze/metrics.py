"""Derived per-kernel metrics from an ncu table, and their totals per NVTX range (pure functions).

Input: `NcuReport.kernels` (nsprof.parse.ncu_csv), metric columns in base units. A metric that
was not collected leaves the columns derived from it NaN (null in JSON), never 0: "not measured"
and "measured zero" are different findings.

Output columns (units in the names):

- `duration_ns`: gpu__time_duration.sum
- `flops`: FP32 on CUDA cores, fadd + fmul + 2 x ffma (thread instructions with predicate on)
- `tensor_16bit_flops`, `tensor_tf32_flops`: tensor-core math ops with FP16/BF16 and TF32 sources;
  ncu counts each multiply-add as 2 ops, so these are FLOPs. `tensor_flops` is their sum.
- `gflops_per_s`: (flops + tensor_flops) / duration; `dram_bytes`: DRAM read + write;
  `dram_gbytes_per_s`; `l2_bytes`: lts__t_bytes.sum (L2 requests)
- `intensity_flop_per_byte`: (flops + tensor_flops) per DRAM byte; `intensity_flop_per_l2_byte`
- `smem_ld_conflicts`, `smem_st_conflicts`: shared-memory bank conflicts of loads and stores
- `smem_ld_wavefronts`, `smem_ld_instructions` (and `_st_`): what the n-way degree divides
- `smem_ld_nway`, `smem_st_nway`: wavefronts per shared load/store instruction; 1 means
  conflict-free, 32 a full 32-way conflict
"""

from __future__ import annotations

import numpy as np
import pandas as pd

DURATION = "gpu__time_duration.sum"
FP32_ADD = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"
FP32_MUL = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"
FP32_FMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
TENSOR_FP16 = "sm__ops_path_tensor_src_fp16.sum"
TENSOR_BF16 = "sm__ops_path_tensor_src_bf16_dst_fp32.sum"
# All tensor paths with a TF32 source; the HMMA-only counter serves when that is what was collected.
TENSOR_TF32 = ("sm__ops_path_tensor_src_tf32_dst_fp32.sum", "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32.sum")
DRAM_READ = "dram__bytes_read.sum"
DRAM_WRITE = "dram__bytes_write.sum"
L2_BYTES = "lts__t_bytes.sum"
SMEM_LD_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
SMEM_ST_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
SMEM_LD_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
SMEM_ST_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
SMEM_LD_INSTRUCTIONS = "smsp__sass_inst_executed_op_shared_ld.sum"
SMEM_ST_INSTRUCTIONS = "smsp__sass_inst_executed_op_shared_st.sum"

# Columns that add up over kernels; the ratios are recomputed from these totals.
TOTALS = (
    "duration_ns", "flops", "tensor_16bit_flops", "tensor_tf32_flops", "tensor_flops",
    "dram_bytes", "l2_bytes", "smem_ld_conflicts", "smem_st_conflicts",
    "smem_ld_wavefronts", "smem_ld_instructions", "smem_st_wavefronts", "smem_st_instructions",
)


def kernel_metrics(kernels: pd.DataFrame) -> pd.DataFrame:
    """One row per kernel launch: id, kernel, nvtx, then the columns of the module docstring."""

    def metric(*names: str) -> pd.Series:
        """The first of `names` that was collected, as floats; NaN if none was."""
        for name in names:
            if name in kernels:
                return pd.to_numeric(kernels[name], errors="coerce").astype(float)
        return pd.Series(np.nan, index=kernels.index)

    out = kernels[["id", "kernel", "nvtx"]].copy()
    out["duration_ns"] = metric(DURATION)
    out["flops"] = metric(FP32_ADD) + metric(FP32_MUL) + 2 * metric(FP32_FMA)
    out["tensor_16bit_flops"] = sum_measured(metric(TENSOR_FP16), metric(TENSOR_BF16))
    out["tensor_tf32_flops"] = metric(*TENSOR_TF32)
    out["tensor_flops"] = sum_measured(out["tensor_16bit_flops"], out["tensor_tf32_flops"])
    out["dram_bytes"] = metric(DRAM_READ) + metric(DRAM_WRITE)
    out["l2_bytes"] = metric(L2_BYTES)
    out["smem_ld_conflicts"] = metric(SMEM_LD_CONFLICTS)
    out["smem_st_conflicts"] = metric(SMEM_ST_CONFLICTS)
    out["smem_ld_wavefronts"] = metric(SMEM_LD_WAVEFRONTS)
    out["smem_ld_instructions"] = metric(SMEM_LD_INSTRUCTIONS)
    out["smem_st_wavefronts"] = metric(SMEM_ST_WAVEFRONTS)
    out["smem_st_instructions"] = metric(SMEM_ST_INSTRUCTIONS)
    return _add_ratios(out)


def range_metrics(metrics: pd.DataFrame) -> pd.DataFrame:
    """Totals per NVTX range over every kernel launched inside it (nested ranges each count the
    kernel), with the ratios recomputed from the totals. Input: kernel_metrics' output."""
    per_range = metrics.explode("nvtx").dropna(subset=["nvtx"]).rename(columns={"nvtx": "range"})
    grouped = per_range.groupby("range", sort=True)
    totals = grouped[list(TOTALS)].sum(min_count=1)  # a range where nothing was measured stays NaN
    totals.insert(0, "kernels", grouped.size())
    return _add_ratios(totals.reset_index())


def _add_ratios(frame: pd.DataFrame) -> pd.DataFrame:
    all_flops = sum_measured(frame["flops"], frame["tensor_flops"])
    frame["gflops_per_s"] = ratio(all_flops, frame["duration_ns"])  # FLOP/ns = GFLOP/s
    frame["dram_gbytes_per_s"] = ratio(frame["dram_bytes"], frame["duration_ns"])
    frame["intensity_flop_per_byte"] = ratio(all_flops, frame["dram_bytes"])
    frame["intensity_flop_per_l2_byte"] = ratio(all_flops, frame["l2_bytes"])
    frame["smem_ld_nway"] = ratio(frame["smem_ld_wavefronts"], frame["smem_ld_instructions"])
    frame["smem_st_nway"] = ratio(frame["smem_st_wavefronts"], frame["smem_st_instructions"])
    return frame


def sum_measured(*parts: pd.Series) -> pd.Series:
    """Sum of the parts that were measured; NaN only when none was."""
    return pd.concat(parts, axis=1).sum(axis=1, min_count=1)


def ratio(numerator: pd.Series, denominator: pd.Series) -> pd.Series:
    """NaN where the denominator is 0 or missing (no shared loads has no conflict degree)."""
    return numerator / denominator.where(denominator > 0)
