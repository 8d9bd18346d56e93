"""Gaussian mechanism: one use against Balle & Wang's closed form, k uses against the Gaussian of σ/√k."""

from fractions import Fraction

import mpmath as mp
import pytest

from rdp_verify.foundations.inputs import InputError
from rdp_verify.mechanisms.gaussian import Gaussian, gaussian_rdp
from tests.mechanisms.checks import (
    BITS,
    PREC,
    TAIL,
    brackets_and_shrinks,
    composed,
    frac_mpf,
    holds,
    read,
    width,
)

EPSILONS = [Fraction(-1, 2), Fraction(0), Fraction(1, 2), Fraction(2)]


def balle_wang(mu, eps):
    """An independent mpmath evaluation of Theorem 8: Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)."""
    return mp.ncdf(mu / 2 - eps / mu) - mp.exp(eps) * mp.ncdf(-mu / 2 - eps / mu)


def test_one_use_brackets_the_closed_form_and_shrinks_like_h():
    g = Gaussian(Fraction(3, 2), Fraction(2))
    coarse, fine = (g.plds(h, BITS, TAIL) for h in (Fraction(1, 50), Fraction(1, 100)))
    assert coarse["add", "upper"] is coarse["remove", "upper"]  # symmetric: computed once
    for eps in EPSILONS:
        exact = g.delta_exact(eps, PREC)
        widths = brackets_and_shrinks(coarse, fine, "remove", eps, exact)  # O(h): halving h about halves the width
        assert widths[0] <= Fraction(1, 20)
    with mp.workdps(40):  # the module's closed form against an independent one
        for eps in EPSILONS:
            assert holds(g.delta_exact(eps, PREC), balle_wang(mp.mpf(4) / 3, frac_mpf(eps)),
                         g.delta_exact(eps, PREC), Fraction(1, 10**30))


def test_hockey_stick_of_the_pair_is_the_closed_form():
    g = Gaussian(Fraction(1), Fraction(1))
    for eps in EPSILONS:
        assert holds(g.hockey_stick(eps, PREC), g.delta_exact(eps, PREC), g.hockey_stick(eps, PREC))
        assert width(g.hockey_stick(eps, PREC), g.hockey_stick(eps, PREC)) < Fraction(1, 10**30)


def test_k_uses_bracket_the_gaussian_of_sigma_over_root_k():
    k, g = 16, Gaussian(Fraction(4), Fraction(1))
    lower, upper = composed(g.plds(Fraction(1, 400), BITS, TAIL), "remove", k)
    with mp.workdps(40):
        mu = mp.sqrt(k) / 4
        for eps in (Fraction(0), Fraction(1, 2), Fraction(3, 2)):
            lo, up = read(lower, eps), read(upper, eps)
            assert holds(lo, balle_wang(mu, frac_mpf(eps)), up, Fraction(1, 10**30))
            assert width(lo, up) < Fraction(k, 400) / 2  # about k·h times the slope of δ


def test_replace_one_is_sensitivity_two():
    # dp_accounting's REPLACE_ONE Gaussian shifts the means by 2s (module docstring)
    assert Gaussian(Fraction(3), Fraction(2)).loss_scale() == Fraction(2, 3)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), Fraction(-1), Fraction(0), 0.5, True])
def test_parameters_are_validated(bad):
    with pytest.raises(InputError):
        Gaussian(bad)
    with pytest.raises(InputError):
        Gaussian(Fraction(1), bad)


@pytest.mark.parametrize("h, bits, tail", [(Fraction(0), 40, TAIL), (0.01, 40, TAIL), (Fraction(1, 10), 0, TAIL),
                                           (Fraction(1, 10), 40, Fraction(0)), (Fraction(1, 10), 40, Fraction(1))])
def test_grid_arguments_are_validated(h, bits, tail):
    with pytest.raises(InputError):
        Gaussian(Fraction(1)).plds(h, bits, tail)


def test_initial_step_is_a_power_of_two_near_the_tolerance():
    h = Gaussian(Fraction(2)).initial_step(Fraction(1, 100))
    assert h.numerator == 1 and h.denominator & (h.denominator - 1) == 0
    assert Fraction(1, 800) <= h <= Fraction(1, 200)


# -- Rényi DP (gaussian_rdp, Mironov 2017 Proposition 7) against mpmath quadrature ------------------------------------


@pytest.mark.parametrize("sigma, s, alpha", [(Fraction(1), Fraction(1), Fraction(3, 2)),
                                             (Fraction(2), Fraction(2), Fraction(8)),
                                             (Fraction(1, 2), Fraction(1), Fraction(5))])
def test_renyi_dp_is_the_quadrature(sigma, s, alpha):
    with mp.workdps(40):
        sg, ss, a = (mp.mpf(x.numerator) / x.denominator for x in (sigma, s, alpha))
        f = lambda x: mp.npdf(x, -ss, sg) ** a * mp.npdf(x, 0, sg) ** (1 - a)  # noqa: E731
        ref = mp.log(mp.quad(f, [-mp.inf, -a * ss, 0, mp.inf])) / (a - 1)
        exact = gaussian_rdp(sigma, s, alpha)
        assert Gaussian(sigma, s).rdp(alpha) == (exact, exact)
        assert abs(mp.mpf(exact.numerator) / exact.denominator - ref) < mp.mpf(10) ** -30
