"""Shared checks for the mechanism tests: δ read off the discretised PLDs against a reference."""

from __future__ import annotations

from fractions import Fraction

import mpmath as mp
from flint import arb, ctx

from rdp_verify.foundations.results import lower_end, upper_end
from rdp_verify.pld.compose import PLD, Budget, compose, delta_at, products_needed

PREC = 160
BITS = 48
TAIL = Fraction(1, 10**13)


def read(pld: PLD, epsilon: Fraction) -> arb:
    return delta_at(pld, Fraction(epsilon), PREC)


def bracket(plds: dict, direction: str, epsilon: Fraction) -> tuple[arb, arb]:
    """Balls for δ(ε) of the lower and the upper PLD of one direction."""
    return read(plds[direction, "lower"], epsilon), read(plds[direction, "upper"], epsilon)


def composed(plds: dict, direction: str, k: int, tail: Fraction = TAIL, bits: int = BITS) -> tuple[PLD, PLD]:
    """The k-fold compositions of the lower and upper PLD (a budget as curves.accountant.compose_run builds it)."""
    budget = Budget(int(tail * 2**bits), k, products_needed([k]))
    return (compose([(plds[direction, "lower"], k)], budget), compose([(plds[direction, "upper"], k)], budget))


def holds(lower: arb, reference, upper: arb, slack: Fraction = Fraction(0)) -> bool:
    """No proven violation: lower ≤ reference ≤ upper (reference an Arb ball, an mpmath number or a Fraction,
    ``slack`` its absolute error)."""
    with ctx.workprec(PREC):  # Arb's ends are rounded (outward) to the working precision
        if isinstance(reference, arb):
            lo_ref, hi_ref = lower_end(reference), upper_end(reference)
        else:
            value = Fraction(reference) if isinstance(reference, (int, Fraction)) else mp_fraction(reference)
            lo_ref = hi_ref = value
        return lower_end(lower) <= hi_ref + slack and lo_ref - slack <= upper_end(upper)


def width(lower: arb, upper: arb) -> Fraction:
    with ctx.workprec(PREC):
        return upper_end(upper) - lower_end(lower)


def mp_fraction(x) -> Fraction:
    """The exact value of an mpmath number (its sign too: ``man_exp`` drops it; an mpf is read as it is, not through
    ``mp.mpf``, which would round it to the current precision)."""
    sign, man, exp, _ = (x if isinstance(x, mp.mpf) else mp.mpf(x))._mpf_
    value = Fraction(int(man)) * Fraction(2) ** int(exp)
    return -value if sign else value


def frac_mpf(x: Fraction):
    return mp.mpf(x.numerator) / x.denominator


def brackets_and_shrinks(coarse: dict, fine: dict, direction: str, epsilon: Fraction, reference,
                         slack: Fraction = Fraction(0)) -> list[Fraction]:
    """Both grids' δ(ε) brackets hold ``reference`` and the finer one (h halved) is at most 0.6 times as wide (the
    width is O(h)); returns the two widths."""
    widths = []
    for plds in (coarse, fine):
        lo, up = bracket(plds, direction, epsilon)
        assert holds(lo, reference, up, slack)
        widths.append(width(lo, up))
    assert widths[1] <= Fraction(6, 10) * widths[0] or widths[0] < Fraction(1, 10**12)
    return widths
