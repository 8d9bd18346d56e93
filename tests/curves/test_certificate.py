"""Privacy-curve certificates: sealed, schema-valid, re-checkable, tamper-evident, refused when inconsistent."""

import copy
from fractions import Fraction

from rdp_verify.certificates.certificate import content_hash, schema_errors
from rdp_verify.curves import certificate as certificate_module
from rdp_verify.curves.certificate import SCHEMA, certify_run, check_run_certificate
from rdp_verify.curves.crosscheck import Estimate
from rdp_verify.foundations.inputs import Phase

RUN = [Phase(Fraction(1, 50), Fraction(3, 2), 300)]


def test_certificate_is_sealed_and_confirmed_by_recomputation():
    cert = certify_run(RUN, delta=Fraction(1, 10**6))
    assert schema_errors(cert, SCHEMA) == [] and cert["content_hash"] == content_hash(cert)
    assert cert["verdict"] == "certified" and cert["cross_check"]["consistent"]
    lo, hi = Fraction(cert["epsilon"]["lower"]), Fraction(cert["epsilon"]["upper"])
    assert 0 < lo <= hi and cert["epsilon"]["tolerance_met"]
    assert check_run_certificate(cert) == []


def test_delta_certificate():
    cert = certify_run(RUN, epsilon=Fraction(2))
    assert "delta" in cert and "epsilon" not in cert and cert["cross_check"]["epsilon"] == "2"
    assert check_run_certificate(cert) == []


def test_tampering_is_detected():
    cert = certify_run(RUN, delta=Fraction(1, 10**6))
    edited = copy.deepcopy(cert)
    edited["epsilon"]["upper"] = edited["epsilon"]["lower"]
    assert check_run_certificate(edited)[0].startswith("content_hash")
    edited["content_hash"] = content_hash(edited)  # resealed: the recomputation still catches it
    assert "epsilon.upper: not confirmed by recomputation" in check_run_certificate(edited)
    broken = copy.deepcopy(cert)
    del broken["proofs"]
    assert check_run_certificate(broken)[0].startswith("schema")


def test_a_disagreeing_estimate_refuses_the_certificate(monkeypatch):
    def far_off(phases, epsilon):
        return Estimate(Fraction(1, 2), Fraction(1, 10**6), "a wrong estimate", {})
    monkeypatch.setattr(certificate_module, "estimate_delta", far_off)
    cert = certify_run(RUN, delta=Fraction(1, 10**6))
    assert cert["verdict"] == "inconsistent" and not cert["cross_check"]["consistent"]
