"""The discrete Gaussian pair against an independent computation: mpmath sums over ℤ (nsum to infinity)."""

from fractions import Fraction

import mpmath
import pytest
from flint import ctx

from rdp_verify.curves.compose import Budget, compose, delta_at
from rdp_verify.foundations.inputs import InputError
from rdp_verify.mechanisms.discrete_gaussian import DiscreteGaussian


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
