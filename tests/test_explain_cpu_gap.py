"""`nsprof explain gpu-vs-cpu` on real captures with CPU stages beside them (tests/conftest.py's
cpu_rung_capture: the committed H200 captures with CPU stages and CPU roofs measured on a CI-like
host): every number in the facts against the same number computed here from bench-cpu.json,
ceilings-cpu.json and the GPU side of the analysis, the page printing them, and the one-line
errors where a capture has no CPU stages."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from cli_checks import one_line_error
from typer.testing import CliRunner

from nsprof.cli import app
from nsprof.explain.cpu_gap_facts import CAPTURE_FIX, cpu_gap_facts, num
from nsprof.explain.topics import TOPICS
from nsprof.ladder.registry import get_stage
from nsprof.profile_analysis import analyzed_profile, opened
from nsprof.sizes import parse_label
from nsprof.verbs.explain_sources import CPU_EXAMPLES as EXAMPLES

REPO = Path(__file__).resolve().parents[1]
CAPTURES = ("sgemm-1024", "sgemv-4096")
runner = CliRunner()


def invoke(*args, env: dict | None = None):
    return runner.invoke(app, [str(a) for a in args], env=env)


def explain_json(*args) -> dict:
    result = invoke("explain", "gpu-vs-cpu", *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def close(a: float | None, b: float) -> bool:
    return a is not None and math.isclose(a, b, rel_tol=1e-9)


class Files:
    """What the capture's own files say, read here without nsprof's CPU-gap code: the CPU stages'
    records and roofs (json), and the GPU stages' times and ceilings (the analysis `analyze` prints)."""

    def __init__(self, capture: Path):
        bench = json.loads((capture / "bench-cpu.json").read_text())
        roofs = json.loads((capture / "ceilings-cpu.json").read_text())["ceilings"]
        self.env = bench["env"]
        self.cpu = {r["stage"]: r for r in bench["results"] if r["status"] == "ok"}
        self.op = next(iter(self.cpu.values()))["op"]
        self.size = next(iter(self.cpu.values()))["size"]
        self.cpu_fp32, self.cpu_bw = roofs["fp32_tflops"]["value"], roofs["dram_tbyte_per_s"]["value"]
        _, analysis = analyzed_profile(capture)
        self.gpu_fp32, self.gpu_bw = analysis.ceiling.fp32_tflop_per_s, analysis.ceiling.dram_tbyte_per_s
        stages = analysis.stages
        gpu = stages[(stages["time_source"] != "wall clock") & (stages["size"] == self.size) & stages["stage"].notna()]
        self.gpu_ns = {row["stage"]: float(row["time_per_launch_ns"]) for _, row in gpu.iterrows()}
        self.precision = {stage: get_stage(self.op, stage).precision.name for stage in self.gpu_ns}
        dims = parse_label(self.size)
        if self.op == "sgemm":
            m, n, k = dims
            self.flops, self.min_bytes = 2 * m * n * k, 4 * (m * k + k * n + m * n)
        else:
            m, k = dims
            self.flops, self.min_bytes = 2 * m * k, 4 * (m * k + m + k)
        self.loop, self.blas = (next(s for s in self.cpu if s.endswith(end)) for end in ("0", "blas"))

    def cpu_ms(self, stage: str) -> float:
        return self.cpu[stage]["median_ms"]

    def attainable(self, peak: float, bandwidth: float) -> float:
        return min(peak, self.flops / self.min_bytes * bandwidth)


@pytest.fixture(params=CAPTURES)
def capture(request, cpu_rung_capture) -> Path:
    return cpu_rung_capture(request.param)


def test_the_two_roofs_their_ratios_and_ridge_points(capture):
    files, facts = Files(capture), cpu_gap_facts(capture, *opened(capture))
    assert facts["op"] == files.op and facts["size"] == files.size
    assert close(facts["gpu"]["fp32_tflop_per_s"], files.gpu_fp32) and close(facts["cpu"]["fp32_tflop_per_s"], files.cpu_fp32)
    assert close(facts["fp32_ratio"], files.gpu_fp32 / files.cpu_fp32)
    assert close(facts["bandwidth_ratio"], files.gpu_bw / files.cpu_bw)
    assert close(facts["gpu"]["ridge_flop_per_byte"], files.gpu_fp32 / files.gpu_bw)
    assert close(facts["cpu"]["ridge_flop_per_byte"], files.cpu_fp32 / files.cpu_bw)
    assert facts["cpu"]["cores"] == files.env["cpu_cores"] and facts["cpu"]["simd"] == files.env["cpu_simd"]
    intensity = files.flops / files.min_bytes
    assert close(facts["op_intensity_flop_per_byte"], intensity)
    # SGEMM at 1024^3 is right of both ridges, SGEMV left of both: the ratio to compare with is the FP32
    # one for the first, the bandwidth one for the second
    expected_bound = "compute" if files.op == "sgemm" else "memory"
    assert facts["gpu"]["bound"] == facts["cpu"]["bound"] == expected_bound
    same_ratio = files.gpu_fp32 / files.cpu_fp32 if files.op == "sgemm" else files.gpu_bw / files.cpu_bw
    assert close(facts["roof_ratio"], same_ratio)
    attainable = files.attainable(files.gpu_fp32, files.gpu_bw), files.attainable(files.cpu_fp32, files.cpu_bw)
    assert close(facts["roof_ratio"], attainable[0] / attainable[1])


def test_the_fastest_gpu_stage_against_the_cpus_loop_and_blas(capture):
    files, facts = Files(capture), cpu_gap_facts(capture, *opened(capture))
    fastest = min(files.gpu_ns, key=files.gpu_ns.__getitem__)
    record = facts["fastest_gpu"]
    assert record["stage"] == fastest and close(record["time_ms"], files.gpu_ns[fastest] / 1e6)
    assert close(record["speedup_vs_cpu_blas"], files.cpu_ms(files.blas) * 1e6 / files.gpu_ns[fastest])
    assert close(record["speedup_vs_cpu_loop"], files.cpu_ms(files.loop) * 1e6 / files.gpu_ns[fastest])
    assert [r["stage"] for r in facts["cpu_stages"].values()] == list(files.cpu)  # loop, blocked, BLAS in ladder order


def test_the_like_for_like_speedup_against_the_ratio_of_the_roofs(capture):
    """The fastest GPU stage of the CPU BLAS's precision (FP32): its speed-up over the BLAS is the roof
    ratio x the GPU's fraction of its roof / the CPU BLAS's fraction of its own."""
    files, facts = Files(capture), cpu_gap_facts(capture, *opened(capture))
    fp32 = {stage: ns for stage, ns in files.gpu_ns.items() if files.precision[stage] == "fp32"}
    like_stage = min(fp32, key=fp32.__getitem__)
    like = facts["like_for_like"]
    assert like["stage"] == like_stage
    speedup = files.cpu_ms(files.blas) * 1e6 / fp32[like_stage]
    roof_ratio = files.attainable(files.gpu_fp32, files.gpu_bw) / files.attainable(files.cpu_fp32, files.cpu_bw)
    assert close(like["speedup_vs_cpu_blas"], speedup)
    assert close(like["pct_of_roof_ratio"], 100 * speedup / roof_ratio)
    gpu_rate = files.flops / fp32[like_stage] / 1e3  # TFLOP/s
    cpu_rate = files.flops / (files.cpu_ms(files.blas) * 1e9)
    assert close(like["gpu_pct_of_roof"], 100 * gpu_rate / files.attainable(files.gpu_fp32, files.gpu_bw))
    assert close(like["cpu_blas_pct_of_roof"], 100 * cpu_rate / files.attainable(files.cpu_fp32, files.cpu_bw))
    assert math.isclose(speedup, roof_ratio * like["gpu_pct_of_roof"] / like["cpu_blas_pct_of_roof"], rel_tol=1e-9)
    if files.precision[min(files.gpu_ns, key=files.gpu_ns.__getitem__)] != "fp32":  # the H200 SGEMM capture's v10
        assert facts["fastest_gpu"]["stage"] != like_stage and facts["fastest_gpu"]["compute_roof"] == "TF32 tensor"


def test_the_serial_loop_against_the_cpus_own_roof(capture):
    files, facts = Files(capture), cpu_gap_facts(capture, *opened(capture))
    loop = facts["serial_loop"]
    rate = files.flops / (files.cpu_ms(files.loop) * 1e9)  # TFLOP/s
    assert loop["stage"] == files.loop
    assert close(loop["pct_of_cpu_roof"], 100 * rate / files.attainable(files.cpu_fp32, files.cpu_bw))
    assert close(loop["pct_of_cpu_fp32"], 100 * rate / files.cpu_fp32)  # the analysis's % of the CPU FP32 roof
    assert close(loop["pct_of_one_core"], 100 * rate / (files.cpu_fp32 / files.env["cpu_cores"]))
    assert loop["cores"] == files.env["cpu_cores"] and loop["simd"] == files.env["cpu_simd"]
    assert loop["flags"] == "-O2"  # compiled as the tutorials' loop, for no vector unit of this machine


def test_tiling_flops_per_byte_against_each_ridge(capture):
    files, facts = Files(capture), cpu_gap_facts(capture, *opened(capture))
    tiling = facts["tiling"]
    assert tiling["naive_flop_per_byte"] == 2 / 8  # one multiply-add (2 FLOPs) per two 4-byte floats
    for machine, ridge in (("gpu", files.gpu_fp32 / files.gpu_bw), ("cpu", files.cpu_fp32 / files.cpu_bw)):
        assert close(tiling[machine]["min_tile"], 4 * ridge)  # T/4 FLOP per byte reaches the ridge at T = 4 x ridge
    if files.op == "sgemv":
        assert not tiling["matrix_product"] and tiling["ladder_tiles"] == []
        assert tiling["op_intensity_flop_per_byte"] < min(files.gpu_fp32 / files.gpu_bw, files.cpu_fp32 / files.cpu_bw)
        return
    tiles = {tile["stage"]: tile for tile in tiling["ladder_tiles"]}
    assert tiles, "no ladder tile"
    for name, tile in tiles.items():
        declared = get_stage("sgemm", name).tiles[0]
        bm, bn = declared.bm, declared.bn
        # per k step of depth d: 2·bm·bn·d FLOPs for (bm + bn)·d floats loaded
        flop_per_byte = (2 * bm * bn * declared.bk) / (4 * (bm + bn) * declared.bk)
        assert tile["tile"] == f"{bm}x{bn}" and close(tile["flop_per_byte"], flop_per_byte)
        assert tile["above_gpu_ridge"] == (flop_per_byte >= files.gpu_fp32 / files.gpu_bw)
        assert tile["above_cpu_ridge"] == (flop_per_byte >= files.cpu_fp32 / files.cpu_bw)
    assert close(tiles["v2"]["flop_per_byte"], 32 / 4)  # a square T x T tile: T/4


def test_the_page_prints_the_numbers(capture):
    files = Files(capture)
    result = invoke("explain", "gpu-vs-cpu", "--from", capture, env={"COLUMNS": "1000"})
    assert result.exit_code == 0, result.output
    text = result.stdout
    fastest = min(files.gpu_ns, key=files.gpu_ns.__getitem__)
    for number in (files.gpu_fp32 / files.cpu_fp32, files.gpu_bw / files.cpu_bw, files.gpu_fp32 / files.gpu_bw,
                   files.cpu_fp32 / files.cpu_bw, files.cpu_ms(files.blas) * 1e6 / files.gpu_ns[fastest],
                   files.cpu_ms(files.loop) * 1e6 / files.gpu_ns[fastest]):
        assert num(number) in text, num(number)
    assert f"The fastest GPU stage, {fastest} " in text and f"Measured in {capture} (given with --from)" in text
    for heading in ("In this ladder", "Tiling against the ridge points", "Caveats", "Sources"):
        assert heading in text
    markdown = invoke("explain", "gpu-vs-cpu", "--from", capture, "--markdown")
    assert markdown.exit_code == 0 and markdown.stdout.startswith("# gpu-vs-cpu\n")
    assert f"**{num(files.gpu_fp32 / files.cpu_fp32)}x**" in markdown.stdout


def test_the_json_holds_the_facts_and_the_ladder(capture):
    doc = explain_json("--from", capture)
    files = Files(capture)
    assert doc["topic"] == "gpu-vs-cpu" and doc["summary"] == TOPICS["gpu-vs-cpu"].summary
    assert doc["evidence"] == {"source": str(capture), "reason": "given with --from"}
    assert close(doc["measured"]["fp32_ratio"], files.gpu_fp32 / files.cpu_fp32)
    assert doc["facts"] and all(isinstance(line, str) for line in doc["facts"])
    assert [row["stage"] for row in doc["ladder"]] == list(TOPICS["gpu-vs-cpu"].ladder(files.op)[0])


def test_stage_picks_the_gpu_stage_compared(cpu_rung_capture):
    capture = cpu_rung_capture("sgemm-1024")
    files = Files(capture)
    fastest = explain_json("--from", capture, "--stage", "v1")["measured"]["fastest_gpu"]
    assert fastest["stage"] == "v1"
    assert close(fastest["speedup_vs_cpu_blas"], files.cpu_ms(files.blas) * 1e6 / files.gpu_ns["v1"])


def test_another_ladder_than_the_captures_is_a_usage_error(cpu_rung_capture):
    line = one_line_error(invoke("explain", "gpu-vs-cpu", "--from", cpu_rung_capture("sgemm-1024"), "--op", "sgemv"), 2)
    assert "no CPU stage of the sgemv ladder" in line and "--op sgemm" in line


def test_a_capture_without_cpu_stages_is_one_line_naming_the_fix(tmp_path):
    bare = tmp_path / "h200-sgemm-1024"
    shutil.copytree(REPO / "profiles" / "examples" / "h200-sgemm-1024", bare)
    line = one_line_error(invoke("explain", "gpu-vs-cpu", "--from", bare))
    assert f"{bare}: no CPU stages in it (no bench-cpu.json)" in line and CAPTURE_FIX.split("`")[1] in line
    line = one_line_error(invoke("explain", "gpu-vs-cpu", "--from", tmp_path / "nowhere"), 2)
    assert "nowhere" in line and "no such file" in line


def test_without_from_the_newest_capture_with_cpu_stages_is_read(cpu_rung_capture, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # no ./profiles: each ladder's committed example (an H100's, profiles/examples/h100-*)
    assert explain_json()["evidence"]["source"] == str(EXAMPLES["sgemm"])
    assert explain_json("--op", "sgemv")["evidence"]["source"] == str(EXAMPLES["sgemv"])
    mine = tmp_path / "profiles" / "sgemv-4096"
    shutil.copytree(cpu_rung_capture("sgemv-4096"), mine)
    shutil.copytree(REPO / "profiles" / "examples" / "h200-sgemm-1024", tmp_path / "profiles" / "gpu-only")
    evidence = explain_json()["evidence"]
    assert evidence["source"] == str(Path("profiles") / "sgemv-4096")
    assert evidence["reason"].startswith("the newest capture with CPU stages under profiles/")
    # --from a directory of captures: its newest with CPU stages
    assert explain_json("--from", "profiles")["evidence"]["source"] == str(Path("profiles") / "sgemv-4096")


def test_list_includes_the_topic():
    result = invoke("explain", "--list")
    assert result.exit_code == 0 and "gpu-vs-cpu" in result.stdout
    listed = json.loads(invoke("explain", "--list", "--json").stdout)["topics"]
    assert {"topic": "gpu-vs-cpu", "summary": TOPICS["gpu-vs-cpu"].summary} in listed


def test_from_the_repository_the_committed_example_is_named_as_a_user_types_it(monkeypatch):
    """Run where a fresh clone is: ./profiles holds the committed examples, which are not the user's
    newest capture; the SGEMM example is read, and named by its path from here, not the machine's."""
    monkeypatch.chdir(REPO)
    result = invoke("explain", "gpu-vs-cpu", env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    measured = next(line for line in result.stdout.splitlines() if line.startswith("Measured in "))
    assert measured.startswith("Measured in profiles/examples/h100-sgemm-cpu-1024 (the committed example")
    assert str(REPO) not in result.stdout
