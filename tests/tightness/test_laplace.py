from fractions import Fraction

import mpmath
import pytest
from oracles import mp

from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.results import arb_to_bounded
from rdp_verify.tightness.laplace import (
    SampledLaplace,
    log_moment_arb,
    log_moment_mpmath,
    theorem5_report,
)


def laplace_ratio_moment(k, b):
    """E_{μ0}[r^k] for μ0 = Lap(0, b), r = μ1/μ0, μ1 = Lap(1, b), derived by hand (k ≠ 1/2).

    r = e^{−1/b} on x ≤ 0 (mass 1/2), e^{1/b} on x ≥ 1 (mass e^{−1/b}/2), e^{(2x−1)/b} on [0, 1]:
    ½e^{−k/b} + ½e^{(k−1)/b} + (e^{(k−1)/b} − e^{−k/b})/(2(2k − 1))
      = (k e^{(k−1)/b} + (k − 1) e^{−k/b}) / (2k − 1).
    """
    return (k * mpmath.exp((k - 1) / b) + (k - 1) * mpmath.exp(-k / b)) / (2 * k - 1)


def in_ball(ball, x):
    lo, hi = mpmath.mpf(ball.lower().str(40, radius=False)), mpmath.mpf(ball.upper().str(40, radius=False))
    return lo - abs(lo) * mpmath.mpf(10) ** -35 <= x <= hi + abs(hi) * mpmath.mpf(10) ** -35


@pytest.mark.parametrize("b", ["0.2", "1", "7"])
@pytest.mark.parametrize("alpha", ["1.5", "2", "7.25", "30"])
def test_q1_moments_match_closed_form(b, alpha):
    # q = 1: A_α = E[r^α] and B_α = E[r^(1−α)], both given by the hand-derived formula (and equal).
    point = SampledLaplace.parse("1", b, alpha)
    with mpmath.workdps(50):
        a, bb = mp(point.alpha), mp(point.b)
        for gamma in (point.alpha, 1 - point.alpha):
            expected = mpmath.log(laplace_ratio_moment(mp(gamma), bb))
            assert in_ball(log_moment_arb(point, gamma, 200), expected)
        assert abs(laplace_ratio_moment(a, bb) - laplace_ratio_moment(1 - a, bb)) < mpmath.mpf(10) ** -40 * laplace_ratio_moment(a, bb)


@pytest.mark.parametrize("q, b, alpha", [("0.1", "1", 2), ("0.01", "0.5", 8), ("0.5", "3", 5), ("0.9", "0.2", 12)])
def test_integer_orders_match_binomial_closed_form(q, b, alpha):
    # A_α = Σ_k C(α,k) (1−q)^{α−k} q^k E[r^k] for integer α (binomial expansion of w^α).
    point = SampledLaplace.parse(q, b, str(alpha))
    with mpmath.workdps(60):
        qq, bb = mp(point.q), mp(point.b)
        total = mpmath.fsum(mpmath.binomial(alpha, k) * (1 - qq) ** (alpha - k) * qq**k * laplace_ratio_moment(mpmath.mpf(k), bb)
                            for k in range(alpha + 1))
        assert in_ball(log_moment_arb(point, point.alpha, 200), mpmath.log(total))


def test_alpha_2_closed_form():
    # A_2 = (1 − q)² + 2q(1 − q) + q² (2e^{1/b} + e^{−2/b})/3.
    point = SampledLaplace.parse("0.25", "2", "2")
    with mpmath.workdps(50):
        q, b = mpmath.mpf("0.25"), mpmath.mpf(2)
        expected = (1 - q) ** 2 + 2 * q * (1 - q) + q * q * (2 * mpmath.exp(1 / b) + mpmath.exp(-2 / b)) / 3
        assert in_ball(log_moment_arb(point, Fraction(2), 200), mpmath.log(expected))


@pytest.mark.parametrize("q", ["0.01", "0.3", "0.9"])
@pytest.mark.parametrize("b", ["0.2", "1", "5"])
@pytest.mark.parametrize("alpha", ["1.5", "6", "20.5"])
def test_theorem5_holds_for_sampled_laplace(q, b, alpha):
    report = theorem5_report(SampledLaplace.parse(q, b, alpha), 20)
    assert report["theorem5"] == "A > B (proven)" and report["holds"]
    assert Fraction(report["log_A_minus_log_B"]["lower"]) > 0
    assert report["estimate"]["agrees_with_proven"]


def test_q1_reports_equality():
    report = theorem5_report(SampledLaplace.parse("1", "1", "3.5"), 20)
    assert report["theorem5"].startswith("equal") and report["holds"]


def test_estimate_error_is_honest():
    point = SampledLaplace.parse("0.3", "0.5", "4.5")
    est = log_moment_mpmath(point, point.alpha, 30)
    assert 0 < est.error < Fraction(1, 10**25) * abs(est.value)
    # the estimate's interval must contain the proven Arb enclosure's midpoint (and overlap it)
    proven = arb_to_bounded(log_moment_arb(point, point.alpha, 200))
    assert proven.error < est.error and est.overlaps(proven)
    assert est.lower <= proven.value <= est.upper


@pytest.mark.parametrize("args", [("0.1", "0", "2"), ("0.1", "-1", "2"), ("0.1", "1e5", "2"), ("2", "1", "2"), ("0.1", "1", "1")])
def test_bad_input(args):
    with pytest.raises(InputError):
        SampledLaplace.parse(*args)
