"""Randomized response: one use and k uses against exact enumeration in rationals, both relations."""

import math
from fractions import Fraction

import mpmath as mp
import pytest
from flint import ctx

from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.results import arb_to_bounded
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


# -- Rényi DP (finite_rdp): every one of the k outcomes summed in exact rationals, as dp_accounting writes the pair ----


def renyi_exact(p, k, neighbours, alpha: int):
    """(D_α(P ‖ Q), D_α(Q ‖ P)) at an integer order: Σ P_i^α / Q_i^{α−1} over all k outcomes, an exact rational, then
    its log in mpmath. The laws are written out per bucket (not the mechanism's merged masses)."""
    keep = 1 - p + p / k
    if neighbours == "replace-one":  # input bucket 0 against input bucket 1
        P = [keep, p / k] + [p / k] * (k - 2)
        Q = [p / k, keep] + [p / k] * (k - 2)
    else:  # input bucket 0 against the special input, whose output is uniform
        P = [keep] + [p / k] * (k - 1)
        Q = [Fraction(1, k)] * k
    assert sum(P) == 1 and sum(Q) == 1
    sums = [sum(x**alpha / y ** (alpha - 1) for x, y in zip(a, b)) for a, b in ((P, Q), (Q, P))]
    with mp.workdps(50):
        return tuple(mp.log(frac_mpf(s)) / (alpha - 1) for s in sums)


@pytest.mark.parametrize("p, k, neighbours", [(Fraction(1, 2), 4, "replace-one"), (Fraction(1, 2), 4, "replace-special"),
                                              (Fraction(1, 10), 2, "replace-one"), (Fraction(3, 10), 7, "replace-special"),
                                              (Fraction(1), 3, "replace-special")])
@pytest.mark.parametrize("alpha", [2, 5, 64])
def test_renyi_dp_is_the_exact_finite_sum(p, k, neighbours, alpha):
    with ctx.workprec(256):
        ours = [arb_to_bounded(x) for x in RandomizedResponse(p, k, neighbours).rdp(Fraction(alpha))]
    with mp.workdps(50):
        for b, ref in zip(ours, renyi_exact(p, k, neighbours, alpha)):
            assert frac_mpf(b.lower) - mp.mpf(10) ** -40 <= ref <= frac_mpf(b.upper) + mp.mpf(10) ** -40
            assert b.upper - b.lower < Fraction(1, 10**60)


def test_renyi_dp_at_a_fractional_order_and_near_one_against_mpmath():
    p, q = RandomizedResponse(Fraction(1, 2), 4, "replace-special").masses()
    for alpha in (Fraction(3, 2), Fraction(1) + Fraction(1, 10**8)):
        with ctx.workprec(300):
            remove, add = (arb_to_bounded(x) for x in RandomizedResponse(Fraction(1, 2), 4, "replace-special").rdp(alpha))
        with mp.workdps(60):
            a = frac_mpf(alpha)
            refs = [mp.log(mp.fsum(frac_mpf(x) ** a * frac_mpf(y) ** (1 - a) for x, y in zip(u, v))) / (a - 1)
                    for u, v in ((p, q), (q, p))]
            for b, ref in zip((remove, add), refs):
                assert abs(frac_mpf(b.value) - ref) < mp.mpf(10) ** -35 * ref
        assert remove.lower > add.upper  # replace-special: the remove order is the larger


@pytest.mark.parametrize("relation", ["REPLACE_ONE", "REPLACE_SPECIAL"])
def test_renyi_dp_agrees_with_dp_accountings_randomized_response_rdp(relation):
    rdp = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    dp = pytest.importorskip("dp_accounting")

    neighbours = relation.lower().replace("_", "-")
    orders = [1.5, 2.0, 10.0, 256.0]
    theirs = rdp._compute_randomized_response_rdp(0.25, 5, orders, getattr(dp.NeighboringRelation, relation))
    for alpha, peer in zip(orders, theirs):
        with ctx.workprec(120):
            ours = max(float(x.mid()) for x in RandomizedResponse(Fraction(1, 4), 5, neighbours).rdp(Fraction(alpha)))
        assert ours == pytest.approx(peer, rel=1e-12)
