"""Randomized response: one use and k uses against exact enumeration in rationals, both relations."""

import math
from fractions import Fraction

import mpmath as mp
import pytest

from rdp_verify.foundations.inputs import InputError
from rdp_verify.mechanisms.randomized_response import RandomizedResponse
from tests.mechanisms.checks import BITS, PREC, TAIL, bracket, composed, frac_mpf, holds, read, width


def enumerate_k(p, q, k):
    """[(P, Q)] over count vectors of k independent uses, exact rationals (multinomial coefficients)."""
    n = len(p)

    def counts(left, slots):
        if slots == 1:
            yield (left,)
            return
        for c in range(left + 1):
            for rest in counts(left - c, slots - 1):
                yield (c,) + rest

    out = []
    for c in counts(k, n):
        coeff = math.factorial(k)
        for ci in c:
            coeff //= math.factorial(ci)
        out.append((coeff * math.prod(x**ci for x, ci in zip(p, c)), coeff * math.prod(x**ci for x, ci in zip(q, c))))
    return out


def delta(table, eps):
    with mp.workdps(60):
        x = mp.exp(frac_mpf(eps))
        return sum((max(frac_mpf(a) - x * frac_mpf(b), 0) for a, b in table), mp.mpf(0))


def test_the_pairs_follow_dp_accounting():
    one = RandomizedResponse(Fraction(1, 2), 4).masses()
    assert one == ((Fraction(5, 8), Fraction(1, 8), Fraction(1, 4)), (Fraction(1, 8), Fraction(5, 8), Fraction(1, 4)))
    special = RandomizedResponse(Fraction(1, 3), 3, "replace-special").masses()
    assert special == ((Fraction(7, 9), Fraction(2, 9)), (Fraction(1, 3), Fraction(2, 3)))
    assert RandomizedResponse(Fraction(1, 2), 2).masses() == ((Fraction(3, 4), Fraction(1, 4)),) * 1 + \
        ((Fraction(1, 4), Fraction(3, 4)),)


@pytest.mark.parametrize("neighbours", ["replace-one", "replace-special"])
def test_one_use_brackets_the_exact_curve_and_shrinks_like_h(neighbours):
    m = RandomizedResponse(Fraction(1, 3), 5, neighbours)
    for direction in ("remove", "add"):
        for eps in (Fraction(-1), Fraction(0), Fraction(1, 2), Fraction(1)):
            exact = m.delta_exact(eps, PREC, direction)
            widths = []
            for h in (Fraction(1, 100), Fraction(1, 200)):
                lo, up = bracket(m.plds(h, BITS, TAIL), direction, eps)
                assert holds(lo, exact, up)
                widths.append(width(lo, up))
            assert widths[1] <= Fraction(7, 10) * widths[0]


def test_replace_special_directions_differ():
    m = RandomizedResponse(Fraction(1, 3), 3, "replace-special")  # (p = 1/(k − 1) would be symmetric)
    plds = m.plds(Fraction(1, 100), BITS, TAIL)
    remove, add = m.delta_exact(Fraction(1, 2), PREC), m.delta_exact(Fraction(1, 2), PREC, "add")
    assert not remove.overlaps(add)
    for direction, exact in (("remove", remove), ("add", add)):
        lo, up = bracket(plds, direction, Fraction(1, 2))
        assert holds(lo, exact, up)


@pytest.mark.parametrize("neighbours, direction", [("replace-one", "remove"), ("replace-special", "remove"),
                                                   ("replace-special", "add")])
def test_k_uses_bracket_exact_enumeration(neighbours, direction):
    k, m = 9, RandomizedResponse(Fraction(1, 3), 3, neighbours)
    p, q = m.masses()
    if direction == "add":
        p, q = q, p
    table = enumerate_k(p, q, k)
    assert sum(a for a, _ in table) == 1 and sum(b for _, b in table) == 1
    lower, upper = composed(m.plds(Fraction(1, 200), BITS, TAIL), direction, k)
    for eps in (Fraction(0), Fraction(1), Fraction(2)):
        lo, up = read(lower, eps), read(upper, eps)
        assert holds(lo, delta(table, eps), up, Fraction(1, 10**50))
        assert width(lo, up) < Fraction(1, 20)


@pytest.mark.parametrize("p, k, neighbours", [(Fraction(0), 3, "replace-one"), (Fraction(3, 2), 3, "replace-one"),
                                              (float("nan"), 3, "replace-one"), (Fraction(1, 2), 1, "replace-one"),
                                              (Fraction(1, 2), 2.0, "replace-one"), (Fraction(1, 2), 3, "add-remove")])
def test_parameters_are_validated(p, k, neighbours):
    with pytest.raises(InputError):
        RandomizedResponse(p, k, neighbours)
