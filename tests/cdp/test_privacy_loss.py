"""The privacy-loss random variable: closed forms (q = 1) and SGM enclosures vs mpmath quadrature."""

from fractions import Fraction as F

import mpmath
import pytest
from cdp_oracles import k as k_ref
from cdp_oracles import kl as kl_ref
from cdp_oracles import loss_cdf as cdf_ref

from rdp_verify.cdp.privacy_loss import (
    DIRECTIONS,
    SGMLoss,
    curvature_bound,
    gaussian,
    log_bounded,
)
from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.results import Bounded


def inside(ref, b: Bounded, slack=F(0)) -> bool:
    x = F(mpmath.nstr(ref, 40))
    return b.lower - slack <= x <= b.upper + slack


def test_gaussian_loss_is_exact():
    # DR16 Theorem 3.2: the loss is N(τ²/2, τ²) with τ = Δ/σ; here Δ = 3, σ = 2, τ² = 9/4.
    g = gaussian(F(2), F(3))
    for d in DIRECTIONS:
        assert g.mean(d) == Bounded(F(9, 8), F(0))
        # log E[e^{λL}] = λ·mean + λ²τ²/2 exactly (Gaussian MGF), via eq. (14)
        assert g.log_mgf(d, F(3)).value == 3 * F(9, 8) + 9 * F(9, 4) / 2
        assert g.log_mgf(d, F(-1, 2)).value == F(-1, 2) * F(9, 8) + F(1, 4) * F(9, 4) / 2
        assert g.divergence(F(5), d) == Bounded(5 * F(9, 8), F(0))  # D_α = αΔ²/(2σ²)
        half = g.cdf(d, F(9, 8))  # the median of a Gaussian is its mean
        assert half.contains(F(1, 2).numerator / 2) and half.rad() < 1e-15


@pytest.mark.parametrize("q,sigma", [("0.01", "1"), ("0.1", "2"), ("1/3", "0.7")])
def test_kl_sandwich_matches_quadrature(q, sigma):
    loss = SGMLoss(F(q), F(sigma), 20)
    for d in DIRECTIONS:
        m = loss.mean(d)
        assert m.error < abs(m.value) * F(1, 10**12)
        assert inside(kl_ref(q, sigma, d), m, abs(m.value) * F(1, 10**25))


def test_eq14_direction_forward_is_log_a2():
    # Hand-derived: A_2 = E_{μ0}[w²] = 1 + q²(e^{1/σ²} − 1) (MTZ19 Section 3.3), and eq. (14)
    # gives M_1 = E_μ[e^{L}] = E_{μ0}[w²] = A_2 for the loss log(μ/μ0) under μ.
    q, sigma = F(1, 100), F(1)
    loss = SGMLoss(q, sigma, 25)
    with mpmath.workdps(40):
        ref = mpmath.log1p(mpmath.mpf(q.numerator) ** 2 / q.denominator ** 2 * mpmath.expm1(1))
    assert inside(ref, loss.log_mgf("mu||mu0", F(1)))
    # the other direction is B_2 = E_{μ0}[1/w], a different number
    b2 = loss.log_mgf("mu0||mu", F(1))
    assert inside(k_ref(q, sigma, -1), b2) and not inside(ref, b2)


@pytest.mark.parametrize("gamma", ["0.5", "1e-6", "0.999", "-2.5", "7"])
def test_k_matches_quadrature(gamma):
    loss = SGMLoss(F("0.05"), F("1.5"), 20)
    b = loss.k(F(gamma))
    assert inside(k_ref("0.05", "1.5", gamma, 50), b, abs(b.value) * F(1, 10**18))


def test_k_inside_unit_interval_tiny_q_keeps_relative_accuracy():
    loss = SGMLoss(F(1, 10**9), F(1), 20)
    b = loss.k(F(1, 2))  # ≈ −q²(e − 1)/8 ≈ −2e-19
    assert b.upper < 0 and b.error <= abs(b.value) * F(1, 10**19)
    assert inside(k_ref(F(1, 10**9), 1, F(1, 2), 80), b)


@pytest.mark.parametrize("d,ell", [("mu||mu0", "0"), ("mu||mu0", "0.3"), ("mu0||mu", "-0.01"), ("mu0||mu", "0.05")])
def test_cdf_closed_form_matches_root_and_quadrature(d, ell):
    loss = SGMLoss(F("0.1"), F(1), 20)
    ball = loss.cdf(d, F(ell))
    assert ball.rad() < 1e-18
    assert abs(float(ball.mid()) - float(cdf_ref("0.1", "1", d, ell))) < 1e-14


def test_cdf_outside_the_support():
    loss = SGMLoss(F("0.1"), F(1), 20)
    # log w > log(1 − q) ≈ −0.105: Pr[L ≤ −0.2] = 0 for μ‖μ0, Pr[L ≤ 0.2] = 1 for μ0‖μ
    assert loss.cdf("mu||mu0", F("-0.2")) == 0
    assert loss.cdf("mu0||mu", F("0.2")) == 1


def test_curvature_bound_dominates_the_variance():
    q, sigma = F(1, 10), F(1)
    h = mpmath.mpf("1e-6")
    # quadrature at 30 digits (1.2 CPU-s; 40 took 2.2): the difference quotient keeps 30 - 12 digits, its 12 leading
    # ones unchanged; each bound is 2-3x above
    for gamma in (F(0), F(1, 2), F(1), F(3, 2)):
        with mpmath.workdps(30):
            second = (k_ref(q, sigma, gamma + F(1, 10**6), 30) - 2 * k_ref(q, sigma, gamma, 30)
                      + k_ref(q, sigma, gamma - F(1, 10**6), 30)) / h**2
        bound = curvature_bound(q, sigma, gamma, gamma)
        assert 0 < second <= mpmath.mpf(bound.numerator) / bound.denominator
    assert curvature_bound(q, F(1, 2), F(0), F(1)) is None  # σ² ≤ γ/4: no strong log-concavity
    assert curvature_bound(F(1), F(2), F(0), F(9)) == F(1, 4)  # q = 1: K'' = 1/σ² exactly


def test_log_bounded_refuses_non_positive():
    with pytest.raises(ArithmeticError):
        log_bounded(Bounded(F(0), F(1)))


def test_float_parameters_are_refused():
    # an int or float σ would turn 1/(2σ²) into a float inside the exact formulas
    with pytest.raises(InputError):
        SGMLoss(F(1), 10)
    with pytest.raises(InputError):
        SGMLoss(0.01, F(1))
