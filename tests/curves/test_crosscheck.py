"""The independent estimates against exact references (Gaussian closed form, one- and two-step quadrature)."""

from fractions import Fraction

import mpmath as mp
import pytest
from curve_oracles import gaussian_delta, step_delta, two_step_delta

from rdp_verify.curves import crosscheck
from rdp_verify.foundations.inputs import Phase


@pytest.mark.parametrize("steps, sigma, epsilon", [(5, "3", "1"), (50, "6", "0.5"), (2000, "40", "1.5")])
def test_laplace_inversion_matches_the_gaussian_closed_form(steps, sigma, epsilon):
    # q = 1 would take the closed form: call the inversion directly, for both directions
    phases = [Phase(Fraction(1), Fraction(sigma), steps)]
    exact = gaussian_delta(Fraction(epsilon), mp.sqrt(steps) / mp.mpf(sigma))
    for direction in ("remove", "add"):
        value, error, _ = crosscheck._bromwich(phases, Fraction(epsilon), direction)
        assert abs(value - float(exact)) <= error + 1e-12 * float(exact)
        assert error <= 1e-6 * float(exact)  # and it is accurate, not merely wide


def test_laplace_inversion_matches_two_step_quadrature():
    q, sigma, epsilon = Fraction(1, 10), Fraction(2), Fraction(1, 2)
    exact = two_step_delta(q, sigma, epsilon)
    value, error, _ = crosscheck._bromwich([Phase(q, sigma, 2)], epsilon, "remove")
    assert abs(value - float(exact)) <= error + 1e-12


@pytest.mark.parametrize("q, sigma, epsilon", [("0.01", "1", "0.1"), ("0.5", "2/3", "1")])
def test_one_step_estimate(q, sigma, epsilon):
    est = crosscheck.estimate_delta([Phase(Fraction(q), Fraction(sigma), 1)], Fraction(epsilon))
    exact = step_delta(Fraction(q), Fraction(sigma), Fraction(epsilon))
    assert "one step" in est.method and abs(mp.mpf(float(est.value)) - exact) <= float(est.error) + 1e-15


def test_two_step_estimate_over_two_phases():
    q, sigma, epsilon = Fraction(1, 10), Fraction(2), Fraction(1, 2)
    est = crosscheck.estimate_delta([Phase(q, sigma, 1), Phase(q, sigma, 1)], epsilon)
    assert "two steps" in est.method
    assert abs(mp.mpf(float(est.value)) - two_step_delta(q, sigma, epsilon)) <= float(est.error) + 1e-15


def test_gaussian_runs_use_the_closed_form():
    est = crosscheck.estimate_delta([Phase(Fraction(1), Fraction(2), 3)], Fraction(1))
    assert "closed form" in est.method
    assert abs(float(est.value) - float(gaussian_delta(Fraction(1), mp.sqrt(3) / 2))) < 1e-15
