from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rdp_verify.certificates.theorem11 import (
    closed_form_bound,
    corollary7_report,
    theorem11_report,
)
from rdp_verify.foundations.inputs import SGM
from rdp_verify.foundations.results import Bounded
from rdp_verify.methods import rigorous
from rdp_verify.methods.crosscheck import method_epsilon


def conditions_mpmath(q, sigma, alpha):
    """Conditions (4) and (5) of Theorem 11, transcribed independently in mpmath."""
    with mpmath.workdps(50):
        q, s, a = (mpmath.mpf(Fraction(x).numerator) / Fraction(x).denominator for x in (q, sigma, alpha))
        L = mpmath.log(1 + 1 / (q * (a - 1)))
        c4 = s**2 * L / 2 - 2 * mpmath.log(s)
        c5 = (s**2 * L**2 / 2 - mpmath.log(5) - 2 * mpmath.log(s)) / (L + mpmath.log(q * a) + 1 / (2 * s**2))
        return float(L), float(c4), float(c5)


@pytest.mark.parametrize(
    "q, sigma, alpha",
    [("0.01", "4", "32"), ("0.01", "4", "5"), ("0.001", "10", "200"), ("0.2", "4", "2"), ("0.5", "1", "2"), ("1e-5", "10", "1000")],
)
def test_conditions_match_independent_transcription(q, sigma, alpha):
    sgm = SGM.parse(q, sigma, alpha)
    report = theorem11_report(sgm, Bounded(Fraction(1), Fraction(0)))
    L, rhs4, rhs5 = conditions_mpmath(q, sigma, alpha)
    assert float(report["L"]) == pytest.approx(L, rel=1e-15)
    assert float(report["condition_4_detail"]["rhs"]) == pytest.approx(rhs4, rel=1e-15)
    assert float(report["condition_5_detail"]["rhs"]) == pytest.approx(rhs5, rel=1e-15)
    assert report["condition_4"] == (float(alpha) <= rhs4)
    assert report["condition_5"] == (float(alpha) <= rhs5)
    assert report["q_le_one_fifth"] == (Fraction(q) <= Fraction(1, 5))
    assert report["sigma_ge_4"] == (Fraction(sigma) >= 4)
    assert Fraction(report["bound_exact"]) == 2 * Fraction(q) ** 2 * Fraction(alpha) / Fraction(sigma) ** 2


def test_bound_is_exact_rational():
    assert closed_form_bound(SGM.parse("0.01", "4", "32")) == Fraction(2 * 32, 10**4 * 16)


@settings(max_examples=20, deadline=None)
@given(
    q=st.fractions(min_value=Fraction(1, 10**5), max_value=Fraction(1, 5)),
    sigma=st.fractions(min_value=4, max_value=50),
    alpha=st.fractions(min_value=Fraction(101, 100), max_value=200),
)
def test_theorem11_holds_where_its_conditions_hold(q, sigma, alpha):
    sgm = SGM(q, sigma, alpha)
    eps = method_epsilon(rigorous.compute(sgm, 20), alpha)
    report = theorem11_report(sgm, eps)
    if report["all_hold"]:
        assert report["epsilon_le_bound"]


def test_corollary7_statuses():
    sgm = SGM.parse("0.1", "1", "2")
    a, b = Bounded(Fraction(2), Fraction(1, 100)), Bounded(Fraction(1), Fraction(1, 100))
    assert corollary7_report(sgm, a, b, True)["status"] == "proven"
    assert corollary7_report(sgm, b, a, True)["status"] == "violated"
    assert corollary7_report(sgm, a, Bounded(Fraction(2), Fraction(1, 10)), True)["status"] == "unresolved"
    assert corollary7_report(SGM.parse("1", "1", "2"), a, a, True)["status"] == "equal"
