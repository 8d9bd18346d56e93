"""Conversions to (ε, δ)-DP never beat the exact Gaussian curve; exact rational conversions."""

from fractions import Fraction as F

import mpmath
import pytest

from rdp_verify.cdp.conversions import (
    cdp_to_dp,
    cdp_to_zcdp,
    dp_to_zcdp,
    gaussian_delta,
    zcdp_to_dp,
    zcdp_to_rdp,
)
from rdp_verify.foundations.inputs import InputError


def reference_delta(tau, eps):
    """Pr[L > ε] − e^ε Pr[L' < −ε] with L, L' ~ N(τ²/2, τ²) (mpmath, from the loss law)."""
    t, e = mpmath.mpf(tau), mpmath.mpf(eps)
    return (1 - mpmath.ncdf(e, t * t / 2, t)) - mpmath.exp(e) * mpmath.ncdf(-e, t * t / 2, t)


def test_gaussian_delta_matches_loss_distribution():
    for tau, eps in ((F(1), F(1)), (F(1, 2), F(3, 10)), (F(2), F(5))):
        assert abs(float(gaussian_delta(tau, eps).mid()) - float(reference_delta(float(tau), float(eps)))) < 1e-15


def test_conversions_are_valid_for_the_gaussian():
    delta = F(1, 10**5)
    for sigma in (F(1, 2), F(1), F(4)):
        tau = 1 / sigma
        for eps in (zcdp_to_dp(tau * tau / 2, delta), cdp_to_dp(tau * tau / 2, tau, delta)):
            assert gaussian_delta(tau, eps) < float(delta)  # the converted ε really gives δ


def test_exact_conversions():
    assert cdp_to_zcdp(F(1, 8), F(1, 2)) == (F(0), F(1, 8))  # Gaussian σ = 2: ρ = 1/8
    assert zcdp_to_rdp(F(1), F(1, 8), F(3)) == F(11, 8)
    assert dp_to_zcdp(F(1, 2)) == F(1, 8)


@pytest.mark.parametrize("call", [
    lambda: cdp_to_dp(F(1, 8), F(-1, 2), F(1, 10**5)),  # τ ≤ 0
    lambda: cdp_to_zcdp(F(-1), F(1)),  # μ < 0
    lambda: zcdp_to_dp(F(1, 8), F(1, 10**5), xi=F(-10)),  # ξ < −ρ: no mechanism is (ξ, ρ)-zCDP
    lambda: zcdp_to_dp(F(-1, 8), F(1, 10**5)),  # ρ < 0
    lambda: dp_to_zcdp(F(-1)),  # ε < 0
    lambda: zcdp_to_rdp(F(0), F(1, 8), F(1, 2)),  # α ≤ 1
    lambda: gaussian_delta(F(0), F(1)),  # τ = 0
    lambda: gaussian_delta(F(1), F(-1)),  # ε < 0
    lambda: zcdp_to_dp(F(1, 8), F(5)),  # δ ∉ (0, 1)
    lambda: dp_to_zcdp(0.5),  # a float, not an exact rational
])
def test_inputs_outside_the_definitions_are_refused(call):
    with pytest.raises(InputError):
        call()
