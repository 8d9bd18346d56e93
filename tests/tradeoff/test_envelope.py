"""Envelopes of the trade-off function against independent references (mpmath, no Arb, no rdp_verify code).

* q = 1 composed through the discrete pairs (not the closed form): the envelopes must contain
  G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) (Dong, Roth, Su 2022, Definition 2.7), computed by mpmath;
* one subsampled step: the Neyman–Pearson tests of each direction are attacks, so f_low ≤ their type-II
  error; every (ε, δ(ε)) of the exact curve (mpmath closed form) gives f ≥ 1 − δ(ε) − e^ε·α, so f_up is at
  least that; and a golden-section search of the supremum (mpmath) lands between the envelopes.
"""

from fractions import Fraction

import mpmath as mp
import pytest

from rdp_verify.curves.accountant import compose_run, default_settings, initial_step
from rdp_verify.curves.gaussian import GaussianCurve
from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.run import Phase
from rdp_verify.tradeoff.envelope import Envelopes
from tests.curve_oracles import step_curve_closed

ALPHAS = [Fraction(1, 10**6), Fraction(1, 1000), Fraction(1, 50), Fraction(3, 10), Fraction(1, 2), Fraction(9, 10)]


def mpq(x):
    x = Fraction(x)
    return mp.mpf(x.numerator) / x.denominator


def gdp(mu, alpha):
    mu, alpha = mp.mpf(mu), mp.mpf(alpha.numerator) / alpha.denominator
    return mp.ncdf(-mp.sqrt(2) * mp.erfinv(2 * alpha - 1) - mu)  # Φ⁻¹(α) = √2·erfinv(2α − 1)


def composed(phases, refine=4):
    scale = Fraction(1, 10**8)
    h = initial_step(phases, default_settings(phases, Fraction(1), scale).tail) / refine
    return compose_run(phases, default_settings(phases, h, scale))


@pytest.fixture(scope="module")
def gaussian_pairs():
    return Envelopes(composed([Phase(Fraction(1), Fraction(2), 4)]))  # μ = √4/2 = 1


@pytest.mark.parametrize("alpha", ALPHAS)
def test_discrete_pairs_of_the_gaussian_contain_the_closed_form(gaussian_pairs, alpha):
    low, up = map(mpq, gaussian_pairs.bounds(alpha))
    exact = gdp(1, alpha)
    assert low <= exact <= up
    assert up - low < 1e-4 * max(exact, 1e-3)  # and the grid resolves it


@pytest.mark.parametrize("alpha", ALPHAS)
def test_closed_form_envelopes(alpha):
    env = Envelopes(GaussianCurve((Phase(Fraction(1), Fraction(3), 2, neighbours="replace-one"),)))  # μ² = 4·2/9
    with mp.workdps(100):  # finer than the 256-bit ball compared with (40 digits are not)
        low, up = map(mpq, env.bounds(alpha))
        exact = gdp(mp.sqrt(mp.mpf(8) / 9), alpha)
        assert low <= exact <= up and up - low < mp.mpf(10) ** -14  # far below the 12 digits printed


@pytest.mark.parametrize("sigma,steps", [(Fraction(1, 20), 4), (Fraction(1, 20), 10**6)])
def test_closed_form_at_any_number_of_steps(sigma, steps):
    """μ = √T/σ: 40 (G_μ near 1e-280, the envelopes one ball of 256 bits around it) and 20000 (10⁶ steps: G_μ(α)
    near 10^−8.7e7, far below the floor 1e-1000, so [0, 1e-1000] at once, never a 10⁸-digit rational)."""
    env = Envelopes(GaussianCurve((Phase(Fraction(1), sigma, steps),)))
    with mp.workdps(100):
        mu = mp.sqrt(steps) / mpq(sigma)
        for alpha in (Fraction(1, 10**5), Fraction(1, 2)):
            exact = gdp(mu, alpha)
            if exact < mp.mpf(10) ** -1000:
                assert env.bounds(alpha) == (0, Fraction(1, 10**1000))
            else:
                low, up = map(mpq, env.bounds(alpha))
                assert low <= exact <= up and up - low < mp.mpf(10) ** -60 * exact


def test_ends_and_refusals(gaussian_pairs):
    assert gaussian_pairs.bounds(Fraction(1)) == (0, 0)
    low, up = gaussian_pairs.bounds(Fraction(0))
    assert up == 1 and 1 - Fraction(1, 10**9) < low < 1  # f(0) = 1 up to the mass moved to +∞
    for bad in (Fraction(-1, 10), Fraction(11, 10)):
        with pytest.raises(InputError, match="must lie in"):
            gaussian_pairs.bounds(bad)


Q, SIGMA = Fraction(1, 10), Fraction(1)


def np_beta(alpha, direction):
    """Type-II error of the Neyman–Pearson test at type-I error α for one direction's pair (closed form):
    remove: reject Q = N(0, σ²) for P = (1 − q)N(0, σ²) + qN(1, σ²) when x > x0; add: the swapped pair."""
    q, s, a = mp.mpf(Q.numerator) / Q.denominator, mp.mpf(1), mp.mpf(alpha.numerator) / alpha.denominator
    if direction == "remove":
        x0 = s * mp.sqrt(2) * mp.erfinv(1 - 2 * a)  # Q(X > x0) = α
        return (1 - q) * mp.ncdf(x0 / s) + q * mp.ncdf((x0 - 1) / s)
    # add: null P (the mixture), alternative N(0, σ²); reject when x < x0 with P(X < x0) = α
    x0 = mp.findroot(lambda x: (1 - q) * mp.ncdf(x / s) + q * mp.ncdf((x - 1) / s) - a, mp.mpf(0))
    return 1 - mp.ncdf(x0 / s)


def exact_delta(eps):
    x = mp.exp(eps)
    return max(step_curve_closed(Q, SIGMA, x, "remove"), step_curve_closed(Q, SIGMA, x, "add"))


def supremum(alpha):
    """sup over ε ≥ 0 of both families by golden-section search in t = e^ε and in u = e^−ε (both unimodal)."""
    a = mp.mpf(alpha.numerator) / alpha.denominator

    def golden(fn, lo, hi):
        g = (mp.sqrt(5) - 1) / 2
        for _ in range(120):
            c, d = hi - g * (hi - lo), lo + g * (hi - lo)
            if fn(c) > fn(d):
                hi = d
            else:
                lo = c
        return fn((lo + hi) / 2)

    first = golden(lambda t: 1 - exact_delta(mp.log(t)) - t * a, mp.mpf(1), mp.mpf(200))
    second = golden(lambda u: u * (1 - a - exact_delta(-mp.log(u))), mp.mpf(1) / 200, mp.mpf(1))
    return max(0, first, second)


@pytest.fixture(scope="module")
def one_step():
    return Envelopes(composed([Phase(Q, SIGMA, 1)]))


@pytest.mark.parametrize("alpha", [Fraction(1, 1000), Fraction(1, 20), Fraction(3, 10), Fraction(7, 10)])
def test_one_subsampled_step(one_step, alpha):
    low, up = map(mpq, one_step.bounds(alpha))
    for direction in ("remove", "add"):  # the NP tests are attacks: nothing certified below them
        assert low <= np_beta(alpha, direction) + mp.mpf(10) ** -30
    a = mp.mpf(alpha.numerator) / alpha.denominator
    for eps in (0, mp.mpf(1) / 4, 1, 2):  # (ε, δ(ε))-DP: f ≥ 1 − δ − e^ε α and e^−ε(1 − δ − α)
        d = exact_delta(mp.mpf(eps))
        assert up >= 1 - d - mp.exp(eps) * a - mp.mpf(10) ** -30
        assert up >= mp.exp(-eps) * (1 - d - a) - mp.mpf(10) ** -30
    best = supremum(alpha)
    assert low - mp.mpf(10) ** -12 <= best <= up + mp.mpf(10) ** -12
    assert up - low < 1e-4
