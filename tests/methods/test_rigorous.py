from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import binomial_log_a, mp

from rdp_verify.foundations.inputs import SGM
from rdp_verify.methods import quadrature, rigorous, series
from rdp_verify.methods.crosscheck import method_epsilon


@pytest.mark.parametrize("q, sigma, alpha", [("0.01", "4", 32), ("0.5", "0.3", 7), ("0.99", "0.5", 256)])
def test_integration_path_encloses_direct_sum(monkeypatch, q, sigma, alpha):
    # Force integer orders through acb.integral (not the finite sum) and compare with
    # the independent binomial sum.
    monkeypatch.setattr(rigorous, "INTEGER_SUM_MAX", 1)
    monkeypatch.setattr(rigorous, "FAST_PATH", False)
    result = rigorous.compute(SGM.parse(q, sigma, str(alpha)), 30)
    assert "acb.integral" in result.work["A"]["scheme"]
    with mpmath.workdps(80):
        assert abs(mp(result.log_a.value) - binomial_log_a(q, sigma, alpha)) <= mp(result.log_a.error)


@pytest.mark.parametrize(
    "q, sigma, alpha",
    [
        ("0.5", "0.5", "2.5"),  # series terms decay like k^(−α−2)
        ("0.4", "12", "58.5"),  # TF Privacy / Opacus negative-RDP region
        ("0.4", "12", "59.5"),
        ("0.5", "100", "64.5"),  # Opacus 1.6.0 negative RDP
        ("0.5", "0.1", "999999.5"),  # largest fractional order, smallest σ
        ("1e-9", "1e4", "1.01"),  # A_α − 1 ≈ 5e-29: cancellation in log A_α
    ],
)
def test_hard_regimes_agree_with_series(q, sigma, alpha):
    sgm = SGM.parse(q, sigma, alpha)
    proven = rigorous.compute(sgm, 30)
    estimate = series.compute(sgm, 60)
    assert proven.log_a.overlaps(estimate.log_a) and proven.log_b.overlaps(estimate.log_b)
    eps = method_epsilon(proven, sgm.alpha)
    assert eps.lower > 0
    assert eps.error * 2 <= eps.value * Fraction(1, 10**25)


@pytest.mark.parametrize("q", ["1e-6", "0.01", "0.3", "0.9"])
@pytest.mark.parametrize("sigma", ["0.5", "1.1", "4"])
@pytest.mark.parametrize("alpha", ["1.01", "2.5", "10.9", "31.5"])
def test_fast_series_path_agrees_with_acb_integral(monkeypatch, q, sigma, alpha):
    # Two proven schemes for A_α (arb_series vs acb.integral) must overlap.
    sgm = SGM.parse(q, sigma, alpha)
    fast = rigorous.enclose(sgm, 25)
    monkeypatch.setattr(rigorous, "FAST_PATH", False)
    slow = rigorous.enclose(sgm, 25)
    assert fast.log_a.overlaps(slow.log_a)
    assert slow.work["A"]["scheme"].startswith("acb.integral")


def test_epsilon_many_matches_enclose():
    orders = [Fraction(3, 2), Fraction(2), Fraction(107, 10), Fraction(1024)]
    many = rigorous.epsilon_many(Fraction(1, 100), Fraction(11, 10), orders, 30)
    for alpha, eps in zip(orders, many):
        single = rigorous.epsilon_bounds(SGM(Fraction(1, 100), Fraction(11, 10), alpha), 30)
        assert eps.overlaps(single)
        assert eps.error * 2 <= eps.value * Fraction(1, 10**30)


@pytest.mark.parametrize("alpha", ["1.001", "1.01", "1.03"])
@pytest.mark.parametrize("dps", [10, 15, 20])
def test_tiny_q_low_precision_reaches_its_digits(alpha, dps):
    # Regression: at low precision the first ball for log A contains 0 (accuracy
    # −∞), which once made the precision loop overshoot its cap and give up.
    # Reference: A_α = 1 + C(α, 2) q² (e^{1/σ²} − 1) + O(q³), the second-order
    # expansion of E_{μ0}[(1 + q(μ1/μ0 − 1))^α]; relative error O(q) = 1e-12.
    q, sigma, a = Fraction(1, 10**12), Fraction(10**4), Fraction(alpha)
    eps = rigorous.epsilon_bounds(SGM(q, sigma, a), dps)
    assert eps.error * 2 <= eps.value * Fraction(1, 10**dps)
    with mpmath.workdps(40):
        expansion = mp(a) / 2 * mp(q) ** 2 * mpmath.expm1(1 / mp(sigma) ** 2)
        assert abs(mp(eps.value) - expansion) < 1e-11 * expansion


@pytest.mark.parametrize("q, sigma, alpha", [("0.3", "1", "1000000"), ("0.9", "10", "999999.5"), ("0.5", "2", "100000")])
def test_top_of_the_order_range_encloses_b(q, sigma, alpha):
    # Regression: for γ = 1 − α ≪ 0 the peak search z ↦ γλ(z) oscillated (a decreasing
    # map), the window missed the peak and the B_α ball contained 0. The mpmath
    # quadrature method is the independent reference.
    sgm = SGM(Fraction(q), Fraction(sigma), Fraction(alpha))
    proven, estimate = rigorous.compute(sgm, 20), quadrature.compute(sgm, 20)
    assert proven.log_b.error < abs(proven.log_b.value) * Fraction(1, 10**20)
    assert proven.log_a.overlaps(estimate.log_a) and proven.log_b.overlaps(estimate.log_b)


def test_alpha_near_one_tends_to_kl():
    # ε_α → KL(μ ‖ μ0) = E_μ[log(μ/μ0)] as α → 1 (van Erven–Harremoës, Thm 5). The KL
    # is computed independently by mpmath quadrature; the difference is O(α − 1).
    q, sigma = Fraction(1, 10), Fraction(1)
    sgm = SGM(q, sigma, 1 + Fraction(1, 10**6))
    eps = method_epsilon(rigorous.compute(sgm, 30), sgm.alpha)
    assert eps.error * 2 <= eps.value * Fraction(1, 10**25)
    with mpmath.workdps(30):
        qq, s = mp(q), mp(sigma)
        mu0 = lambda z: mpmath.npdf(z, 0, s)  # noqa: E731
        mu = lambda z: (1 - qq) * mu0(z) + qq * mpmath.npdf(z, 1, s)  # noqa: E731
        kl = mpmath.quad(lambda z: mu(z) * mpmath.log(mu(z) / mu0(z)), [-mpmath.inf, 0, 1, mpmath.inf])
        assert abs(mp(eps.value) - kl) < 1e-5 * kl


@settings(max_examples=25, deadline=None)
@given(
    q=st.fractions(min_value=Fraction(1, 10**6), max_value=1),
    sigma=st.fractions(min_value=Fraction(3, 10), max_value=100),
    alpha=st.fractions(min_value=Fraction(11, 10), max_value=300),
)
def test_corollary7_and_positivity(q, sigma, alpha):
    result = rigorous.compute(SGM(q, sigma, alpha), 20)
    assert result.log_b.lower > 0  # B_α > 1 (strict Jensen)
    if q < 1:
        assert result.log_a.lower >= result.log_b.upper  # Corollary 7


@settings(max_examples=15, deadline=None)
@given(
    q=st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(99, 100)),
    sigma=st.fractions(min_value=Fraction(1, 2), max_value=10),
    alpha=st.fractions(min_value=Fraction(11, 10), max_value=100),
    step=st.fractions(min_value=Fraction(1, 100), max_value=10),
)
def test_epsilon_non_decreasing_in_alpha(q, sigma, alpha, step):
    # Rényi divergence is non-decreasing in its order (van Erven–Harremoës, Thm 3).
    lo = method_epsilon(rigorous.compute(SGM(q, sigma, alpha), 20), alpha)
    hi = method_epsilon(rigorous.compute(SGM(q, sigma, alpha + step), 20), alpha + step)
    assert lo.lower <= hi.upper


def test_reports_precision_and_scheme():
    result = rigorous.compute(SGM.parse("0.01", "1.1", "2.5"), 30)
    assert result.bound_kind == "proven"
    assert result.work["precision_bits"] >= 100
    assert "Gauss-Legendre band" in result.work["A"]["scheme"]
    assert "tail" in result.work["B"]["scheme"]
