"""The metric catalogue: every Nsight Compute metric nsprof collects or reads, one line each.

Capture builds its `--metrics` presets from it; analyze reads raw columns and how they aggregate
over launches from it; the report labels columns with it (formatted by unit, nsprof.render.format)
and `explain` takes labels, table headings and number formats from it. Adding a metric is one line
in METRICS; naming presets in it makes `nsprof profile` collect it.

A column can be filled by several metric names (a general counter and a narrower one): they are
listed in the order they are read, and the first one a profile collected serves. Derived figures
(FLOPs from instruction counts, n-way degrees, intensities) are not metrics: nsprof.analyze.metrics
computes them from these columns.

Every counter was checked against `ncu --query-metrics --chip gh100`; the launch__* attributes and
sm__maximum_warps_per_active_cycle_pct are not listed there, but ncu reports them.
"""

from __future__ import annotations

from dataclasses import dataclass

# How a column aggregates over the launches of one piece of work (nsprof.ladder_analysis.work).
SUM = "sum"  # counters: bytes, instructions, FLOPs, time
WEIGHTED_MEAN = "weighted_mean"  # percentages and ratios: averaged, weighted by each launch's duration
MAIN_KERNEL = "main_kernel"  # launch attributes (registers, block size): the longest launch's value

# Capture presets, in the order `--help` lists them. A preset holds its metrics in catalogue order.
DEFAULT = "default"  # what `nsprof analyze` needs: FLOP/s, bandwidth, intensity, bank conflicts
MEMORY = "memory"
COMPUTE = "compute"
SMEM = "smem"
STALLS = "stalls"  # why warps did not issue: v7 should cut short_scoreboard, v8 long_scoreboard and barrier
PRESETS = (DEFAULT, MEMORY, COMPUTE, SMEM, STALLS)


@dataclass(frozen=True)
class Metric:
    name: str  # as `ncu --metrics` takes it and the raw CSV page heads its column
    column: str  # nsprof's name for the value: snake_case, the unit in the name where it has one
    unit: str  # after nsprof.parse.ncu_units: ns, byte, inst, %, ...; a '/' marks a ratio
    aggregate: str  # SUM, WEIGHTED_MEAN or MAIN_KERNEL
    label: str  # for people: what it measures (report rows)
    spec: str  # format spec of table cells
    presets: tuple[str, ...] = ()  # the capture presets that collect it
    heading: str = ""  # a shorter label for narrow table columns (explain's), where it has one
    note: str = ""  # facts seen on the GPU machines
    display: str = ""  # the name ncu's details page (--page details) gives it, where it shows it
    # a narrower counter read where the general one was not collected: what it cannot see. Its zero
    # is no measurement (nsprof.analyze.metrics.measured reads it as NaN), and a capture it serves
    # still lacks the general one (nsprof.analyze.launch_findings.missing_metrics)
    partial: str = ""


_ALL = PRESETS
_MEM = (DEFAULT, MEMORY)
_MATH = (DEFAULT, COMPUTE)
_STALL = "smsp__average_warp_latency_issue_stalled_{}.ratio"
_STALL_REASONS = ("short_scoreboard", "long_scoreboard", "barrier", "mio_throttle", "math_pipe_throttle",
                  "not_selected", "wait", "dispatch_stall")

def _thread_instructions(op: str, what: str, where: str = "", note: str = "") -> Metric:
    """Math on the CUDA cores: the thread instructions of one SASS op with the predicate on."""
    return Metric(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum", f"{op}_thread_instructions", "inst", SUM,
                  f"{what} thread instructions{where}", ",.0f", _MATH, note=note)


# The order sets each preset's order on the ncu command line, which must not change unnoticed
# (tests/test_metric_catalog.py pins every preset).
METRICS: tuple[Metric, ...] = (
    Metric("gpu__time_duration.sum", "duration_ns", "ns", SUM, "kernel duration (gpu__time_duration)", ",.0f", _ALL,
           display="Duration"),
    # memory traffic
    Metric("dram__bytes_read.sum", "dram_read_bytes", "byte", SUM, "DRAM bytes read", ",.0f", _MEM),
    Metric("dram__bytes_write.sum", "dram_write_bytes", "byte", SUM, "DRAM bytes written", ",.0f", _MEM,
           note="less than the kernel stores when dirty lines are still in L2 at its end "
                "(a 64 MiB transpose showed 48 MB written on the H200)"),
    Metric("lts__t_bytes.sum", "l2_bytes", "byte", SUM, "L2 bytes (lts__t_bytes)", ",.0f", _MEM),
    Metric("l1tex__t_bytes.sum", "l1_bytes", "byte", SUM, "L1 bytes requested (l1tex__t_bytes)", ",.0f", _MEM,
           note="whole 32-byte sectors of every global request: what the sector model predicts"),
    Metric("lts__t_sector_hit_rate.pct", "l2_hit_rate_pct", "%", WEIGHTED_MEAN, "L2 sector hit rate", ".1f", (MEMORY,)),
    Metric("dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram_throughput_pct", "%", WEIGHTED_MEAN,
           "DRAM throughput (% of peak)", ".1f", (MEMORY,), display="DRAM Throughput"),
    Metric("smsp__sass_inst_executed_op_global_ld.sum", "global_ld_instructions", "inst", SUM,
           "global load instructions", ",.0f", (MEMORY,)),
    Metric("smsp__sass_inst_executed_op_global_st.sum", "global_st_instructions", "inst", SUM,
           "global store instructions", ",.0f", (MEMORY,)),
    Metric("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "global_ld_sectors", "sector", SUM,
           "global load sectors", ",.0f"),
    Metric("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "global_ld_requests", "request", SUM,
           "global load requests", ",.0f"),
    Metric("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "global_st_sectors", "sector", SUM,
           "global store sectors", ",.0f"),
    Metric("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "global_st_requests", "request", SUM,
           "global store requests", ",.0f"),
    # FP32 on CUDA cores: thread instructions with the predicate on (FLOPs = fadd + fmul + 2 ffma)
    _thread_instructions("fadd", "FP32 add"),
    _thread_instructions("fmul", "FP32 multiply"),
    _thread_instructions("ffma", "FP32 fused multiply-add",
                         note="cuBLAS SGEMM 512^3 read exactly 134,217,728 (512^3) on the H200"),
    # FP16 on CUDA cores (not tensor cores): thread instructions with the predicate on; FLOPs per
    # instruction as nsprof.analyze.metrics.HALF_FLOPS_PER_INST says. gh100 has no bf16 counter
    # outside the tensor cores (no op_bf16 or op_hadd_bf16 in ncu --query-metrics --chip gh100).
    _thread_instructions("hadd", "FP16 add", " (CUDA cores)",
                         note="conversions count too: a PyTorch fp16 add of 2^24 elements read 2^25 (H200)"),
    _thread_instructions("hmul", "FP16 multiply", " (CUDA cores)"),
    _thread_instructions("hfma", "FP16 fused multiply-add", " (CUDA cores)",
                         note="a packed HFMA2 (two half lanes) counts once: 2^24 HFMA read 16,777,216 and the same "
                              "2^24 multiply-adds as 2^23 HFMA2 read 8,388,608 (H200, "
                              "benchmarks/records/2026-11-24-h200-fp16-counters/h200-fp16-counters.md)"),
    # Tensor cores: ncu counts a multiply-add as 2 ops, so these are FLOPs.
    Metric("sm__ops_path_tensor_src_fp16.sum", "tensor_fp16_flops", "flop", SUM, "tensor FLOPs (fp16 in)", ",.0f", _MATH,
           note="HMMA and HGMMA alike: cuBLAS HGEMM 1024^3 read exactly 2*1024^3 on the H200"),
    Metric("sm__ops_path_tensor_src_bf16_dst_fp32.sum", "tensor_bf16_flops", "flop", SUM,
           "tensor FLOPs (bf16 in, fp32 acc)", ",.0f", _MATH,
           note="a bf16 torch.mm 1024^3 (cuBLAS, wgmma) read exactly 2*1024^3 on the H200 "
                "(benchmarks/records/2026-11-26-h200-triton/tensor-counters.json)"),
    Metric("sm__ops_path_tensor_src_fp8.sum", "tensor_fp8_flops", "flop", SUM, "tensor FLOPs (fp8 in)", ",.0f", _MATH,
           note="an e4m3 torch._scaled_mm 1024^3 (cuBLASLt, wgmma) read exactly 2*1024^3 on the H200 "
                "(benchmarks/records/2026-11-26-h200-triton/tensor-counters.json)"),
    Metric("sm__ops_path_tensor_src_int8.sum", "tensor_int8_ops", "op", SUM, "tensor ops (int8 in)", ",.0f", _MATH,
           note="a torch._int_mm 1024^3 (CUTLASS, IMMA) read exactly 2*1024^3 on the H200 "
                "(benchmarks/records/2026-11-26-h200-triton/tensor-counters.json)"),
    # every tensor path with a TF32 source first (mma.sync's HMMA and wgmma's HGMMA, as src_fp16 counts
    # both); the HMMA-only counter, all that older captures collected, serves when it is all there is
    Metric("sm__ops_path_tensor_src_tf32_dst_fp32.sum", "tensor_tf32_flops", "flop", SUM,
           "TF32 tensor FLOPs (mma.sync and wgmma, fp32 acc)", ",.0f", _MATH),
    Metric("sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32.sum", "tensor_tf32_flops", "flop", SUM,
           "tensor FLOPs by HMMA (tf32 in, fp32 acc)", ",.0f",
           note="SGEMM v10 (mma.sync) at 1024^3 read exactly 2*1024^3 on the H200",
           partial="wgmma (HGMMA) TF32 math: a Hopper kernel on wgmma reads 0 (cuBLAS TF32's sm90_xmma did on the H200)"),
    Metric("sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum", "tensor_hgmma_tf32_flops", "flop", SUM,
           "tensor FLOPs by HGMMA (tf32 in, fp32 acc)", ",.0f", (COMPUTE,)),
    # for the HGEMM ladder: which instructions did the FP16 math, mma.sync/WMMA (HMMA) or Hopper's wgmma (HGMMA).
    # Notes seen on the H200, where cuBLAS HGEMM 1024^3 and 4096^3 ran sm90 wgmma kernels (nvjet_sm90_hsh_*).
    Metric("sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32.sum", "tensor_hmma_fp16_fp32_flops", "flop", SUM,
           "tensor FLOPs by HMMA (fp16 in, fp32 acc)", ",.0f",
           note="0 for cuBLAS HGEMM and h6 (wgmma); HGEMM h1-h5 at 1024^3 read exactly 2*1024^3 (H200)"),
    Metric("sm__ops_path_tensor_op_hgmma_src_fp16.sum", "tensor_hgmma_fp16_flops", "flop", SUM,
           "tensor FLOPs by HGMMA (fp16 in)", ",.0f", (COMPUTE,),
           note="cuBLAS HGEMM N^3 read exactly 2*N^3 (N = 1024, 4096), as src_fp16 did, and h6 at 1024^3; "
                "0 for WMMA and mma.sync (h1-h5)"),
    Metric("sm__inst_executed_pipe_tensor_op_hmma.sum", "tensor_mma_instructions", "inst", SUM,
           "tensor-pipe MMA warp instructions (HMMA and wgmma)", ",.0f",
           note="counts wgmma too: equal to the GMMA count for cuBLAS HGEMM; a WMMA 16x16x16 is 2 per warp"),
    Metric("sm__inst_executed_pipe_tensor_op_gmma.sum", "tensor_gmma_instructions", "inst", SUM,
           "tensor-pipe wgmma warp instructions", ",.0f", (COMPUTE,),
           note="cuBLAS HGEMM 1024^3 read 65,536 (32,768 FLOPs each)"),
    # shared memory: n-way degree = wavefronts per instruction (1: conflict-free, 32: a full 32-way conflict)
    Metric("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "smem_ld_conflicts", "conflict", SUM,
           "shared-load bank conflicts", ",.0f", (DEFAULT, SMEM)),
    Metric("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "smem_st_conflicts", "conflict", SUM,
           "shared-store bank conflicts", ",.0f", (DEFAULT, SMEM)),
    Metric("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "smem_ld_wavefronts", "wavefront", SUM,
           "shared-memory load wavefronts", ",.0f", (DEFAULT, SMEM), heading="shared load wavefronts",
           note="per shared load instruction, a 32x32 float transpose read 32.2 through [32][32], 1.02 through [32][33]"),
    Metric("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "smem_st_wavefronts", "wavefront", SUM,
           "shared-memory store wavefronts", ",.0f", (DEFAULT, SMEM), heading="shared store wavefronts"),
    Metric("smsp__sass_inst_executed_op_shared_ld.sum", "smem_ld_instructions", "inst", SUM,
           "shared-memory load instructions", ",.0f", (DEFAULT, SMEM), heading="shared load instr."),
    Metric("smsp__sass_inst_executed_op_shared_st.sum", "smem_st_instructions", "inst", SUM,
           "shared-memory store instructions", ",.0f", (DEFAULT, SMEM), heading="shared store instr."),
    Metric("smsp__sass_inst_executed_op_ldsm.sum", "smem_ldsm_instructions", "inst", SUM,
           "ldmatrix instructions (tensor-core fragment loads)", ",.0f", (DEFAULT, SMEM), heading="ldmatrix instr.",
           note="not in op_shared_ld, but its wavefronts and conflicts are in the op_ld counters; an .x4 moves "
                "four 8x8 matrices of 16-bit values: at least 4 wavefronts (HGEMM h3 on the H200)"),
    # utilization and warp stalls (cycles stalled per issued instruction)
    # Speed Of Light: the busiest SM unit and the busiest memory unit, % of their peaks (ncu's own first look)
    Metric("sm__throughput.avg.pct_of_peak_sustained_elapsed", "sm_throughput_pct", "%", WEIGHTED_MEAN,
           "SM throughput (% of peak)", ".1f", _MATH, heading="SM %", display="Compute (SM) Throughput"),
    Metric("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "memory_throughput_pct", "%",
           WEIGHTED_MEAN, "memory throughput (% of peak, busiest of DRAM, L2, L1)", ".1f", (DEFAULT, MEMORY),
           heading="mem %", display="Memory Throughput"),
    *(Metric(_STALL.format(reason), f"stall_{reason}", "cycle/inst", WEIGHTED_MEAN,
             f"{reason.replace('_', '-')} stall (cycles per instruction)", ".1f", (STALLS,),
             heading=f"{reason.replace('_', ' ')} stall (cycles/warp)") for reason in _STALL_REASONS),
    Metric("smsp__issue_active.avg.pct_of_peak_sustained_active", "issue_active_pct", "%", WEIGHTED_MEAN,
           "cycles issuing an instruction (% of active cycles)", ".1f", (STALLS,)),
    Metric("sm__warps_active.avg.pct_of_peak_sustained_active", "occupancy_pct", "%", WEIGHTED_MEAN,
           "achieved occupancy (active warps, % of the maximum)", ".1f", (DEFAULT, COMPUTE, STALLS),
           heading="achieved occupancy %", display="Achieved Occupancy"),
    Metric("sm__inst_executed_pipe_fma.sum", "fma_pipe_instructions", "inst", SUM,
           "FMA-pipe warp instructions", ",.0f", (COMPUTE,)),
    Metric("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "fma_pipe_active_pct", "%", WEIGHTED_MEAN,
           "FMA pipe active (% of active cycles)", ".1f", (COMPUTE,)),
    # launch attributes
    Metric("launch__registers_per_thread", "registers_per_thread", "register", MAIN_KERNEL,
           "registers per thread", ".0f", (DEFAULT,), heading="registers/thread",
           display="Registers Per Thread"),
    Metric("launch__shared_mem_per_block_static", "smem_static_per_block_bytes", "byte", MAIN_KERNEL,
           "static shared memory per block", ",.0f", (DEFAULT,),
           display="Static Shared Memory Per Block"),
    Metric("launch__shared_mem_per_block_dynamic", "smem_dynamic_per_block_bytes", "byte", MAIN_KERNEL,
           "dynamic shared memory per block", ",.0f", (DEFAULT,),
           display="Dynamic Shared Memory Per Block"),
    Metric("launch__block_size", "threads_per_block", "thread", MAIN_KERNEL, "threads per block", ".0f",
           heading="threads/block", display="Block Size"),
    Metric("launch__grid_size", "blocks", "block", MAIN_KERNEL, "blocks in the grid", ",.0f", heading="blocks",
           display="Grid Size"),
    Metric("launch__sm_count", "sm_count", "SM", MAIN_KERNEL, "SMs of the GPU", ".0f", display="# SMs"),
    Metric("launch__waves_per_multiprocessor", "waves_per_sm", "wave/SM", MAIN_KERNEL, "waves per SM", ".2f",
           display="Waves Per SM"),
    Metric("launch__occupancy_limit_registers", "blocks_per_sm_by_registers", "block/SM", MAIN_KERNEL,
           "blocks per SM the registers allow (ncu)", ".0f", heading="blocks/SM by registers (ncu)"),
    Metric("sm__maximum_warps_per_active_cycle_pct", "occupancy_theoretical_pct", "%", MAIN_KERNEL,
           "theoretical occupancy (% of the maximum warps)", ".1f", heading="theoretical occupancy %",
           display="Theoretical Occupancy"),
)

BY_NAME: dict[str, Metric] = {m.name: m for m in METRICS}


def _filling(column: str) -> list[Metric]:
    """The metrics that fill `column`, in the order they are read."""
    found = [m for m in METRICS if m.column == column]
    if not found:
        raise KeyError(f"no catalogued metric fills the column {column!r}")
    return found


# One metric per column, the first listed: it labels the column and says how it aggregates.
BY_COLUMN: dict[str, Metric] = {m.column: _filling(m.column)[0] for m in METRICS}


def names(column: str) -> tuple[str, ...]:
    """Every metric name that fills `column`, in the order they are read (the first collected serves):
    ncu's metric names, then the details page's display names."""
    filling = _filling(column)
    return tuple(m.name for m in filling) + tuple(m.display for m in filling if m.display)


def requested(column: str) -> str:
    """The name to ask ncu for when `column` is missing: the one the default preset collects, else the first."""
    candidates = _filling(column)
    return next((m.name for m in candidates if DEFAULT in m.presets), candidates[0].name)


def preset(name: str) -> list[str]:
    """The metric names a capture preset collects, in catalogue order."""
    return [m.name for m in METRICS if name in m.presets]


def columns(aggregate: str) -> tuple[str, ...]:
    """The catalogued columns that aggregate over launches as `aggregate` says, in catalogue order."""
    return tuple(column for column, m in BY_COLUMN.items() if m.aggregate == aggregate)
