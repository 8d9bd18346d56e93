"""The exact single-step curve in Arb against quadrature of the densities (tests/curve_oracles.py)."""

from fractions import Fraction

import mpmath as mp
import pytest
from curve_oracles import step_curve, step_curve_closed
from flint import arb, ctx

from rdp_verify.curves.single_step import StepCurve

CASES = [(Fraction(1, 100), Fraction(1)), (Fraction(256, 60000), Fraction(11, 10)), (Fraction(1, 2), Fraction(2, 3)),
         (Fraction(1), Fraction(3)), (Fraction(3, 10), Fraction(5))]


def _mpf(ball):
    return mp.mpf(ball.mid().str(40, radius=False))


XS = ["0.3", "0.999", "1", "1.01", "1.7", "12"]


# the default run: one x per case, rotating (0.3, 12, 1.7, 1.01, 1: both sides of x = 1 and x = 1 itself, every
# case once); the rest slow (0.999 below 1 is the same g-side path as 0.3)
@pytest.mark.parametrize("q, sigma, x", [
    pytest.param(q, s, x, marks=() if (i + j) % 6 == 0 else pytest.mark.slow)
    for i, (q, s) in enumerate(CASES) for j, x in enumerate(XS)])
def test_values_and_slopes_match_quadrature(q, sigma, x):
    curve = StepCurve(q, sigma, 160)
    with ctx.workprec(160):
        xa = arb(x)
    g, g_slope = curve.values(xa, g_side=True)
    h, h_slope = curve.values(xa, g_side=False)
    xm = mp.mpf(x)
    exact = step_curve(q, sigma, xm)
    # each form has full relative accuracy on its own side of x = 1, absolute accuracy elsewhere
    assert abs(_mpf(h) - exact) <= max(abs(exact) if xm >= 1 else 1, mp.mpf(10) ** -30) * mp.mpf(10) ** -25
    gap = exact - (1 - xm)  # G = H − (1 − x)
    assert abs(_mpf(g) - gap) <= max(abs(gap) if xm <= 1 else abs(xm), mp.mpf(10) ** -30) * mp.mpf(10) ** -25
    # H' = −Q(Λ > x): compare with a numerical derivative of the quadrature curve
    derivative = mp.diff(lambda t: step_curve(q, sigma, t), xm, h=mp.mpf(10) ** -8)
    assert abs(_mpf(h_slope) - derivative) <= mp.mpf(10) ** -6
    assert abs(_mpf(g_slope) - (derivative + 1)) <= mp.mpf(10) ** -6


@pytest.mark.parametrize("q, sigma", CASES)
def test_curvature_bound_covers_the_second_derivative(q, sigma):
    curve = StepCurve(q, sigma, 128)
    with ctx.workprec(128):
        for lo, hi in [("0.995", "1.002"), ("1.2", "1.25"), ("0.6", "0.7"), ("3", "3.5")]:
            bound = _mpf(curve.curvature_bound(arb(lo), arb(hi)))
            samples = [mp.mpf(lo) + (mp.mpf(hi) - mp.mpf(lo)) * k / 16 for k in range(17)]
            # H'' by central differences of the curve itself (independent of the formula for H'')
            second = [mp.diff(lambda t: step_curve_closed(q, sigma, t), s, 2, h=mp.mpf(10) ** -8) for s in samples]
            assert max(second) <= bound * (1 + mp.mpf(10) ** -6) + mp.mpf(10) ** -9  # finite-difference noise
            # unimodality makes it tight: the bound is attained at an end or the peak
            assert bound <= 3 * max(max(second), mp.mpf(10) ** -12) or bound < mp.mpf(10) ** -20


def test_below_the_support_the_curve_is_linear():
    curve = StepCurve(Fraction(1, 10), Fraction(1), 128)
    with ctx.workprec(128):
        g, slope = curve.values(arb("0.85"), g_side=True)
        assert g.is_zero() and slope.is_zero()
        assert curve.curvature_bound(arb("0.5"), arb("0.89")).is_zero()
