"""nsprof.analyze (derived metrics, ceilings, stages, NVTX attribution) and the analyze command."""

from __future__ import annotations

import json
import math
import shutil
import sqlite3
import statistics
import tempfile
from contextlib import closing
from pathlib import Path

import pandas as pd
import pytest
import typer
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from ncu_builder import PAGES
from nsys_builder import global_pid, global_tid, write_export
from typer.testing import CliRunner

from nsprof.analyze import attribute_work, datasheet_ceiling, kernel_metrics, percent_of_peak, range_metrics
from nsprof.analyze.capture_analysis import CaptureAnalysis
from nsprof.analyze.metrics import HALF_FLOPS_PER_INST, half_flops_rule
from nsprof.commands.analyze import analyze
from nsprof.errors import ParseError
from nsprof.ladder_analysis.work import combine, work_records
from nsprof.parse.ncu_csv import load_ncu_csv
from nsprof.parse.nsys_sqlite import load_nsys
from nsprof.parse.profile import Capture, load_profile
from nsprof.ranges import parse_stage_range, step_range_name

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parents[1]
H200 = DATA / "h200" / "nsys-sgemm-ladder-1024.sqlite"
H200_NCU = {page: DATA / "h200" / f"ncu-sgemm-ladder-1024-{page}.csv" for page in ("raw", "raw-auto", "details")}
SAXPY = DATA / "nsys-pipit" / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite"

FADD, FMUL, FFMA = (f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in ("fadd", "fmul", "ffma"))


def ncu_table(rows: list[dict]) -> pd.DataFrame:
    """An ncu kernels table as nsprof.parse.ncu_csv gives it: id, kernel, nvtx, metric columns."""
    launches = pd.DataFrame([{"id": i, "kernel": f"k{i}", "nvtx": row.pop("nvtx", [])} for i, row in enumerate(rows)])
    return pd.concat([launches, pd.DataFrame(rows, dtype=float)], axis=1)


# --- kernel metrics ---------------------------------------------------------------------------------

def test_kernel_metrics_from_all_counters():
    kernels = ncu_table([{
        "gpu__time_duration.sum": 1000.0, FADD: 100.0, FMUL: 50.0, FFMA: 1000.0,
        "sm__ops_path_tensor_src_fp16.sum": 4000.0, "sm__ops_path_tensor_src_tf32_dst_fp32.sum": 500.0,
        "dram__bytes_read.sum": 300.0, "dram__bytes_write.sum": 100.0, "lts__t_bytes.sum": 800.0,
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 31.0,
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": 0.0,
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 322.0,
        "smsp__sass_inst_executed_op_shared_ld.sum": 10.0,
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": 10.0,
        "smsp__sass_inst_executed_op_shared_st.sum": 10.0,
    }])
    m = kernel_metrics(kernels).iloc[0]
    assert m["flops"] == 100 + 50 + 2 * 1000
    assert m["tensor_flops"] == 4500 and m["tensor_16bit_flops"] == 4000 and m["tensor_tf32_flops"] == 500
    assert m["gflops_per_s"] == pytest.approx((2150 + 4500) / 1000)  # FLOP per ns is GFLOP/s
    assert m["dram_bytes"] == 400 and m["dram_gbytes_per_s"] == pytest.approx(0.4)
    assert m["intensity_flop_per_byte"] == pytest.approx(6650 / 400)
    assert m["intensity_flop_per_l2_byte"] == pytest.approx(6650 / 800)
    assert (m["smem_ld_conflicts"], m["smem_st_conflicts"]) == (31, 0)
    assert m["smem_ld_nway"] == pytest.approx(32.2) and m["smem_st_nway"] == 1


HADD, HMUL, HFMA = (f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in ("hadd", "hmul", "hfma"))
TORCH = REPO / "profiles" / "examples" / "h200-program-torch-train"


def test_half_precision_rule_is_fp32s_until_measured():
    """Pinned: the owner's GPU measurement (is a packed HFMA2 one thread instruction?) changes it on purpose."""
    assert HALF_FLOPS_PER_INST == {"hadd": 1, "hmul": 1, "hfma": 2}
    assert half_flops_rule() == "hadd + hmul + 2 hfma"


def test_fp16_flops_join_the_total_rate_but_not_the_fp32_or_tensor_percentages():
    """The real training-step launches (captured before the FP16 counters) with FP16 counts added."""
    launches = CaptureAnalysis(Capture(counters=load_profile(TORCH).counters)).launches
    h200 = datasheet_ceiling("NVIDIA H200")
    before = percent_of_peak(kernel_metrics(launches), h200)
    counted = launches.assign(**{HADD: 1000.0 * launches["id"], HMUL: 300.0, HFMA: 5000.0})
    after = percent_of_peak(kernel_metrics(counted), h200)
    assert before["fp16_flops"].isna().all()  # not collected: unknown, not 0
    fp16 = 1000.0 * launches["id"] + 300 + 2 * 5000
    assert after["fp16_flops"].tolist() == fp16.tolist()
    duration = pd.to_numeric(launches["gpu__time_duration.sum"])
    # before: no FLOPs counted and TF32 unmeasured reads NaN (unknown), not 0
    assert (after["gflops_per_s"] - before["gflops_per_s"].fillna(0)).tolist() == pytest.approx((fp16 / duration).tolist())
    fp32 = pd.to_numeric(launches[FADD]) + pd.to_numeric(launches[FMUL]) + 2 * pd.to_numeric(launches[FFMA])
    tensor = pd.to_numeric(launches["sm__ops_path_tensor_src_fp16.sum"])  # + TF32's, 0 in this capture
    assert before["gflops_per_s"].fillna(0).tolist() == pytest.approx(((fp32 + tensor) / duration).tolist())
    for column in ("fp32_pct_of_peak", "tensor_pct_of_peak", "flops", "tensor_flops"):
        assert after[column].tolist() == before[column].tolist(), column
    totals = range_metrics(kernel_metrics(counted).assign(nvtx=[["all"]] * len(counted))).iloc[0]
    assert totals["fp16_flops"] == fp16.sum()
    assert totals["gflops_per_s"] == pytest.approx((fp32.sum() + fp16.sum() + tensor.sum()) / duration.sum())


def test_metrics_not_collected_are_nan_not_zero():
    m = kernel_metrics(ncu_table([{"gpu__time_duration.sum": 1000.0, FFMA: 10.0}])).iloc[0]
    for column in ("flops", "fp16_flops", "tensor_flops", "dram_bytes", "l2_bytes", "gflops_per_s", "dram_gbytes_per_s",
                   "intensity_flop_per_byte", "smem_ld_conflicts", "smem_ld_nway", "smem_st_nway"):
        assert math.isnan(m[column]), column


def test_zero_denominators_give_nan():
    m = kernel_metrics(ncu_table([{
        "gpu__time_duration.sum": 0.0, FADD: 0.0, FMUL: 0.0, FFMA: 5.0, "dram__bytes_read.sum": 0.0,
        "dram__bytes_write.sum": 0.0, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 0.0,
        "smsp__sass_inst_executed_op_shared_ld.sum": 0.0}])).iloc[0]
    assert m["flops"] == 10 and m["dram_bytes"] == 0
    assert math.isnan(m["gflops_per_s"]) and math.isnan(m["intensity_flop_per_byte"]) and math.isnan(m["smem_ld_nway"])


def test_hmma_tf32_counter_serves_when_the_general_one_is_absent():
    m = kernel_metrics(ncu_table([{"sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32.sum": 64.0}])).iloc[0]
    assert m["tensor_flops"] == 64 and math.isnan(m["tensor_16bit_flops"])


def test_range_metrics_total_nested_ranges():
    kernels = kernel_metrics(ncu_table([
        {"nvtx": ["ladder", "nsprof:sgemm/v6/64x64x64"], "gpu__time_duration.sum": 100.0, FADD: 0.0, FMUL: 0.0, FFMA: 50.0},
        {"nvtx": ["ladder", "nsprof:sgemm/v6/64x64x64"], "gpu__time_duration.sum": 300.0, FADD: 0.0, FMUL: 0.0, FFMA: 150.0},
        {"nvtx": ["ladder"], "gpu__time_duration.sum": 600.0},
        {"nvtx": [], "gpu__time_duration.sum": 5.0},
    ]))
    ranges = range_metrics(kernels).set_index("range")
    assert list(ranges.index) == ["ladder", "nsprof:sgemm/v6/64x64x64"]
    assert ranges.loc["ladder", "kernels"] == 3 and ranges.loc["ladder", "duration_ns"] == 1000
    assert ranges.loc["ladder", "flops"] == 400  # the kernel without FLOP counters adds nothing, not NaN
    stage = ranges.loc["nsprof:sgemm/v6/64x64x64"]
    assert (stage["kernels"], stage["flops"], stage["gflops_per_s"]) == (2, 400, 1.0)
    assert math.isnan(stage["dram_bytes"])


# --- ceilings ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, expected", [
    ("NVIDIA H200", "H200 SXM"), ("NVIDIA H100 80GB HBM3", "H100 SXM"), ("NVIDIA H100 PCIe", "H100 PCIe"),
    ("NVIDIA A100-SXM4-40GB", "A100 40GB"), ("NVIDIA A100-SXM4-80GB", "A100 SXM 80GB"),
    ("NVIDIA A100 80GB PCIe", "A100 PCIe 80GB"), ("NVIDIA GeForce GTX 1080", None), (None, None),
])
def test_datasheet_ceiling_by_name(name, expected):
    ceiling = datasheet_ceiling(name)
    assert (ceiling.gpu if ceiling else None) == expected
    if ceiling:
        assert ceiling.source == "datasheet"


def test_percent_of_peak():
    h200 = datasheet_ceiling("NVIDIA H200")
    kernels = kernel_metrics(ncu_table([{
        "gpu__time_duration.sum": 1e6, FADD: 0.0, FMUL: 0.0, FFMA: 33.5e9 / 2,  # 33.5 TFLOP/s for 1 ms
        "sm__ops_path_tensor_src_fp16.sum": 494.7e9 / 2, "sm__ops_path_tensor_src_tf32_dst_fp32.sum": 494.7e9 / 4,
        "dram__bytes_read.sum": 2.4e9, "dram__bytes_write.sum": 0.0}]))
    row = percent_of_peak(kernels, h200).iloc[0]
    assert row["fp32_pct_of_peak"] == pytest.approx(100 * 33.5 / 67.0)
    assert row["dram_pct_of_peak"] == pytest.approx(100 * 2.4 / 4.8)
    # FP16 work takes 25% of the millisecond at peak, TF32 (half rate) another 25%.
    assert row["tensor_pct_of_peak"] == pytest.approx(100 * (494.7 / 2 / 989.4 + 494.7 / 4 / 494.7))


def test_fp8_bf16_and_int8_tensor_work_each_count_against_their_own_roof():
    """The counters a bf16, an fp8 and an int8 product of 1024^3 read on the H200 (2 * 1024^3 each, by
    sm__ops_path_tensor_src_bf16_dst_fp32, _src_fp8 and _src_int8:
    benchmarks/records/2026-11-26-h200-triton/h200-triton.md's probe)."""
    h200 = datasheet_ceiling("NVIDIA H200")
    work = 2 * 1024**3
    no_fp32 = {FADD: 0.0, FMUL: 0.0, FFMA: 0.0}
    kernels = kernel_metrics(ncu_table([
        {"gpu__time_duration.sum": 8832.0, "sm__ops_path_tensor_src_bf16_dst_fp32.sum": float(work), **no_fp32},
        {"gpu__time_duration.sum": 8128.0, "sm__ops_path_tensor_src_fp8.sum": float(work), **no_fp32},
        {"gpu__time_duration.sum": 53632.0, "sm__ops_path_tensor_src_int8.sum": float(work), **no_fp32}]))
    rows = percent_of_peak(kernels, h200)
    assert rows["tensor_flops"].tolist() == [work] * 3
    assert rows["gflops_per_s"].tolist() == pytest.approx([work / 8832, work / 8128, work / 53632])
    roofs = [h200.fp16_tensor_tflop_per_s, h200.fp8_tensor_tflop_per_s, h200.int8_tensor_tops]
    assert roofs == [989.4, 1978.9, 1978.9]  # BF16 at FP16's rate; FP8 and INT8 twice it (dense)
    expected = [100 * work / 1e12 / roof / (ns * 1e-9) for roof, ns in zip(roofs, (8832, 8128, 53632))]
    assert rows["tensor_pct_of_peak"].tolist() == pytest.approx(expected)
    assert datasheet_ceiling("NVIDIA A100-SXM4-80GB").fp8_tensor_tflop_per_s is None  # no FP8 on Ampere


# --- stages -----------------------------------------------------------------------------------------

def test_parse_stage_range():
    assert parse_stage_range("nsprof:sgemm/v6/4096x4096x4096") == {"op": "sgemm", "stage": "v6", "size": "4096x4096x4096"}
    step = "nsprof:" + step_range_name("sgemm", "v8", (64, 64, 64), "transpose A")  # timed alone: not the stage
    assert step == "nsprof:step/sgemm/v8/64x64x64/transpose-A"
    for other in ("sgemm/v6/4096x4096x4096", "nsprof:verify/sgemm/v6/64x64x64", "nsprof:sgemm/v6", "hold:conflict", step):
        assert parse_stage_range(other) is None


def test_stage_work_joins_both_tools_with_one_time_and_speed_per_stage():
    """Each stage's time is nsys's where nsys saw it (no replay), else ncu's; its speed is the op's
    FLOPs over that time, whatever else ncu measured."""
    nsys = pd.DataFrame({"range": ["nsprof:sgemm/v10/64x64x64", "nsprof:sgemm/v2/64x64x64", "nsprof:verify/sgemm/v2/64x64x64"],
                         "count": [4, 2, 1], "kernels": [4, 2, 1], "kernel_ns": [400, 1000, 500]})
    ncu = ncu_table([
        {"nvtx": ["nsprof:sgemm/v2/64x64x64"], "gpu__time_duration.sum": 480.0},
        {"nvtx": ["nsprof:sgemm/v2/64x64x64"], "gpu__time_duration.sum": 560.0},
        {"nvtx": ["nsprof:sgemm/v7/64x64x64"], "gpu__time_duration.sum": 90.0},
    ]).assign(kernel=["sgemm_v2", "sgemm_v2", "sgemm_v7"])
    stages = combine([("p", None, work_records(ncu, nsys))])
    assert list(stages["stage"]) == ["v2", "v7", "v10"]
    v2, v7, v10 = (stages.iloc[i] for i in range(3))
    assert (v2["launches"], v2["nsys_time_per_launch_ns"], v2["ncu_kernels"], v2["ncu_time_per_launch_ns"]) == (2, 500, 2, 520)
    assert (v2["time_per_launch_ns"], v2["time_source"]) == (500, "nsys")  # warm nsys time, not ncu's replay
    assert (v7["time_per_launch_ns"], v7["time_source"]) == (90, "ncu") and pd.isna(v7["launches"])
    assert (v10["time_per_launch_ns"], v10["time_source"]) == (100, "nsys") and pd.isna(v10["ncu_kernels"])
    for row in (v2, v7, v10):
        assert row["tflops_per_s"] == pytest.approx(2 * 64**3 / row["time_per_launch_ns"] / 1e3)
    assert work_records(None, None).empty


# --- NVTX attribution: vectorized result equals a plain loop over ranges ------------------------------

THREADS = [global_tid(10, 10), global_tid(10, 11), global_tid(20, 20)]  # two threads of pid 10, one of pid 20
call_strategy = st.tuples(st.integers(0, 1000), st.integers(0, 2), st.sampled_from(["kernel", "memcpy", "memset", None]),
                          st.integers(1, 100), st.booleans())
range_strategy = st.tuples(st.sampled_from([59, 60]), st.integers(0, 2), st.integers(0, 1000),
                           st.none() | st.integers(0, 500))


ATTRIBUTED = ["kernels", "kernel_ns", "copy_ns", "gpu_time_ns", "memcpy_count", "memcpy_bytes", "memset_count", "memset_bytes"]


def expected_work(calls, ranges):
    """The plain loop the vectorized code must agree with; ranges in start order like load_nsys."""
    rows = []
    for kind, thread, start, length in sorted(ranges, key=lambda r: r[2]):
        end = math.inf if length is None else start + length
        totals = dict.fromkeys(ATTRIBUTED, 0)
        for call_start, call_thread, work, amount, _ in calls:
            same_scope = call_thread == thread if kind == 59 else THREADS[call_thread] >> 24 == THREADS[thread] >> 24
            if work and same_scope and start <= call_start < end:
                totals[{"kernel": "kernels", "memcpy": "memcpy_count", "memset": "memset_count"}[work]] += 1
                if work != "kernel":
                    totals[f"{work}_bytes"] += amount
                duration = amount if work == "kernel" else amount % 7 + 1  # a copy's bytes and time differ
                totals["kernel_ns" if work == "kernel" else "copy_ns"] += duration
                totals["gpu_time_ns"] += duration
        rows.append(totals)
    return rows


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=st.lists(call_strategy, max_size=30), ranges=st.lists(range_strategy, max_size=10))
def test_attribution_equals_a_loop_over_ranges(calls, ranges):
    # launch calls with no GPU work at all are a capture that lost it, refused on load (test_found_loops)
    assume(not calls or any(work is not None for _, _, work, _, _ in calls))
    kernels, memcpys, memsets, runtime = [], [], [], []
    next_id = {10: 1, 20: 1}  # correlation ids restart per process, so they collide across processes
    for call_start, thread, work, amount, recorded_twice in calls:
        pid = THREADS[thread] >> 24 & 0xFFFFFF
        correlation = next_id[pid]
        next_id[pid] += 1
        runtime.append((call_start, call_start + 1, THREADS[thread], correlation, 2))
        if recorded_twice:  # like cudaLaunchKernel + cudaLaunchKernel_v7000: the first one counts
            runtime.append((call_start + 1, call_start + 2, THREADS[thread], correlation, 2))
        if work == "kernel":
            kernels.append((5000, 5000 + amount, correlation, global_pid(pid), 1))
        elif work == "memcpy":
            memcpys.append((5000, 5000 + amount % 7 + 1, correlation, global_pid(pid), amount, 1))
        elif work == "memset":
            memsets.append((5000, 5000 + amount % 7 + 1, correlation, global_pid(pid), amount))
    nvtx = [(start, None if length is None else start + length, kind, f"r{i}", THREADS[thread], None, 0)
            for i, (kind, thread, start, length) in enumerate(ranges)]
    with tempfile.TemporaryDirectory() as tmp:
        path = write_export(Path(tmp) / "t.sqlite", {1: "k", 2: "cudaLaunchKernel"}, kernels=kernels,
                            memcpys=memcpys, memsets=memsets, runtime=runtime, nvtx=nvtx)
        attributed = attribute_work(load_nsys(path))
    assert attributed[ATTRIBUTED].to_dict("records") == expected_work(calls, ranges)


# --- the analyze command ----------------------------------------------------------------------------

def run(*args: str):
    app = typer.Typer()
    app.command()(analyze)
    app.callback()(lambda: None)  # keep `analyze` a subcommand, as in nsprof's own app
    return CliRunner().invoke(app, ["analyze", *map(str, args)])


def run_json(*args: str) -> dict:
    result = run(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


# One NVTX range by plain SQL on the export: its push/pop instances (eventType 59) in its domain
# (the domain's create event, 75), and the kernels, memcpys and memsets whose runtime call started on
# the instance's thread while it was open (matched by correlation id within the process), per table:
# rows, GPU time, bytes.
INSTANCES_SQL = """
SELECT n.globalTid AS tid, n.start, n."end" FROM NVTX_EVENTS n
LEFT JOIN StringIds s ON s.id = n.textId
JOIN NVTX_EVENTS d ON d.eventType = 75 AND d.domainId = n.domainId
WHERE n.eventType = 59 AND d.text = :domain AND COALESCE(n.text, s.value) = :name
"""
RANGE_WORK_SQL = f"""
WITH instances AS ({INSTANCES_SQL}),
calls AS (
    SELECT DISTINCT r.correlationId, r.globalTid / 16777216 AS pid FROM instances
    JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.globalTid = instances.tid AND r.start >= instances.start
                                          AND r.start < instances."end"),
work AS (
    SELECT 'kernel' AS kind, correlationId, globalPid, start, "end", 0 AS bytes FROM CUPTI_ACTIVITY_KIND_KERNEL
    UNION ALL SELECT 'memcpy', correlationId, globalPid, start, "end", bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY
    UNION ALL SELECT 'memset', correlationId, globalPid, start, "end", bytes FROM CUPTI_ACTIVITY_KIND_MEMSET)
SELECT work.kind, count(*), sum(work."end" - work.start), sum(work.bytes) FROM work
JOIN calls ON calls.correlationId = work.correlationId AND calls.pid = work.globalPid / 16777216
GROUP BY work.kind
"""


def range_by_sql(path: Path, domain: str, name: str) -> dict:
    """analyze --json's row of one range, each figure by INSTANCES_SQL and RANGE_WORK_SQL (the median
    of its instances' end - start by the standard library's statistics.median), none from nsprof."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        names = {"domain": domain, "name": name}
        open_ns = [ns for (ns,) in conn.execute(f'SELECT "end" - start FROM ({INSTANCES_SQL})', names)]
        work = {kind: (count, ns, nbytes) for kind, count, ns, nbytes in conn.execute(RANGE_WORK_SQL, names)}
        graph_tables = conn.execute("SELECT count(*) FROM sqlite_master WHERE name LIKE '%GRAPH%'").fetchone()[0]
    assert not graph_tables  # no CUDA graph traced at graph level: no graph launches to count
    kernels, kernel_ns, _ = work.get("kernel", (0, 0, 0))
    memcpys, memcpy_ns, memcpy_bytes = work.get("memcpy", (0, 0, 0))
    memsets, memset_ns, memset_bytes = work.get("memset", (0, 0, 0))
    return {"range": f"{domain}:{name}", "domain": domain, "name": name, "count": len(open_ns),
            "median_ns": statistics.median(open_ns), "kernels": kernels, "graphs": 0,
            "gpu_time_ns": kernel_ns + memcpy_ns + memset_ns, "kernel_ns": kernel_ns, "copy_ns": memcpy_ns + memset_ns,
            "memcpy_bytes": memcpy_bytes, "memcpy_count": memcpys, "memset_bytes": memset_bytes,
            "memset_count": memsets, "gpu_ops": kernels + memcpys + memsets}


def test_json_for_an_nsys_export():
    doc = run_json(H200)
    assert doc["gpu"] == "NVIDIA H200" and doc["ceiling"]["source"] == "datasheet"
    assert "kernels" not in doc and "stages" not in doc
    stage = next(r for r in doc["ranges"] if r["range"] == "nsprof:sgemm/v8/1024x1024x1024")
    expected = range_by_sql(H200, "nsprof", "sgemm/v8/1024x1024x1024")
    assert stage == expected
    # what the stage is: v8 (split-K) zeroes C with a 4 MiB memset before each of its 5 timed launches
    assert (expected["count"], expected["kernels"], expected["memset_count"], expected["memset_bytes"]) == (
        5, 5, 5, 5 * 4194304) and expected["copy_ns"] > 0
    assert doc["attribution"] == "thread" and doc["gpu_utilization"][0]["device_id"] == 0


def test_real_ladder_flops_are_exactly_2mnk():
    kernels = kernel_metrics(load_ncu_csv(H200_NCU["raw"]).kernels)
    stage = kernels["nvtx"].str[0].str.extract(r"sgemm/(v\d+)/")[0]
    fp32 = kernels[stage.isin([f"v{i}" for i in range(1, 9)])]
    assert len(fp32) == 16 and (fp32["flops"] == 2 * 1024**3).all() and (fp32["tensor_flops"] == 0).all()
    tf32 = kernels[stage == "v10"]  # mma.sync TF32: all of it on tensor cores
    assert len(tf32) == 2 and (tf32["tensor_flops"] == 2 * 1024**3).all() and (tf32["flops"] == 0).all()


@pytest.mark.parametrize("page", ["raw", "details"])
def test_json_for_an_ncu_csv(tmp_path, page):
    path = tmp_path / f"{page}.csv"
    path.write_text(PAGES[page])
    doc = run_json(path)
    assert "ranges" not in doc and doc["gpu"] is None and doc["ceiling"] is None
    first = doc["kernels"][0]
    assert first["kernel"] == "sgemm_v6" and first["nvtx"] == ["ladder", "nsprof:sgemm/v6/512x512x512"]
    assert first["duration_ns"] == 72640 and first["dram_bytes"] == 4_200_000
    assert first["flops"] is None and first["smem_ld_nway"] is None  # not collected: null, not 0
    assert first["smem_ld_conflicts"] == 0
    for field in ("kernel", "nvtx", "duration_ns", "flops", "tensor_flops", "dram_bytes", "gflops_per_s",
                  "dram_gbytes_per_s", "intensity_flop_per_byte", "smem_ld_conflicts", "smem_st_conflicts",
                  "smem_ld_nway", "smem_st_nway"):
        assert field in first


def test_directory_joins_stages_of_real_captures(tmp_path):
    shutil.copy(H200, tmp_path / "nsys.sqlite")
    for page, path in H200_NCU.items():  # three pages of one ncu run: each launch counted once
        shutil.copy(path, tmp_path / f"ncu-{page}.csv")
    (tmp_path / "manifest.json").write_text(json.dumps({"op": "sgemm", "device": {"name": "NVIDIA H200"}}))
    doc = run_json(tmp_path)
    assert set(doc) == {"gpu", "ceiling", "processing_errors", "kernel_summary", "memcpy_summary", "gpu_utilization",
                        "unattributed", "attribution", "ranges", "kernels", "kernel_groups", "stages", "missing_metrics",
                        "hot_kernels", "harness", "range_families"}
    assert len(doc["kernels"]) == 20
    assert [s["stage"] for s in doc["stages"]] == [f"v{i}" for i in range(1, 11)]
    v8 = next(s for s in doc["stages"] if s["stage"] == "v8")
    assert (v8["key"], v8["size"], v8["launches"], v8["nsys_kernels"], v8["ncu_kernels"]) == (
        "nsprof:sgemm/v8/1024x1024x1024", "1024x1024x1024", 5, 5, 2)
    assert v8["time_per_launch_ns"] == 263325 / 5 and v8["time_source"] == "nsys" and v8["flops"] == 2 * 2 * 1024**3
    assert v8["tflops_per_s"] == pytest.approx(2 * 1024**3 / v8["time_per_launch_ns"] / 1e3)
    assert v8["pct_of_compute_peak"] == pytest.approx(100 * v8["tflops_per_s"] / 67)  # the datasheet's FP32 peak


def test_directory_with_both_pages_of_one_run(tmp_path):
    shutil.copy(SAXPY, tmp_path / "saxpy.sqlite")
    (tmp_path / "ncu-raw.csv").write_text(PAGES["raw"])
    (tmp_path / "ncu-details.csv").write_text(PAGES["details"])
    doc = run_json(tmp_path)
    assert doc["gpu"] == "NVIDIA A100-SXM4-40GB" and len(doc["kernels"]) == 3
    (stage,) = doc["stages"]  # seen by ncu only: the saxpy export has no nsprof ranges
    assert (stage["op"], stage["stage"], stage["size"]) == ("sgemm", "v6", "512x512x512")
    assert (stage["launches"], stage["ncu_kernels"], stage["duration_ns"]) == (None, 1, 72640)
    assert (stage["time_per_launch_ns"], stage["time_source"]) == (72640, "ncu")
    assert stage["dram_pct_of_peak"] == pytest.approx(100 * 4.2e6 / 72640e-9 / 1.555e12)


def test_tables_are_printed(tmp_path):
    shutil.copy(SAXPY, tmp_path / "saxpy.sqlite")
    (tmp_path / "ncu.csv").write_text(PAGES["raw"])
    result = run(tmp_path)
    assert result.exit_code == 0, result.output
    words = " ".join(result.output.split())  # a caption wraps where its table's width puts it
    for text in ("NVTX ranges (nsys)", "MPI:MPI_Send", "Kernels (ncu)", "sgemm_v6", "against the A100 40GB", "(datasheet)",
                 "Stages", "512x512x512"):  # the stage is seen by ncu only
        assert text in words
    (tmp_path / "ncu.csv").unlink()
    assert "Stages" not in run(tmp_path).output  # another program's capture: no empty stage table


@pytest.mark.parametrize("name, content, fragment", [
    ("empty.sqlite", b"", "empty file"),
    ("text.sqlite", b"not sqlite at all, just some text\n" * 100, "not a database"),
    ("bench.csv", b"stage,ms\nv6,1.0\n", "not Nsight Compute CSV"),
    ("report.json", b"{}", "not a profile"),
])
def test_bad_files_are_one_line_parse_errors(tmp_path, name, content, fragment):
    path = tmp_path / name
    path.write_bytes(content)
    result = run(path)
    assert result.exit_code == 1 and isinstance(result.exception, ParseError)
    message = str(result.exception)
    assert str(path) in message and fragment in message and "\n" not in message


def test_directory_without_profiles(tmp_path):
    (tmp_path / "manifest.json").write_text("{}")
    result = run(tmp_path)
    assert isinstance(result.exception, ParseError) and "nothing to analyze" in str(result.exception)
    (tmp_path / "x.csv").write_text(PAGES["raw"])
    (tmp_path / "manifest.json").write_text("{not json")
    assert "unreadable manifest" in str(run(tmp_path).exception)
    assert "no such file" in str(run(tmp_path / "absent").exception)


def test_measured_ceilings_replace_the_datasheet_peaks(monkeypatch):
    """With the H200's committed measurement in the ceilings directory, % of peak uses it."""
    monkeypatch.setenv("NSPROF_DATA_DIR", str(REPO / "profiles"))
    doc = run_json(REPO / "profiles" / "examples" / "h200-sgemm-1024")
    measured = json.loads((REPO / "profiles" / "ceilings-nvidia-h200.json").read_text())["ceilings"]
    assert doc["ceiling"]["fp32_tflop_per_s"] == measured["fp32_tflop_per_s"]["value"]
    assert doc["ceiling"]["sources"]["fp32_tflop_per_s"].startswith("measured ")
    v1 = next(k for k in doc["kernels"] if k["kernel"] == "sgemm_v1")
    # FP32 FLOPs only: ptxas's HFMA2.MMA register moves count as FP16 work in gflops_per_s, never in % FP32
    tflops = v1["flops"] / v1["duration_ns"] / 1e3
    assert v1["fp32_pct_of_peak"] == pytest.approx(100 * tflops / measured["fp32_tflop_per_s"]["value"])


def test_a_ladder_judged_by_bandwidth_leads_with_dram_and_keeps_it_longest():
    """SGEMV (headline: bytes) at 80 columns: DRAM GB/s and % DRAM stay, % of the FP32 peak goes
    first; SGEMM keeps its FLOP rate and % peak."""
    from typer.testing import CliRunner

    from nsprof.cli import app

    examples = Path(__file__).resolve().parents[1] / "profiles" / "examples"
    sgemv = CliRunner().invoke(app, ["analyze", str(examples / "h200-sgemv-4096")], env={"COLUMNS": "80"})
    header = next(line for line in sgemv.stdout.splitlines() if line.startswith("┃ stage"))
    assert "% DRAM" in header and "% peak" not in header
    assert header.index("time us") < header.index("% DRAM") < header.index("TFLOP/s")
    sgemm = CliRunner().invoke(app, ["analyze", str(examples / "h200-sgemm-1024")], env={"COLUMNS": "80"})
    header = next(line for line in sgemm.stdout.splitlines() if line.startswith("┃ stage"))
    assert "% peak" in header and "% DRAM" not in header
