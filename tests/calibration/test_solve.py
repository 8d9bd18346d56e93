"""Calibration finds the grid's optimum: checked against closed forms computed independently.

For q = 1 a run of T steps is the Gaussian mechanism with μ = √T/σ, whose exact ε(δ) is Balle & Wang
(2018, Theorem 8) (tests/curve_oracles.py), and whose RDP is Tα/(2σ²) (Mironov 2017, Proposition 7),
converted here by a dense scan over α of the Balle et al. (2020) formula in mpmath.
"""

from fractions import Fraction

import mpmath as mp
import pytest
from curve_oracles import gaussian_epsilon

from rdp_verify.calibration.solve import Problem, calibrate
from rdp_verify.foundations.inputs import InputError

DELTA = Fraction(1, 10**5)


def exact(sigma, steps):
    return gaussian_epsilon(DELTA, mp.sqrt(steps) / mp.mpf(sigma.numerator) * sigma.denominator)


def rdp_gaussian(sigma, steps):
    s2 = mp.mpf(sigma.numerator) ** 2 / sigma.denominator ** 2
    d = mp.mpf(DELTA.numerator) / DELTA.denominator
    return min(steps * a / (2 * s2) + mp.log((a - 1) / a) - (mp.log(d) + mp.log(a)) / (a - 1)
               for a in (1 + mp.mpf(k) / 1000 for k in range(1, 200000, 7)))


def test_smallest_sigma_matches_the_gaussian_closed_form():
    cal = calibrate(Problem("sigma", Fraction(2), DELTA, q=Fraction(1), steps=10))
    assert cal.verdict == "calibrated"
    sigma, below = cal.answer.value, cal.neighbour.value
    assert below == sigma - Fraction(1, 100) * (1 if sigma < 10 else 10)
    assert exact(sigma, 10) <= 2 < exact(below, 10)
    assert Fraction(cal.answer.upper) <= 2 < Fraction(cal.neighbour.lower)


def test_largest_steps_matches_the_gaussian_closed_form():
    cal = calibrate(Problem("steps", Fraction(3), DELTA, q=Fraction(1), sigma=Fraction(5)))
    assert cal.verdict == "calibrated"
    t, above = int(cal.answer.value), int(cal.neighbour.value)
    assert exact(Fraction(5), t) <= 3 < exact(Fraction(5), above)


def test_rdp_accountant_matches_the_gaussian_rdp_closed_form():
    cal = calibrate(Problem("sigma", Fraction(2), DELTA, q=Fraction(1), steps=10, accountant="rdp"))
    assert cal.verdict == "calibrated"
    assert rdp_gaussian(cal.answer.value, 10) <= 2 + 1e-6
    assert rdp_gaussian(cal.neighbour.value, 10) > 2 - 1e-6
    tight = calibrate(Problem("sigma", Fraction(2), DELTA, q=Fraction(1), steps=10))
    assert tight.answer.value < cal.answer.value  # the privacy curve needs less noise than any RDP bound


def test_largest_q_is_at_least_the_rdp_answer_and_stops_at_one():
    pld = calibrate(Problem("q", Fraction(1), DELTA, sigma=Fraction(2), steps=100))
    rdp = calibrate(Problem("q", Fraction(1), DELTA, sigma=Fraction(2), steps=100, accountant="rdp"))
    assert pld.verdict == rdp.verdict == "calibrated"
    assert pld.answer.value >= rdp.answer.value
    assert pld.neighbour.value > pld.answer.value and pld.neighbour.decision == "exceeds"
    whole = calibrate(Problem("q", Fraction(50), DELTA, sigma=Fraction(2), steps=10))
    assert whole.answer.value == 1 and whole.neighbour is None and whole.verdict == "calibrated"


def test_unreachable_target_is_infeasible():
    cal = calibrate(Problem("sigma", Fraction(1, 10**4), DELTA, q=Fraction(1), steps=100))
    assert cal.answer is None and cal.verdict == "infeasible"
    assert cal.evaluations[-1].value == 10**4 and cal.evaluations[-1].decision == "exceeds"


def test_a_target_on_the_boundary_is_undecided_not_guessed():
    # ε(σ = 1) for q = 1, T = 1 is a number no finite bracket reaches exactly: make it the target
    target = Fraction(mp.nstr(exact(Fraction(1), 1), 30))
    cal = calibrate(Problem("sigma", target, DELTA, q=Fraction(1), steps=1, tolerance=Fraction(1, 1000)))
    assert cal.verdict == "inconclusive"
    assert cal.neighbour.value == 1 and cal.neighbour.decision == "undecided"
    assert Fraction(cal.neighbour.lower) <= target <= Fraction(cal.neighbour.upper)


@pytest.mark.parametrize("kwargs, match", [
    ({"unknown": "sigma", "q": Fraction(1, 10), "sigma": Fraction(1), "steps": 10}, "not sigma"),
    ({"unknown": "alpha", "q": Fraction(1, 10), "steps": 10}, "unknown"),
    ({"unknown": "sigma", "q": Fraction(2), "steps": 10}, "0 < q <= 1"),
    ({"unknown": "steps", "q": Fraction(1, 10), "sigma": Fraction(1), "digits": 9}, "digits"),
    ({"unknown": "steps", "q": Fraction(1, 10), "sigma": Fraction(1), "accountant": "prv"}, "accountant"),
])
def test_bad_problems_are_refused(kwargs, match):
    with pytest.raises(InputError, match=match):
        Problem(target_epsilon=Fraction(1), delta=DELTA, **kwargs)
