"""The independent estimates against exact references: the Gaussian closed form (Balle & Wang 2018),
one- and two-step quadrature of the densities (tests/curve_oracles.py), and symmetry.

Each estimate must contain the reference within its stated error and be informative (error far below
the value): an error bound that is too small, or one so large that the check could never fail, both fail.
"""

from fractions import Fraction
from functools import lru_cache

import curve_oracles
import mpmath as mp
import pytest
from curve_oracles import gaussian_delta, step_delta

from rdp_verify.curves import crosscheck
from rdp_verify.foundations.run import Phase

# the nested quadrature once per (q, σ, ε) for the module: the Laplace inversion and the two-phase estimate are both
# compared with it at (0.1, 2, 0.5) (an mpf is immutable; both slow, so -m slow computes it once)
two_step_delta = lru_cache(maxsize=None)(curve_oracles.two_step_delta)


def _mp(x):
    return mp.mpf(Fraction(x).numerator) / Fraction(x).denominator


def _within(value, error, exact, informative=1e-3):
    """|value − exact| ≤ error (exactly, at the oracles' 40 digits), and error ≤ informative·exact."""
    return abs(_mp(value) - exact) <= _mp(error) and _mp(error) <= informative * exact


@pytest.mark.parametrize("steps, sigma, epsilon", [
    (5, "3", "1"), (50, "6", "0.5"), (2000, "40", "1.5"),
    (3, "1000", "0.001"),  # small ε, large σ: the integrand decays on the scale 1/σ_c ≈ 600
    (10**5, "1000000", "0.002"),  # σ_c = 3e-4
])
def test_laplace_inversion_matches_the_gaussian_closed_form(steps, sigma, epsilon):
    # q = 1 would take the quadrature of the loss density: call the inversion directly, for both directions
    phases = [Phase(Fraction(1), Fraction(sigma), steps)]
    exact = gaussian_delta(Fraction(epsilon), mp.sqrt(steps) / mp.mpf(sigma))
    for direction in ("remove", "add"):
        value, error, _ = crosscheck._bromwich(phases, Fraction(epsilon), direction)
        assert _within(value, error, exact, 1e-5)


# slow: (0.1, 2, 0.5) takes the same two-step inversion as the (6.3e-7, 747000) case (default run); the inversion at a
# moderate q by test_at_epsilon_zero_the_total_variation_is_computed_once (q = 0.1, σ = 2, default run)
@pytest.mark.parametrize("q, sigma, epsilon", [
    pytest.param("0.1", "2", "0.5", marks=pytest.mark.slow),
    ("6.3e-7", "747000", "7.97e-12"),  # tiny loss: log w must not cancel (it did, by 1e-15 absolute)
])
def test_laplace_inversion_matches_two_step_quadrature(q, sigma, epsilon):
    q, sigma, epsilon = Fraction(q), Fraction(sigma), Fraction(epsilon)
    exact = two_step_delta(q, sigma, epsilon)
    value, error, _ = crosscheck._bromwich([Phase(q, sigma, 2)], epsilon, "remove", Fraction(str(float(exact))))
    assert abs(value - float(exact)) <= error and error <= 0.2 * float(exact)


def test_both_directions_agree_where_they_must():
    # tiny q, huge σ: the loss is nearly symmetric, so δ_remove ≈ δ_add; each estimate within its error
    phases, epsilon = [Phase(Fraction(63, 10**8), Fraction(747000), 937)], Fraction("1.8359e-10")
    (a, ea, _), (b, eb, _) = (crosscheck._bromwich(phases, epsilon, d, Fraction(2, 10**24)) for d in ("remove", "add"))
    assert abs(a - b) <= ea + eb and ea < 0.01 * a


@pytest.mark.parametrize("q, sigma, epsilon", [("0.01", "1", "0.1"), ("0.5", "2/3", "1"), ("0.5", "10000", "0.00002"),
                                               ("1e-9", "1", "0")])
def test_one_step_estimate(q, sigma, epsilon):
    est = crosscheck.estimate_delta([Phase(Fraction(q), Fraction(sigma), 1)], Fraction(epsilon))
    assert "one step" in est.method
    assert _within(est.value, est.error, step_delta(Fraction(q), Fraction(sigma), Fraction(epsilon)), 1e-12)


# slow: (0.1, 2, 0.5) takes the same two-step estimate as (0.01, 0.3, 0.5) (default run)
@pytest.mark.parametrize("q, sigma, epsilon", [pytest.param("0.1", "2", "0.5", marks=pytest.mark.slow),
                                               ("0.01", "0.3", "0.5")])
def test_two_step_estimate_over_two_phases(q, sigma, epsilon):
    # (0.01, 0.3): the second curve's non-analytic point must be a breakpoint, or the error is underestimated
    q, sigma, epsilon = Fraction(q), Fraction(sigma), Fraction(epsilon)
    est = crosscheck.estimate_delta([Phase(q, sigma, 1), Phase(q, sigma, 1)], epsilon)
    assert "two steps" in est.method and _within(est.value, est.error, two_step_delta(q, sigma, epsilon), 1e-9)


def test_gaussian_runs_integrate_the_loss_density():
    est = crosscheck.estimate_delta([Phase(Fraction(1), Fraction(2), 3)], Fraction(1))
    assert "N(mu^2/2, mu^2)" in est.method
    assert _within(est.value, est.error, gaussian_delta(Fraction(1), mp.sqrt(3) / 2), 1e-12)


def test_at_epsilon_zero_the_total_variation_is_computed_once(monkeypatch):
    calls = []
    original = crosscheck._bromwich

    def counting(phases, epsilon, direction, scale=None):
        calls.append(direction)
        return original(phases, epsilon, direction, scale)

    monkeypatch.setattr(crosscheck, "_bromwich", counting)
    est = crosscheck.estimate_delta([Phase(Fraction(1, 10), Fraction(2), 5)], Fraction(0))
    assert calls == ["add"] and est.error < 1e-6 * est.value
