"""Calibration certificates are sealed, re-verified by recomputation, and tampering is caught."""

import copy
from fractions import Fraction

import pytest

from rdp_verify.calibration.certificate import certificate, check_calibration
from rdp_verify.calibration.solve import Problem, calibrate, domain
from rdp_verify.certificates.certificate import seal
from rdp_verify.foundations.inputs import fraction_text

DELTA = Fraction(1, 10**5)


@pytest.fixture(scope="module", params=["pld", "rdp"])
def cert(request):
    return certificate(calibrate(Problem("sigma", Fraction(2), DELTA, q=Fraction(1, 10), steps=50,
                                         accountant=request.param)))


def test_a_fresh_certificate_is_confirmed(cert):
    assert cert["verdict"] == "calibrated"
    assert cert["answer"]["decision"] == "meets" and cert["neighbour"]["decision"] == "exceeds"
    low, high = domain("sigma", cert["inputs"]["accountant"])
    assert cert["range"] == {"lower": fraction_text(low), "upper": fraction_text(high)}
    assert check_calibration(cert) == []


@pytest.fixture(scope="module")
def at_the_end():
    # RDP of q = 1, T = 1 at sigma = 0.1 is below 100: every sigma in [0.1, 1e4] meets the target
    return certificate(calibrate(Problem("sigma", Fraction(1000), DELTA, q=Fraction(1), steps=1, accountant="rdp")))


def test_an_answer_at_the_ranges_best_end_has_no_neighbour_and_is_confirmed(at_the_end):
    assert at_the_end["answer"]["value"] == "0.1" and at_the_end["neighbour"] is None
    assert at_the_end["verdict"] == "calibrated" and check_calibration(at_the_end) == []


def test_a_resealed_range_is_checked(at_the_end):
    def shifted(c):
        c["range"]["lower"] = "0.05"  # claim the pld range under the rdp accountant
    assert check_calibration(resealed(at_the_end, shifted)) == ["range: not within the supported range of the unknown"]

    def above(c):
        c["range"]["lower"] = "0.2"  # the answer is outside the stated range
    assert check_calibration(resealed(at_the_end, above)) == ["answer.value: not on the stated grid within the stated range"]


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


def test_a_dropped_neighbour_is_not_confirmed(cert):
    def edit(c):
        c["neighbour"] = None  # as if the answer were the range's best end
    assert check_calibration(resealed(cert, edit)) == [
        "neighbour: missing, yet the answer is not at the best end of the stated range"]


def test_a_verdict_without_its_proof_is_not_confirmed(cert):
    def edit(c):
        c["neighbour"]["decision"] = "undecided"
    assert "verdict: calibrated without a proof for the neighbour" in check_calibration(resealed(cert, edit))
