"""Binomial tails (rdp_verify.tradeoff.binomial): the float64 quantile against mpmath, the proven enclosure of
P(Binomial(n, p) <= k) against exact rational sums and mpmath's incomplete beta, the float sum's error bound
against the exact partial sum, and the Clopper-Pearson bounds on both sides of the exact quantile."""

from fractions import Fraction
from math import comb

import mpmath as mp
import pytest

from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.results import lower_end, upper_end
from rdp_verify.tradeoff import binomial as b


@pytest.fixture(autouse=True)
def _digits():
    """50 digits for this module\'s mpmath references, restored after each test (a module-level mp.dps
    would depend on the order in which the test files are imported)."""
    with mp.workdps(50):
        yield


def exact_cdf(p: Fraction, k: int, n: int) -> Fraction:
    return sum((comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k + 1)), Fraction(0))


def mp_cdf(p, k, n):
    """P(Binomial(n, p) <= k) at 50 digits: mpmath's pmf at k, then the terms below it by their ratios, until they
    fall below 1e-45 of the sum (p above the mean, so the terms fall)."""
    p = mp.mpf(p.numerator) / p.denominator if isinstance(p, Fraction) else mp.mpf(p)
    term = mp.exp(mp.loggamma(n + 1) - mp.loggamma(k + 1) - mp.loggamma(n - k + 1) + k * mp.log(p)
                  + (n - k) * mp.log1p(-p))
    total, j = term, k
    while j > 0 and term > total * mp.mpf(10) ** -45:
        term *= j * (1 - p) / ((n - j + 1) * p)
        total += term
        j -= 1
    return total


def mp_quantile(k, n, level):
    """The p with P(Binomial(n, p) <= k) = level, by the Illinois method on log F around the estimate."""
    target = mp.log(mp.mpf(level.numerator) / level.denominator)
    guess = mp.mpf(b.quantile_estimate(k, n, level))
    return mp.findroot(lambda x: mp.log(mp_cdf(x, k, n)) - target, (guess * (1 - mp.mpf(10)**-8),
                       min(guess * (1 + mp.mpf(10)**-8), (1 + guess) / 2)), solver="illinois", tol=mp.mpf(10)**-40)


@pytest.mark.parametrize("k,n", [(1, 7), (3, 100), (50, 100), (95, 100), (10, 5000), (2500, 5000), (4990, 5000)])
@pytest.mark.parametrize("level", [Fraction(1, 40), Fraction(1, 4 * 10**7), Fraction(1, 10**30)])
def test_quantile_estimate_against_mpmath(k, n, level):
    assert abs(b.quantile_estimate(k, n, level) / mp_quantile(k, n, level) - 1) < 1e-13


def test_quantile_closed_forms():
    level = Fraction(1, 1000)
    assert b.quantile_estimate(0, 500, level) == pytest.approx(1 - 0.001 ** (1 / 500), rel=1e-15)
    assert b.quantile_estimate(7, 7, level) == 1
    assert b.clopper_pearson_upper(7, 7, level) == b.clopper_pearson_lower(7, 7, level) == 1
    with pytest.raises(InputError):
        b.quantile_estimate(8, 7, level)


@pytest.mark.parametrize("k,n,p", [(0, 50, Fraction(1, 10)), (3, 60, Fraction(1, 5)), (20, 100, Fraction(3, 10)),
                                   (95, 100, Fraction(99, 100)), (150, 300, Fraction(3, 5))])
def test_enclosure_holds_the_exact_rational(k, n, p):
    ball = b.cdf_enclosure(p, k, n)
    exact = exact_cdf(p, k, n)
    assert lower_end(ball) <= exact <= upper_end(ball)
    assert upper_end(ball) - lower_end(ball) < exact * Fraction(1, 10**10)  # decides at 1e-9 from the quantile


@pytest.mark.parametrize("k,n", [(2, 5 * 10**6), (1000, 5 * 10**6), (250000, 500000), (499000, 500000)])
def test_enclosure_at_a_million_trials_against_mpmath(k, n):
    level = Fraction(1, 35442400)
    p = Fraction(b.quantile_estimate(k, n, level))
    ball = b.cdf_enclosure(p, k, n)
    reference = mp_cdf(p, k, n)
    lo, hi = lower_end(ball), upper_end(ball)
    assert mp.mpf(lo.numerator) / lo.denominator <= reference <= mp.mpf(hi.numerator) / hi.denominator
    assert hi - lo < lo * Fraction(1, 10**10)


def test_the_float_sum_within_its_proven_bound():
    """The docstring's bound: the float64 sum of the first T + 1 ratio products lies within (16T + 16)u of the
    exact one (exact rationals from the correctly rounded p and 1 - p' ratios' exact values)."""
    for k, n, p in [(40, 100, Fraction(1, 2)), (300, 1000, Fraction(7, 20)), (5, 10**6, Fraction(1, 10**5))]:
        total, t, last, rho = b._tail_sum(k, n, float(p), float(1 - p))
        exact, term = Fraction(1), Fraction(1)
        for s in range(t):
            j = k - s
            term *= Fraction(j) * (1 - p) / (Fraction(n - j + 1) * p)
            exact += term
        assert abs(Fraction(total) - exact) <= (16 * t + 16) * Fraction(1, 2**53) * exact
        if rho:  # the geometric tail bound holds
            rest = sum_rest(k, n, p, t, term)
            assert rest <= term * Fraction(rho) * (1 + Fraction(6, 2**53)) / (1 - Fraction(rho) * (1 + Fraction(6, 2**53)))


def sum_rest(k, n, p, t, term):
    rest, tail = Fraction(0), term
    for s in range(t, k):
        j = k - s
        tail *= Fraction(j) * (1 - p) / (Fraction(n - j + 1) * p)
        rest += tail
    return rest


@pytest.mark.parametrize("k,n,level", [(0, 1000, Fraction(1, 40)), (5, 100, Fraction(1, 40)),
                                       (99, 100, Fraction(1, 10**4)), (3, 10**6, Fraction(1, 10**7)),
                                       (500, 1000, Fraction(1, 2)), (200000, 500000, Fraction(1, 35442400))])
def test_bounds_on_both_sides_of_the_quantile(k, n, level):
    q = mp_quantile(k, n, level)
    up, low = b.clopper_pearson_upper(k, n, level), b.clopper_pearson_lower(k, n, level)
    assert mp.mpf(low.numerator) / low.denominator < q < mp.mpf(up.numerator) / up.denominator
    assert up / low - 1 < Fraction(3, 10**9)
    assert b.cdf_exceeds(low, k, n, level) is True and b.cdf_exceeds(up, k, n, level) is False


def test_below_the_mean_arb_decides():
    # at p <= k/(n + 1) the ratios do not fall: no enclosure; the incomplete beta decides
    assert b.cdf_enclosure(Fraction(1, 4), 50, 100) is None
    assert b.cdf_exceeds(Fraction(1, 4), 50, 100, Fraction(1, 40)) is True
    assert b.cdf_exceeds(Fraction(0), 5, 10, Fraction(1, 2)) is True and b.cdf_exceeds(Fraction(1), 5, 10, Fraction(1, 2)) is False
