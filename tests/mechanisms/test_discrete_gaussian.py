"""The discrete Gaussian pair against an independent computation: mpmath sums over ℤ (nsum to infinity)."""

from fractions import Fraction

import mpmath
import pytest
from flint import ctx

from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.results import arb_to_bounded
from rdp_verify.mechanisms.discrete_gaussian import DiscreteGaussian
from rdp_verify.pld.compose import Budget, compose, delta_at


def _pmf(sigma, shift):
    z = mpmath.nsum(lambda k: mpmath.exp(-k**2 / (2 * sigma**2)), [-mpmath.inf, mpmath.inf])
    return lambda x: mpmath.exp(-(x + shift) ** 2 / (2 * sigma**2)) / z


def _reference_delta(sigma, s, eps, uses):
    """δ(ε) of `uses` compositions: enumerate the loss atoms −s(2x + s)/(2σ²) of x in a wide window (the rest of
    the mass is below 1e-40), convolve exactly in mpmath."""
    with mpmath.workdps(50):
        p = _pmf(mpmath.mpf(sigma), s)
        atoms = {}
        for x in range(-60, 60):
            loss = Fraction(-s * (2 * x + s), 2) / Fraction(sigma) ** 2
            atoms[loss] = atoms.get(loss, 0) + p(x)
        dist = {Fraction(0): mpmath.mpf(1)}
        for _ in range(uses):
            new = {}
            for a, pa in dist.items():
                for b, pb in atoms.items():
                    new[a + b] = new.get(a + b, 0) + pa * pb
            dist = {k: v for k, v in new.items() if v > mpmath.mpf(10) ** -45}
        e = mpmath.mpf(eps.numerator) / eps.denominator
        return sum(v * (1 - mpmath.exp(e - mpmath.mpf(k.numerator) / k.denominator)) for k, v in dist.items() if k > eps)


@pytest.mark.parametrize("sigma, s", [(Fraction(2), 1), (Fraction(3, 2), 2)])
def test_one_use_is_the_exact_sum(sigma, s):
    m = DiscreteGaussian(sigma, s)
    for eps in (Fraction(0), Fraction(1, 2), Fraction(1)):
        ball = m.hockey_stick(eps, 200)
        with mpmath.workdps(40):
            sig = mpmath.mpf(sigma.numerator) / sigma.denominator
            p, q = _pmf(sig, s), _pmf(sig, 0)
            e = mpmath.exp(mpmath.mpf(eps.numerator) / eps.denominator)
            ref = mpmath.nsum(lambda x: max(0, p(x) - e * q(x)), [-mpmath.inf, mpmath.inf])
            with ctx.workprec(200):  # the ends of the ball at its own precision (53 bits would round them)
                lo, hi = (mpmath.mpf(x.str(45, radius=False)) for x in (ball.lower(), ball.upper()))
            assert lo - mpmath.mpf(10) ** -35 <= ref <= hi + mpmath.mpf(10) ** -35 and hi - lo < mpmath.mpf(10) ** -30


def test_three_uses_bracket_the_enumeration():
    m, eps, uses, bits = DiscreteGaussian(Fraction(2), 1), Fraction(1), 3, 80
    # the losses are multiples of 1/8: on the grid h = 1/8 the rounding moves nothing, so the ends are tight
    plds = m.plds(Fraction(1, 8), bits, Fraction(1, 10**20))
    budget = Budget(0, uses, 8)
    ref = _reference_delta(2, 1, eps, uses)
    with ctx.workprec(bits + 64):
        up = delta_at(compose([(plds[("remove", "upper")], uses)], budget), eps, bits + 64)
        low = delta_at(compose([(plds[("remove", "lower")], uses)], budget), eps, bits + 64)
    assert float(low.lower()) <= float(ref) <= float(up.upper())
    assert float(up.upper()) - float(low.lower()) < 1e-9 * float(ref) + 1e-15


@pytest.mark.parametrize("bad", [dict(sigma=Fraction(0)), dict(sigma=Fraction(-1)), dict(sigma=Fraction(1), sensitivity=0)])
def test_bad_parameters_are_refused(bad):
    with pytest.raises(InputError):
        DiscreteGaussian(**bad)


# -- Rényi DP (discrete_gaussian_rdp: theta functions) against mpmath sums over ℤ, and CKS 2020's bound ----------------


def renyi_sum(sigma, s, alpha):
    """D_α(N_Z(−s, σ²) ‖ N_Z(0, σ²)) = log Σ_x P(x)^α Q(x)^{1−α}/(α − 1), the pmfs normalised and summed over ℤ
    by mpmath (nsum to ±∞), no theta function."""
    with mpmath.workdps(60):
        sg, al = mpmath.mpf(sigma.numerator) / sigma.denominator, mpmath.mpf(alpha.numerator) / alpha.denominator
        p, q = _pmf(sg, s), _pmf(sg, 0)
        total = mpmath.nsum(lambda x: p(x) ** al * q(x) ** (1 - al), [-mpmath.inf, mpmath.inf])
        return mpmath.log(total) / (al - 1)


@pytest.mark.parametrize("sigma, s, alpha", [(Fraction(1), 1, Fraction(3, 2)), (Fraction(1, 2), 2, Fraction(7, 3)),
                                             (Fraction(1, 5), 1, Fraction(5, 2)), (Fraction(1, 20), 1, Fraction(9, 7)),
                                             (Fraction(3), 2, Fraction(101, 10)), (Fraction(1), 3, Fraction(2)),
                                             (Fraction(2), 1, Fraction(1) + Fraction(1, 10**7))])
def test_renyi_dp_is_the_sum_over_the_integers_and_below_the_gaussian(sigma, s, alpha):
    with ctx.workprec(300):
        values = DiscreteGaussian(sigma, s).rdp(alpha)
    remove, add = (v if isinstance(v, Fraction) else arb_to_bounded(v) for v in values)
    assert remove == add  # symmetric
    gaussian = alpha * s * s / (2 * sigma * sigma)  # Canonne, Kamath, Steinke 2020: never above it
    if isinstance(remove, Fraction):  # alpha*s an integer: the ratio of theta values is 1, exactly
        assert (alpha * s).denominator == 1 and remove == gaussian
        lo = hi = remove
    else:
        assert (alpha * s).denominator != 1 and remove.upper <= gaussian
        lo, hi = remove.lower, remove.upper
        assert hi - lo < Fraction(1, 10**50) * hi
    with mpmath.workdps(60):
        ref = renyi_sum(sigma, s, alpha)
        slack = mpmath.mpf(10) ** -40 * ref
        assert mpmath.mpf(lo.numerator) / lo.denominator - slack <= ref <= mpmath.mpf(hi.numerator) / hi.denominator + slack

