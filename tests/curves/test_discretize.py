"""The two discrete pairs bracket one step's curve everywhere: H_lower ≤ H ≤ H_upper on [0, ∞).

Dominance is what every bound rests on (Blackwell), so it is checked directly: the curves of the
fixed-point pairs are rebuilt from their integer masses and compared with the exact curve
(tests/curve_oracles.py) at points between the grid points, near the support's lower edge 1 − q,
in the tails and beyond the grid, for both directions.
"""

import bisect
from fractions import Fraction

import mpmath as mp
import pytest
from curve_oracles import step_curve, step_curve_closed

from rdp_verify.curves.discretize import StepPLD, discretize, grid_points, grid_range
from rdp_verify.pld.grid import Grid

# slow: (256/60000, 1.1) is the same small-q case as (1/100, 1) on the same grid step, (1/2, 2/3) the same large-q case
# as (9/10, 1/2) and, at q = 1/2, (1/2, 1/20) (default run, every test of the module)
CASES = [
    (Fraction(1, 100), Fraction(1), Fraction(1, 1000)),
    pytest.param((Fraction(256, 60000), Fraction(11, 10), Fraction(1, 1000)), marks=pytest.mark.slow),
    pytest.param((Fraction(1, 2), Fraction(2, 3), Fraction(2, 1000)), marks=pytest.mark.slow),
    (Fraction(1), Fraction(3), Fraction(5, 1000)),
    (Fraction(1, 10**6), Fraction(10), Fraction(1, 10000)),
    (Fraction(9, 10), Fraction(1, 2), Fraction(1, 100)),
    (Fraction(1, 2), Fraction(1, 20), Fraction(1, 4)),  # an anchored grid (σ ≪ 1)
]


@pytest.fixture(scope="module", params=CASES, ids=lambda c: f"q={c[0]},sigma={c[1]},h={c[2]}")
def step(request) -> StepPLD:
    q, sigma, h = request.param
    return discretize(q, sigma, grid_range(q, sigma, h, Fraction(1, 10**25)), 96)


_SUFFIX: dict = {}


def _suffix_sums(step: StepPLD, direction: str, bound: str):
    """Losses in increasing order with Σ_{i ≥ j} m_i and Σ_{i ≥ j} m_i e^{−ℓ_i} (mpmath, cached); the remove
    pair's atoms sit at log(anchor) + kh, the add pair's at the negatives."""
    return _cached(step, direction, bound)[1]


def _losses(step: StepPLD, direction: str, bound: str) -> list:
    """The losses of :func:`_suffix_sums`, in increasing order (cached)."""
    return _cached(step, direction, bound)[2]


def _cached(step: StepPLD, direction: str, bound: str) -> tuple:
    """(step, suffix sums, losses), computed once per step and direction; the entry keeps the step alive, so its id
    (the key) is never reused by another step."""
    key = (id(step), direction, bound)
    if key not in _SUFFIX:
        g, scale = step.grid, mp.mpf(2) ** step.bits
        h = mp.mpf(g.h.numerator) / g.h.denominator
        base = mp.log(mp.mpf(g.anchor.numerator) / g.anchor.denominator)
        masses = list(getattr(step, f"{direction}_{bound}"))
        losses = [base + k * h for k in range(g.k_lo, g.k_hi + 1)]
        if direction == "add":
            losses, masses = [-x for x in reversed(losses)], list(reversed(masses))
        a, b, sums = mp.mpf(0), mp.mpf(0), []
        for loss, m in zip(reversed(losses), reversed(masses)):
            a += mp.mpf(m) / scale
            b += mp.mpf(m) / scale * mp.exp(-loss)
            sums.append((loss, a, b))
        sums.reverse()
        _SUFFIX[key] = (step, sums, [loss for loss, _, _ in sums])
    return _SUFFIX[key]


def _curve(step: StepPLD, direction: str, bound: str, x):
    """H(x) = Σ_k m_k (1 − x·e^{−ℓ_k})_+ + m_∞ of a fixed-point pair: A_j − x·B_j over the losses above log x."""
    inf = getattr(step, f"{direction}_upper_inf") if bound == "upper" else 0
    total = mp.mpf(inf) / mp.mpf(2) ** step.bits
    if x == 0:
        return total + _suffix_sums(step, direction, bound)[0][1]
    # the first loss above log x, by bisection of the increasing losses (a scan compared each: most of the time)
    j = bisect.bisect_right(_losses(step, direction, bound), mp.log(x))
    sums = _suffix_sums(step, direction, bound)
    if j < len(sums):
        _, a, b = sums[j]
        return total + a - x * b
    return total


def _points(step: StepPLD) -> list:
    g, h = step.grid, mp.mpf(step.grid.h.numerator) / step.grid.h.denominator
    base = mp.log(mp.mpf(g.anchor.numerator) / g.anchor.denominator)
    ks = [g.k_lo - 3, g.k_lo, g.k_lo + 1, -2, -1, 0, 1, 2, 3, 7, 20, g.k_hi // 4, g.k_hi // 2, g.k_hi - 1, g.k_hi + 5]
    eps = sorted({base + k * h for k in ks} | {base + (k + f) * h for k in ks for f in (0.13, 0.5, 0.91)})
    if step.q < 1:  # around the support's lower edge x = 1 − q
        edge = mp.log(1 - mp.mpf(step.q.numerator) / step.q.denominator)
        eps += [edge - h / 3, edge + h / 7, edge + h / 2, edge + 1.5 * h, edge + 3.3 * h,
                edge + mp.mpf(10) ** -25, base - mp.mpf(10) ** -25]
    return [mp.exp(e) for e in eps] + [mp.mpf(0), mp.mpf(10) ** -30]


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_upper_pair_dominates_and_lower_pair_is_dominated(step, direction):
    for x in _points(step):
        exact = step_curve_closed(step.q, step.sigma, x, direction)
        upper = _curve(step, direction, "upper", x)
        lower = _curve(step, direction, "lower", x)
        assert upper >= exact - mp.mpf(10) ** -35, (direction, x)
        assert lower <= exact + mp.mpf(10) ** -35, (direction, x)


def test_closed_form_reference_agrees_with_quadrature():
    for x in ("0.5", "1", "1.3", "4"):
        assert abs(step_curve_closed(Fraction(1, 10), Fraction(1), mp.mpf(x))
                   - step_curve(Fraction(1, 10), Fraction(1), mp.mpf(x))) < mp.mpf(10) ** -25


def test_the_bracket_is_second_order_in_the_grid_step():
    # halving h divides the largest gap between the two pairs' curves by about 4
    gaps = []
    for h in (Fraction(4, 1000), Fraction(2, 1000)):
        q, sigma = Fraction(1, 100), Fraction(1)
        step = discretize(q, sigma, grid_range(q, sigma, h, Fraction(1, 10**25)), 96)
        xs = [mp.exp(mp.mpf(e) / 100) for e in range(-2, 60)]
        gaps.append(max(_curve(step, "remove", "upper", x) - _curve(step, "remove", "lower", x) for x in xs))
    assert 3 < gaps[0] / gaps[1] < 6


def test_masses_form_pairs(step):
    scale = 2 ** step.bits
    assert sum(step.remove_upper) + step.remove_upper_inf >= scale  # rounded up, exact total 1
    assert sum(step.remove_lower) <= scale and sum(step.add_lower) <= scale  # P and Q of the lower pair
    assert sum(step.add_upper) + step.add_upper_inf >= scale
    # nothing is lost beyond rounding: the lower pair keeps all but a sliver of its mass
    assert sum(step.remove_lower) >= scale * (1 - Fraction(1, 10**15))
    assert step.checks["cells_verified"] == step.grid.size - 1


def test_grid_must_straddle_one():
    with pytest.raises(ValueError):
        Grid(Fraction(1, 100), 10, 1)
    with pytest.raises(ArithmeticError, match="straddle"):  # x_k = e^{k/100} > 1 for every k ≥ 1
        discretize(Fraction(1, 100), Fraction(1), Grid(Fraction(1, 100), 1, 10), 96)


def test_a_sliver_of_mass_above_1_minus_q_is_anchored_and_kept():
    # σ ≪ 1: nearly all of Q's mass of Λ lies within 1e-11 of 1 − q. On the lattice e^{kh} the dominated pair
    # would collapse (the run reported epsilon in [0, 167]); anchored just above the sliver it keeps the curve.
    q, sigma, h = Fraction("0.00000864"), Fraction("0.0684"), Fraction(1, 80)
    grid = grid_range(q, sigma, h, Fraction(1, 10**20))
    assert grid.k_lo < 0 and 1 - q < grid.anchor < 1 - q + Fraction(1, 10**10)
    step = discretize(q, sigma, grid, 96)
    assert step.checks["hull_vertices"] > 100  # not the trivial pair
    x = mp.exp(mp.mpf(50))  # far in the tail of the hits: the lower pair is within 1 % of the exact curve
    exact = step_curve_closed(q, sigma, x)
    assert _curve(step, "remove", "lower", x) >= exact * (1 - mp.mpf(1) / 100)


@pytest.mark.parametrize("q, sigma, h, budget", [
    (Fraction("0.00000864"), Fraction("0.0684"), Fraction(1, 80), Fraction(1, 10**12)),  # a sliver and far hits
    (Fraction(256, 60000), Fraction(11, 10), Fraction(1, 2000), Fraction(1, 10**20)),
    (Fraction(1, 10**6), Fraction(100), Fraction(1, 10**10), Fraction(1, 10**25)),
    (Fraction(1, 10**4), Fraction(1), Fraction(25, 10**6), Fraction(1, 10**22)),  # anchored, H'' peaks in cell 0
])
def test_the_points_skipped_lie_within_the_budget_of_each_chord(q, sigma, h, budget):
    # the chord between consecutive evaluated points stays within the budget of the exact curve (closed form),
    # checked at the midpoint and the quarter points of every span of two or more cells
    grid = grid_range(q, sigma, h, budget)
    ks = grid_points(q, sigma, grid, budget)
    assert ks[0] == grid.k_lo and ks[-1] == grid.k_hi and len(ks) < grid.size
    a = mp.mpf(grid.anchor.numerator) / grid.anchor.denominator
    hm = mp.mpf(h.numerator) / h.denominator
    spans = [(k0, k1) for k0, k1 in zip(ks, ks[1:]) if k1 - k0 > 1]
    for k0, k1 in spans[:: max(1, len(spans) // 60)]:
        x0, x1 = a * mp.exp(k0 * hm), a * mp.exp(k1 * hm)
        h0, h1 = step_curve_closed(q, sigma, x0), step_curve_closed(q, sigma, x1)
        for f in (mp.mpf(1) / 4, mp.mpf(1) / 2, mp.mpf(3) / 4):
            x = x0 + f * (x1 - x0)
            assert h0 + f * (h1 - h0) - step_curve_closed(q, sigma, x) <= mp.mpf(budget.numerator) / budget.denominator


def test_a_grid_without_a_verified_dominated_pair_gives_the_trivial_lower_bound(monkeypatch):
    from rdp_verify.pld import pairs as module

    def refuse(curve, c):
        raise module.LowerPairError("forced")

    monkeypatch.setattr(module, "_lower_masses", refuse)
    step = discretize(Fraction(1, 100), Fraction(1), grid_range(Fraction(1, 100), Fraction(1), Fraction(1, 100),
                                                               Fraction(1, 10**20)), 96)
    assert set(step.remove_lower) == set(step.add_lower) == {0} and "refused" in step.checks["lower_pair"]
    assert sum(step.remove_upper) > 0  # the upper pair is unaffected
