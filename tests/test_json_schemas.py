"""Each command's --json has a JSON Schema in docs/json/, derived from the document's type
(tests/json_schemas.py): the files are current, and real output of real captures matches them,
every typed key declared and of its declared type."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nsprof.cli import app
from nsprof.explain.topics import TOPICS

jsonschema = pytest.importorskip("jsonschema")
json_schemas = pytest.importorskip("json_schemas", reason="pydantic derives the schemas")

ROOT = Path(__file__).parents[1]
DATA, EXAMPLES = Path(__file__).parent / "data", ROOT / "profiles" / "examples"
ANALYZED = {  # a program's nsys capture, its JAX and torch.profiler traces, ladders' profiles, ncu alone
    "nsys": DATA / "host-side" / "train-sync.sqlite",
    "jax.profiler": DATA / "jax" / "mlp-workers1.trace.json.gz",
    "torch.profiler": DATA / "kineto" / "compile-block.json.gz",
    "a program's profile": EXAMPLES / "h200-program-torch-train",
    "a ladder's profile": EXAMPLES / "h200-sgemm-1024",
    "with CPU stages": EXAMPLES / "h100-sgemm-cpu-1024",
    "ncu alone": EXAMPLES / "h200-sgemm-1024" / "ncu-raw.csv",
}
PAIRS = DATA / "diff-pairs"
DIFFED = {  # two programs' captures, runs, JAX traces, two ladders' stages, bench records
    "programs": (PAIRS / "train-a.sqlite", PAIRS / "train-b.sqlite"),
    "runs": (DATA / "runs" / "ab-base", DATA / "runs" / "ab-slower"),
    "jax": (DATA / "jax" / "mlp-a1.trace.json.gz", DATA / "jax" / "mlp-wider1.trace.json.gz"),
    "ladders": (EXAMPLES / "h200-sgemm-1024", EXAMPLES / "h200-sgemm-tf32-1024"),
    "bench records": (DATA / "runs" / "bench-a.json", DATA / "runs" / "bench-b.json"),
}


def json_of(*args: str, exit_code: int = 0):
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == exit_code, result.output
    return json.loads(result.stdout)


def check(document: dict, stem: str) -> None:
    schema = json.loads((json_schemas.DOCS / f"{stem}.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(document)


@pytest.mark.parametrize("stem", json_schemas.DOCUMENTS)
def test_the_schemas_in_the_docs_are_the_types(stem):
    """docs/json is written from the types: `python tests/json_schemas.py` after changing one."""
    assert (json_schemas.DOCS / f"{stem}.schema.json").read_text() == json_schemas.text(stem)


@pytest.mark.parametrize("kind", ANALYZED)
def test_analyze_json_matches_its_schema(kind):
    check(json_of("analyze", str(ANALYZED[kind])), "analyze")


def test_the_schema_holds_the_host_side_to_its_keys():
    """A typed object is closed: a key the type does not declare, or one of another type, fails."""
    document = json_of("analyze", str(ANALYZED["nsys"]))
    check(document, "analyze")
    renamed = json.loads(json.dumps(document))
    renamed["host"]["devices"][0]["idle_by_cause"] = renamed["host"]["devices"][0].pop("idle_causes")
    with pytest.raises(jsonschema.ValidationError, match="idle_by_cause"):
        check(renamed, "analyze")
    retyped = json.loads(json.dumps(document))
    retyped["host"]["launches"]["count"] = "1898"
    with pytest.raises(jsonschema.ValidationError):
        check(retyped, "analyze")


def test_many_captures_json_matches_its_schema():
    document = json_of("analyze", str(DATA / "ranks"))
    assert document["captures"]
    check(document, "analyze-captures")


@pytest.mark.parametrize("kind", DIFFED)
def test_diff_json_matches_its_schema(kind):
    a, b = DIFFED[kind]
    check(json_of("diff", str(a), str(b)), "diff")


def test_noise_json_and_its_record_match_their_schema(tmp_path):
    out = tmp_path / "noise.json"
    check(json_of("noise", str(DATA / "runs" / "ab-base"), "--out", str(out)), "noise")
    check(json.loads(out.read_text()), "noise-record")
    check(json.loads((ROOT / "nsprof" / "diff" / "noise_floor.json").read_text()), "noise-record")  # nsprof's own


def test_doctor_json_matches_its_schema():
    """On this machine, without a GPU: CuPy missing, the GPU skipped, each check with its fix."""
    checks = json_of("doctor", exit_code=1)  # something profiling needs is missing
    assert {row["status"] for row in checks} >= {"missing", "ok"}
    check(checks, "doctor")


@pytest.mark.parametrize("op", ["sgemm", "hgemm", "sgemv"])
def test_stages_json_matches_its_schema(op):
    check(json_of("stages", "--op", op), "stages")


def test_history_json_matches_its_schema(tmp_path):
    """A history of a bench record with its runs and of a program's capture (its kernels, ranges and host side)."""
    db = str(tmp_path / "history.sqlite")
    for record in (DATA / "runs" / "bench-a.json", PAIRS / "train-a.sqlite"):
        added = CliRunner().invoke(app, ["history", "add", str(record), "--db", db, "--commit", "abc", "--branch", "main"])
        assert added.exit_code == 0, added.output
    rows = json_of("history", "show", "--db", db)
    assert {row["kind"] for row in rows} >= {"bench", "kernel", "host"}
    check(rows, "history")


def test_history_check_json_matches_its_schema(tmp_path):
    db = str(tmp_path / "history.sqlite")
    for record in (DATA / "runs" / "bench-a.json", DATA / "runs" / "bench-b.json"):
        added = CliRunner().invoke(app, ["history", "add", str(record), "--db", db, "--commit", "abc"])
        assert added.exit_code == 0, added.output
    document = json_of("history", "check", "--db", db, "--fail-if-slower", "5")
    assert document["rows"] and document["baseline"]
    check(document, "history-check")


def test_the_ceilings_an_h200_measured_match_their_schema():
    """profiles/ceilings-nvidia-h200.json is what `nsprof ceilings --json` printed and saved on the H200; a
    ceiling's key renamed, or its value a string, fails."""
    document = json.loads((ROOT / "profiles" / "ceilings-nvidia-h200.json").read_text())
    check(document, "ceilings")
    document["ceilings"]["dram_tbyte_per_s"]["bandwidth"] = document["ceilings"]["dram_tbyte_per_s"].pop("value")
    with pytest.raises(jsonschema.ValidationError, match="bandwidth"):
        check(document, "ceilings")


def test_the_cpu_ceilings_measured_here_and_kept_match_their_schema(monkeypatch, tmp_path):
    """`nsprof ceilings --cpu --json` run here (a copy and a product small enough for CI), and the CPU ceilings
    the repository keeps from earlier runs."""
    from nsprof.ladder_runs import cpu_ceilings

    monkeypatch.setattr(cpu_ceilings, "COPY_BYTES", 64 << 20)
    monkeypatch.setattr(cpu_ceilings, "FP32_N", 512)
    monkeypatch.setenv("NSPROF_DATA_DIR", str(tmp_path))
    check(json_of("ceilings", "--cpu", "--no-save"), "ceilings-cpu")
    for kept in (*DATA.glob("cpu-rung/*/ceilings-cpu.json"), *EXAMPLES.glob("*/ceilings-cpu.json")):
        check(json.loads(kept.read_text()), "ceilings-cpu")



def _bench_documents() -> list[tuple[str, dict]]:
    """Every bench results file the repository keeps (records, examples, test data), each run's document; a
    record script packed a second run's document into one file under "run2" (the first run's env applies)."""
    found = []
    for pattern in ("benchmarks/records/**/*.json", "profiles/**/*.json", "tests/data/**/*.json"):
        for path in sorted(ROOT.glob(pattern)):
            raw = path.read_bytes()
            document = json.loads(raw) if b'"nsprof_version"' in raw[:400] else None
            if not isinstance(document, dict) or "results" not in document or "env" not in document:
                continue
            name = str(path.relative_to(ROOT))
            packed = document.pop("run2", None)
            found.append((name, document))
            if packed is not None:
                found.append((f"{name} run2", {"nsprof_version": document["nsprof_version"], "env": document["env"],
                                               **packed}))
    return found


BENCH_DOCUMENTS = _bench_documents()


def test_the_bench_records_kept_are_many_and_of_every_kind():
    """The files below are what the schema is checked against: GPU and CPU benches, --runs merges."""
    envs = {("device" in doc["env"], "cpu" in doc["env"]) for _, doc in BENCH_DOCUMENTS}
    assert len(BENCH_DOCUMENTS) > 100 and envs == {(True, False), (True, True), (False, True)}
    assert any("runs" in doc for _, doc in BENCH_DOCUMENTS)


@pytest.mark.parametrize("name, document", BENCH_DOCUMENTS, ids=[name for name, _ in BENCH_DOCUMENTS])
def test_every_bench_record_kept_matches_its_schema(name, document):
    check(document, "bench")


def test_bench_json_run_here_matches_its_schema_and_the_schema_can_fail():
    """`nsprof bench --json` run here: the CPU's serial loop timed, and a GPU stage (timed on a GPU, skipped
    without one). A record with a status nsprof never writes, or a key it does not declare, fails."""
    document = json_of("bench", "--op", "sgemm", "--stage", "v0,v1", "--size", "64", "--repeat", "3",
                       "--warmup", "0", "--no-save")
    check(document, "bench")
    by_stage = {record["stage"]: record for record in document["results"]}
    assert by_stage["v0"]["status"] == "ok" and by_stage["v0"]["cpu_role"] == "loop"
    assert by_stage["v1"]["status"] in ("ok", "skipped")
    for broken in ({**by_stage["v0"], "status": "fast"}, {**by_stage["v0"], "speed": 1.0}):
        with pytest.raises(jsonschema.ValidationError):
            check({**document, "results": [broken]}, "bench")


def test_explain_list_json_matches_its_schema():
    document = json_of("explain", "--list")
    assert [row["topic"] for row in document["topics"]] == list(TOPICS)
    check(document, "explain")


@pytest.mark.parametrize("topic", list(TOPICS))
def test_explain_json_of_every_topic_matches_its_schema(topic, monkeypatch, tmp_path):
    """Each topic on the committed example capture it finds by itself (no ./profiles here): a ladder's
    profile, `nsprof pipeline`'s, a program's, or the one with CPU stages beside the GPU's."""
    monkeypatch.chdir(tmp_path)
    document = json_of("explain", topic)
    assert document["topic"] == topic and document["evidence"] is not None
    check(document, "explain")


EXPLAINED = {  # a stage's declared accesses through each model, a program's profile read for bank conflicts, the
    # measured topics on the captures their own tests read, and accesses the user describes through both models
    "one stage's shared accesses": ("bank-conflicts", "--stage", "v5"),
    "one stage's global accesses": ("coalescing", "--stage", "v3"),
    "one stage's launch plan": ("wave-quantization", "--op", "hgemm", "--stage", "h6"),
    "kernels without stage ranges": ("bank-conflicts", "--from", str(EXAMPLES / "h200-program-torch-train")),
    "a program's host side": ("gpu-idle", "--from", str(DATA / "host-side" / "train-sync.sqlite")),
    "the pipeline's copies": ("pipeline", "--from", str(EXAMPLES / "h200-pipeline-1024")),
    "a padded column": ("bank-conflicts", "--shape", "32x33", "--access", "column"),
    "paired 128-bit loads": ("bank-conflicts", "--shape", "32x32", "--access", "lane/2,(lane%2)*4", "--width", "16"),
    "a store": ("bank-conflicts", "--access", "row", "--width", "8", "--store"),
    "a column of a matrix": ("coalescing", "--shape", "1024x1024", "--access", "column"),
    "float4 rows": ("coalescing", "--access", "row", "--width", "16"),
}


@pytest.mark.parametrize("kind", EXPLAINED)
def test_explain_json_matches_its_schema(kind):
    check(json_of("explain", *EXPLAINED[kind]), "explain")


@pytest.mark.parametrize("capture", ["sgemm-1024", "sgemv-4096"])
def test_explain_gpu_vs_cpu_json_matches_its_schema(capture, cpu_rung_capture):
    """The committed captures with CPU stages and roofs measured on a CI-like host (tests/conftest.py)."""
    document = json_of("explain", "gpu-vs-cpu", "--from", str(cpu_rung_capture(capture)))
    assert document["measured"]["cpu_stages"] and document["measured"]["tiling"]
    check(document, "explain")


def test_the_explain_schema_holds_each_page_to_its_keys():
    """Every page is closed, down to its records: a key no type declares, one renamed, or a number as a
    string fails; so does a key of the bank model on the sector model's page."""
    pages = {"ladder": json_of("explain", "bank-conflicts"), "access": json_of("explain", *EXPLAINED["float4 rows"]),
             "measured": json_of("explain", *EXPLAINED["a program's host side"])}
    for document in pages.values():
        check(document, "explain")
    broken = [
        {**pages["ladder"], "note": "a key no type declares"},
        {**pages["measured"], "evidence": {**pages["measured"]["evidence"], "gpu": "H200"}},  # a ladder page's key
        {**pages["access"], "n_way": 1},  # the bank model's
        {**pages["access"], "sectors": "4"},
    ]
    renamed = json.loads(json.dumps(pages["ladder"]))
    renamed["evidence"]["shared_memory"][0]["conflicts"] = renamed["evidence"]["shared_memory"][0].pop("measured_conflicts")
    nested = json.loads(json.dumps(pages["ladder"]))
    nested["examples"][0]["lanes"] = []
    for document in (*broken, renamed, nested):
        with pytest.raises(jsonschema.ValidationError):
            check(document, "explain")
