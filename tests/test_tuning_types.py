"""A tuned stage's record details are typed (nsprof.ladder_runs.bench_types: StageDetails, Tuning, TuningTrial,
CompiledFacts): what the tuning writes, and the real records kept, match the bench schema derived from them, and a
trial the types do not describe fails it."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from nsprof.ladder_runs import tuning
from nsprof.ladder_runs.bench_types import SassCounts
from nsprof.ladder_runs.triton_stage import SASS_OPCODES, compiled_facts
from nsprof.render.bench_table import sass_counts, tuning_note

jsonschema = pytest.importorskip("jsonschema")
ROOT = Path(__file__).resolve().parents[1]
# a Triton stage's record as an H200 wrote it: its trials, the in-turn round's, and what Triton compiled
RECORD_FILE = ROOT / "benchmarks" / "records" / "2026-12-02-h200-hgemm-library-finalists" / "squares-run1.json"


def schema_check(details: dict) -> None:
    """`details` as a record's, checked against the bench schema's definition of it."""
    schema = json.loads((ROOT / "docs" / "json" / "bench.schema.json").read_text())
    jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": "#/$defs/StageDetails"}).validate(details)


def tuned_details() -> dict:
    """A real tuned record's details: the library stage's at 4096^3 (cuBLASLt's candidates, timed in turn)."""
    records = json.loads(RECORD_FILE.read_text())["results"]
    (record,) = [r for r in records if r["stage"] == "h7" and r["size"] == "4096x4096x4096"]
    return record["details"]


def test_sass_counts_have_one_key_for_each_opcode_read():
    assert set(SASS_OPCODES) == set(SassCounts.__annotations__)


def test_what_triton_compiled_is_recorded_as_typed():
    sass = "HGMMA.64x256x16 R0\nHGMMA.64x256x16 R8\nUTMALDG.2D [UR4]\nUTMASTG.2D [UR8]\nLDS R1\n"
    compiled = SimpleNamespace(metadata=SimpleNamespace(name="matmul_kernel", num_warps=8, num_stages=3, shared=196608),
                               asm={"sass": sass}, n_regs=168, n_spills=0)
    facts = compiled_facts(compiled)
    assert facts["sass"] == {"wgmma": 2, "mma_sync": 0, "tma_load": 1, "tma_store": 1, "cp_async": 0, "ffma": 0,
                             "global_load": 0, "shared_load": 1}
    details = tuning.Tuned("128x256x64 w8 s3", lambda: None, None,
                           {"kept": "128x256x64 w8 s3", "trials": [], "rule": tuning.RULE}).launcher(facts).details
    schema_check(details)
    assert sass_counts(facts["sass"]) == ["2 HGMMA (wgmma)", "1 UTMALDG (TMA)"]
    note = tuning_note({"stage": "h8", "size": "4096x4096x4096", "details": details})
    assert note.endswith("168 registers, 0 spills, 192 KB shared; SASS: 2 HGMMA (wgmma), 1 UTMALDG (TMA)")
    without_sass = compiled_facts(SimpleNamespace(metadata=compiled.metadata, asm={}, n_regs=168, n_spills=0))
    assert without_sass["sass"] is None and sass_counts(None) == []  # no disassembler: nothing read


def test_a_real_tuning_matches_the_schema_and_a_trial_it_does_not_describe_fails():
    details = tuned_details()
    schema_check(details)
    trials = details["autotune"]["trials"]
    assert any("in_turn_ms" in trial for trial in trials) and any("in_turn_ms" not in trial for trial in trials)
    for broken in ({**trials[0], "status": "fast"}, {**trials[0], "speed": 1.0},
                   {key: value for key, value in trials[0].items() if key != "median_ms"}):
        with pytest.raises(jsonschema.ValidationError):
            schema_check({**details, "autotune": {**details["autotune"], "trials": [broken]}})
    with pytest.raises(jsonschema.ValidationError):  # a tuning that names no kept candidate
        schema_check({"autotune": {"trials": trials, "rule": details["autotune"]["rule"]}})
