"""The library and Triton stages' tuning keeps the fastest of its close trials timed again in turn, not the
fastest trial: trials run one after the other and meet different clocks at the power limit
(nsprof.ladder_runs.tuning). The GPU's part (building, verifying and timing each candidate, and the in-turn
round) is replaced by launches whose medians are given, so the rule itself is what is checked."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from nsprof.ladder_runs import tuning

STAGE = SimpleNamespace(op="hgemm", stage="h7", key="hgemm/h7")
PROBLEM = SimpleNamespace(m=4096, n=4096, k=4096)


def trial(config: str, median_ms: float | None, status: str = "ok") -> dict:
    return {"config": config, "status": status, "message": None, "median_ms": median_ms, "rel_error": 1e-4}


def test_finalists_are_the_verified_trials_within_the_margin_fastest_first_and_at_most_the_cap():
    edge = 1 + tuning.FINALIST_MARGIN
    trials = [trial("in", edge * 0.999), trial("fast", 1.0), trial("out", edge * 1.001), trial("x", None, "failed"),
              trial("y", None, "error"), trial("next", 1.01)]
    assert [t["config"] for t in tuning.finalists(trials)] == ["fast", "next", "in"]
    many = [trial(str(i), 1 + i / 1000) for i in range(tuning.MAX_FINALISTS + 3)]
    assert [t["config"] for t in tuning.finalists(many)] == [str(i) for i in range(tuning.MAX_FINALISTS)]
    assert tuning.finalists([trial("a", 2.0), trial("b", 2.0 * edge * 1.01)]) == [trial("a", 2.0)]


@pytest.fixture
def tuned_by(monkeypatch):
    """tune() over candidates whose trials took `trial_ms` and whose in-turn round gives `in_turn_ms`; returns
    the Tuned and the candidates the round was asked to time (None where there was no round)."""
    def run(trial_ms: dict[str, float], in_turn_ms: dict[str, float]):
        launches = {label: (lambda label=label: label) for label in trial_ms}
        monkeypatch.setattr(tuning, "_trial", lambda stage, problem, candidate, size: (
            trial(candidate.label, trial_ms[candidate.label]), (launches[candidate.label], None)))
        timed: list[list[str]] = []

        def in_turn(given):
            labels = [launch() for launch in given]
            timed.append(labels)
            return [in_turn_ms[label] for label in labels]

        monkeypatch.setattr(tuning, "in_turn_medians", in_turn)
        candidates = [tuning.Candidate(label, lambda: None) for label in trial_ms]
        result = tuning.tune(STAGE, PROBLEM, candidates)
        return result, timed[0] if timed else None
    return run


def test_the_kept_candidate_is_the_fastest_in_turn_not_the_fastest_trial(tuned_by):
    result, timed = tuned_by({"cublasGemmEx": 0.190, "cuBLASLt 0": 0.189, "cuBLASLt 3": 0.191, "cuBLASLt 5": 0.390},
                             {"cublasGemmEx": 0.215, "cuBLASLt 0": 0.214, "cuBLASLt 3": 0.209})
    assert result.label == result.autotune["kept"] == "cuBLASLt 3"
    assert result.launch() == "cuBLASLt 3"
    assert timed == ["cuBLASLt 0", "cublasGemmEx", "cuBLASLt 3"]  # the slow one is not a finalist
    by_config = {t["config"]: t for t in result.autotune["trials"]}
    assert by_config["cuBLASLt 3"]["in_turn_ms"] == 0.209 and "in_turn_ms" not in by_config["cuBLASLt 5"]
    assert "in turn" in result.autotune["rule"]


def test_a_lone_finalist_is_kept_without_another_round(tuned_by):
    result, timed = tuned_by({"cublasGemmEx": 0.100, "cuBLASLt 0": 0.200}, {})
    assert result.label == "cublasGemmEx" and timed is None
    assert not any("in_turn_ms" in t for t in result.autotune["trials"])


def test_the_bench_note_says_how_many_were_timed_in_turn(tuned_by):
    from nsprof.render.bench_table import tuning_note

    result, _ = tuned_by({"a": 1.0, "b": 1.01}, {"a": 1.02, "b": 1.0})
    record = {"stage": "h7", "size": "4096x4096x4096", "details": {"autotune": result.autotune}}
    assert "kept b of 2 tried (2 verified, the fastest of 2 timed in turn;" in tuning_note(record)
