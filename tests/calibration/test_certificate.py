"""Calibration certificates are sealed, re-verified by recomputation, and tampering is caught."""

import copy
from fractions import Fraction

import pytest

from rdp_verify.calibration.certificate import certificate, check_calibration
from rdp_verify.calibration.solve import Problem, calibrate
from rdp_verify.certificates.certificate import seal

DELTA = Fraction(1, 10**5)


@pytest.fixture(scope="module", params=["pld", "rdp"])
def cert(request):
    return certificate(calibrate(Problem("sigma", Fraction(2), DELTA, q=Fraction(1, 10), steps=50,
                                         accountant=request.param)))


def test_a_fresh_certificate_is_confirmed(cert):
    assert cert["verdict"] == "calibrated"
    assert cert["answer"]["decision"] == "meets" and cert["neighbour"]["decision"] == "exceeds"
    assert check_calibration(cert) == []


def resealed(cert, edit):
    forged = copy.deepcopy(cert)
    edit(forged)
    del forged["content_hash"]
    return seal(forged, "calibration-v1")


def test_an_edited_file_fails_its_hash(cert):
    forged = copy.deepcopy(cert)
    forged["answer"]["value"] = "1"
    assert check_calibration(forged) == ["content_hash: does not match the certificate's content (the file was modified)"]


def test_a_resealed_smaller_answer_is_not_confirmed(cert):
    # claim the neighbour (which exceeds the target) as the answer
    def edit(c):
        c["answer"] = {**c["neighbour"], "decision": "meets"}
    problems = check_calibration(resealed(cert, edit))
    assert any(p.startswith("answer.decision") for p in problems)


def test_a_resealed_neighbour_that_skips_grid_values_is_not_confirmed(cert):
    def edit(c):
        c["neighbour"]["value"] = str(Fraction(c["neighbour"]["value"]) - Fraction(1, 10))
    assert any(p.startswith("neighbour.value") for p in check_calibration(resealed(cert, edit)))


def test_a_resealed_bracket_is_recomputed(cert):
    def edit(c):
        c["answer"]["epsilon"]["lower"] = c["answer"]["epsilon"]["upper"]
    assert any("answer.epsilon" in p for p in check_calibration(resealed(cert, edit)))


def test_a_verdict_without_its_proof_is_not_confirmed(cert):
    def edit(c):
        c["neighbour"]["decision"] = "undecided"
    assert "verdict: calibrated without a proof for the neighbour" in check_calibration(resealed(cert, edit))
