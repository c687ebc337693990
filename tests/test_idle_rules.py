"""The causes of the GPU's idle time are one table of rules (nsprof.analyze.host_verdict.IDLE_RULES):
each names its condition, meaning, verdict, evidence and fix, and the verdict and the fixes are
read from it, checked here on hand-made figures and on a real capture."""

from __future__ import annotations

from pathlib import Path

import pytest

from nsprof.analyze.framework import JAX
from nsprof.analyze.host_idle import CAUSES
from nsprof.analyze.host_verdict import BUSY_PCT, GPU_BOUND, IDLE_RULES, RULE_OF, SAVING_BOUND, host_fixes, verdict
from nsprof.profile_analysis import opened

DATA = Path(__file__).parent / "data"


def test_every_cause_the_classifier_charges_has_one_rule_in_its_order():
    assert [rule.cause for rule in IDLE_RULES] == list(CAUSES)
    for rule in IDLE_RULES:
        assert rule.condition and rule.meaning and rule.verdict
        assert bool(rule.fix) == bool(rule.evidence)  # a fix is shown with its evidence
        if rule.fix:
            assert rule.fix_in(None) == rule.fix and all(rule.fix_in(name) != rule.fix for name in rule.framework_fixes)
        else:  # not the host's to fix, in any framework's words
            assert not rule.framework_fixes


def _host(causes: dict[str, int], busy_pct: float) -> dict:
    """host_side's figures as verdict reads them: one device, idle by `causes`."""
    idle = sum(causes.values())
    return {"devices": [{"device_id": 0, "busy_pct": busy_pct, "busy_ns": 100, "copy_busy_ns": 0,
                         "idle_ns": idle, "idle_causes": causes}]}


@pytest.mark.parametrize("rule", IDLE_RULES, ids=lambda rule: rule.cause)
def test_the_cause_of_most_idle_time_names_its_rules_verdict(rule):
    causes = {cause: 1 for cause in CAUSES} | {rule.cause: 1_000}
    assert verdict(_host(causes, BUSY_PCT - 1))["verdict"] == rule.verdict
    assert verdict(_host(causes, BUSY_PCT))["verdict"] == GPU_BOUND  # busy enough: the rule does not apply


def test_a_real_captures_fixes_are_its_rules_in_its_frameworks_words():
    """A JAX program that waits for each step (tests/data/jax, nsys's capture of it): each host fix is
    its rule's, saves exactly the idle time its cause made, and speaks JAX's words."""
    host = opened(DATA / "jax" / "mlp-nsys.sqlite.xz")[1].host
    assert host is not None and host["framework"] == JAX
    idle = host["devices"][0]["idle_causes"]
    fixes = [fix for fix in host_fixes(host) if fix["kind"] == "host"]
    assert fixes and {fix["cause"] for fix in fixes} == {cause for cause, ns in idle.items()
                                                       if ns > 0 and RULE_OF[cause].fix}
    for fix in fixes:
        rule = RULE_OF[fix["cause"]]
        assert fix["saving_ns"] == idle[fix["cause"]] and fix["bound"] == SAVING_BOUND
        assert fix["evidence"].startswith(rule.evidence(host))
        if not rule.sampled:
            assert fix["fix"] == rule.framework_fixes.get(JAX, rule.fix)
