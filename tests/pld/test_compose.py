"""Integer composition with directed rounding against exact rational convolution."""

import math
import random
from fractions import Fraction

import pytest
from flint import ctx, fmpz_poly

from rdp_verify.foundations.results import arb_to_bounded
from rdp_verify.pld.compose import (
    PLD,
    Budget,
    _rescale,
    _window,
    compose,
    delta_at,
    epsilon_root,
    multiply,
    power,
    products_needed,
)

BITS, H = 40, Fraction(1, 10)
NO_CUT = Budget(0, 1, 1)


def exact_masses():
    # a small PLD: P-masses at losses −2h..3h (sum 1), plus a little mass at +∞ for the upper version
    return [Fraction(1, 10), Fraction(2, 10), Fraction(3, 10), Fraction(1, 10), Fraction(15, 100), Fraction(15, 100)]


def fixed(masses, rounding, inf=Fraction(0)):
    scale = 2**BITS
    rnd = math.ceil if rounding == "up" else math.floor
    return PLD.from_masses([rnd(m * scale) for m in masses], -2, rnd(inf * scale), BITS, H, rounding)


def convolve(a, b):
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def as_fractions(p: PLD):
    return [Fraction(int(c), 2**BITS) for c in p.coeffs.coeffs()]


def delta_exact(masses, offset, inf, epsilon):
    return sum(m * max(1 - math.exp(float(epsilon - (offset + i) * H)), 0) for i, m in enumerate(masses)) + float(inf)


@pytest.mark.parametrize("t", [2, 3, 5, 8])
def test_power_brackets_the_exact_convolution(t):
    exact = exact_masses()
    for _ in range(t - 1):
        exact = convolve(exact, exact_masses())
    up, lo = power(fixed(exact_masses(), "up"), t, NO_CUT), power(fixed(exact_masses(), "down"), t, NO_CUT)
    assert up.offset == lo.offset == -2 * t and up.steps == lo.steps == t
    for u, l, e in zip(as_fractions(up), as_fractions(lo), exact):
        assert l <= e <= u
        assert u - l <= Fraction(4 * t, 2**BITS)  # a few units per product, no more
    assert sum(as_fractions(lo)) <= 1 <= sum(as_fractions(up))


def test_mass_at_infinity_is_added_and_cut_mass_moves_there():
    up = fixed(exact_masses(), "up", inf=Fraction(1, 1000))
    squared = multiply(up, up, Budget(total=2**BITS // 100, steps=2, products=1))
    # the exact square has mass 1 − (1 − 1/1000)² at +∞; the bound a + b is above it
    assert Fraction(squared.inf, 2**BITS) >= 2 * Fraction(1, 1000) - Fraction(1, 10**6)
    # every cut mass moved to +∞: the total never shrinks
    assert squared.total() >= up.total() * 2 - 2**BITS - 4
    lo = fixed(exact_masses(), "down")
    cut = multiply(lo, lo, Budget(total=2**BITS // 100, steps=2, products=1))
    assert cut.inf == 0 and cut.total() <= lo.total()


def test_cut_budget_scales_with_the_steps_a_product_stands_for():
    budget = Budget(total=10**6, steps=1000, products=10)
    assert budget.per_cut(1000) == 10**5 and budget.per_cut(10) == 10**3


def test_products_needed_bounds_the_count():
    assert products_needed([1]) >= 1 and products_needed([1000, 7]) >= 2 * (10 + 3)


def test_delta_and_epsilon_read_off_bracket_the_exact_curve():
    exact = convolve(exact_masses(), exact_masses())
    up, lo = power(fixed(exact_masses(), "up"), 2, NO_CUT), power(fixed(exact_masses(), "down"), 2, NO_CUT)
    with ctx.workprec(128):
        for eps in (Fraction(-1, 3), Fraction(0), Fraction(1, 7), Fraction(2, 5)):
            want = delta_exact(exact, -4, 0, eps)
            d_up, d_lo = arb_to_bounded(delta_at(up, eps, 128)), arb_to_bounded(delta_at(lo, eps, 128))
            assert float(d_lo.lower) <= want + 1e-12 and want - 1e-12 <= float(d_up.upper)
        root = epsilon_root(up, Fraction(1, 10), 128)
        value = float(root.mid())
        assert abs(delta_exact(exact, -4, 0, Fraction(value)) - 0.1) < 1e-9
        assert epsilon_root(up, Fraction(999, 1000), 128) < 0  # δ(0) < δ already: callers clip ε at 0
        assert epsilon_root(lo, Fraction(1), 128) is None  # the total mass never exceeds δ
        heavy = fixed(exact_masses(), "up", inf=Fraction(1, 2))
        assert not epsilon_root(heavy, Fraction(1, 10), 128).is_finite()  # the +∞ mass alone exceeds δ


def test_phases_compose_in_either_order():
    a, b = fixed(exact_masses(), "up"), fixed(list(reversed(exact_masses())), "up")
    ab = compose([(a, 2), (b, 3)], NO_CUT)
    ba = compose([(b, 3), (a, 2)], NO_CUT)
    assert ab.offset == ba.offset and ab.steps == ba.steps == 5
    assert max(abs(x - y) for x, y in zip(as_fractions(ab), as_fractions(ba))) <= Fraction(8, 2**BITS)


def test_mismatched_grids_are_refused():
    with pytest.raises(ValueError):
        multiply(fixed(exact_masses(), "up"), fixed(exact_masses(), "down"), NO_CUT)
    with pytest.raises(ValueError):
        PLD.from_masses([1], 0, 1, BITS, H, "down")  # a lower bound has no mass at +∞


def window_by_direct_sums(c: list[int], budget: int) -> tuple[int, int, int]:
    """The window's definition read literally: the largest lo whose prefix sum is ≤ budget, the smallest hi > lo
    whose suffix sum is ≤ budget, and the exact mass outside (sums of Python ints, no bisection)."""
    n = len(c)
    lo = max(i for i in range(n) if sum(c[:i]) <= budget)
    hi = min(j for j in range(lo + 1, n + 1) if sum(c[j:]) <= budget)
    return lo, hi, sum(c[:lo]) + sum(c[hi:])


@pytest.mark.parametrize("seed", range(40))
def test_window_search_equals_the_direct_sums(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 80)
    c = [rng.choice((0, 0, 1, rng.randint(0, 10), rng.randint(0, 2**70))) for _ in range(n - 1)] + [rng.randint(1, 9)]
    total = sum(c)
    for budget in {0, 1, rng.randint(0, total), total // 3, total // 2, total, total + 1}:
        assert _window(fmpz_poly(c), budget) == window_by_direct_sums(c, budget)


def test_products_below_one_unit_round_up_to_one_unit():
    one_unit = PLD.from_masses([1, 1], 0, 0, BITS, H, "up")  # masses 2^-BITS each: products 2^-2·BITS
    square = multiply(one_unit, one_unit, NO_CUT)
    exact = [Fraction(1, 2**(2 * BITS)), Fraction(2, 2**(2 * BITS)), Fraction(1, 2**(2 * BITS))]
    got = as_fractions(square) + [Fraction(0)] * 3
    assert all(g >= e for g, e in zip(got, exact))


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("bits", [1, 40, 64, 80])
def test_rescale_is_floor_and_ceiling_of_every_coefficient(seed, bits):
    """Against Python's integers: 0, 1, d − 1, d, d + 1, multiples and huge values, at every length."""
    rng, d = random.Random(seed), 2**bits
    special = (0, 1, d - 1, d, d + 1, 2 * d, 5 * d - 1, d * d + 3)
    c = [rng.choice(special + (rng.randint(0, 3 * d), rng.randint(0, 2**(2 * bits + 10)))) for _ in
         range(rng.randint(1, 300))] + [rng.randint(1, 4 * d)]
    assert [int(x) for x in _rescale(fmpz_poly(c), bits, "down").coeffs()] == _strip([x // d for x in c])
    assert [int(x) for x in _rescale(fmpz_poly(c), bits, "up").coeffs()] == _strip([-(-x // d) for x in c])


def _strip(c: list[int]) -> list[int]:
    """fmpz_poly drops zero coefficients at the high end."""
    while c and c[-1] == 0:
        c = c[:-1]
    return c
