"""Ceilings: measured values laid over the datasheet (each with its source), where the commands find
measured ones (--ceilings, the profile's manifest, nsprof's data directory; never the current
directory), the copy a capture makes into its manifest, the microbenchmark kernels, `nsprof
ceilings` on a GPU, and which layers each module of nsprof.ceilings loads."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from nsprof.ceilings.files import ceilings_file_name, manifest_copy, named_ceilings, save_ceilings, saved_ceilings
from nsprof.ceilings.peaks import ceiling_for, datasheet_ceiling
from nsprof.cli import app
from nsprof.errors import ParseError
from nsprof.launch import gpu_ceilings as measure
from nsprof.paths import data_dir, gpu_slug

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
    assert named_ceilings(tmp_path, "NVIDIA H200") == (MEASURED, tmp_path / "ceilings-nvidia-h200.json")
    assert named_ceilings(tmp_path / "ceilings-nvidia-h200.json", "NVIDIA A100")[0] == MEASURED  # a file is taken as named
    assert named_ceilings(tmp_path, "NVIDIA A100") is None
    with pytest.raises(ParseError, match="no such ceilings file"):
        named_ceilings(tmp_path / "missing.json", "NVIDIA H200")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ParseError, match="unreadable ceilings file"):
        named_ceilings(tmp_path / "broken.json", "NVIDIA H200")
    (tmp_path / "other.json").write_text(json.dumps({"records": []}))
    with pytest.raises(ParseError, match="not a ceilings file"):
        named_ceilings(tmp_path / "other.json", "NVIDIA H200")


def test_the_data_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("NSPROF_DATA_DIR", str(tmp_path / "data"))
    assert data_dir() == tmp_path / "data"
    assert saved_ceilings("NVIDIA H200") is None  # the directory need not exist
    monkeypatch.delenv("NSPROF_DATA_DIR")
    assert data_dir().name == "nsprof" and data_dir().is_absolute()


def test_without_platformdirs_the_data_directory_is_the_xdg_one(tmp_path, monkeypatch):
    """The benchmark GPU machines have no platformdirs: the same place it gives on Linux."""
    monkeypatch.delenv("NSPROF_DATA_DIR", raising=False)
    monkeypatch.setitem(sys.modules, "platformdirs", None)  # import platformdirs now raises ImportError
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_dir() == tmp_path / "xdg" / "nsprof"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert data_dir() == Path.home() / ".local" / "share" / "nsprof"


def test_roofline_uses_the_file_in_the_data_directory_for_a_profile_without_ceilings(tmp_path, monkeypatch):
    """A profile whose manifest holds no ceilings (captured before manifests carried them, or on a
    machine where none were measured) gets the data directory's; the current directory plays no part."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "ceilings-nvidia-h200.json").write_text(json.dumps(MEASURED))
    (tmp_path / "profiles").mkdir()  # where they were looked for before: now ignored
    (tmp_path / "profiles" / "ceilings-nvidia-h200.json").write_text(json.dumps(
        {**MEASURED, "ceilings": {"fp32_tflop_per_s": {"value": 1.0, "date": "2026-11-20", "method": "x"}}}))
    monkeypatch.setenv("NSPROF_DATA_DIR", str(data))
    monkeypatch.chdir(tmp_path)
    profile = without_manifest_ceilings(EXAMPLE, tmp_path / "example")
    result = runner.invoke(app, ["roofline", "out", "--from", str(profile)])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "out" / "roofline.csv")
    fp32 = table[(table["level"] == "dram") & (table["label"] == "v6")].iloc[0]
    assert (fp32["bound"], fp32["roof_gflops_per_s"]) == ("compute", 60_000)
    assert fp32["roof_source"] == f"measured 2026-11-21 by FMA microbenchmark; from {data / 'ceilings-nvidia-h200.json'}"
    assert table[table["level"] == "l2"]["roof_gflops_per_s"].notna().all()  # an L2 roof now exists
    v10 = table[(table["level"] == "dram") & (table["label"] == "v10")].iloc[0]
    assert v10["roof_source"] == "datasheet"  # TF32 was not measured


def test_ceilings_option_overrides_the_manifest(tmp_path):
    (tmp_path / "mine.json").write_text(json.dumps(MEASURED))
    result = runner.invoke(app, ["roofline", str(tmp_path / "out"), "--from", str(EXAMPLE),
                                 "--ceilings", str(tmp_path / "mine.json")])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "out" / "roofline.csv")
    fp32 = table[(table["level"] == "dram") & (table["label"] == "v6")].iloc[0]
    assert fp32["roof_gflops_per_s"] == 60_000  # the file's, not the manifest's 63.1 TFLOP/s
    assert fp32["roof_source"].endswith(f"; from {tmp_path / 'mine.json'} (--ceilings)")
    doc = json.loads(runner.invoke(app, ["analyze", str(EXAMPLE), "--json", "--ceilings", str(tmp_path / "mine.json")]).stdout)
    assert doc["ceiling"]["fp32_tflop_per_s"] == 60.0 and doc["ceiling"]["dram_tbyte_per_s"] == 4.08
    result = runner.invoke(app, ["roofline", str(tmp_path / "out"), "--from", str(EXAMPLE),
                                 "--ceilings", str(tmp_path / "nope.json")])
    assert result.exit_code == 1 and len(result.stderr.strip().splitlines()) == 1
    assert "no such ceilings file" in result.stderr


def test_percent_of_peak_does_not_depend_on_the_current_directory(tmp_path, monkeypatch):
    """Before, from the repository root v8 was at 62.8% of the measured FP32 ceiling, from
    elsewhere at 59.2% of the datasheet. The example's manifest now carries the H200's ceilings."""
    committed = json.loads((REPO / "profiles" / "ceilings-nvidia-h200.json").read_text())["ceilings"]
    docs = []
    for directory in (REPO, tmp_path):
        monkeypatch.chdir(directory)
        result = runner.invoke(app, ["analyze", str(EXAMPLE), "--json"])
        assert result.exit_code == 0, result.output
        docs.append(json.loads(result.stdout))
    at_root, elsewhere = docs
    assert at_root["kernels"] == elsewhere["kernels"] and at_root["ceiling"] == elsewhere["ceiling"]
    assert elsewhere["ceiling"]["fp32_tflop_per_s"] == committed["fp32_tflop_per_s"]["value"]
    assert elsewhere["ceiling"]["sources"]["fp32_tflop_per_s"].endswith("; from the profile's manifest")
    # FP32 FLOPs only: ptxas's HFMA2.MMA register moves count as FP16 work in gflops_per_s, never in % FP32
    v8 = next(k for k in elsewhere["kernels"] if k["kernel"] == "sgemm_v8_128x128_unchecked")
    tflops = v8["flops"] / v8["duration_ns"] / 1e3
    assert v8["fp32_pct_of_peak"] == pytest.approx(100 * tflops / committed["fp32_tflop_per_s"]["value"])


def test_every_example_manifest_carries_the_committed_h200_ceilings():
    committed = json.loads((REPO / "profiles" / "ceilings-nvidia-h200.json").read_text())
    examples = sorted((REPO / "profiles" / "examples").glob("h200-*/manifest.json"))  # (h100-*: an H100's)
    assert len(examples) >= 5
    for path in examples:
        copied = json.loads(path.read_text())["ceilings"]
        assert copied["copied_from"] == "profiles/ceilings-nvidia-h200.json" and "not during this capture" in copied["note"]
        assert {key: copied[key] for key in committed} == committed


def test_a_capture_copies_the_saved_ceilings_into_its_manifest(tmp_path, monkeypatch):
    from nsprof.capture.manifest import new_manifest, new_program_manifest
    from nsprof.capture.program import ProgramRequest
    from nsprof.capture.request import build_request

    gpu = "NVIDIA Test GPU 9000"
    document = {**MEASURED, "device": {"device": gpu}}
    monkeypatch.setenv("NSPROF_DATA_DIR", str(tmp_path))
    env = {"device": gpu, "host": "box"}
    request = build_request(stages=["v6"], sizes=["256"], tool="nsys")
    assert new_manifest(request, env, {}, [])["ceilings"] is None  # none saved yet
    path = save_ceilings(document)
    assert path == tmp_path / "ceilings-nvidia-test-gpu-9000.json"
    manifest = new_manifest(request, env, {}, [])
    assert manifest["ceilings"] == {"copied_from": str(path), **document}
    assert json.loads(json.dumps(manifest))["ceilings"]["ceilings"] == MEASURED["ceilings"]
    program = ProgramRequest(argv=("python", "x.py"), tools=("nsys",), metrics=(), clock_control="none", ranges=(),
                             kernel=None, launch_count=1, label="x")
    assert new_program_manifest(program, env, {}, [])["ceilings"]["copied_from"] == str(path)
    assert new_program_manifest(program, {}, {}, [])["ceilings"] is None  # the GPU is not known before the capture
    assert new_manifest(request, {**env, "device": "NVIDIA H200"}, {}, [])["ceilings"] is None  # another GPU's file
    path.write_text("{")  # a broken file is not copied; the capture goes on
    assert manifest_copy(gpu) is None


def test_the_manifest_copy_is_what_the_commands_use(tmp_path, monkeypatch):
    """A profile captured with ceilings in its manifest keeps them when the data directory's change."""
    monkeypatch.setenv("NSPROF_DATA_DIR", str(tmp_path / "data"))
    profile = without_manifest_ceilings(EXAMPLE, tmp_path / "example")
    manifest = json.loads((profile / "manifest.json").read_text())
    manifest["ceilings"] = {"copied_from": "elsewhere", **MEASURED}
    (profile / "manifest.json").write_text(json.dumps(manifest))
    save_ceilings({**MEASURED, "ceilings": {"fp32_tflop_per_s": {"value": 1.0, "date": "2026-12-01", "method": "x"}}})
    doc = json.loads(runner.invoke(app, ["analyze", str(profile), "--json"]).stdout)
    assert doc["ceiling"]["fp32_tflop_per_s"] == 60.0
    manifest["ceilings"] = {"ceilings": "not a document"}
    (profile / "manifest.json").write_text(json.dumps(manifest))
    result = runner.invoke(app, ["analyze", str(profile)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1 and "manifest.json" in result.stderr


def without_manifest_ceilings(example: Path, target: Path) -> Path:
    """A copy of a committed example whose manifest holds no ceilings."""
    shutil.copytree(example, target)
    manifest = json.loads((target / "manifest.json").read_text())
    del manifest["ceilings"]
    (target / "manifest.json").write_text(json.dumps(manifest))
    return target


# --- the package's layers ---------------------------------------------------------------------------

LAYERS = ("parse", "analyze", "render", "capture", "launch", "explain", "commands", "api", "cli", "profile_analysis")


@pytest.mark.parametrize("module", ["nsprof.ceilings.peaks", "nsprof.ceilings.files", "nsprof.ceilings.resolve",
                                    "nsprof.launch.gpu_ceilings", "nsprof.ladder_runs.cpu_ceilings"])
def test_each_ceilings_module_loads_no_layer_above_its_own_nor_cupy(module):
    """Imported first, in a fresh interpreter (as a cycle or a layer violation would show): the
    ceilings' modules load no layer (nsprof.ceilings' docstring says why), the modules that measure
    them only the launch layer, and none loads CuPy."""
    probe = (f"import sys; import {module}\n"
             "print(sorted(m for m in sys.modules if m.startswith('nsprof.') or m.split('.')[0] in ('cupy', 'cupyx')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-1000:]
    loaded = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    layers = {name.split(".")[1] for name in loaded}
    assert module in loaded and not any(name.startswith("cupy") for name in loaded)
    measures = module in ("nsprof.launch.gpu_ceilings", "nsprof.ladder_runs.cpu_ceilings")  # they measure
    assert layers & set(LAYERS) == ({"launch"} if measures else set()), loaded


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
    monkeypatch.setattr("nsprof.launch.gpu_ceilings.require_cupy", _no_cupy)
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
    path = save_ceilings(document, tmp_path)
    ceiling = ceiling_for(document["device"]["device"], named_ceilings(path, None)[0])
    assert ceiling.source_of("l2_tbyte_per_s").startswith("measured ")


def test_saving_again_keeps_the_earlier_measurement(tmp_path):
    first = {"created": "2026-11-21T01:37:28+00:00", "device": {"device": "NVIDIA H200"}, "ceilings": {}}
    second = {**first, "created": "2026-11-22T09:00:00+00:00"}
    path = save_ceilings(first, tmp_path)
    assert save_ceilings(second, tmp_path) == path
    assert json.loads(path.read_text())["created"] == second["created"]
    kept = tmp_path / "ceilings-nvidia-h200-20261121T013728.json"
    assert json.loads(kept.read_text())["created"] == first["created"]


def test_the_ceilings_table_of_the_committed_h200_measurement():
    """What `nsprof ceilings` prints, from the H200's saved document: measured beside the datasheet,
    bandwidths in GB/s and FLOP rates in TFLOP/s like every other table."""
    import json
    from pathlib import Path

    from nsprof.commands.ceilings import ceilings_table
    from nsprof.render.document_writers import to_markdown

    document = json.loads((Path(__file__).resolve().parents[1] / "profiles" / "ceilings-nvidia-h200.json").read_text())
    markdown = to_markdown([ceilings_table(document)])
    assert "| DRAM | 4,252 GB/s | 4,800 GB/s | 89% |" in markdown
    assert "| FP32 | 63.1 TFLOP/s | 67.0 TFLOP/s | 94% |" in markdown
    assert "| host to device (pinned) | 55.5 GB/s | 64.0 GB/s | 87% |" in markdown  # the datasheet: PCIe 5.0 x16
