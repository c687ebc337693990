"""The committed H200 TF32 capture (v9t: cuBLAS TF32, v10: mma.sync, v11: wgmma + TMA at
1024^3): each stage against its own precision's peak, its TF32 FLOPs counted by the counter that sees
wgmma, and v9t's nsys time explained; and, on the earlier capture of the same stages (kept in
tests/data), which had only the counter blind to wgmma, FLOPs it did not count said so (never a
measured 0). Expected values come from SQL on the nsys export, the ncu CSV read with the csv module,
the bench record and the datasheet, not from nsprof's output."""

import csv
import json
import sqlite3
import statistics
from pathlib import Path

import pytest
from cli_checks import analysis_pages
from typer.testing import CliRunner

from nsprof.cli import app

EXAMPLE = Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h200-sgemm-tf32-1024"
FP32_EXAMPLE = EXAMPLE.parent / "h200-sgemm-1024"
# the same stages captured before nsprof's preset had the every-path TF32 counter (2026-11-24, before the example was re-taken)
HMMA_ONLY = Path(__file__).resolve().parent / "data" / "h200-tf32-hmma-counter-only"
FLOPS = 2 * 1024**3
TF32_PEAK_TFLOPS = 494.7  # H200 SXM datasheet, dense TF32 tensor (no measured value in the manifest)
HMMA_TF32 = "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32.sum"
EVERY_TF32 = "sm__ops_path_tensor_src_tf32_dst_fp32.sum"
# the tensor counters that joined the preset after both captures
NEWER = [f"sm__ops_path_tensor_src_{source}.sum" for source in ("bf16_dst_fp32", "fp8", "int8")]


def invoke(*args):
    return CliRunner().invoke(app, [str(arg) for arg in args])


def _ranges_sql(stage: str, capture: Path = EXAMPLE) -> list[tuple[int, int, int]]:
    """(start, end, summed kernel ns) per instance of the stage's range: kernels whose launch call
    was made on the range's thread while it was open."""
    with sqlite3.connect(capture / "nsys.sqlite") as db:
        return db.execute("""
            SELECT n.start, n.end, COALESCE(SUM(k.end - k.start), 0)
            FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId
            LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r
              ON r.globalTid = n.globalTid AND r.start >= n.start AND r.start < n.end
            LEFT JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId
            WHERE COALESCE(n.text, s.value) = ? GROUP BY n.start, n.end ORDER BY n.start""",
            (f"sgemm/{stage}/1024x1024x1024",)).fetchall()


def _ncu_rows(capture: Path = EXAMPLE) -> tuple[list[str], list[dict]]:
    """The raw page's header and its launch rows (after ncu's own lines and the units row)."""
    lines = (capture / "ncu-raw.csv").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.DictReader(lines[start:]))[1:]
    return list(rows[0]), rows


def _pages(capture: Path, out: Path):
    doc, markdown, points = analysis_pages(capture, out)
    return {s["stage"]: s for s in doc["stages"]}, doc, markdown, points


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return _pages(EXAMPLE, tmp_path_factory.mktemp("pages"))


@pytest.fixture(scope="module")
def hmma_only_pages(tmp_path_factory):
    return _pages(HMMA_ONLY, tmp_path_factory.mktemp("hmma-only"))


def test_every_tf32_stage_is_placed_against_the_tf32_tensor_peak_on_every_page(pages):
    stages, _, markdown, points = pages
    for stage in ("v9t", "v10", "v11"):
        time_ns = statistics.mean(kernels for _, _, kernels in _ranges_sql(stage))  # nsys's GPU time per launch
        expected = 100 * FLOPS / time_ns / 1e3 / TF32_PEAK_TFLOPS
        got = stages[stage]
        assert got["compute_roof"] == "TF32 tensor" and got["precision"] == "tf32"
        assert got["time_per_launch_ns"] == pytest.approx(time_ns)
        assert got["pct_of_compute_peak"] == pytest.approx(expected)
        assert f"| {got['pct_of_compute_peak']:.1f}% TF32 tensor |" in markdown
        dram = next(p for p in points if p["stage"] == stage and p["level"] == "dram")
        assert dram["compute_roof"] == "TF32 tensor" and dram["bound"] == "compute"  # hundreds of FLOPs per byte
        assert float(dram["pct_of_roof"]) == pytest.approx(expected, rel=1e-5)
    assert 30 < stages["v9t"]["pct_of_compute_peak"] < 40  # not 272% of the FP32 peak


def test_fp32_stages_keep_the_fp32_peak():
    doc = json.loads(invoke("analyze", FP32_EXAMPLE, "--json").stdout)
    roofs = {s["stage"]: s["compute_roof"] for s in doc["stages"]}
    assert {roofs[f"v{n}"] for n in range(1, 10)} == {"FP32"}
    assert {s["stage"] for s in doc["stages"] if s["precision"] == "fp32"} == {f"v{n}" for n in range(1, 10)}


def test_the_every_path_tf32_counter_counts_cublas_mma_sync_and_wgmma_alike(pages):
    stages, doc, _, points = pages
    header, rows = _ncu_rows()
    assert EVERY_TF32 in header
    for stage, prefix in (("v9t", "sm90_xmma"), ("v10", "sgemm_v10"), ("v11", "sgemm_v11_128")):
        counted = [float(r[EVERY_TF32].replace(",", "")) for r in rows if r["Kernel Name"].startswith(prefix)]
        assert counted == [FLOPS] * 3  # 2MNK in each of the 3 replayed launches
        assert stages[stage]["flops_source"] == "ncu" and stages[stage]["tensor_tf32_flops"] == 3 * FLOPS
    assert {p["stage"]: p["flops_source"] for p in points if p["level"] == "dram"} == dict.fromkeys(("v9t", "v10", "v11"), "ncu")
    assert doc["missing_metrics"]["metrics"] == NEWER  # the counters that joined the default set after it


def test_flops_the_capture_did_not_count_are_declared_never_a_measured_zero(hmma_only_pages):
    stages, doc, markdown, points = hmma_only_pages
    header, rows = _ncu_rows(HMMA_ONLY)
    assert HMMA_TF32 in header and EVERY_TF32 not in header  # captured before the every-path counter
    v10 = sum(float(r[HMMA_TF32].replace(",", "")) for r in rows if r["Kernel Name"] == "sgemm_v10_128x128")
    assert v10 == 3 * FLOPS  # mma.sync: HMMA counted all of it, in 3 replayed launches
    blind = [r for r in rows if r["Kernel Name"].startswith(("sm90_xmma", "sgemm_v11"))]
    assert blind and all(float(r[HMMA_TF32].replace(",", "")) == 0 for r in blind)  # wgmma: the HMMA counter reads 0
    assert stages["v10"]["flops_source"] == "ncu" and stages["v10"]["tensor_tf32_flops"] == v10
    for stage in ("v9t", "v11"):
        got = stages[stage]
        assert got["flops_source"] == "declared" and got["work_flops"] == 3 * FLOPS
        assert got["tensor_tf32_flops"] is None and got["tensor_flops"] is None
    v11_kernels = [k for k in doc["kernels"] if k["kernel"].startswith("sgemm_v11")]
    assert v11_kernels and all(k["gflops_per_s"] is None for k in v11_kernels)  # unknown, not 0 FLOP/s
    assert doc["missing_metrics"]["metrics"] == [*NEWER, EVERY_TF32] and list(doc["missing_metrics"]["partial"]) == [HMMA_TF32]
    assert {p["stage"]: p["flops_source"] for p in points if p["level"] == "dram"} == {
        "v9t": "declared", "v10": "ncu", "v11": "declared"}
    assert "v9t, v11: this capture did not count their TF32 FLOPs" in markdown
    assert "| 1024³ | tensor-core FLOPs | v10 | 2.15 G | not collected | – |" in markdown


def test_v9t_nsys_time_is_its_one_kernel_and_the_bench_time_is_the_host(pages):
    stages, _, markdown, _ = pages
    instances = _ranges_sql("v9t")
    with sqlite3.connect(EXAMPLE / "nsys.sqlite") as db:
        per_range = db.execute("""
            SELECT COUNT(k.correlationId) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId
            LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.globalTid = n.globalTid AND r.start >= n.start AND r.start < n.end
            LEFT JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId
            WHERE COALESCE(n.text, s.value) = 'sgemm/v9t/1024x1024x1024' GROUP BY n.start""").fetchall()
    assert len(instances) == 10 and {count for count, in per_range} == {1}  # one cuBLAS kernel per call
    host_ns = statistics.median(end - start for start, end, _ in instances)
    got = stages["v9t"]
    assert got["host_ns_per_launch"] == pytest.approx(host_ns) and got["time_per_launch_ns"] < host_ns / 2
    bench = json.loads((EXAMPLE / "bench-nsys.json").read_text())
    event_ns = next(r for r in bench["results"] if r["stage"] == "v9t")["median_ms"] * 1e6
    # CUDA events time the host's launch, not the kernel: near the range's CPU time, far above the GPU's
    assert event_ns == pytest.approx(host_ns, rel=0.15) and event_ns > 2 * got["time_per_launch_ns"]
    assert stages["v10"]["host_ns_per_launch"] < stages["v10"]["time_per_launch_ns"]  # GPU-bound: not named
    said = {stage: (f"{statistics.median(e - s for s, e, _ in _ranges_sql(stage)) / 1e3:.1f} µs on the CPU, "
                    f"{statistics.mean(k for _, _, k in _ranges_sql(stage)) / 1e3:.1f} µs on the GPU")
            for stage in ("v9t", "v11")}
    assert f"v9t ({said['v9t']}), v11 ({said['v11']}) per call (median): host-bound" in markdown
