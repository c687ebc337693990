"""Ceilings: measured values laid over the datasheet (each with its source), the measured file found
and preferred by the report commands, the microbenchmark kernels, and `nsprof ceilings` on a GPU."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from nsprof.analyze.ceilings import ceiling_for, ceilings_file_name, datasheet_ceiling, gpu_slug
from nsprof.cli import app
from nsprof.errors import ParseError
from nsprof.launch import ceilings as measure
from nsprof.parse.sources import read_measured_ceilings

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "profiles" / "examples" / "h200-sgemm-1024"
NVCC = shutil.which("nvcc")

runner = CliRunner()

MEASURED = {
    "device": {"device": "NVIDIA H200"},
    "ceilings": {
        "dram_tbyte_per_s": {"value": 4.08, "date": "2026-11-21", "method": "device-to-device copy of 1 GiB"},
        "l2_tbyte_per_s": {"value": 11.0, "date": "2026-11-21", "method": "100 reads of a 24 MiB buffer"},
        "fp32_tflop_per_s": {"value": 60.0, "date": "2026-11-21", "method": "FMA microbenchmark"},
        "fp16_tensor_tflop_per_s": {"value": 753.0, "date": "2026-11-21", "method": "cuBLAS HGEMM at 8192^3"},
    },
}


def test_file_name_from_the_gpu_name():
    assert gpu_slug("NVIDIA H200") == "nvidia-h200"
    assert ceilings_file_name("NVIDIA A100-SXM4-80GB") == "ceilings-nvidia-a100-sxm4-80gb.json"


def test_measured_values_are_preferred_and_keep_their_source():
    ceiling = ceiling_for("NVIDIA H200", MEASURED)
    assert (ceiling.dram_tbyte_per_s, ceiling.l2_tbyte_per_s, ceiling.fp32_tflop_per_s) == (4.08, 11.0, 60.0)
    assert ceiling.source_of("dram_tbyte_per_s") == "measured 2026-11-21 by device-to-device copy of 1 GiB"
    assert ceiling.tf32_tensor_tflop_per_s == datasheet_ceiling("NVIDIA H200").tf32_tensor_tflop_per_s
    assert ceiling.source_of("tf32_tensor_tflop_per_s") == "datasheet"
    assert ceiling.to_json()["sources"]["fp16_tensor_tflop_per_s"].startswith("measured 2026-11-21")


def test_a_file_for_another_gpu_is_ignored_and_an_unknown_gpu_gets_only_what_was_measured():
    assert ceiling_for("NVIDIA A100-SXM4-80GB", MEASURED) == datasheet_ceiling("NVIDIA A100-SXM4-80GB")
    other = {**MEASURED, "device": {"device": "NVIDIA GeForce RTX 4090"}}
    ceiling = ceiling_for("NVIDIA GeForce RTX 4090", other)
    assert ceiling.dram_tbyte_per_s == 4.08 and ceiling.tf32_tensor_tflop_per_s is None
    assert ceiling.source_of("tf32_tensor_tflop_per_s") is None


def test_reading_the_measured_file(tmp_path):
    (tmp_path / "ceilings-nvidia-h200.json").write_text(json.dumps(MEASURED))
    name = ceilings_file_name("NVIDIA H200")
    assert read_measured_ceilings(tmp_path, name) == MEASURED
    assert read_measured_ceilings(tmp_path / "ceilings-nvidia-h200.json", name) == MEASURED
    assert read_measured_ceilings(tmp_path, ceilings_file_name("NVIDIA A100")) is None
    with pytest.raises(ParseError, match="no such ceilings file"):
        read_measured_ceilings(tmp_path / "missing.json", name)
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ParseError, match="unreadable ceilings file"):
        read_measured_ceilings(tmp_path / "broken.json", name)


def test_the_default_location_may_be_absent(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no profiles/ here
    assert read_measured_ceilings(None, ceilings_file_name("NVIDIA H200")) is None


def test_roofline_prefers_the_measured_file_in_profiles(tmp_path, monkeypatch):
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "ceilings-nvidia-h200.json").write_text(json.dumps(MEASURED))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("nsprof.parse.sources.CEILINGS_DIR", Path("profiles"))  # the real default (conftest hides it)
    result = runner.invoke(app, ["roofline", "out", "--from", str(EXAMPLE)])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "out" / "roofline.csv")
    fp32 = table[(table["level"] == "dram") & (table["label"] == "v6")].iloc[0]
    assert (fp32["bound"], fp32["roof_gflops_per_s"]) == ("compute", 60_000)
    assert fp32["roof_source"] == "measured 2026-11-21 by FMA microbenchmark"
    assert table[table["level"] == "l2"]["roof_gflops_per_s"].notna().all()  # an L2 roof now exists
    v10 = table[(table["level"] == "dram") & (table["label"] == "v10")].iloc[0]
    assert v10["roof_source"] == "datasheet"  # TF32 was not measured


def test_ceilings_option_names_the_file(tmp_path):
    (tmp_path / "mine.json").write_text(json.dumps(MEASURED))
    result = runner.invoke(app, ["roofline", str(tmp_path / "out"), "--from", str(EXAMPLE), "--ceilings", str(tmp_path / "mine.json")])
    assert result.exit_code == 0, result.output
    assert set(pd.read_csv(tmp_path / "out" / "roofline.csv")["roof_source"].dropna().str[:8]) >= {"measured"}
    result = runner.invoke(app, ["roofline", str(tmp_path / "out"), "--from", str(EXAMPLE), "--ceilings", str(tmp_path / "nope.json")])
    assert result.exit_code == 1 and len(result.stderr.strip().splitlines()) == 1


# --- the microbenchmarks ----------------------------------------------------------------------------

@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
def test_microbenchmark_kernels_compile_and_keep_their_work(tmp_path):
    for name, source in (("fma", measure.FMA_SOURCE), ("l2", measure.L2_SOURCE)):
        (tmp_path / f"{name}.cu").write_text(source)
        subprocess.run([NVCC, "-arch=sm_90", "-ptx", str(tmp_path / f"{name}.cu"), "-o", str(tmp_path / f"{name}.ptx")],
                       check=True, capture_output=True, timeout=120)
    fma = (tmp_path / "fma.ptx").read_text()
    loop = re.search(r"\$L__BB0_\d+:\n(.*?)bra", fma, re.S).group(1)  # the unrolled main loop
    assert loop.count("fma.rn.f32") == measure.FMA_CHAINS * measure.FMA_UNROLL
    assert (tmp_path / "l2.ptx").read_text().count("ld.global.cg.v4.f32") >= 1


def test_ceilings_without_a_gpu_is_a_one_line_error(monkeypatch):
    monkeypatch.setattr("nsprof.launch.gpu.require_cupy", _no_cupy)
    monkeypatch.setattr("nsprof.launch.ceilings.require_cupy", _no_cupy)
    result = runner.invoke(app, ["ceilings", "--no-save"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr.strip().splitlines() == ["error: no CUDA GPU is visible. Check nvidia-smi"]


def _no_cupy():
    from nsprof.errors import GpuUnavailableError
    raise GpuUnavailableError("no CUDA GPU is visible", "check nvidia-smi")


@pytest.mark.gpu
def test_measured_ceilings_are_plausible(tmp_path):
    start = time.perf_counter()
    document = measure.measure_ceilings()
    assert time.perf_counter() - start < 60
    values = {name: entry["value"] for name, entry in document["ceilings"].items()}
    assert set(values) == {"dram_tbyte_per_s", "l2_tbyte_per_s", "fp32_tflop_per_s", "fp16_tensor_tflop_per_s",
                           "h2d_tbyte_per_s", "d2h_tbyte_per_s"}
    assert values["l2_tbyte_per_s"] > 1.5 * values["dram_tbyte_per_s"] > 0  # L2 is much faster than DRAM
    assert values["fp16_tensor_tflop_per_s"] > 4 * values["fp32_tflop_per_s"] > 0
    assert 0.001 < values["h2d_tbyte_per_s"] < values["dram_tbyte_per_s"]  # a bus: GB/s, far below DRAM
    assert 0.001 < values["d2h_tbyte_per_s"] < values["dram_tbyte_per_s"]
    datasheet = datasheet_ceiling(document["device"]["device"])
    if datasheet is not None:  # a listed GPU: between a fair share of its datasheet peak and a little above it
        for name in ("dram_tbyte_per_s", "fp32_tflop_per_s", "fp16_tensor_tflop_per_s"):
            assert 0.5 * getattr(datasheet, name) < values[name] < 1.05 * getattr(datasheet, name), name
    for entry in document["ceilings"].values():
        assert entry["method"] and entry["date"] and entry["runs"] >= 10 and entry["spread_pct"] < 10
    path = measure.save_ceilings(document, tmp_path)
    ceiling = ceiling_for(document["device"]["device"], read_measured_ceilings(tmp_path, path.name))
    assert ceiling.source_of("l2_tbyte_per_s").startswith("measured ")


def test_saving_again_keeps_the_earlier_measurement(tmp_path):
    from nsprof.launch.ceilings import save_ceilings

    first = {"created": "2026-11-21T01:37:28+00:00", "device": {"device": "NVIDIA H200"}, "ceilings": {}}
    second = {**first, "created": "2026-11-22T09:00:00+00:00"}
    path = save_ceilings(first, tmp_path)
    assert save_ceilings(second, tmp_path) == path
    assert json.loads(path.read_text())["created"] == second["created"]
    kept = tmp_path / "ceilings-nvidia-h200-20261121T013728.json"
    assert json.loads(kept.read_text())["created"] == first["created"]
