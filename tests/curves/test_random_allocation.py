"""Random allocation (balls-in-bins, zero-out): the remove-direction moment against an independent partition sum,
quadrature, a Monte Carlo, and the peer package's RDP; the add direction's Rényi DP (Laplace transform of the
lognormal) against quadratures of ψ and of the double integral, a direct tensor quadrature at t ≤ 3, a Monte Carlo,
coarse rules that only their error terms keep above, and the multi-epoch ends against Feldman & Shenfeld's."""

import importlib
import json
import math
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

import mpmath as mp
import pytest
from flint import arb, ctx
from mutations import edited

from rdp_verify.curves.certificate import certify_run, check_run_certificate
from rdp_verify.curves.random_allocation import AllocationBound, LaplaceBound, add_log_integral, add_rdp, remove_moment
from rdp_verify.foundations.run import Phase


def optional_peer(module: str):
    """The random-allocation package, an optional peer outside the ``peers`` extra (it pins numpy < 2.2, see
    docs/samplers.md): skipped when absent, also under RDP_VERIFY_REQUIRE_PEERS (tests/conftest.py)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        pytest.skip("optional peer random-allocation absent (pip install --no-deps random-allocation==1.0.5)")

DELTA = Fraction(1, 10**5)


def phase(epochs, sigma="0.6", t=100, sampler="balls-in-bins"):
    return Phase(Fraction(1, t), Fraction(sigma), epochs * t, sampler, "add-remove", 600, 600 * t)


def _partitions(n, largest=None):
    largest = n if largest is None else largest
    if n == 0:
        yield ()
        return
    for k in range(min(n, largest), 0, -1):
        for rest in _partitions(n - k, k):
            yield (k,) + rest


def partition_sum(t, sigma, alpha):
    """t^−α Σ_λ (t)_ℓ/Π m_v! · α!/Π λ_i! · e^{Σ λ_i(λ_i−1)/(2σ²)} (Feldman & Shenfeld's form), in mpmath."""
    total = mp.mpf(0)
    for lam in _partitions(alpha):
        if len(lam) > t:
            continue
        mult = mp.mpf(1)
        for v in set(lam):
            mult /= mp.factorial(lam.count(v))
        falling = mp.ff(t, len(lam))
        multinomial = mp.factorial(alpha) / mp.fprod(mp.factorial(k) for k in lam)
        total += falling * mult * multinomial * mp.exp(sum(k * (k - 1) for k in lam) / (2 * mp.mpf(sigma.numerator) ** 2 / sigma.denominator ** 2))
    return total / mp.mpf(t) ** alpha


@pytest.mark.parametrize("t", [1, 2, 3, 100])
@pytest.mark.parametrize("alpha", [2, 3, 5, 8])
def test_the_moment_encloses_the_partition_sum(t, alpha):
    with mp.workdps(40):
        reference = partition_sum(t, Fraction(6, 10), alpha)
        ball = remove_moment(t, Fraction(6, 10), alpha)
        with ctx.workprec(192):  # the ends at the ball's own precision
            lo, hi = (mp.mpf(x.str(45, radius=False)) for x in (ball.lower(), ball.upper()))
        slack = reference * mp.mpf(10) ** -35  # the decimal printing of the ends
        assert lo - slack <= reference <= hi + slack
        assert hi - lo <= reference * mp.mpf(10) ** -30


@pytest.mark.parametrize("alpha", [2, 3, 4])
def test_the_moment_is_the_integral_for_two_steps(alpha):
    """E_Q[(P/Q)^α] by 2-D Gauss–Hermite quadrature of the definition (120 nodes a side, tensor product),
    P = (N(e_1) + N(e_2))/2, Q = N(0, I), σ = 1; the integrand is smooth and decays like a Gaussian."""
    np = pytest.importorskip("numpy")
    nodes, weights = np.polynomial.hermite_e.hermegauss(120)  # ∫ f(x) e^{−x²/2} dx ≈ Σ w f(x)
    weights = weights / np.sqrt(2 * np.pi)  # expectations under N(0, 1)
    x, y = np.meshgrid(nodes, nodes, indexing="ij")
    ratio = (np.exp(x - 0.5) + np.exp(y - 0.5)) / 2
    value = float(np.einsum("i,j,ij->", weights, weights, ratio**alpha))
    ball = remove_moment(2, Fraction(1), alpha)
    assert abs(value - float(ball.mid())) <= value * 1e-10


def test_the_moment_agrees_with_a_monte_carlo_at_t_100():
    """α = 2, t = 100, σ = 2: the sample mean of (P/Q)² under Q within 5 standard errors."""
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(3)
    sigma, t, n = 2.0, 100, 200_000
    z = rng.normal(0, sigma, size=(n, t))
    ratio = np.exp((z - 0.5) / sigma**2).mean(axis=1) ** 2
    mean, se = ratio.mean(), ratio.std() / np.sqrt(n)
    exact = float(remove_moment(t, Fraction(2), 2).mid())
    assert abs(mean - exact) <= 5 * se


# slow: the remove direction's moment against Feldman & Shenfeld's sum over partitions (what the peer evaluates) is
# test_the_moment_encloses_the_partition_sum (t = 100, σ = 0.6 among its cases, default run); importing the optional
# peer costs 2 CPU-s
@pytest.mark.slow
def test_the_peer_packages_remove_rdp():
    direct = optional_peer("random_allocation.random_allocation_scheme.direct")
    for alpha in (2, 3, 5, 10, 20):
        with ctx.workprec(192):
            ours = float((remove_moment(100, Fraction(6, 10), alpha).log() / (alpha - 1)).mid())
        assert ours == pytest.approx(direct.allocation_RDP_remove(alpha=alpha, sigma=0.6, num_steps=100), rel=1e-9)


# -- the add direction: Rényi DP of the exact pair through the Laplace transform of the lognormal ------------------

SIGMA = Fraction(3, 5)
# random-allocation 1.0.5, allocation_epsilon_combined (orders 2..60), t = 100, σ = 0.6, δ = 1e-5 (tests below re-run it)
PEER_COMBINED = {1: 4.101261242863361, 3: 5.735696831582347, 5: 6.358367065941982, 10: 7.91504265184107}
DATA = Path(__file__).parent / "data"


def _moments(sigma):
    s = 1 / float(sigma)
    return s, -s * s / 2


@lru_cache(maxsize=None)
def psi_reference(v, sigma=SIGMA):
    """ψ(v) = E[exp(−v·e^{μ+sZ})] by mpmath's tanh-sinh quadrature on 56 pieces of [−40, 15] (30 digits),
    computed once per v for the module (the trapezoid, coarse-rule and Markov tests read the same points; an mpf
    is immutable)."""
    with mp.workdps(30):
        s = mp.mpf(sigma.denominator) / sigma.numerator
        mu = -s * s / 2
        return mp.quad(lambda x: mp.npdf(x) * mp.exp(-mp.mpf(v) * mp.exp(mu + s * x)), mp.linspace(-40, 15, 56))


@lru_cache(maxsize=None)
def log_integral_reference(t, sigma, k, low=None, high=None):
    """log ∫ u^{k−1}·ψ(u/t)^t du over [low, high] (default (0, ∞)) by SciPy's adaptive QUADPACK twice: ψ over
    the normal variable (split where v·e^{μ+sx} ≈ 1), then over y = log u (computed once per argument for the
    module: the coarse-grid test and the add RDP at α = 8 read the same integral, k = 7)."""
    integrate = pytest.importorskip("scipy.integrate")
    s, mu = _moments(sigma)

    def log_psi(v):
        x0 = min(max((-math.log(v) - mu) / s, -12), 12)
        pieces = sorted({-12.0, x0 - 3, x0, x0 + 3, 12.0})
        pieces = [min(max(p, -12.0), 12.0) for p in pieces]
        total = sum(integrate.quad(lambda x: math.exp(-x * x / 2 - v * math.exp(mu + s * x)), a, b,
                                   epsabs=0, epsrel=1e-12, limit=200)[0] for a, b in zip(pieces, pieces[1:]) if b > a)
        return math.log(total / math.sqrt(2 * math.pi))

    f = [lambda y: k * y + t * log_psi(math.exp(y) / t)]
    y_low = -40 / k - 5 if low is None else math.log(low)
    y_high = math.log(high) if high is not None else 12.0
    grid = [y_low + (y_high - y_low) * i / 40 for i in range(41)]
    top = max(f[0](y) for y in grid)
    total = sum(integrate.quad(lambda y: math.exp(f[0](y) - top), a, b, epsabs=0, epsrel=1e-10, limit=200)[0]
                for a, b in zip(grid, grid[1:]))
    return top + math.log(total)


def rdp_reference(t, sigma, alpha):
    k = float(alpha) - 1
    return (log_integral_reference(t, sigma, k) - math.lgamma(k)) / k


def ends(ball):
    """The ball's two ends as mpmath numbers (35 digits: far finer than any comparison below)."""
    with ctx.workprec(192):
        return tuple(mp.mpf(x.str(35, radius=False)) for x in (ball.lower(), ball.upper()))


def ball(text):
    with ctx.workprec(192):
        return arb(text)


@pytest.mark.parametrize("v", ["0.01", "0.3", "1", "3", "10", "30", "1000", "1e6"])
def test_the_trapezoid_bound_encloses_psi(v):
    reference = psi_reference(v)
    low, high = ends(LaplaceBound(SIGMA).trapezoid(ball(v)))
    assert low >= reference * (1 - mp.mpf(10) ** -20)  # above ψ (up to the reference's own digits) and tight
    assert high <= reference * (1 + mp.mpf(10) ** -12) + mp.mpf(10) ** -40


# slow: h = 1/2 takes the same discretisation-term path as h = 1 ({"n": 1}, default run)
@pytest.mark.parametrize("coarse", [{"n": 1}, pytest.param({"n": 2}, marks=pytest.mark.slow), {"width": 1}])
def test_a_coarse_rule_still_bounds_psi_through_its_error_terms(coarse):
    """h = 1, h = 1/2 or the nodes |x| ≤ 1 only: the raw sum falls below ψ somewhere (so the strip theorem's
    discretisation term or the truncation term is what keeps it an upper bound: dropping it fails here)."""
    rule = LaplaceBound(SIGMA, **coarse)
    term = ends(rule.truncation if "width" in coarse else rule.discretisation)[0]
    below = 0
    for v in ["0.01", "0.3", "1", "3", "10", "30"]:
        reference = psi_reference(v)
        low = ends(rule.trapezoid(ball(v)))[0]
        assert low >= reference * (1 - mp.mpf(10) ** -20)
        below += low - term < reference
    assert below >= 1


@pytest.mark.parametrize("v", ["2", "10", "1000", "1e6", "1e12"])
def test_markovs_bound_is_above_psi(v):
    rule = LaplaceBound(SIGMA)
    reference = mp.log(psi_reference(v))
    assert ends(rule.log_markov(ball(v)))[0] >= reference
    if v == "1e12":  # where the trapezoid's absolute e^-100 dominates, Markov's bound is used: within a factor 10
        t_log = ends(rule.t_log(Fraction(10**12), 1))[0]
        assert reference < t_log < reference + mp.log(10)


# slow: α = 2 takes the same Laplace-transform bound, between α = 5/4 and α = 8 (default run)
@pytest.mark.parametrize("alpha", [Fraction(5, 4), pytest.param(Fraction(2), marks=pytest.mark.slow), Fraction(8),
                                   Fraction(32)])
def test_the_add_rdp_is_above_a_quadrature_of_the_exact_pair_and_close(alpha):
    """t = 100, σ = 0.6: the proven Rényi divergence is above SciPy's quadrature of the same double integral and
    within 1 % of it (the chords lose 0.03–0.45 %)."""
    reference = rdp_reference(100, SIGMA, alpha)
    proven = float(add_rdp(100, SIGMA, alpha))
    assert reference * (1 - 1e-9) <= proven <= reference * 1.01


def direct_moment(t, sigma, k, nodes):
    """E[S^{−k}], S the mean of t lognormals LN(−s²/2, s²), by a t-fold tensor Gauss–Hermite rule in the normals
    (the definition, not the Laplace transform)."""
    np = pytest.importorskip("numpy")
    s, mu = _moments(sigma)
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / np.sqrt(2 * np.pi)
    grids = np.meshgrid(*([x] * t), indexing="ij")
    weights = np.ones_like(grids[0])
    for i in range(t):
        weights = weights * w.reshape([-1 if j == i else 1 for j in range(t)])
    mean = sum(np.exp(mu + s * g) for g in grids) / t
    return float(np.sum(weights * mean ** (-k)))


# slow: α = 2 and 3 take the same rule as α = 5/4 and 8 (default run, at every t)
@pytest.mark.parametrize("t, nodes", [(1, 120), (2, 120), (3, 60)])
@pytest.mark.parametrize("alpha", [Fraction(5, 4), pytest.param(Fraction(2), marks=pytest.mark.slow),
                                   pytest.param(Fraction(3), marks=pytest.mark.slow), Fraction(8)])
def test_the_add_rdp_against_a_direct_quadrature_at_small_t(t, nodes, alpha):
    k = float(alpha) - 1
    if t == 1:  # the Gaussian mechanism: E[X^{-k}] = e^{s²k(k+1)/2}, D_α = α/(2σ²); the rule agrees
        assert direct_moment(1, SIGMA, k, nodes) == pytest.approx(math.exp(k * (k + 1) / (2 * float(SIGMA) ** 2)),
                                                                  rel=1e-10)
    reference = math.log(direct_moment(t, SIGMA, k, nodes)) / k
    proven = float(add_rdp(t, SIGMA, alpha))
    assert reference * (1 - 1e-9) <= proven <= reference * 1.005


@pytest.mark.parametrize("alpha", [2, 3])
def test_the_add_rdp_against_a_monte_carlo_at_t_100(alpha):
    """E[S^{−k}] at t = 100, σ = 0.6 by 10^5 seeded samples of the exact pair's likelihood ratio under Q: the proven
    moment is above the sample mean's lower 5-standard-error end, and within 20 % of the RDP estimate."""
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(28)
    s, mu = _moments(SIGMA)
    k, t, n = alpha - 1, 100, 100_000
    values = np.concatenate([np.exp(mu + s * rng.standard_normal((20_000, t))).mean(axis=1) ** (-k)
                             for _ in range(n // 20_000)])
    mean, se = values.mean(), values.std() / math.sqrt(n)
    proven = float(add_rdp(t, SIGMA, Fraction(alpha)))
    assert math.exp(k * proven) >= mean - 5 * se
    assert proven <= 1.2 * math.log(mean) / k


def test_a_coarse_grid_and_an_early_tail_still_bound_the_integral():
    """level 0 (one cell per binade: chords across a factor 2), the grid stopped at u = 2^3, where most of the mass
    is still to come (k = 7, t = 100), or stopped as soon as the tail bound is below half the sum: the tail bound
    carries what is left. Dropping the tail, or evaluating ψ at each cell's right end instead of using the chord
    through both, falls below the reference here."""
    k = Fraction(7)
    reference = log_integral_reference(100, SIGMA, float(k))
    head = log_integral_reference(100, SIGMA, float(k), high=8)
    assert head < reference - 1  # the first six binades hold under e^-1 of the integral
    for level, binades, stop in ((0, 200, 40), (3, 6, 40), (0, 6, 40), (3, 200, 1)):
        bound = ends(add_log_integral(100, SIGMA, k, level=level, binades=binades, stop=stop))[0]
        assert bound >= reference
        if stop == 1:  # stopped where the tail bound was still up to half the sum
            assert bound < reference + 1
    assert ends(add_log_integral(100, SIGMA, k, level=0))[0] < reference + 0.2  # coarse, yet not far off


# slow: the tail from 2^6 takes the same bound as from 2^3 and 2^9 (default run)
@pytest.mark.parametrize("e", [3, pytest.param(6, marks=pytest.mark.slow), 9])
def test_the_tail_bound_is_above_the_tail(e):
    k = 7
    reference = log_integral_reference(100, SIGMA, k, low=2**e)
    assert ends(LaplaceBound(SIGMA).log_tail(100, ball(str(k)), e))[0] >= reference


@pytest.mark.parametrize("epochs", [1, 3, 5, 10])
def test_the_multi_epoch_upper_end_reaches_feldman_and_shenfeld(epochs):
    """t = 100, σ = 0.6, δ = 1e-5: our upper end is at or below their combined bound (ours its proven rounding up,
    1e-12), at 5 and 10 epochs too, where the add direction's Rényi DP (not the shifted Gaussian) keeps the add
    direction below the remove direction."""
    bound = AllocationBound((phase(epochs),))
    remove_order, add_order, value = bound.epsilon_orders(DELTA)
    assert float(value) <= PEER_COMBINED[epochs] * (1 + 1e-12)
    assert value == bound.remove_epsilon(DELTA, remove_order)
    if epochs >= 5:
        assert add_order is not None and bound.shifted_epsilon(DELTA) > value
        assert bound.add_rdp_epsilon(DELTA, add_order) < value < bound.shifted_epsilon(DELTA)


def test_the_records_without_an_add_order_keep_the_shifted_gaussian():
    """epsilon()/delta() (what tradeoff's recorded remove orders were computed with) stay the bound before the
    Rényi add direction: max(remove, shifted Gaussian)."""
    bound = AllocationBound((phase(10),))
    assert bound.epsilon(DELTA, 3) == (3, max(bound.remove_epsilon(DELTA, 3), bound.shifted_epsilon(DELTA)))
    assert bound.delta(Fraction(8), 3)[1] == max(bound.remove_delta(Fraction(8), 3), bound.shifted_delta(Fraction(8)))


@pytest.mark.slow
def test_the_peer_packages_combined_bound_live():
    structs = optional_peer("random_allocation.comparisons.structs")
    combined = optional_peer("random_allocation.random_allocation_scheme.combined")
    config = structs.SchemeConfig(allocation_direct_alpha_orders=list(range(2, 61)))
    for epochs, value in PEER_COMBINED.items():
        params = structs.PrivacyParams(sigma=0.6, num_steps=100, num_selected=1, num_epochs=epochs, delta=1e-5)
        assert combined.allocation_epsilon_combined(params, config) == pytest.approx(value, rel=1e-9)


@pytest.fixture(scope="module")
def five_epochs():
    return certify_run([phase(5)], delta=DELTA)


def test_the_add_order_is_recorded_named_and_rechecked(five_epochs):
    cert = five_epochs
    assert cert["settings"]["upper_random_allocation_order"] == 3
    assert cert["settings"]["upper_random_allocation_add_order"] == "9"
    assert "Laplace transform of the lognormal" in cert["proofs"]["upper"]
    assert Fraction(cert["epsilon"]["upper"]) <= Fraction(PEER_COMBINED[5]) * (1 + Fraction(1, 10**11))  # 12 digits, up
    assert check_run_certificate(json.loads(json.dumps(cert))) == []


# slow: 1000, like 7/3 (default run), is not an order tried
@pytest.mark.parametrize("edit", [("1.25",), ("7/3",), pytest.param(("1000",), marks=pytest.mark.slow), (None,)])
def test_a_forged_or_dropped_add_order_is_caught(five_epochs, edit):
    """1.25: an order of ADD_ORDERS at which the add direction is far above the claimed end (ε ≈ 46); 7/3 and 1000:
    not orders tried; dropped: the shifted Gaussian, above the claimed end. (An order at which the add direction is
    still below the remove direction, such as 8, proves the same end: check confirms it.)"""
    (value,) = edit
    cert = json.loads(json.dumps(five_epochs))
    if value is None:  # dropped: the shifted Gaussian, 8.31 > the certificate's 6.36
        del cert["settings"]["upper_random_allocation_add_order"]
        problems = check_run_certificate(edited(cert, "settings.mu_squared_upper", cert["settings"]["mu_squared_upper"]))
    else:
        problems = check_run_certificate(edited(cert, "settings.upper_random_allocation_add_order", value))
    assert problems


@pytest.mark.parametrize("name", ["balls-in-bins-10-epochs-before-renyi-add.json",
                                  "balls-in-bins-delta-before-renyi-add.json"])
def test_certificates_from_before_the_renyi_add_direction_still_check(name):
    """Made by rdp_verify 0.2.0 before this change (ε at 10 epochs of t = 100, σ = 0.6; δ(1) of the golden run):
    no add order recorded, so check recomputes the shifted Gaussian and the same cross-check."""
    cert = json.loads((DATA / name).read_text(encoding="utf-8"))
    assert "upper_random_allocation_add_order" not in cert["settings"]
    assert check_run_certificate(cert) == []


def test_no_renyi_add_direction_where_the_rule_would_need_too_many_nodes():
    """σ = 0.05 would need 6021 trapezoid nodes: no Rényi bound (the work stays bounded, for check too); the add
    direction is the shifted Gaussian there."""
    assert add_rdp(100, Fraction(1, 20), Fraction(2)) is None
    bound = AllocationBound((phase(10, sigma="0.05"),))
    assert bound.add_rdp_epsilon(DELTA, Fraction(2)) is None
    assert bound.add_epsilon(DELTA) == (None, bound.shifted_epsilon(DELTA))
