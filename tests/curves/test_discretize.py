"""The two discrete pairs bracket one step's curve everywhere: H_lower ≤ H ≤ H_upper on [0, ∞).

Dominance is what every bound rests on (Blackwell), so it is checked directly: the curves of the
fixed-point pairs are rebuilt from their integer masses and compared with the exact curve
(tests/curve_oracles.py) at points between the grid points, near the support's lower edge 1 − q,
in the tails and beyond the grid, for both directions.
"""

from fractions import Fraction

import mpmath as mp
import pytest
from curve_oracles import step_curve, step_curve_closed

from rdp_verify.curves.discretize import Grid, StepPLD, discretize, grid_range

CASES = [
    (Fraction(1, 100), Fraction(1), Fraction(1, 1000)),
    (Fraction(256, 60000), Fraction(11, 10), Fraction(1, 1000)),
    (Fraction(1, 2), Fraction(2, 3), Fraction(2, 1000)),
    (Fraction(1), Fraction(3), Fraction(5, 1000)),
    (Fraction(1, 10**6), Fraction(10), Fraction(1, 10000)),
    (Fraction(9, 10), Fraction(1, 2), Fraction(1, 100)),
]


@pytest.fixture(scope="module", params=CASES, ids=lambda c: f"q={c[0]},sigma={c[1]},h={c[2]}")
def step(request) -> StepPLD:
    q, sigma, h = request.param
    return discretize(q, sigma, grid_range(q, sigma, h, 1e-25), 96)


_SUFFIX: dict = {}


def _suffix_sums(step: StepPLD, direction: str, bound: str):
    """Losses in increasing order with Σ_{i ≥ j} m_i and Σ_{i ≥ j} m_i e^{−ℓ_i} (mpmath, cached)."""
    key = (id(step), direction, bound)
    if key not in _SUFFIX:
        g, scale = step.grid, mp.mpf(2) ** step.bits
        h = mp.mpf(g.h.numerator) / g.h.denominator
        masses = list(getattr(step, f"{direction}_{bound}"))
        ks = list(range(g.k_lo, g.k_hi + 1))
        if direction == "add":  # the add pair's atoms sit at −kh
            ks, masses = [-k for k in reversed(ks)], list(reversed(masses))
        a, b, sums = mp.mpf(0), mp.mpf(0), []
        for k, m in zip(reversed(ks), reversed(masses)):
            a += mp.mpf(m) / scale
            b += mp.mpf(m) / scale * mp.exp(-k * h)
            sums.append((k * h, a, b))
        _SUFFIX[key] = list(reversed(sums))
    return _SUFFIX[key]


def _curve(step: StepPLD, direction: str, bound: str, x):
    """H(x) = Σ_k m_k (1 − x·e^{−ℓ_k})_+ + m_∞ of a fixed-point pair: A_j − x·B_j over the losses above log x."""
    inf = getattr(step, f"{direction}_upper_inf") if bound == "upper" else 0
    total = mp.mpf(inf) / mp.mpf(2) ** step.bits
    if x == 0:
        return total + _suffix_sums(step, direction, bound)[0][1]
    log_x = mp.log(x)
    for loss, a, b in _suffix_sums(step, direction, bound):  # the first loss above log x
        if loss > log_x:
            return total + a - x * b
    return total


def _points(step: StepPLD) -> list:
    g, h = step.grid, float(step.grid.h)
    ks = [g.k_lo - 3, g.k_lo, g.k_lo + 1, -2, -1, 0, 1, 2, 3, 7, 20, g.k_hi // 4, g.k_hi // 2, g.k_hi - 1, g.k_hi + 5]
    eps = sorted({k * h for k in ks} | {(k + f) * h for k in ks for f in (0.13, 0.5, 0.91)})
    if step.q < 1:  # around the support's lower edge x = 1 − q
        edge = float(mp.log(1 - mp.mpf(step.q.numerator) / step.q.denominator))
        eps += [edge - h / 3, edge + h / 7, edge + h / 2, edge + 1.5 * h, edge + 3.3 * h]
    return [mp.exp(mp.mpf(e)) for e in eps] + [mp.mpf(0), mp.mpf(10) ** -30]


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
        step = discretize(q, sigma, grid_range(q, sigma, h, 1e-25), 96)
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


def test_grid_must_straddle_zero():
    with pytest.raises(ValueError):
        Grid(Fraction(1, 100), 1, 10)
