"""The shared construction: its checks fail when either rounding direction is flipped (mutations), the range
search, the finite pair's cuts and Poisson sampling at q = 1."""

from fractions import Fraction

import pytest
from flint import arb, ctx

from rdp_verify.mechanisms.discrete_laplace import DiscreteLaplace
from rdp_verify.mechanisms.laplace import Laplace, LaplacePair
from rdp_verify.pld import rounding
from rdp_verify.pld.compose import PLD
from tests.mechanisms.checks import BITS, PREC, TAIL, bracket, holds

EPSILONS = [Fraction(0), Fraction(1, 4), Fraction(1, 2)]


def brackets_everywhere(m, plds, direction="remove"):
    return all(holds(*_three(m, plds, direction, eps)) for eps in EPSILONS)


def _three(m, plds, direction, eps):
    lo, up = bracket(plds, direction, eps)
    return lo, m.delta_exact(eps, PREC, direction), up


def shifted(p: PLD, by: int) -> PLD:
    """The same masses one grid step lower (by = −1) or higher: the losses' rounding flipped."""
    return PLD(p.coeffs, p.offset + by, p.inf, p.bits, p.h, p.rounding, p.steps, p.shift)


def test_flipping_the_mass_rounding_is_caught(monkeypatch):
    # losses (1/2)·{3, 1, −1, −3} on the grid (their rounding moves nothing), masses irrational, 10 bits
    m, h, bits = DiscreteLaplace(Fraction(1, 2), 3), Fraction(1, 4), 10
    assert brackets_everywhere(m, m.plds(h, bits, TAIL))
    up, down = rounding.upper_int, rounding.lower_int
    for name, mutant in (("upper_int", down), ("lower_int", up)):  # each bound's masses rounded the wrong way
        with monkeypatch.context() as patch:
            patch.setattr(rounding, name, mutant)
            flipped = m.plds(h, bits, TAIL)
        assert not brackets_everywhere(m, flipped) and not brackets_everywhere(m, flipped, "add")


def test_flipping_the_loss_rounding_is_caught():
    m = Laplace(Fraction(1))
    plds = m.plds(Fraction(1, 32), BITS, TAIL)
    assert brackets_everywhere(m, plds)
    down = {**plds, ("remove", "upper"): shifted(plds["remove", "upper"], -1)}  # upper losses rounded down
    up = {**plds, ("remove", "lower"): shifted(plds["remove", "lower"], 1)}  # lower losses rounded up
    assert not brackets_everywhere(m, down) and not brackets_everywhere(m, up)


def test_range_search_finds_the_first_true():
    for start in (-50, 0, 7, 1000):
        for edge in (-300, -1, 0, 3, 999, 5000):
            assert rounding._first_true(lambda k: k >= edge, start) == edge


def test_tails_beyond_the_range_are_at_most_tail():
    pair = LaplacePair(Fraction(1), Fraction(1))
    with ctx.workprec(BITS + rounding.GUARD_BITS):
        s = rounding._Survival(pair, "remove", Fraction(1, 64))
        k_lo, k_hi = rounding._range(s, TAIL)
    assert (k_lo, k_hi) == (-64, 64)  # the loss lies in [−1, 1] and both end atoms carry mass above the tail


def test_finite_pair_cuts_are_half_integers():
    pair = rounding.FinitePair([Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)],
                               [Fraction(1, 4), Fraction(1, 4), Fraction(1, 2)])
    with ctx.workprec(64):
        assert [x == arb(1) / 2 for x in pair.cut(Fraction(0), True)] == [True, True]  # only log 2 > 0
        assert [x == arb(3) / 2 for x in pair.cut(Fraction(0), False)] == [True, True]  # log 2 and 0 ≥ 0
        assert pair.p_cdf(pair.cut(Fraction(0), False)[0]) == arb(3) / 4


def test_poisson_sampling_at_q_one_is_the_inner_pair():
    inner = LaplacePair(Fraction(1), Fraction(1))
    sampled = rounding.PoissonSampled(inner, Fraction(1))
    with ctx.workprec(100):
        for level in (Fraction(-2), Fraction(-1, 3), Fraction(1), Fraction(5, 4)):
            for strict in (True, False):
                assert [repr(x) for x in sampled.cut(level, strict)] == [repr(x) for x in inner.cut(level, strict)]


@pytest.mark.parametrize("direction", ["sideways", "", None])
def test_hockey_stick_direction_is_validated(direction):
    with pytest.raises(rounding.InputError):
        Laplace(Fraction(1)).hockey_stick(Fraction(0), PREC, direction)
