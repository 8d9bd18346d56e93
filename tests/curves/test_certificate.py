"""Privacy-curve certificates: sealed, schema-valid, every field re-verified, verdicts that follow the proof."""

import copy
import math
from fractions import Fraction

import pytest
from mutations import assert_every_field_checked, edited

from rdp_verify.certificates.certificate import content_hash, schema_errors
from rdp_verify.curves import certificate as certificate_module
from rdp_verify.curves.certificate import (
    POLICY,
    SCHEMA,
    certify_run,
    check_run_certificate,
    compare,
    recompute,
    verdict_of,
)
from rdp_verify.curves.crosscheck import Estimate
from rdp_verify.foundations.run import Phase

RUN = [Phase(Fraction(1, 50), Fraction(3, 2), 300)]


@pytest.fixture(scope="module", params=["epsilon", "delta", "gaussian"])
def cert(request):
    if request.param == "epsilon":
        return certify_run(RUN, delta=Fraction(1, 10**6))
    if request.param == "delta":
        return certify_run(RUN, epsilon=Fraction(2))
    return certify_run([Phase(Fraction(1), Fraction(2), 3)], delta=Fraction(1, 10**6))


def test_a_fresh_certificate_is_sealed_and_confirmed(cert):
    assert schema_errors(cert, SCHEMA) == [] and cert["content_hash"] == content_hash(cert)
    assert cert["verdict"] == "certified" and cert["cross_check"]["consistent"] and cert["cross_check"]["informative"]
    quantity = "epsilon" if "delta" in cert["inputs"] else "delta"
    assert 0 < Fraction(cert[quantity]["lower"]) <= Fraction(cert[quantity]["upper"])
    assert cert[quantity]["tolerance_met"] and cert[quantity]["shortfall"] is None
    assert check_run_certificate(cert) == []


def test_the_method_and_its_settings(cert):
    if cert["inputs"]["phases"][0]["q"] == "1":
        assert cert["method"] == "closed form" and cert["settings"] == {"mu_squared": "0.75"}
    else:
        assert cert["method"] == "discrete pairs"
        (grid,) = cert["settings"]["grids"]
        anchor, h = Fraction(grid["anchor"]), Fraction(cert["settings"]["grid_step"])
        assert anchor * math.exp(grid["k_lo"] * h) < 1 < anchor * math.exp(grid["k_hi"] * h)  # straddles x = 1
        assert cert["work"]["grid_points_per_step"] == [grid["k_hi"] - grid["k_lo"] + 1]


def test_every_field_is_recomputed_or_listed_as_recorded(cert):
    assert assert_every_field_checked(cert, recompute(cert), POLICY, compare, SCHEMA) > 60


@pytest.mark.parametrize("path, value", [("inputs.tolerance", "0.000001"), ("inputs.phases.0.steps", 301)])
def test_forged_inputs_are_recomputed(path, value):
    cert = certify_run(RUN, delta=Fraction(1, 10**6))
    problems = check_run_certificate(edited(cert, path, value))
    assert problems and all(":" in p for p in problems)


def test_a_forged_grid_range_is_named():
    cert = certify_run(RUN, delta=Fraction(1, 10**6))
    problems = check_run_certificate(edited(cert, "settings.grids.0.k_hi", cert["settings"]["grids"][0]["k_hi"] - 1))
    assert any(p.startswith("settings.grids.0.k_hi") for p in problems)


def test_a_loosened_upper_end_is_still_true_but_not_this_certificate():
    cert = certify_run(RUN, delta=Fraction(1, 10**6))
    loose = edited(cert, "epsilon.upper", "0.75")
    assert loose["epsilon"]["relative_width"] == cert["epsilon"]["relative_width"]  # the forger kept the width
    problems = check_run_certificate(loose)
    assert any(p.startswith("epsilon.upper") for p in problems)
    # the self-consistency check names the derived fields that no longer follow from the ends
    assert any(p.startswith("epsilon.relative_width") for p in certificate_module.self_consistency(loose))


def test_an_estimate_moved_outside_the_bracket_is_caught():
    cert = certify_run(RUN, delta=Fraction(1, 10**6))
    moved = edited(cert, "cross_check.estimate.value", "0.5")
    problems = check_run_certificate(moved)
    assert any(p.startswith("cross_check.estimate.value") for p in problems)
    assert any(p.startswith("cross_check.consistent") for p in certificate_module.self_consistency(moved))


def test_version_1_is_refused_with_a_reason():
    cert = certify_run(RUN, delta=Fraction(1, 10**6))
    old = {**cert, "format_version": 1}
    assert check_run_certificate(old)[0].startswith("format_version: version 1")
    broken = copy.deepcopy(cert)
    del broken["proofs"]
    assert check_run_certificate(broken)[0].startswith("schema")


def test_a_disagreeing_informative_estimate_refuses_the_certificate(monkeypatch):
    def far_off(phases, epsilon, scale=None):
        return Estimate(Fraction(1, 2), Fraction(1, 10**9), "a wrong estimate", {})
    monkeypatch.setattr(certificate_module, "estimate_delta", far_off)
    cert = certify_run(RUN, delta=Fraction(1, 10**6))
    assert cert["verdict"] == "inconsistent" and not cert["cross_check"]["consistent"]


def test_an_uninformative_estimate_never_decides(monkeypatch):
    def vague(phases, epsilon, scale=None):  # its error is far above δ/10: it cannot tell
        return Estimate(Fraction(1, 2), Fraction(1, 4), "a vague estimate", {})
    monkeypatch.setattr(certificate_module, "estimate_delta", vague)
    cert = certify_run(RUN, delta=Fraction(1, 10**6))
    assert not cert["cross_check"]["informative"] and not cert["cross_check"]["consistent"]
    assert cert["verdict"] == "certified"


def _bracket(lower, upper, met=True, shortfall=None):
    return {"lower": lower, "upper": upper, "relative_width": None, "tolerance_met": met, "shortfall": shortfall}


FINE = {"informative": True, "consistent": True, "epsilon": "1"}


@pytest.mark.parametrize("quantity, bracket, verdict, reason", [
    ("epsilon", _bracket("1", "1.001"), "certified", "within the tolerance"),
    ("epsilon", _bracket("1", "2", False, "500"), "certified", "500 times wider"),
    ("epsilon", _bracket("0", "0"), "certified", "within the tolerance"),  # ε = 0 proven exactly
    ("epsilon", _bracket("1", None, False), "partial", "upper end"),
    ("epsilon", _bracket("0", "0.1", False), "partial", "lower end 0"),
    ("delta", _bracket("0", "1e-9", False), "partial", "lower end 0"),
    ("delta", _bracket("0.5", "1", False), "partial", "upper end 1"),
])
def test_verdicts_follow_the_proof(quantity, bracket, verdict, reason):
    got, why = verdict_of(quantity, bracket, FINE)
    assert got == verdict and reason in why
    # an informative estimate that disagrees overrides everything; an uninformative one never decides
    assert verdict_of(quantity, bracket, {**FINE, "consistent": False})[0] == "inconsistent"
    assert verdict_of(quantity, bracket, {**FINE, "consistent": False, "informative": False})[0] == verdict
