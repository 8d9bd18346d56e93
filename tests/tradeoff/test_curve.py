"""Derived figures of the trade-off curve: TPR at FPR, the μ bracket, the advantage, the Bayesian bound.

References: the Gaussian mechanism's closed forms in mpmath (μ-GDP exactly, Dong, Roth, Su 2022): the
advantage 2Φ(μ/2) − 1 and the Bayes-optimal test at threshold μ/2 + log((1 − π)/π)/μ.
"""

from fractions import Fraction

import mpmath as mp
import pytest

from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.run import Phase
from rdp_verify.tradeoff import tradeoff


@pytest.fixture(autouse=True)
def _digits():
    """40 digits for this module\'s mpmath references, restored after each test (a module-level mp.dps
    would depend on the order in which the test files are imported)."""
    with mp.workdps(40):
        yield


def mpq(x):
    return mp.mpf(x.numerator) / x.denominator


GAUSSIAN_RUNS = [  # (phases, μ²): q = 1, μ² = Σ Δ²T/σ² (Δ = 2 under replace-one); μ taken in the test's precision
    ([Phase(Fraction(1), Fraction(2), 4)], Fraction(1)),
    ([Phase(Fraction(1), Fraction(3), 10), Phase(Fraction(1), Fraction(1), 1)], Fraction(10, 9) + 1),
    ([Phase(Fraction(1), Fraction(5), 3, neighbours="replace-one")], Fraction(12, 25)),
]


@pytest.mark.parametrize("phases,mu2", GAUSSIAN_RUNS)
def test_gaussian_runs(phases, mu2):
    mu = mp.sqrt(mpq(mu2))
    t = tradeoff(phases)
    assert t.method == "closed form"
    assert mpq(t.mu_lower()) <= mu <= mpq(t.mu_upper())  # the μ bracket contains √T/σ
    assert mpq(t.mu_upper()) - mpq(t.mu_lower()) < 1e-12
    low, up = t.advantage()
    assert mpq(low) <= 2 * mp.ncdf(mu / 2) - 1 <= mpq(up)
    for prior in (Fraction(1, 100), Fraction(1, 2), Fraction(9, 10)):
        pi = mpq(prior)
        tau = mu / 2 + mp.log((1 - pi) / pi) / mu  # member scores N(μ, 1), non-members N(0, 1)
        success = pi * mp.ncdf(mu - tau) + (1 - pi) * mp.ncdf(tau)
        low, up = t.bayes(prior)
        assert mpq(low) - mp.mpf(10) ** -30 <= success <= mpq(up) + mp.mpf(10) ** -30
    for fpr in (Fraction(1, 10**5), Fraction(1, 10)):
        low, up = t.tpr(fpr)
        exact = 1 - mp.ncdf(mp.sqrt(2) * mp.erfinv(1 - 2 * mpq(fpr)) - mu)
        assert mpq(low) - mp.mpf(10) ** -14 <= exact <= mpq(up) + mp.mpf(10) ** -14


# slow: the TPR at FPR 1e-3 of a subsampled run is covered by docs/tradeoff.md's `tradeoff --q 0.1 --sigma 2
# --steps 100` example (test_docs, default run; this run is that page's slow example), mu_upper >= the
# no-amplification mu by test_all_steps_component_bounds_f_and_beats_every_smaller_mu (default run)
@pytest.mark.slow
def test_issue_run_tpr_at_low_fpr():
    """TF Privacy's MNIST run (q = 256/60000, σ = 1.1, T = 14063): TPR at FPR 1e-3 within a relative 1e-2."""
    t = tradeoff([Phase(Fraction(256, 60000), Fraction(11, 10), 14063)], fprs=[Fraction(1, 1000)])
    low, up = t.tpr(Fraction(1, 1000))
    assert Fraction(1, 1000) < low <= up and (up - low) / up <= Fraction(1, 100)
    mu_low, mu_up = t.mu_lower(), t.mu_upper()
    assert 0 < mu_low < mu_up and mpq(mu_up) >= mp.sqrt(14063) / mp.mpf(1.1) - 1e-9  # no amplification above
    low, up = t.advantage()
    assert 0 < low <= up < 1


def test_per_epoch_run():
    phases = [Phase(Fraction(250, 60000), Fraction(13, 10), 480, sampler="shuffle", batch_size=250, dataset_size=60000)]
    t = tradeoff(phases)
    mu = mp.sqrt(2 / mp.mpf(1.69))  # two epochs of the Gaussian mechanism (no amplification)
    for alpha in (Fraction(1, 1000), Fraction(1, 5)):
        low, up = t.f(alpha)
        exact = mp.ncdf(mp.sqrt(2) * mp.erfinv(1 - 2 * mpq(alpha)) - mu)
        assert abs(mpq(low) - exact) < 1e-12  # the lower envelope is the no-amplification Gaussian
        assert low < up < 1 - alpha  # the upper one comes from explicit-pair attacks: below the trivial 1 − α
    assert 0 < t.mu_lower() < t.mu_upper() and abs(mpq(t.mu_upper()) - mu) < 1e-12


def test_lower_hull_of_attack_points():
    from rdp_verify.tradeoff.envelope import hull_at, lower_hull

    # one attack with (α, β) = (0.1, 0.5): by symmetry also (0.5, 0.1); the hull through (0, 1) and (1, 0)
    hull = lower_hull([(Fraction(1, 10), Fraction(1, 2))])
    assert hull == [(0, 1), (Fraction(1, 10), Fraction(1, 2)), (Fraction(1, 2), Fraction(1, 10)), (1, 0)]
    assert hull_at(hull, Fraction(1, 20)) == Fraction(3, 4) and hull_at(hull, Fraction(3, 10)) == Fraction(3, 10)
    assert hull_at(hull, Fraction(1)) == 0 and hull_at(hull, Fraction(0)) == 1
    # a point above the chord of others is not a vertex
    assert (Fraction(1, 5), Fraction(1, 2)) not in lower_hull([(Fraction(1, 10), Fraction(1, 2)), (Fraction(1, 5), Fraction(1, 2))])


def test_refusals():
    t = tradeoff([Phase(Fraction(1), Fraction(2), 4)])
    for bad in (Fraction(-1), Fraction(2)):
        with pytest.raises(InputError, match="must lie in"):
            t.tpr(bad)
    for bad in (Fraction(0), Fraction(1)):
        with pytest.raises(InputError, match="prior"):
            t.bayes(bad)


def test_all_steps_component_bounds_f_and_beats_every_smaller_mu():
    """The argument behind μ* = μ₀ for Poisson add/remove, checked independently in mpmath: the test of the
    all-steps component gives f(α) ≤ h(α) = 1 − w(1 − G_μ₀(α)), w = q^T, so the proven lower envelope stays
    below h; and for μ < μ₀, h(α) < G_μ(α) at some small α."""
    q, sigma, steps = Fraction(1, 2), Fraction(1), 2
    t = tradeoff([Phase(q, sigma, steps)])
    mu0, w = mp.sqrt(steps) / mpq(sigma), mpq(q) ** steps

    def g(mu, a):
        return mp.ncdf(mp.sqrt(2) * mp.erfinv(1 - 2 * a) - mu)

    for k in range(1, 9):
        alpha = Fraction(1, 10**k)
        assert mpq(t.f_lower(alpha)) <= 1 - w * (1 - g(mu0, mpq(alpha))) + mp.mpf(10) ** -25
    mu = mu0 * mp.mpf("0.95")
    z = mp.mpf(40)  # α = Φ̄(40): compare the tails 1 − h = w·Φ̄(z − μ₀) and 1 − G_μ = Φ̄(z − μ)
    assert w * mp.ncdf(-(z - mu0)) > mp.ncdf(-(z - mu))
    assert t.mu_exact and mpq(t.mu_lower()) <= mu0 <= mpq(t.mu_upper()) and t.mu_grid_lower() < t.mu_lower()


def test_mu_is_claimed_exact_only_where_proven():
    """Replace-one runs have no all-steps argument (both sides are mixtures): their μ lower end comes from the
    upper envelope, well below the no-amplification μ₀ = 2√T/σ."""
    t = tradeoff([Phase(Fraction(1, 100), Fraction(1), 100, neighbours="replace-one")], fprs=[Fraction(1, 1000)])
    assert not t.mu_exact
    assert abs(mpq(t.mu_upper()) - 2 * mp.sqrt(100)) < 1e-9 and t.mu_lower() < t.mu_upper() / 2
