"""nsprof.metric_catalog: its structure, the presets built from it, and the readers that follow it."""

from __future__ import annotations

import lzma
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from nsprof import metric_catalog as catalog
from nsprof.analyze.metrics import TOTALS, measured
from nsprof.capture.metrics import PRESETS
from nsprof.ladder_analysis.work import ADDITIVE, work_records
from nsprof.render import format as fmt
from nsprof.render.report import CHANGE_COLUMNS

# `ncu --query-metrics --chip gh100` (Nsight Compute 2025.3.1 on the H200 machine): every base metric
# name ncu knows for the chip, kept packed in the repository so that the check runs in any clone.
GH100_METRICS = Path(__file__).parent / "data" / "reference" / "ncu-query-metrics-gh100.txt.xz"
# Reported by ncu but not counters, so --query-metrics does not list them.
NOT_QUERYABLE = re.compile(r"launch__\w+|sm__maximum_warps_per_active_cycle_pct")

# The presets, pinned: the ncu command lines change only on purpose (added since the catalogue: ldmatrix
# instructions in default and smem, HGEMM's wgmma counters in compute, FP16 on CUDA cores in default
# and compute).
TIME = ["gpu__time_duration.sum"]
MEMORY = ["dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum", "l1tex__t_bytes.sum"]
FP32 = [f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in ("fadd", "fmul", "ffma")]
FP16 = [f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in ("hadd", "hmul", "hfma")]
TENSOR = ["sm__ops_path_tensor_src_fp16.sum",
          # BF16, FP8 and INT8 sources, each read 2MNK on the H200
          "sm__ops_path_tensor_src_bf16_dst_fp32.sum", "sm__ops_path_tensor_src_fp8.sum", "sm__ops_path_tensor_src_int8.sum",
          "sm__ops_path_tensor_src_tf32_dst_fp32.sum"]  # every TF32 path
SMEM = [f"{counter}_{op}.sum" for counter in ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op",
                                              "l1tex__data_pipe_lsu_wavefronts_mem_shared_op",
                                              "smsp__sass_inst_executed_op_shared") for op in ("ld", "st")] + [
    "smsp__sass_inst_executed_op_ldsm.sum"]
WGMMA = ["sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum", "sm__ops_path_tensor_op_hgmma_src_fp16.sum",
         "sm__inst_executed_pipe_tensor_op_gmma.sum"]
SM_SOL = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEMORY_SOL = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"  # SOL, in default
OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
LAUNCH = ["launch__registers_per_thread", "launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic"]
STALLS = [f"smsp__average_warp_latency_issue_stalled_{reason}.ratio" for reason in (
    "short_scoreboard", "long_scoreboard", "barrier", "mio_throttle", "math_pipe_throttle", "not_selected", "wait",
    "dispatch_stall")]
EXPECTED_PRESETS = {
    "default": TIME + MEMORY + FP32 + FP16 + TENSOR + SMEM + [SM_SOL, MEMORY_SOL, OCCUPANCY] + LAUNCH,
    "memory": TIME + MEMORY + ["lts__t_sector_hit_rate.pct", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
                               "smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum",
                               MEMORY_SOL],
    "compute": TIME + FP32 + FP16 + TENSOR + WGMMA + [SM_SOL, OCCUPANCY] + ["sm__inst_executed_pipe_fma.sum",
                                                     "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"],
    "smem": TIME + SMEM,
    "stalls": TIME + STALLS + ["smsp__issue_active.avg.pct_of_peak_sustained_active",
                               "sm__warps_active.avg.pct_of_peak_sustained_active"],
}
HGEMM_COUNTERS = ("sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32.sum", "sm__ops_path_tensor_op_hgmma_src_fp16.sum",
                  "sm__inst_executed_pipe_tensor_op_hmma.sum", "sm__inst_executed_pipe_tensor_op_gmma.sum")


def test_presets_are_built_from_the_catalogue_unchanged():
    assert PRESETS == EXPECTED_PRESETS
    assert list(PRESETS) == list(catalog.PRESETS)
    assert all(name in catalog.BY_NAME for names in PRESETS.values() for name in names)


def test_every_metric_is_described_once():
    assert len(catalog.BY_NAME) == len(catalog.METRICS)
    for m in catalog.METRICS:
        assert re.fullmatch(r"[a-z0-9]+__[a-z0-9_]+(\.[a-z0-9_]+)*", m.name), m.name
        assert re.fullmatch(r"[a-z][a-z0-9_]*", m.column), m.column
        assert m.aggregate in (catalog.SUM, catalog.WEIGHTED_MEAN, catalog.MAIN_KERNEL), m.name
        assert set(m.presets) <= set(catalog.PRESETS), m.name
        assert m.unit and m.label, m.name
        format(1234.5, m.spec)  # a valid format spec


def test_columns_carry_their_unit_in_the_name():
    suffixes = {"ns": "_ns", "byte": "_bytes", "%": "_pct", "flop": "_flops", "inst": "_instructions"}
    for m in catalog.METRICS:
        if m.unit in suffixes:
            assert m.column.endswith(suffixes[m.unit]), (m.name, m.column)


def test_metrics_that_fill_one_column_agree_on_it():
    for column, first in catalog.BY_COLUMN.items():
        alternatives = [m for m in catalog.METRICS if m.column == column]
        assert {(m.unit, m.aggregate) for m in alternatives} == {(first.unit, first.aggregate)}, column
    assert catalog.names("tensor_tf32_flops") == ("sm__ops_path_tensor_src_tf32_dst_fp32.sum",
                                                  "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32.sum")
    assert catalog.requested("tensor_tf32_flops") == "sm__ops_path_tensor_src_tf32_dst_fp32.sum"  # default's
    with pytest.raises(KeyError):
        catalog.names("not_a_column")


def test_hgemm_tensor_counters_are_catalogued_and_wgmma_is_collected_by_compute():
    for name in HGEMM_COUNTERS:
        assert catalog.BY_NAME[name].presets == (("compute",) if name in WGMMA else ())
    assert catalog.BY_NAME["sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32.sum"].label == \
        "tensor FLOPs by HMMA (fp16 in, fp32 acc)"


def test_catalogued_names_are_real_gh100_metrics():
    with lzma.open(GH100_METRICS, "rt") as listed:
        known = {line.split()[0].split(".")[-1] for line in listed if line.strip()}
    assert len(known) > 1000 and "gpu__time_duration" in known
    base = [m.name.split(".")[0] for m in catalog.METRICS if not NOT_QUERYABLE.fullmatch(m.name)]
    assert [name for name in base if name not in known] == []


def test_report_labels_and_formats_every_catalogued_column():
    for column, m in catalog.BY_COLUMN.items():
        assert CHANGE_COLUMNS[column] == (m.label, fmt.for_unit(m.unit))
    assert fmt.for_unit("byte")(2.5e6) == "2.50 MB" and fmt.for_unit("%")(12.34) == "12.3%"
    assert fmt.for_unit("cycle/inst")(3.456) == "3.46" and fmt.for_unit("inst")(12345) == "12.3 k"


def test_a_column_is_read_from_the_first_of_its_names_collected():
    both = pd.DataFrame({"sm__ops_path_tensor_src_tf32_dst_fp32.sum": [1024.0],
                         "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32.sum": [512.0]})
    assert measured(both, "tensor_tf32_flops").tolist() == [1024.0]
    assert measured(both.iloc[:, 1:], "tensor_tf32_flops").tolist() == [512.0]
    assert measured(both, "l1_bytes").isna().all()


def test_work_records_aggregate_every_column_as_the_catalogue_says():
    stage = "nsprof:sgemm/v6/64x64x64"
    launches = pd.DataFrame({
        "id": [0, 1], "kernel": ["main", "helper"], "nvtx": [[stage], [stage]],
        "gpu__time_duration.sum": [300.0, 100.0],
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": [10.0, 5.0],  # SUM
        "smsp__average_warp_latency_issue_stalled_wait.ratio": [2.0, 6.0],  # WEIGHTED_MEAN by duration
        "launch__block_size": [256.0, 64.0],  # MAIN_KERNEL: the longest launch's
    })
    work = work_records(launches, None).iloc[0]
    assert work["global_ld_sectors"] == 15 and "global_ld_sectors" in ADDITIVE
    assert work["stall_wait"] == pytest.approx((2 * 300 + 6 * 100) / 400)
    assert work["threads_per_block"] == 256
    assert math.isnan(work["l1_bytes"]) and math.isnan(work["occupancy_pct"])  # not collected
    assert set(TOTALS) <= set(work.index)
