"""Finding profiles and ceilings (nsprof.parse.sources, nsprof.ceilings.resolve,
nsprof.parse.profile.tool_outputs): which CSV files are ncu output, one discovery for the report
commands and `nsprof explain`, one ceilings lookup for every command, and profile names that are
never paths."""

from __future__ import annotations

import inspect
import json
import os
import shutil
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from cli_checks import one_line_error
from ncu_builder import PAGES
from nsys_builder import write_export
from typer.testing import CliRunner

from nsprof import api
from nsprof.analyze.capture_analysis import CaptureAnalysis
from nsprof.analyze.capture_facts import gpu_name
from nsprof.analyze.metrics import kernel_metrics
from nsprof.analyze.percent_of_peak import percent_of_peak
from nsprof.ceilings.peaks import Ceiling, datasheet_ceiling, with_measurements
from nsprof.ceilings.resolve import resolve_ceiling
from nsprof.cli import app
from nsprof.commands import options as shared_options
from nsprof.commands import roofline as roofline_command
from nsprof.commands.analyze import analyze
from nsprof.commands.explain import explain
from nsprof.errors import ParseError
from nsprof.explain import evidence
from nsprof.parse import ncu_csv, sources
from nsprof.parse.ncu_csv import is_ncu_csv, load_ncu_csv
from nsprof.parse.profile import Capture, load_profile, tool_outputs
from nsprof.parse.sources import find_profiles, latest_profile, load_sources, unique_names
from nsprof.profile_analysis import opened
from nsprof.render.analysis_tables import _ceiling_caption
from nsprof.verbs import explain_sources
from nsprof.verbs.explain_sources import LADDER_EXAMPLES as EXAMPLE_PROFILES

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
RAW = DATA / "h200" / "ncu-sgemm-ladder-1024-raw.csv"
H200_NSYS = DATA / "h200" / "nsys-sgemm-ladder-1024.sqlite"
RTX = "NVIDIA GeForce RTX 4090"
EXAMPLE_PROFILE = EXAMPLE_PROFILES["sgemm"]

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def ok(*args):
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    return result



def measured_document(gpu: str, **values: float) -> dict:
    """A ceilings document as `nsprof ceilings` saves it."""
    return {"device": {"device": gpu},
            "ceilings": {name: {"value": value, "date": "2026-11-21", "method": f"measuring {name}"}
                         for name, value in values.items()}}


def profile_dir(path: Path, started: str | None = None, csv: Path = RAW) -> Path:
    path.mkdir(parents=True)
    shutil.copy(csv, path / "ncu-raw.csv")
    if started:
        (path / "manifest.json").write_text(json.dumps({"started": started}))
    return path


# --- which CSV files are ncu output -----------------------------------------------------------------

def test_ncu_output_is_told_by_its_header_or_ncu_lines(tmp_path):
    cases = {
        "raw.csv": PAGES["raw"],  # program output and ==PROF== lines, then the header
        "details.csv": PAGES["details"],
        "h200.csv": RAW.read_text(),
        "bom.csv": "\ufeff" + RAW.read_text()[:5000],
        "none-profiled.csv": "hello\n==PROF== Connected to process 1\n==WARNING== No kernels were profiled.\n",
        "bench.csv": "stage,ms\nv6,1.0\n",
        "roofline.csv": "label,kernel,level,intensity_flop_per_byte\nv1,sgemm_v1,dram,1.0\n",
        "id-first.csv": "ID,Name\n1,x\n",  # starts like ncu's header but has no Kernel Name column
        "empty.csv": "",
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    found = {name for name in cases if is_ncu_csv(tmp_path / name)}
    assert found == {"raw.csv", "details.csv", "h200.csv", "bom.csv", "none-profiled.csv"}
    assert not is_ncu_csv(tmp_path / "missing.csv")


def test_only_the_start_of_a_file_is_read(tmp_path):
    chatter = "program output line\n" * (ncu_csv.SNIFF_BYTES // 20 + 10)  # more than SNIFF_BYTES
    (tmp_path / "late-header.csv").write_text(chatter + PAGES["raw"].split("==PROF== Disconnected from process 545\n")[1])
    assert not is_ncu_csv(tmp_path / "late-header.csv")  # the header lies beyond what is read
    assert load_ncu_csv(tmp_path / "late-header.csv").kernels["kernel"].iloc[0] == "sgemm_v6"  # named: it parses
    (tmp_path / "prof-first.csv").write_text("==PROF== Connected to process 1\n" + chatter)
    assert is_ncu_csv(tmp_path / "prof-first.csv")  # ncu's own first line says whose output it is


def test_a_profile_directory_passes_over_csv_files_ncu_did_not_write(tmp_path):
    profile_dir(tmp_path / "p")
    (tmp_path / "p" / "bench.csv").write_text("stage,ms\nv6,1.0\n")
    exports, tables = tool_outputs(tmp_path / "p")
    assert (exports, tables) == ([], [tmp_path / "p" / "ncu-raw.csv"])
    assert len(load_profile(tmp_path / "p").counters) == 1
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / "roofline.csv").write_text("label,kernel\nv1,sgemm_v1\n")
    with pytest.raises(ParseError, match=r"nothing to analyze .*roofline\.csv is not ncu output"):
        load_profile(tmp_path / "q")


def test_roofline_output_under_profiles_does_not_break_the_next_commands(tmp_path, monkeypatch):
    """`nsprof roofline profiles/plots ...` writes roofline.csv under profiles/; report, roofline and
    explain then search profiles/ and must pass over it."""
    monkeypatch.chdir(tmp_path)
    profile_dir(tmp_path / "profiles" / "sgemm-all-1024", "2026-11-21T00:00:00+00:00")
    ok("roofline", "profiles/plots", "--from", "profiles/sgemm-all-1024")
    assert (tmp_path / "profiles" / "plots" / "roofline.csv").is_file()
    (tmp_path / "profiles" / "bench-sgemm.csv").write_text("stage,ms\nv6,1.0\n")  # even beside the profiles
    ok("report", "out")
    assert (tmp_path / "out" / "sgemm-all-1024" / "index.html").is_file()
    ok("roofline", "out")
    assert set(pd.read_csv(tmp_path / "out" / "roofline.csv")["profile"]) == {"sgemm-all-1024"}
    doc = json.loads(ok("explain", "bank-conflicts", "--json").stdout)
    assert doc["evidence"]["source"] == str(Path("profiles") / "sgemm-all-1024")
    # Named outright, a CSV that is not ncu output is still the one-line error.
    for command in (["roofline", "o"], ["report", "o"]):
        line = one_line_error(invoke(*command, "--from", "profiles/plots/roofline.csv"))
        assert line.startswith("error: profiles/plots/roofline.csv: not Nsight Compute CSV")
    line = one_line_error(invoke("explain", "bank-conflicts", "--from", "profiles/plots/roofline.csv"))
    assert "not Nsight Compute CSV" in line
    # A directory holding only other CSV files is no profile.
    assert "no profile here" in one_line_error(invoke("roofline", "o", "--from", "profiles/plots"))


# --- one discovery for the report commands and explain ---------------------------------------------

def test_explain_reads_the_profile_roofline_calls_latest(tmp_path, monkeypatch):
    """Latest by the manifest's start time, not by file time; explain needs ncu output."""
    monkeypatch.chdir(tmp_path)
    old = profile_dir(tmp_path / "profiles" / "a-old", "2026-01-01T00:00:00+00:00")
    new = profile_dir(tmp_path / "profiles" / "b-new", "2026-02-01T00:00:00+00:00")
    os.utime(old / "ncu-raw.csv", (2e9, 2e9))  # the older capture has the newer file
    os.utime(new / "ncu-raw.csv", (1e9, 1e9))
    ok("roofline", "out")
    assert set(pd.read_csv(tmp_path / "out" / "roofline.csv")["profile"]) == {"b-new"}
    nsys_only = tmp_path / "profiles" / "c-nsys-only"  # later still, but no ncu output
    nsys_only.mkdir()
    shutil.copy(H200_NSYS, nsys_only / "nsys.sqlite")
    (nsys_only / "manifest.json").write_text(json.dumps({"started": "2026-03-01T00:00:00+00:00"}))

    assert [p.name for p in find_profiles([Path("profiles")])] == ["a-old", "b-new", "c-nsys-only"]
    assert latest_profile().path == Path("profiles") / "b-new"
    assert latest_profile(with_ncu=False).path == Path("profiles") / "c-nsys-only"
    evidence_doc = json.loads(ok("explain", "bank-conflicts", "--json").stdout)["evidence"]
    assert evidence_doc["source"] == str(Path("profiles") / "b-new")
    assert evidence_doc["reason"].startswith("the newest capture of another program under profiles/")  # no op in the manifest


def test_explain_falls_back_to_the_example_and_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "profiles" / "plots").mkdir(parents=True)
    (tmp_path / "profiles" / "plots" / "roofline.csv").write_text("label,kernel\nv1,sgemm_v1\n")
    assert latest_profile() is None
    evidence_doc = json.loads(ok("explain", "bank-conflicts", "--json").stdout)["evidence"]
    assert evidence_doc["source"] == str(EXAMPLE_PROFILE)
    assert evidence_doc["reason"].startswith("no sgemm profile with an ncu CSV under ./profiles, so the committed example")


def test_one_constant_for_the_default_folder():
    assert Path("profiles") == sources.PROFILES_DIR and explain_sources.PROFILES_DIR is sources.PROFILES_DIR
    assert not hasattr(roofline_command, "DEFAULT_FROM")
    assert EXAMPLE_PROFILE == REPO / "profiles" / "examples" / "h200-sgemm-1024"
    assert EXAMPLE_PROFILES["hgemm"] == REPO / "profiles" / "examples" / "h200-hgemm-1024"


def test_explain_takes_the_newest_profile_of_its_own_ladder(tmp_path, monkeypatch):
    """An HGEMM profile captured later does not hide the SGEMM one from an SGEMM topic."""
    monkeypatch.chdir(tmp_path)
    for name, op, started in (("s", "sgemm", "2026-01-01"), ("h", "hgemm", "2026-02-01")):
        profile = tmp_path / "profiles" / name
        shutil.copytree(EXAMPLE_PROFILES[op], profile)
        manifest = json.loads((profile / "manifest.json").read_text())
        (profile / "manifest.json").write_text(json.dumps({**manifest, "started": f"{started}T00:00:00+00:00"}))
    assert latest_profile().path.name == "h" and latest_profile(op="sgemm").path.name == "s"
    evidence_doc = json.loads(ok("explain", "bank-conflicts", "--json").stdout)["evidence"]
    assert evidence_doc["source"] == str(Path("profiles") / "s")


def test_explain_counts_each_launch_once_as_analyze_does(tmp_path):
    pages = DATA / "h200"
    profile = tmp_path / "p"
    profile.mkdir()
    for path in pages.glob("ncu-*.csv"):  # three pages of one run
        shutil.copy(path, profile / path.name)
    measured = evidence.measurements(evidence.Source(profile, "test"), *opened(profile))
    analyzed = api.analyze(profile)  # explain reads the analysis analyze prints
    assert len(measured.launches) == 20 == len(analyzed.kernels)
    assert measured.stages.equals(analyzed.stages)


# --- names are slugs, and the report lands under OUT --------------------------------------------------

def test_names_are_unique_slugs_never_paths(tmp_path):
    paths = [tmp_path / "a" / "x", tmp_path / "b" / "x", tmp_path / "c" / "y", tmp_path / "d" / "my run",
             tmp_path / "e" / "z.csv", tmp_path / "e" / "z.sqlite"]
    names = unique_names(paths)
    assert names[:4] == ["a-x", "b-x", "y", "my-run"]
    assert len(set(names)) == len(names)
    assert all("/" not in name and "\\" not in name and name not in ("", ".", "..") for name in names)
    assert unique_names([Path(".")]) == [sources._slug(Path.cwd().name)]  # the directory's own name, not ""


def test_report_of_two_profiles_of_one_name_lands_under_out(tmp_path):
    a = profile_dir(tmp_path / "a" / "x", "2026-01-01T00:00:00+00:00")
    b = profile_dir(tmp_path / "b" / "x", "2026-02-01T00:00:00+00:00")
    out = tmp_path / "out"
    written = [Path(line.removeprefix("wrote ")) for line in ok("report", out, "--from", a, "--from", b).stdout.splitlines()]
    assert written and all(out.resolve() in path.resolve().parents for path in written)
    assert (out / "b-x" / "index.html").is_file()  # every stage came from the later one
    for profile in (a, b):
        assert sorted(p.name for p in profile.iterdir()) == ["manifest.json", "ncu-raw.csv"]
    assert [s.name for s in load_sources([a, b])] == ["a-x", "b-x"]
    ok("report", out, "--from", a, "--from", b, "--all")
    assert (out / "nvidia-h200-sgemm" / "index.html").is_file()


@pytest.mark.parametrize("name", ["../escape", "/tmp/abs", "a/b", "..", ".", " "])
def test_report_name_must_be_one_directory_name(tmp_path, name):
    line = one_line_error(invoke("report", tmp_path / "out", "--from", RAW, "--name", name), 2)
    assert "is not a directory name" in line
    assert not (tmp_path / "out").exists()


# --- one ceilings lookup ----------------------------------------------------------------------------

def test_resolve_ceiling(tmp_path, monkeypatch):
    (tmp_path / "ceilings-nvidia-h200.json").write_text(json.dumps(measured_document("NVIDIA H200", fp32_tflop_per_s=60.0)))
    assert resolve_ceiling("NVIDIA H200").fp32_tflop_per_s == 67.0  # conftest: the data directory holds none
    for location in (tmp_path, tmp_path / "ceilings-nvidia-h200.json"):
        ceiling = resolve_ceiling("NVIDIA H200", location)
        assert ceiling.fp32_tflop_per_s == 60.0 and ceiling.dram_tbyte_per_s == 4.8
    monkeypatch.setenv("NSPROF_DATA_DIR", str(tmp_path))
    assert resolve_ceiling("NVIDIA H200").fp32_tflop_per_s == 60.0
    assert resolve_ceiling("NVIDIA A100-SXM4-40GB") == datasheet_ceiling("NVIDIA A100-SXM4-40GB")
    assert resolve_ceiling(None) is None and resolve_ceiling(RTX) is None
    with pytest.raises(ParseError, match="no such ceilings file"):
        resolve_ceiling("NVIDIA H200", tmp_path / "nope.json")


def test_analyze_and_explain_take_ceilings_as_roofline_does():
    for command in (analyze, explain):
        option = inspect.signature(command).parameters["ceilings"].default
        assert option.param_decls == ("--ceilings",) and option.help == shared_options.CEILINGS_HELP
    for command in ("analyze", "explain", "roofline", "report"):
        assert "--ceilings" in ok(command, "--help").stdout


def test_every_command_uses_the_measured_ceilings(tmp_path, monkeypatch):
    """analyze, explain, roofline and report all see the measured file in the data directory, and
    the one --ceilings names."""
    document = measured_document("NVIDIA H200", fp32_tflop_per_s=60.0, dram_tbyte_per_s=4.0)
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / "ceilings-nvidia-h200.json").write_text(json.dumps(document))
    ridge = "60.0 TFLOP/s FP32 (measured 2026-11-21) / 4,000 GB/s DRAM (measured 2026-11-21) = ridge at 15.0 FLOP/B"
    for args, patch in (([], True), (["--ceilings", saved / "ceilings-nvidia-h200.json"], False)):
        with monkeypatch.context() as m:
            if patch:
                m.setenv("NSPROF_DATA_DIR", str(saved))
            doc = json.loads(ok("analyze", RAW, "--json", *args).stdout)
            assert doc["ceiling"]["fp32_tflop_per_s"] == 60.0 and doc["ceiling"]["dram_tbyte_per_s"] == 4.0
            v1 = next(k for k in doc["kernels"] if k["kernel"] == "sgemm_v1")
            assert v1["fp32_pct_of_peak"] == pytest.approx(100 * v1["gflops_per_s"] / 60e3)
            facts = json.loads(ok("explain", "roofline", "--from", RAW, "--json", *args).stdout)["facts"]
            assert any(ridge in fact for fact in facts), facts
            ok("roofline", tmp_path / "r", "--from", RAW, "--force", *args)  # the same folder each time
            table = pd.read_csv(tmp_path / "r" / "roofline.csv")
            assert table.loc[table["level"] == "dram", "roof_source"].str.startswith("measured").any()
    facts = json.loads(ok("explain", "roofline", "--from", RAW, "--json").stdout)["facts"]  # conftest: none saved
    assert any("67.0 TFLOP/s FP32 (datasheet) / 4,800 GB/s DRAM (datasheet)" in fact for fact in facts), facts
    assert "no such ceilings file" in one_line_error(invoke("analyze", RAW, "--ceilings", tmp_path / "nope.json"))
    assert "no such ceilings file" in one_line_error(invoke("explain", "roofline", "--from", RAW,
                                                            "--ceilings", tmp_path / "nope.json"))


# --- a GPU missing from the datasheet, with measured ceilings --------------------------------------

def test_analyze_a_gpu_the_datasheet_lacks_once_ceilings_are_measured(tmp_path, monkeypatch):
    """The review's reproduction: TF32 tensor and L1 were not measured, so they stay None."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NSPROF_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    committed = json.loads((REPO / "profiles" / "ceilings-nvidia-h200.json").read_text())
    committed["device"]["device"] = RTX
    (tmp_path / "data" / "ceilings-nvidia-geforce-rtx-4090.json").write_text(json.dumps(committed))
    profile = tmp_path / "rtx"
    profile.mkdir()
    (profile / "ncu-raw.csv").write_text(RAW.read_text().replace("NVIDIA H200", RTX))
    (profile / "manifest.json").write_text(json.dumps({"device": {"name": RTX}}))

    table = ok("analyze", profile).stdout
    assert f"% of peak against the {RTX}: 63.1 TFLOP/s FP32 (measured 2026-11-21), 4,252 GB/s DRAM" in " ".join(table.split())
    doc = json.loads(ok("analyze", profile, "--json").stdout)
    assert doc["gpu"] == RTX and doc["ceiling"]["tf32_tensor_tflop_per_s"] is None
    v10 = [k for k in doc["kernels"] if k["kernel"].startswith("sgemm_v10")]
    assert v10 and all(k["tensor_pct_of_peak"] is None for k in v10)  # TF32 work, no TF32 peak: null
    assert all(k["fp32_pct_of_peak"] is not None and k["dram_pct_of_peak"] is not None for k in v10)
    ok("explain", "roofline", "--from", profile)
    ok("roofline", tmp_path / "r", "--from", profile)
    ok("report", tmp_path / "r", "--from", profile)
    markdown = (tmp_path / "r" / "rtx" / "report.md").read_text(encoding="utf-8")
    v10 = markdown[markdown.index("### v10"):]
    assert "no roof known" in v10 and "nan" not in v10  # no TF32 roof: said, not a NaN


def test_percent_of_peak_is_nan_where_the_ceiling_has_no_value():
    kernels = kernel_metrics(pd.DataFrame({
        "id": [0, 1], "kernel": ["fp16", "tf32"], "nvtx": [[], []], "gpu__time_duration.sum": [1e6, 1e6],
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": [1e9, 1e9],
        "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": [0.0, 0.0],
        "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": [0.0, 0.0],
        "sm__ops_path_tensor_src_fp16.sum": [1e11, 0.0], "sm__ops_path_tensor_src_tf32_dst_fp32.sum": [0.0, 1e11],
        "dram__bytes_read.sum": [1e6, 1e6], "dram__bytes_write.sum": [0.0, 0.0]}))
    ceiling = Ceiling("X", 50.0, None, 500.0, None)  # no TF32 tensor, no DRAM peak
    fp16, tf32 = percent_of_peak(kernels, ceiling).to_dict("records")
    assert fp16["fp32_pct_of_peak"] == pytest.approx(100 * 2e9 / 1e-3 / 50e12)
    assert fp16["tensor_pct_of_peak"] == pytest.approx(100 * 1e11 / 500e12 / 1e-3)
    assert pd.isna(tf32["tensor_pct_of_peak"])  # TF32 work cannot be placed against an unknown peak
    assert pd.isna(fp16["dram_pct_of_peak"]) and pd.isna(tf32["dram_pct_of_peak"])
    nothing = percent_of_peak(kernels, Ceiling("X", None, None, None, None))
    assert nothing[["fp32_pct_of_peak", "tensor_pct_of_peak", "dram_pct_of_peak"]].isna().all().all()


def test_caption_copes_with_missing_peaks():
    def caption(ceiling):
        return _ceiling_caption(CaptureAnalysis(Capture(manifest={"device": {"name": RTX}}), ceiling))

    dram_only = with_measurements(None, measured_document(RTX, dram_tbyte_per_s=1.0))
    assert caption(dram_only) == (f"% of peak against the {RTX}: 1,000 GB/s DRAM (measured 2026-11-21); "
                                  "no FP32 peak known (measure it: nsprof ceilings)")
    assert caption(Ceiling(RTX, None, None, None, None)) == (
        f"% of peak against the {RTX}: no FP32 or DRAM peak known (measure it: nsprof ceilings)")
    assert caption(datasheet_ceiling("NVIDIA H200")) == (
        "% of peak against the H200 SXM: 67.0 TFLOP/s FP32 (datasheet), 4,800 GB/s DRAM (datasheet)")


# --- a NULL GPU name is no name ---------------------------------------------------------------------

def test_a_null_gpu_name_is_none_not_the_string_none(tmp_path):
    def nsys(*names):
        return SimpleNamespace(gpus=pd.DataFrame({"name": list(names)}, dtype=object))

    def ncu(*names):
        return SimpleNamespace(kernels=pd.DataFrame({"device__attribute_display_name": list(names)}, dtype=object))

    assert gpu_name([nsys(None)], [], None) is None
    assert gpu_name([nsys(None, "NVIDIA H200")], [], None) == "NVIDIA H200"
    assert gpu_name([nsys(float("nan"))], [ncu(None, "")], {"device": {"name": "NVIDIA A100"}}) == "NVIDIA A100"
    assert gpu_name([nsys("")], [ncu(float("nan"))], {"device": {"name": " "}}) is None

    path = write_export(tmp_path / "null-gpu.sqlite")
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT)")
        conn.execute("INSERT INTO TARGET_INFO_GPU VALUES (0, NULL)")
    conn.close()
    doc = json.loads(ok("analyze", path, "--json").stdout)
    assert doc["gpu"] is None and doc["ceiling"] is None


def test_a_ladder_prefers_its_own_profiles_to_newer_captures_of_other_programs(tmp_path):
    ladder = profile_dir(tmp_path / "sgemm-v6", "2026-01-01T00:00:00+00:00")
    (ladder / "manifest.json").write_text(json.dumps({"started": "2026-01-01T00:00:00+00:00", "op": "sgemm"}))
    profile_dir(tmp_path / "train", "2026-02-01T00:00:00+00:00")  # nsprof profile -- python train.py: no op
    assert latest_profile(tmp_path, op="sgemm").path == ladder
    assert latest_profile(tmp_path, op="hgemm").path.name == "train"  # no hgemm profile: the program's
    assert latest_profile(tmp_path).path.name == "train"


def test_the_latest_profile_of_a_ladder_that_captured_the_stages_asked_for():
    """The TF32 example (v9t, v10, v11) was captured a minute after the FP32 one (v1..v10), the Triton
    one (v8, v11, v12, v12t) days later, the H100's with the CPU rung (v0..v0blas, v1, v6, v8, v9,
    v11) hours after that: asked for v7 and v8, the capture that holds the most of them is the FP32
    one; for v10 and v11, the TF32 one; for v12 and v12t, the Triton one; for v11 alone, the newest
    that holds it; asked for nothing, or for stages none holds, the newest."""
    examples = Path(__file__).resolve().parents[1] / "profiles" / "examples"
    assert latest_profile(examples, op="sgemm").path.name == "h100-sgemm-cpu-1024"
    assert latest_profile(examples, op="sgemm", stages=["v7", "v8"]).path.name == "h200-sgemm-1024"
    assert latest_profile(examples, op="sgemm", stages=["v10", "v11"]).path.name == "h200-sgemm-tf32-1024"
    assert latest_profile(examples, op="sgemm", stages=["v12", "v12t"]).path.name == "h200-sgemm-triton-1024"
    assert latest_profile(examples, op="sgemm", stages=["v11"]).path.name == "h100-sgemm-cpu-1024"
    assert latest_profile(examples, op="sgemm", stages=["v99"]).path.name == "h100-sgemm-cpu-1024"  # none: newest
