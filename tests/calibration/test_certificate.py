"""Calibration certificates are sealed, re-verified by recomputation, and tampering is caught."""

import copy
from fractions import Fraction
from functools import cache

import mpmath
import pytest
from curve_oracles import gaussian_delta
from mutations import assert_every_field_checked, edited, perturbed

from rdp_verify.calibration.certificate import (
    POLICY,
    SCHEMA,
    certificate,
    check_calibration,
    compare,
    recompute,
    self_consistency,
)
from rdp_verify.calibration.options import domain
from rdp_verify.calibration.solve import Problem, calibrate
from rdp_verify.certificates.fields import leaf_paths, matches
from rdp_verify.curves.certificate import NOT_VERIFIED as RUN_NOT_VERIFIED
from rdp_verify.foundations.inputs import fraction_text

DELTA = Fraction(1, 10**5)


@cache
def calibrated(accountant):
    # the Gaussian mechanism (q = 1) on a one-digit grid: a few cheap evaluations, answer 7, neighbour 6
    return certificate(calibrate(Problem("sigma", Fraction(2), DELTA, q=Fraction(1), steps=10,
                                         accountant=accountant, digits=1)))


@pytest.fixture(params=["pld", "rdp"])
def cert(request):
    return calibrated(request.param)


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
    shifted = edited(at_the_end, "range.lower", "0.05")  # claim the pld range under the rdp accountant
    assert any(p.startswith("range.lower") for p in check_calibration(shifted))
    assert "range: not the supported range of the unknown" in self_consistency(shifted)
    above = edited(at_the_end, "range.lower", "0.2")  # the answer is outside the stated range
    assert "answer.value: not on the stated grid within the stated range" in self_consistency(above)


def test_an_edited_file_fails_its_hash(cert):
    forged = copy.deepcopy(cert)
    forged["answer"]["value"] = "1"
    assert check_calibration(forged) == ["content_hash: does not match the certificate's content (the file was modified)"]


def test_every_field_is_recomputed_or_listed_as_recorded(cert):
    # recorded only: the software versions, and what an embedded privacy curve records but does not verify
    embedded = [f"{point}.certificate.{pattern}" for point in ("answer", "neighbour") for pattern in RUN_NOT_VERIFIED]
    recorded = [p for p in leaf_paths(cert) if not POLICY.is_verified(p)]
    assert recorded == [p for p in leaf_paths(cert)
                        if p.endswith("software.rdp_verify") or any(matches(m, p) for m in embedded)]
    assert assert_every_field_checked(cert, recompute(cert), POLICY, compare, SCHEMA) > 90


def test_forged_inputs_are_recomputed(cert):
    unchanged = []
    for path, original in leaf_paths(cert).items():
        if path.startswith("inputs."):
            unchanged += [path for value in perturbed(original) if not check_calibration(edited(cert, path, value))]
    # every evaluation decided at a coarser rung of the tolerance ladder (search.*.tolerance), so the finest rung
    # changes no claim: the certificate with tolerance 0.0002 is exactly what that calibration writes
    assert unchanged == ["inputs.tolerance"]


def test_a_resealed_smaller_answer_is_not_confirmed(cert):
    # claim the neighbour (which exceeds the target) as the answer
    forged = edited(cert, "answer", {**cert["neighbour"], "decision": "meets"})
    assert check_calibration(forged)[0].startswith("answer.value: claimed \"6\", recomputed \"7\"")
    assert {"answer.decision: not what answer.epsilon says against the target",
            "answer: not one of the search's evaluations"} <= set(self_consistency(forged))


@pytest.mark.parametrize("path, value, problem", [
    ("neighbour.decision", "undecided", "verdict: inconclusive by the answer, the neighbour and their certificates"),
    ("neighbour.value", "5", "neighbour.value: not the next grid value beyond the answer within the stated range"),
    ("answer.value", "7.5", "answer.value: not on the stated grid within the stated range"),
    ("search.0.decision", "undecided", "search.0.decision: not what search.0.epsilon says against the target"),
    ("verdict", "inconclusive", "verdict: calibrated by the answer, the neighbour and their certificates"),
])
def test_claims_are_re_derived_from_the_certificate_itself(cert, path, value, problem):
    # self_consistency alone (check runs it once every field equals the recomputation): catches a bug in calibrate
    assert self_consistency(cert) == []
    assert problem in self_consistency(edited(cert, path, value))


def test_an_embedded_certificate_must_prove_its_point():
    cert = calibrated("pld")
    swapped = edited(cert, "answer.certificate", cert["neighbour"]["certificate"])
    assert {"answer.certificate.inputs: not the run, delta and tolerance of answer",
            "answer.epsilon: not the bracket answer.certificate proves"} <= set(self_consistency(swapped))
    tampered = copy.deepcopy(cert)
    tampered["answer"]["certificate"]["verdict"] = "inconsistent"
    resealed_outside = edited(tampered, "verdict", "calibrated")  # the same verdict: only the outer hash is renewed
    assert "answer.certificate: content_hash: does not match the certificate's content (the file was modified)" in \
        self_consistency(resealed_outside)


def test_other_samplers_are_calibrated_and_their_inputs_verified():
    """Replace-one at q = 1 is the Gaussian mechanism at sensitivity 2, μ = 2·√10/σ: the smallest σ with
    ε(1e-5) ≤ 2 is σ* = 2·√10/μ*, μ* the root of the Balle–Wang closed form (computed here by bisection); the
    answer is the two-digit grid value at or above σ*, the neighbour the one below."""
    cal = certificate(calibrate(Problem("sigma", Fraction(2), DELTA, q=Fraction(1), steps=10, digits=2,
                                        neighbours="replace-one")))
    assert cal["inputs"]["neighbours"] == "replace-one" and "replace-one" in cal["mechanism"]
    lo, hi = mpmath.mpf("0.01"), mpmath.mpf(10)  # gaussian_delta(2, μ) increases with μ: bisect δ(2) = 1e-5
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gaussian_delta(2, mid) <= mpmath.mpf(10) ** -5 else (lo, mid)
    sigma_star = 2 * mpmath.sqrt(10) / lo
    answer, below = Fraction(cal["answer"]["value"]), Fraction(cal["neighbour"]["value"])
    assert float(below) < sigma_star <= float(answer) and answer - below == 1 and 10 <= answer < 100  # grid step 1
    assert check_calibration(cal) == []
    problems = check_calibration(edited(cal, "inputs.neighbours", "add-remove"))
    assert problems and all(":" in p for p in problems)


@pytest.mark.parametrize("problem, message", [
    (dict(unknown="q", sigma=Fraction(1), steps=10, sampler="fixed", neighbours="replace-one", batch_size=1,
          dataset_size=10), "is given, not solved for"),
    (dict(unknown="sigma", q=Fraction(1, 10), steps=10, neighbours="replace-one", accountant="rdp"),
     "accountant rdp covers Poisson sampling with add-remove neighbours only"),
])
def test_calibration_refuses_what_it_cannot_solve(problem, message):
    unknown = problem.pop("unknown")
    with pytest.raises(ValueError, match=message):
        Problem(unknown, Fraction(2), DELTA, **problem)
