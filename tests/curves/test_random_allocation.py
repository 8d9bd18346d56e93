"""Random allocation (balls-in-bins, zero-out): the remove-direction moment against an independent partition sum,
quadrature, a Monte Carlo, and the peer package's RDP."""

import importlib
from fractions import Fraction

import mpmath as mp
import pytest
from flint import ctx

from rdp_verify.curves.random_allocation import remove_moment
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


def test_the_peer_packages_remove_rdp():
    direct = optional_peer("random_allocation.random_allocation_scheme.direct")
    for alpha in (2, 3, 5, 10, 20):
        with ctx.workprec(192):
            ours = float((remove_moment(100, Fraction(6, 10), alpha).log() / (alpha - 1)).mid())
        assert ours == pytest.approx(direct.allocation_RDP_remove(alpha=alpha, sigma=0.6, num_steps=100), rel=1e-9)
