"""Derived per-kernel metrics from an ncu table, and their totals per NVTX range (pure functions).

Input: `LaunchCounters.kernels` (nsprof.parse.ncu_csv), metric columns in base units, read through
the metric catalogue (nsprof.metric_catalog: which ncu names fill which column). A metric that
was not collected leaves the columns derived from it NaN (null in JSON), never 0: "not measured"
and "measured zero" are different findings.

Output columns (units in the names):

- `duration_ns`, `l2_bytes` (L2 requests) and the shared-memory counts below: as catalogued
- `flops`: FP32 on CUDA cores, fadd + fmul + 2 x ffma (thread instructions with predicate on)
- `fp16_flops`: FP16 on CUDA cores (not tensor cores), hadd, hmul and hfma thread instructions
  weighted by HALF_FLOPS_PER_INST (hadd + hmul + 2 x hfma, FP32's rule: a lower bound for packed half2 code); NaN when the
  capture lacks the counters (they joined nsprof's default preset after the committed captures)
- `tensor_16bit_flops` (FP16 + BF16 sources), `tensor_tf32_flops`, `tensor_fp8_flops` and
  `tensor_int8_ops` (integer ops, counted with the FLOPs: a rate of "FLOP/s" includes them):
  tensor-core math ops; ncu counts each multiply-add as 2 ops, so these are FLOPs. `tensor_flops`
  is their sum; each precision has its own roof (nsprof.analyze.percent_of_peak, nsprof.analyze.roofline).
  `tensor_tf32_flops` is NaN where only the HMMA-only counter was collected and it read 0: it cannot
  see wgmma's TF32 math (Metric.partial), so that 0 is no measurement
- `gflops_per_s`: all counted FLOPs (all_measured_flops: flops + fp16_flops + tensor_flops) /
  duration; NaN, not 0, where none were counted and the TF32 tensor ones were not measured;
  `dram_bytes`: DRAM read + write; `dram_gbytes_per_s`
- `intensity_flop_per_byte`: all counted FLOPs per DRAM byte; `intensity_flop_per_l2_byte`
- `smem_ld_conflicts`, `smem_st_conflicts`: shared-memory bank conflicts of loads and stores
- `smem_ld_wavefronts`, `smem_ld_instructions` (and `_st_`), `smem_ldsm_instructions`
  (ldmatrix, which ncu counts apart from other shared loads): what the n-way degree divides
- `smem_ld_nway`, `smem_st_nway`: wavefronts per shared load/store instruction (ldmatrix
  included); 1 means conflict-free for 32-bit accesses, 32 a full 32-way conflict
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from nsprof import metric_catalog

# Shared-memory counts, kept as ncu measured them (catalogued columns).
SMEM_COUNTS = (
    "smem_ld_conflicts", "smem_st_conflicts",
    "smem_ld_wavefronts", "smem_ld_instructions", "smem_st_wavefronts", "smem_st_instructions",
    "smem_ldsm_instructions",
)
# FLOPs per FP16 thread instruction on CUDA cores, FP32's rule. Measured on the H200
# (benchmarks/records/2026-11-24-h200-fp16-counters/h200-fp16-counters.md): ncu counts a packed HFMA2
# (two half lanes, 4 FLOPs) as one thread instruction, as it does a scalar HFMA (2 FLOPs), and no counter tells them apart; so for
# packed code this is a lower bound (up to half the true count). Conversions count as HADD.
HALF_FLOPS_PER_INST = {"hadd": 1, "hmul": 1, "hfma": 2}


def half_flops_rule() -> str:
    """HALF_FLOPS_PER_INST in words, for labels: 'hadd + hmul + 2 hfma'."""
    return " + ".join(op if flops == 1 else f"{flops} {op}" for op, flops in HALF_FLOPS_PER_INST.items())


# Tensor-core work by source precision, each against its own roof; tensor_flops is their sum.
TENSOR_COLUMNS = ("tensor_16bit_flops", "tensor_tf32_flops", "tensor_fp8_flops", "tensor_int8_ops")
# Columns that add up over kernels; the ratios are recomputed from these totals.
TOTALS = (
    "duration_ns", "flops", "fp16_flops", "tensor_16bit_flops", "tensor_tf32_flops", "tensor_fp8_flops",
    "tensor_int8_ops", "tensor_flops",
    "dram_bytes", "l2_bytes", *SMEM_COUNTS,
)


def kernel_metrics(kernels: pd.DataFrame) -> pd.DataFrame:
    """One row per kernel launch: id, kernel, nvtx, then the columns of the module docstring."""

    def raw(column: str) -> pd.Series:
        return measured(kernels, column)

    out = kernels[["id", "kernel", "nvtx"]].copy()
    out["duration_ns"] = raw("duration_ns")
    out["flops"] = (raw("fadd_thread_instructions") + raw("fmul_thread_instructions")
                    + 2 * raw("ffma_thread_instructions"))
    out["fp16_flops"] = sum(per_inst * raw(f"{op}_thread_instructions") for op, per_inst in HALF_FLOPS_PER_INST.items())
    out["tensor_16bit_flops"] = sum_measured(raw("tensor_fp16_flops"), raw("tensor_bf16_flops"))
    out["tensor_tf32_flops"] = raw("tensor_tf32_flops")
    out["tensor_fp8_flops"] = raw("tensor_fp8_flops")
    out["tensor_int8_ops"] = raw("tensor_int8_ops")
    out["tensor_flops"] = sum_measured(*(out[column] for column in TENSOR_COLUMNS))
    out["dram_bytes"] = raw("dram_read_bytes") + raw("dram_write_bytes")
    for column in ("l2_bytes", *SMEM_COUNTS):
        out[column] = raw(column)
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
    all_flops = all_measured_flops(frame["flops"], frame["fp16_flops"], frame["tensor_flops"])
    # no FLOPs counted while the TF32 tensor ones were not (or only by HMMA's counter, blind to wgmma):
    # unknown, not a measured 0 FLOP/s (v11's wgmma kernel in the committed TF32 capture)
    all_flops = all_flops.mask((all_flops == 0) & frame["tensor_tf32_flops"].isna())
    frame["gflops_per_s"] = ratio(all_flops, frame["duration_ns"])  # FLOP/ns = GFLOP/s
    frame["dram_gbytes_per_s"] = ratio(frame["dram_bytes"], frame["duration_ns"])
    frame["intensity_flop_per_byte"] = ratio(all_flops, frame["dram_bytes"])
    frame["intensity_flop_per_l2_byte"] = ratio(all_flops, frame["l2_bytes"])
    loads = sum_measured(frame["smem_ld_instructions"], frame["smem_ldsm_instructions"])
    frame["smem_ld_nway"] = ratio(frame["smem_ld_wavefronts"], loads)
    frame["smem_st_nway"] = ratio(frame["smem_st_wavefronts"], frame["smem_st_instructions"])
    return frame


def all_measured_flops(flops: pd.Series, fp16_flops: pd.Series, tensor_flops: pd.Series) -> pd.Series:
    """FP32 plus FP16 (CUDA cores) plus tensor FLOPs, the last two where counted; NaN when FP32
    FLOPs were not counted: ncu's --set full counts tensor ops but no FP32 FLOPs, and its tensor
    count alone would read as a rate of 0 for a kernel busy with FP32 math. A capture without the
    FP16 counters (older than them in the default preset) counts FP32 and tensor FLOPs only, and
    launch_findings.missing_metrics names them."""
    return flops + fp16_flops.fillna(0) + tensor_flops.fillna(0)


def measured(launches: pd.DataFrame, column: str) -> pd.Series:
    """A catalogued column of ncu's launch table as floats: the first of its metric names that was
    collected (nsprof.metric_catalog.names); NaN if none was. A partial counter's zero is NaN too:
    the HMMA-only TF32 counter reads 0 for wgmma's TF32 math, which it cannot see."""
    name = served(launches, column)
    if name is None:
        return pd.Series(np.nan, index=launches.index)
    values = pd.to_numeric(launches[name], errors="coerce").astype(float)
    return values.mask(values == 0) if is_partial(name) else values


def served(launches: pd.DataFrame, column: str) -> str | None:
    """The metric name that fills `column` in this launch table (the first collected), or None."""
    return next((name for name in metric_catalog.names(column) if name in launches), None)


def is_partial(name: str) -> bool:
    """Whether a metric name is a narrower counter than its column asks for (Metric.partial)."""
    return bool(name in metric_catalog.BY_NAME and metric_catalog.BY_NAME[name].partial)


def sum_measured(*parts: pd.Series) -> pd.Series:
    """Sum of the parts that were measured; NaN only when none was."""
    return pd.concat(parts, axis=1).sum(axis=1, min_count=1)


def ratio(numerator: pd.Series, denominator: pd.Series) -> pd.Series:
    """NaN where the denominator is 0 or missing (no shared loads has no conflict degree)."""
    return numerator / denominator.where(denominator > 0)
