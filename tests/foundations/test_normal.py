"""The one Φ of the toolkit (rdp_verify.foundations.normal) against mpmath at 60 digits, deep in both tails."""

from __future__ import annotations

import mpmath as mp
import pytest
from flint import arb, ctx

from rdp_verify.foundations.normal import erfc_ball, inverse_phi, phi, phi_bar

POINTS = ["-40000", "-1000", "-37.5", "-8", "-1", "0", "0.5", "3", "9", "120", "700000"]


def _contains(ball: arb, value: mp.mpf) -> bool:
    text = mp.nstr(value, 70, strip_zeros=False)
    return bool(ball.contains(arb(text))) or bool(ball.overlaps(arb(text)))


@pytest.mark.parametrize("x", POINTS)
def test_phi_and_its_tail_contain_the_value_and_are_tight(x):
    with mp.workdps(80), ctx.workprec(200):
        ball = arb(x)
        for got, ref in ((phi(ball), mp.ncdf(mp.mpf(x))), (phi_bar(ball), mp.ncdf(-mp.mpf(x)))):
            assert _contains(got, ref)
            if ref != 0:  # relative accuracy also where the value is e^-(10^11)
                assert got.rad() <= abs(got.mid()) * arb(2) ** -150


def test_an_inexact_ball_far_in_the_tail_keeps_its_digits():
    # Arb's own erfc of an inexact ball at 7e5 has lost every digit; the mean-value bound has not
    with ctx.workprec(128):
        x = arb(700_000) + arb(0, arb(2) ** -100)
        assert not (x.erfc().rad() < abs(x.erfc().mid()))  # what erfc_ball is for
        tight = erfc_ball(x)
        assert tight.rad() < abs(tight.mid()) * arb(2) ** -60
        with mp.workdps(80):  # the ball holds erfc at points of x near both of its ends (exact in mpmath)
            for t in (700_000 - mp.mpf(2) ** -100 * mp.mpf("0.999"), 700_000 + mp.mpf(2) ** -100 * mp.mpf("0.999")):
                assert _contains(tight, mp.erfc(t))


@pytest.mark.parametrize("p", ["1e-300", "0.001", "0.5", "0.975"])
def test_the_quantile_inverts_phi(p):
    with ctx.workprec(200):
        q = inverse_phi(arb(p))
        with mp.workdps(80):
            root = mp.findroot(lambda t: mp.log(mp.ncdf(t)) - mp.log(mp.mpf(p)), float(q.mid()))  # mpmath's own Φ
            assert _contains(q, root)
        assert phi(q).overlaps(arb(p))
