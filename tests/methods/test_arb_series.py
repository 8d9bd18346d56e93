"""The fast path's three pieces against acb.integral on the same pieces."""

from fractions import Fraction

import pytest
from flint import arb, ctx

from rdp_verify.foundations.inputs import SGM
from rdp_verify.foundations.results import arb_to_bounded
from rdp_verify.methods import rigorous
from rdp_verify.methods.arb_series import SharedSGM

CASES = [("0.01", "1.1", "2.5"), ("0.5", "0.5", "3.5"), ("0.9", "2", "10.7"), ("1e-4", "4", "1.01")]


def exact(x: arb) -> Fraction:
    b = arb_to_bounded(x)
    return b.value


@pytest.fixture
def prec():
    saved = ctx.prec
    ctx.prec = 160
    yield 160
    ctx.prec = saved


@pytest.mark.parametrize("q, sigma, alpha", CASES)
def test_pieces_match_acb_integral(prec, q, sigma, alpha):
    sgm = SGM.parse(q, sigma, alpha)
    shared = SharedSGM(sgm.q, sgm.sigma, prec)
    g = arb(sgm.alpha.numerator) / sgm.alpha.denominator
    tol = arb(2) ** (-prec)
    c_lo, c_hi = exact(shared.c_lo), exact(shared.c_hi)
    pieces = {
        "left": (shared._left_series(g, tol), None, c_lo),
        "band": (shared._band.integral(g, tol), c_lo, c_hi),
        "right": (shared._right_series(g, tol), c_hi, None),
    }
    for name, (fast, lo, hi) in pieces.items():
        assert fast is not None, name
        ref = rigorous.partial_moment(sgm, sgm.alpha, lo, hi, 45)
        assert arb_to_bounded(fast).overlaps(ref), name


@pytest.mark.parametrize("q, sigma, alpha", CASES)
def test_truncation_and_quadrature_bounds_are_honest(prec, q, sigma, alpha):
    # With a loose tolerance the pieces stop early; the exact value (from a tight
    # computation) must still lie inside the loose ball.
    sgm = SGM.parse(q, sigma, alpha)
    shared = SharedSGM(sgm.q, sgm.sigma, prec)
    g = arb(sgm.alpha.numerator) / sgm.alpha.denominator
    tight, loose = arb(2) ** (-prec), arb(10) ** -8
    for piece in (shared._left_series, shared._right_series, shared._band.integral):
        coarse, fine = piece(g, loose), piece(g, tight)
        assert coarse.rad() < arb(10) ** -7
        assert coarse.overlaps(fine) and fine.rad() <= coarse.rad()
