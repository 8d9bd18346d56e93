"""Composition, RDP → (ε, δ) conversions and the optimal-order branch and bound.

Reference values come from hand derivations (stated in each test), from an
independent float computation of ε_α by scipy quadrature (below), from the
binomial-sum oracle of tests/oracles.py, and from dp_accounting's conversion
formulas (a peer library, where installed).
"""

import math
import warnings
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from oracles import binomial_log_a, mp
from scipy.integrate import IntegrationWarning, quad

from rdp_verify.accounting.optimal_order import optimal_epsilon
from rdp_verify.accounting.order_lists import ORDER_LISTS
from rdp_verify.accounting.rdp import (
    composed_rdp,
    conversion_offset,
    delta_from_rdp,
    epsilon_at_orders,
    epsilon_from_rdp,
    step_rdp,
)
from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.results import Bounded
from rdp_verify.foundations.run import Phase

F = Fraction
EXACT = Bounded(F(1), F(0))  # R = 1 exactly


def _quad(f, lo: float, hi: float, points: list[float]) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IntegrationWarning)
        return quad(f, lo, hi, points=points, limit=500, epsabs=0, epsrel=1e-10)[0]


def float_epsilon(q: float, sigma: float, alpha: float) -> float:
    """ε_α = log A_α/(α − 1) in floats, independent of the package.

    A_α = ∫ μ0(z)·w(z)^α dz with w = 1 + q·expm1((2z − 1)/(2σ²)) (MTZ19 Section 3),
    integrated by scipy's QUADPACK with breakpoints at 0, 1/2, α and z1: as
    1 + ∫ μ0·(w^α − 1) when A_α is near 1 (no cancellation), else with the integrand
    scaled by its maximum. B_α ≤ A_α (MTZ19 Theorem 5 / Corollary 7), so A_α decides
    ε_α. Agrees with the rigorous engine to ~1e-12 relative for the (q, σ, α) used here
    (test_float_oracle_agrees_with_engine); near α = 1 QUADPACK warns of roundoff at
    that level, which is below what the tests resolve, so the warning is silenced.
    """
    s2 = sigma * sigma

    def log_terms(z: float) -> tuple[float, float]:
        return -z * z / (2 * s2), alpha * math.log1p(q * math.expm1((2 * z - 1) / (2 * s2)))

    z1 = 0.5 + s2 * math.log(1 / q - 1)
    lo, hi = -40 * sigma, max(alpha, z1, 0.0) + 40 * sigma
    points = [p for p in sorted({0.0, 0.5, alpha, z1}) if lo < p < hi]
    norm = sigma * math.sqrt(2 * math.pi)
    # the integrand's largest log on 4001 equispaced points (a scale for the quadrature, not a result): the same
    # log_terms, vectorised in numpy (the Python loop was 85 % of the optimal-order tests' time)
    zs = np.linspace(lo, hi, 4001)
    peak = float(np.max(-zs * zs / (2 * s2) + alpha * np.log1p(q * np.expm1((2 * zs - 1) / (2 * s2)))))
    if peak > 1:  # A_α is large: integrate w^α scaled by its peak
        value = _quad(lambda z: math.exp(sum(log_terms(z)) - peak), lo, hi, points)
        return (peak + math.log(value / norm)) / (alpha - 1)

    def excess(z: float) -> float:  # μ0·(w^α − 1), unnormalised
        g, t = log_terms(z)
        return math.exp(g + t) - math.exp(g) if t > 1 else math.exp(g) * math.expm1(t)

    value = _quad(excess, lo, hi, points)
    return math.log1p(value / norm) / (alpha - 1)


def float_conversion(conversion: str, alpha: float, delta: float) -> float:
    if conversion == "mironov2017":
        return math.log(1 / delta) / (alpha - 1)
    return math.log1p(-1 / alpha) - (math.log(delta) + math.log(alpha)) / (alpha - 1)


def contains(b: Bounded, x, slack=0) -> bool:
    return b.lower - slack <= x <= b.upper + slack


# -- conversions ------------------------------------------------------------------------------

@pytest.mark.parametrize("conversion, alpha, delta, hand", [
    # Mironov 2017 Prop. 3: c = log(1/δ)/(α − 1); at α = 2, δ = 1/2: log 2
    ("mironov2017", F(2), F(1, 2), lambda: mpmath.log(2)),
    ("mironov2017", F(11, 10), F(1, 10**5), lambda: mpmath.log(10**5) / mpmath.mpf("0.1")),
    # Balle et al. 2020 Thm 21 at α = 2, δ = 1/2: log(1/2) − (log(1/2) + log 2)/1 = −log 2
    ("balle2020", F(2), F(1, 2), lambda: -mpmath.log(2)),
    # at α = 3, δ = 1/9: log(2/3) − (−2 log 3 + log 3)/2 = log(2/3) + log(3)/2
    ("balle2020", F(3), F(1, 9), lambda: mpmath.log(mpmath.mpf(2) / 3) + mpmath.log(3) / 2),
])
def test_conversion_matches_hand_derivation(conversion, alpha, delta, hand):
    with mpmath.workdps(60):
        expected = 1 + hand()
        eps = epsilon_from_rdp(EXACT, alpha, delta, conversion)
        assert mp(eps.lower) <= expected <= mp(eps.upper)
        assert eps.upper - eps.lower < F(1, 10**45)  # the outward rounding is tight


def test_upper_end_uses_upper_rdp_and_rounds_outward():
    rdp = Bounded(F(1), F(1, 10))  # R ∈ [0.9, 1.1]
    c = conversion_offset("mironov2017", F(5), F(1, 10**5))
    eps = epsilon_from_rdp(rdp, F(5), F(1, 10**5), "mironov2017")
    assert eps.upper == F(11, 10) + c.upper and eps.lower == F(9, 10) + c.lower
    with mpmath.workdps(60):
        exact_c = mpmath.log(10**5) / 4
        assert mp(c.lower) <= exact_c <= mp(c.upper) and c.error > 0  # an irrational enclosed, not rounded


def test_conversions_agree_with_dp_accounting():
    rdp = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    orders, values, delta = [1.5, 2.0, 8.8, 32.0], [0.01, 0.3, 1.5, 7.25], 1e-5
    for a, r in zip(orders, values):
        ours = epsilon_from_rdp(Bounded(F(r), F(0)), F(a), F(delta), "balle2020")
        # dp_accounting's compute_epsilon is the Balle et al. formula (its 'Proposition 12' comment)
        theirs, _ = rdp.compute_epsilon([a], [r], delta)
        assert contains(ours, F(theirs), slack=F(1, 10**12))
        eps = 2.0
        ours_d = delta_from_rdp(Bounded(F(r), F(0)), F(a), F(eps), "balle2020")
        log_theirs = (a - 1) * (r - eps + math.log1p(-1 / a)) - math.log(a)  # dp_accounting compute_delta
        assert contains(ours_d, F(min(math.exp(log_theirs), 1.0)), slack=F(1, 10**12) * max(ours_d.upper, F(1, 10**30)))


@pytest.mark.parametrize("conversion", ["mironov2017", "balle2020"])
def test_reverse_conversion_round_trip(conversion):
    rdp, alpha, delta = Bounded(F(3, 2), F(1, 10**20)), F(13, 2), F(1, 10**6)
    eps = epsilon_from_rdp(rdp, alpha, delta, conversion)
    back = delta_from_rdp(rdp, alpha, eps.upper, conversion)
    # δ(ε_upper) ≤ δ: both directions are rounded the safe way
    assert back.upper <= delta * (1 + F(1, 10**30)) and back.upper >= delta * (1 - F(1, 10**15))
    assert delta_from_rdp(Bounded(F(10**6), F(0)), alpha, F(1), conversion) == Bounded(F(1), F(0))  # clipped at 1


@pytest.mark.parametrize("delta", [F(0), F(1), F(3, 2), F(-1, 10)])
def test_bad_delta_refused(delta):
    with pytest.raises(InputError):
        epsilon_from_rdp(EXACT, F(2), delta, "mironov2017")


def test_bad_conversion_epsilon_and_steps_refused():
    with pytest.raises(InputError, match="conversion"):
        epsilon_from_rdp(EXACT, F(2), F(1, 2), "renyi")
    with pytest.raises(InputError, match="non-negative"):
        delta_from_rdp(EXACT, F(2), F(-1), "balle2020")
    for steps in (0, -3, True, 2.5):
        with pytest.raises(InputError):
            Phase(F(1, 100), F(4), steps)


@pytest.mark.parametrize("q, sigma, order, message", [
    (F(1, 10**15), F(1), F(2), "below the supported minimum"),
    (F(1, 100), F(1, 100), F(2), "outside the supported range"),
    (F(1, 100), F(10**5), F(2), "outside the supported range"),
    (F(1, 100), F(1), F(10**7), "above the supported maximum"),
    (F(1, 100), F(1), 1 + F(1, 10**12), "closer to 1"),
])
def test_outside_the_supported_domain_refused(q, sigma, order, message):
    with pytest.raises(InputError, match=message):
        epsilon_at_orders([Phase(q, sigma, 10)], F(1, 10**5), "mironov2017", [order])


def test_floats_refused_with_an_input_error():
    with pytest.raises(InputError, match="exact rational"):
        epsilon_from_rdp(EXACT, F(2), 1e-5, "mironov2017")
    with pytest.raises(InputError, match="exact rational"):
        delta_from_rdp(EXACT, 2.5, F(1), "balle2020")


def test_delta_far_below_every_double_stays_a_small_exact_bound():
    # λ(R − ε) ≈ −10^5: δ is reported as [0, e^−10000], not as an exact e^−10^5 with a
    # 144 000-bit denominator (at −10^20 the exact value would never finish)
    d = delta_from_rdp(Bounded(F(1), F(0)), F(2), F(10**5), "mironov2017")
    assert d.lower == 0 and 0 < d.upper < F(1, 10**4342) and d.upper.denominator.bit_length() < 20_000


# -- composition ------------------------------------------------------------------------------

def test_composition_adds_per_order():
    # Independent: A_2 = 1 + q²(e^{1/σ²} − 1) (hand-derived from Section 3.3), ε_2 = log A_2.
    q, sigma = F(1, 100), F(4)
    phases = [Phase(q, sigma, 300), Phase(F(1, 10), F(2), 7), Phase(q, sigma, 700)]
    total = composed_rdp(phases, F(2))
    with mpmath.workdps(50):
        def eps2(q, s):
            return mpmath.log(1 + mp(q) ** 2 * (mpmath.exp(1 / mp(s) ** 2) - 1))
        expected = 1000 * eps2(q, sigma) + 7 * eps2(F(1, 10), F(2))
        assert mp(total.lower) <= expected <= mp(total.upper)
    assert composed_rdp([Phase(q, sigma, 1000), Phase(F(1, 10), F(2), 7)], F(2)) == total
    one = step_rdp(q, sigma, F(2))
    assert composed_rdp([Phase(q, sigma, 5)], F(2)).upper == 5 * one.upper


# -- order lists ------------------------------------------------------------------------------

def test_order_lists_are_the_libraries_lists():
    assert len(ORDER_LISTS["tf_privacy_compute_dp_sgd_privacy"]) == 10 + 59 + 3
    assert ORDER_LISTS["abadi2016_moments_accountant"] == tuple(F(k) for k in range(2, 34))
    rdp = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    assert [float(a) for a in ORDER_LISTS["dp_accounting_default"]] == list(rdp.DEFAULT_RDP_ORDERS)


def test_abadi_order_list_matches_binomial_oracle():
    # Abadi et al. 2016: q = 0.01, σ = 4, T = 10000, δ = 1e-5, integer orders 2..33,
    # ε = min_α T·log A_α/(α − 1) + log(1/δ)/(α − 1); A_α by the plain binomial sum.
    phases = [Phase(F(1, 100), F(4), 10000)]
    result = epsilon_at_orders(phases, F(1, 10**5), "mironov2017", ORDER_LISTS["abadi2016_moments_accountant"])
    with mpmath.workdps(40):
        expected = min((10000 * binomial_log_a("0.01", "4", a) + mpmath.log(10**5)) / (a - 1) for a in range(2, 34))
        assert mp(result.epsilon.lower) <= expected <= mp(result.epsilon.upper)
    assert result.best_order == 20 and round(float(result.epsilon.upper), 2) == 1.26  # Abadi et al.: ε ≈ 1.26


# -- optimal order over real α ----------------------------------------------------------------

@pytest.mark.parametrize("q, sigma", [(0.01, 4.0), (256 / 60000, 1.1), (0.001, 1.0)])
@pytest.mark.parametrize("alpha", [1.05, 2.9, 8.8, 19.6, 150.0])
def test_float_oracle_agrees_with_engine(q, sigma, alpha):
    proven = step_rdp(F(q), F(sigma), F(alpha))
    assert abs(float_epsilon(q, sigma, alpha) - float(proven.value)) <= 1e-10 * float(proven.value)


def grid_minimum(phases, delta: float, conversion: str) -> tuple[float, float]:
    """min over a coarse log grid on [1.05, 200], then a fine grid around the best point."""
    def f(a: float) -> float:
        r = sum(p.steps * float_epsilon(float(p.q), float(p.sigma), a) for p in phases)
        return r + float_conversion(conversion, a, delta)

    coarse = [1 + 0.05 * (4000 ** (k / 80)) for k in range(81)]
    values = [f(a) for a in coarse]
    i = min(range(len(coarse)), key=values.__getitem__)
    lo, hi = coarse[max(i - 1, 0)], coarse[min(i + 1, len(coarse) - 1)]
    fine = [lo + (hi - lo) * k / 200 for k in range(201)]
    return min((f(a), a) for a in fine)


@pytest.mark.parametrize("phases, conversion", [
    ([Phase(F(256, 60000), F(11, 10), 14063)], "mironov2017"),  # TF Privacy MNIST
    ([Phase(F(1, 100), F(4), 10000)], "balle2020"),  # Abadi et al. 2016
    ([Phase(F(1, 100), F(2), 500), Phase(F(1, 1000), F(1), 20000)], "mironov2017"),  # two phases
    pytest.param([Phase(F(256, 60000), F(11, 10), 14063)], "balle2020", marks=pytest.mark.slow),
    pytest.param([Phase(F(1, 100), F(4), 10000)], "mironov2017", marks=pytest.mark.slow),
    pytest.param([Phase(F(1, 100), F(2), 500), Phase(F(1, 1000), F(1), 20000)], "balle2020", marks=pytest.mark.slow),
])
def test_bracket_contains_fine_grid_minimum(phases, conversion):
    opt = optimal_epsilon(phases, F(1, 10**5), conversion)
    g, at = grid_minimum(phases, 1e-5, conversion)
    lo, hi = float(opt.epsilon.lower), float(opt.epsilon.upper)
    assert opt.converged and hi - lo <= 1e-4 * hi
    assert lo <= g * (1 + 1e-9)  # nothing is below the proven lower bound
    assert hi <= g * (1 + 2e-4)  # and the found order is as good as the grid's best
    assert abs(float(opt.order) - at) <= 0.05 * at


def test_optimum_is_below_every_listed_order():
    phases = [Phase(F(256, 60000), F(11, 10), 14063)]
    opt = optimal_epsilon(phases, F(1, 10**5), "mironov2017")
    listed = epsilon_at_orders(phases, F(1, 10**5), "mironov2017", ORDER_LISTS["tf_privacy_compute_dp_sgd_privacy"])
    assert opt.epsilon.lower <= listed.epsilon.lower and opt.epsilon.upper <= listed.epsilon.upper


def test_orders_beyond_the_supported_range_leave_an_honest_bracket():
    # Optimum near α ~ 1e13 > 1e6 (at most 1e6 steps: the supported maximum): the tail bound keeps the
    # bracket proven but wide.
    phases = [Phase(F(1, 10**12), F(10**4), 10**6)]
    opt = optimal_epsilon(phases, F(1, 10**5), "mironov2017")
    assert not opt.converged and opt.order == 10**6
    # ε* ≥ 0 and, from ε_α ≥ 0 at α = 1e6 alone, ε* ≤ f(1e6) = R + log(1e5)/999999
    assert 0 <= opt.epsilon.lower < opt.epsilon.upper < F(12, 10**6)
