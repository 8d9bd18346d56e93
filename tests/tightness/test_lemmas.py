from fractions import Fraction

import mpmath
import pytest
from oracles import binomial_log_a, mp

from rdp_verify.foundations.inputs import SGM
from rdp_verify.tightness import lemmas


def contains(interval, x):
    return mp(Fraction(interval["lower"])) <= x <= mp(Fraction(interval["upper"]))


def z0_mpmath(sgm):
    return mpmath.mpf(1) / 2 + mp(sgm.sigma) ** 2 * mpmath.log(1 + 1 / (mp(sgm.q) * (mp(sgm.alpha) - 1)))


@pytest.mark.parametrize("sigma, alpha", [("4", "3"), ("1", "2.5"), ("10", "40.5")])
def test_q1_pieces_match_gaussian_closed_form(sigma, alpha):
    # q = 1: μ0 w^α = e^{(α²−α)/(2σ²)} N(α, σ²) (Section 3.3), so A^(1) = e^{(α²−α)/(2σ²)} Φ((z0 − α)/σ)
    # and A^(2) = e^{(α²−α)/(2σ²)} Φ̄((z0 − α)/σ), with z0 = 1/2 + σ² ln(α/(α − 1)).
    sgm = SGM.parse("1", sigma, alpha)
    report = lemmas.lemmas_report(sgm, 30)
    with mpmath.workdps(50):
        s, a = mp(sgm.sigma), mp(sgm.alpha)
        scale = mpmath.exp((a * a - a) / (2 * s * s))
        t = (z0_mpmath(sgm) - a) / (s * mpmath.sqrt(2))
        assert contains(report["A1"], scale * mpmath.erfc(-t) / 2)
        assert contains(report["A2"], scale * mpmath.erfc(t) / 2)
        assert Fraction(report["A1"]["upper"]) - Fraction(report["A1"]["lower"]) < Fraction(1, 10**23) * Fraction(report["A1"]["upper"])


def test_pieces_match_independent_quadrature():
    # q = 0.2, σ = 4, α = 3.5: A^(2) ≈ 1e-5 is far from negligible; plain mpmath integrals of μ0 w^α.
    sgm = SGM.parse("0.2", "4", "3.5")
    report = lemmas.lemmas_report(sgm, 30)
    with mpmath.workdps(40):
        q, s, a = mp(sgm.q), mp(sgm.sigma), mp(sgm.alpha)
        f = lambda z: mpmath.npdf(z, 0, s) * (1 - q + q * mpmath.exp((2 * z - 1) / (2 * s * s))) ** a  # noqa: E731
        z0 = z0_mpmath(sgm)
        a1 = mpmath.quad(f, [-mpmath.inf, 0, z0])
        a2 = mpmath.quad(f, [z0, z0 + 20 * s, mpmath.inf])
        assert contains(report["A1"], a1) and contains(report["A2"], a2)
        assert abs(a2 / a1) > 1e-6


@pytest.mark.parametrize("q, sigma, alpha", [("0.01", "4", 8), ("0.2", "4", 4), ("0.5", "1", 3), ("0.01", "4", 200)])
def test_pieces_add_up_to_the_oracle_moment(q, sigma, alpha):
    report = lemmas.lemmas_report(SGM.parse(q, sigma, str(alpha)), 30)
    assert report["sum_consistent"]
    with mpmath.workdps(400):
        total = mpmath.exp(binomial_log_a(q, sigma, alpha, dps=400))  # independent plain binomial sum
        lo = mp(Fraction(report["A1"]["lower"])) + mp(Fraction(report["A2"]["lower"]))
        hi = mp(Fraction(report["A1"]["upper"])) + mp(Fraction(report["A2"]["upper"]))
        assert lo <= total * (1 + mpmath.mpf(10) ** -25) and total <= hi * (1 + mpmath.mpf(10) ** -25)


def test_z0_bracket_and_lemma9_bound_against_mpmath():
    sgm = SGM.parse("0.01", "4", "8")
    lo, hi = lemmas.z0_bracket(sgm, 30)
    b9 = lemmas.lemma9_bound(sgm, 30)
    with mpmath.workdps(60):
        assert mp(lo) <= z0_mpmath(sgm) <= mp(hi) and hi - lo < Fraction(1, 10**30)
        exact = 1 + mpmath.mpf("0.0001") * 56 * mpmath.expm1(mpmath.mpf(1) / 16)
        assert mp(b9.lower) <= exact <= mp(b9.upper)
    assert lemmas.lemma10_bound(sgm) == Fraction(9, 10) * Fraction(1, 10**4) * 56 / 16


@pytest.mark.parametrize("q, sigma, alpha", [
    ("0.001", "4", "2"), ("0.01", "4", "8"), ("0.2", "4", "4"), ("1e-5", "10", "250.5"),  # Theorem 11's domain
    ("0.5", "1", "2.5"), ("0.9", "0.5", "3"), ("0.3", "2", "10.5"),  # Lemma 9 is unconditional
])
def test_lemma9_holds_everywhere_and_lemma10_under_its_conditions(q, sigma, alpha):
    report = lemmas.lemmas_report(SGM.parse(q, sigma, alpha), 30)
    assert report["sum_consistent"]
    assert report["lemma9"]["status"] == "holds (proven)"
    excess = report["lemma9"]["excess_ratio"]
    assert Fraction(excess["upper"]) <= 1
    if report["lemma10"]["conditions_hold"]:
        assert report["lemma10"]["status"] == "holds (proven)"


def test_lemma10_fails_once_its_conditions_fail():
    # q = 0.1, σ = 4, α = 30 violates (4) and (5): A^(2) exceeds 0.9 q²α(α−1)/σ² (proven).
    report = lemmas.lemmas_report(SGM.parse("0.1", "4", "30"), 30)
    assert not report["lemma10"]["conditions_hold"]
    assert report["lemma10"]["status"] == "violated (proven)"
    assert Fraction(report["lemma10"]["ratio"]["lower"]) > 1


def test_tiny_pieces_raise_the_precision():
    # A_200 ≈ 1e140 at q = 0.01, σ = 4 while A^(1) ≈ 1: deciding Lemma 9 needs > 140 digits.
    report = lemmas.lemmas_report(SGM.parse("0.01", "4", "200"), 30)
    assert report["dps"] > 140 and report["lemma9"]["status"] == "holds (proven)"
