"""Envelopes of the trade-off function against independent references (mpmath, no Arb, no rdp_verify code).

* q = 1 composed through the discrete pairs (not the closed form): the envelopes must contain
  G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) (Dong, Roth, Su 2022, Definition 2.7), computed by mpmath;
* one subsampled step: the Neyman–Pearson tests of each direction are attacks, so f_low ≤ their type-II
  error; every (ε, δ(ε)) of the exact curve (mpmath closed form) gives f ≥ 1 − δ(ε) − e^ε·α, so f_up is at
  least that; and a golden-section search of the supremum (mpmath) lands between the envelopes.
"""

from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from rdp_verify.curves.accountant import compose_run, default_settings, initial_step
from rdp_verify.curves.gaussian import GaussianCurve
from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.run import Phase
from rdp_verify.tradeoff.envelope import Envelopes
from tests.curve_oracles import step_curve_closed

ALPHAS = [Fraction(1, 10**6), Fraction(1, 1000), Fraction(1, 50), Fraction(3, 10), Fraction(1, 2), Fraction(9, 10)]


def mpq(x):
    x = Fraction(x)
    return mp.mpf(x.numerator) / x.denominator


def gdp(mu, alpha):
    mu, alpha = mp.mpf(mu), mp.mpf(alpha.numerator) / alpha.denominator
    return mp.ncdf(-mp.sqrt(2) * mp.erfinv(2 * alpha - 1) - mu)  # Φ⁻¹(α) = √2·erfinv(2α − 1)


def composed(phases, refine=4):
    scale = Fraction(1, 10**8)
    h = initial_step(phases, default_settings(phases, Fraction(1), scale).tail) / refine
    return compose_run(phases, default_settings(phases, h, scale))


@pytest.fixture(scope="module")
def gaussian_pairs():
    return Envelopes(composed([Phase(Fraction(1), Fraction(2), 4)]))  # μ = √4/2 = 1


@pytest.mark.parametrize("alpha", ALPHAS)
def test_discrete_pairs_of_the_gaussian_contain_the_closed_form(gaussian_pairs, alpha):
    low, up = map(mpq, gaussian_pairs.bounds(alpha))
    exact = gdp(1, alpha)
    assert low <= exact <= up
    assert up - low < 1e-4 * max(exact, 1e-3)  # and the grid resolves it


@pytest.mark.parametrize("alpha", ALPHAS)
def test_closed_form_envelopes(alpha):
    env = Envelopes(GaussianCurve((Phase(Fraction(1), Fraction(3), 2, neighbours="replace-one"),)))  # μ² = 4·2/9
    with mp.workdps(100):  # finer than the 256-bit ball compared with (40 digits are not)
        low, up = map(mpq, env.bounds(alpha))
        exact = gdp(mp.sqrt(mp.mpf(8) / 9), alpha)
        assert low <= exact <= up and up - low < mp.mpf(10) ** -14  # far below the 12 digits printed


@pytest.mark.parametrize("sigma,steps", [(Fraction(1, 20), 4), (Fraction(1, 20), 10**6)])
def test_closed_form_at_any_number_of_steps(sigma, steps):
    """μ = √T/σ: 40 (G_μ near 1e-280, the envelopes one ball of 256 bits around it) and 20000 (10⁶ steps: G_μ(α)
    near 10^−8.7e7, far below the floor 1e-1000, so [0, 1e-1000] at once, never a 10⁸-digit rational)."""
    env = Envelopes(GaussianCurve((Phase(Fraction(1), sigma, steps),)))
    with mp.workdps(100):
        mu = mp.sqrt(steps) / mpq(sigma)
        for alpha in (Fraction(1, 10**5), Fraction(1, 2)):
            exact = gdp(mu, alpha)
            if exact < mp.mpf(10) ** -1000:
                assert env.bounds(alpha) == (0, Fraction(1, 10**1000))
            else:
                low, up = map(mpq, env.bounds(alpha))
                assert low <= exact <= up and up - low < mp.mpf(10) ** -60 * exact


def test_ends_and_refusals(gaussian_pairs):
    assert gaussian_pairs.bounds(Fraction(1)) == (0, 0)
    low, up = gaussian_pairs.bounds(Fraction(0))
    assert up == 1 and 1 - Fraction(1, 10**9) < low < 1  # f(0) = 1 up to the mass moved to +∞
    for bad in (Fraction(-1, 10), Fraction(11, 10)):
        with pytest.raises(InputError, match="must lie in"):
            gaussian_pairs.bounds(bad)


Q, SIGMA = Fraction(1, 10), Fraction(1)


def np_beta(alpha, direction):
    """Type-II error of the Neyman–Pearson test at type-I error α for one direction's pair (closed form):
    remove: reject Q = N(0, σ²) for P = (1 − q)N(0, σ²) + qN(1, σ²) when x > x0; add: the swapped pair."""
    q, s, a = mp.mpf(Q.numerator) / Q.denominator, mp.mpf(1), mp.mpf(alpha.numerator) / alpha.denominator
    if direction == "remove":
        x0 = s * mp.sqrt(2) * mp.erfinv(1 - 2 * a)  # Q(X > x0) = α
        return (1 - q) * mp.ncdf(x0 / s) + q * mp.ncdf((x0 - 1) / s)
    # add: null P (the mixture), alternative N(0, σ²); reject when x < x0 with P(X < x0) = α
    x0 = mp.findroot(lambda x: (1 - q) * mp.ncdf(x / s) + q * mp.ncdf((x - 1) / s) - a, mp.mpf(0))
    return 1 - mp.ncdf(x0 / s)


def exact_delta(eps):
    x = mp.exp(eps)
    return max(step_curve_closed(Q, SIGMA, x, "remove"), step_curve_closed(Q, SIGMA, x, "add"))


def supremum(alpha):
    """sup over ε ≥ 0 of both families by golden-section search in t = e^ε and in u = e^−ε (both unimodal)."""
    a = mp.mpf(alpha.numerator) / alpha.denominator

    def golden(fn, lo, hi):
        g = (mp.sqrt(5) - 1) / 2
        for _ in range(120):
            c, d = hi - g * (hi - lo), lo + g * (hi - lo)
            if fn(c) > fn(d):
                hi = d
            else:
                lo = c
        return fn((lo + hi) / 2)

    first = golden(lambda t: 1 - exact_delta(mp.log(t)) - t * a, mp.mpf(1), mp.mpf(200))
    second = golden(lambda u: u * (1 - a - exact_delta(-mp.log(u))), mp.mpf(1) / 200, mp.mpf(1))
    return max(0, first, second)


@pytest.fixture(scope="module")
def one_step():
    return Envelopes(composed([Phase(Q, SIGMA, 1)]))


@pytest.mark.parametrize("alpha", [Fraction(1, 1000), Fraction(1, 20), Fraction(3, 10), Fraction(7, 10)])
def test_one_subsampled_step(one_step, alpha):
    low, up = map(mpq, one_step.bounds(alpha))
    for direction in ("remove", "add"):  # the NP tests are attacks: nothing certified below them
        assert low <= np_beta(alpha, direction) + mp.mpf(10) ** -30
    a = mp.mpf(alpha.numerator) / alpha.denominator
    for eps in (0, mp.mpf(1) / 4, 1, 2):  # (ε, δ(ε))-DP: f ≥ 1 − δ − e^ε α and e^−ε(1 − δ − α)
        d = exact_delta(mp.mpf(eps))
        assert up >= 1 - d - mp.exp(eps) * a - mp.mpf(10) ** -30
        assert up >= mp.exp(-eps) * (1 - d - a) - mp.mpf(10) ** -30
    best = supremum(alpha)
    assert low - mp.mpf(10) ** -12 <= best <= up + mp.mpf(10) ** -12
    assert up - low < 1e-4


# -- shuffled and balls-in-bins runs (issue 28, item 5) -----------------------------------------------------------
#
# Two small runs (10 steps per epoch): balls-in-bins under zero-out, one epoch, where random allocation's
# (ε, δ) upper curve lifts f_low; shuffling, two epochs, where the composed maxima lower f_up. Each is compared
# with its envelopes as before the issue (PerEpochEnvelope(): G_μ₀ below, the count tests' hull above).

BB = (Phase(Fraction(1, 10), Fraction(7, 10), 10, sampler="balls-in-bins", batch_size=10, dataset_size=100),)
SH = (Phase(Fraction(1, 10), Fraction(1), 20, sampler="shuffle", batch_size=10, dataset_size=100),)
RATES = [Fraction(1, 10**4), Fraction(1, 1000), Fraction(1, 100), Fraction(1, 10), Fraction(3, 10), Fraction(1, 2)]


def per_epoch(phases):
    from rdp_verify.curves.per_epoch import PerEpochBounds
    from rdp_verify.tradeoff.envelope import PerEpochEnvelope

    new, old = Envelopes(PerEpochBounds(phases)), Envelopes(PerEpochBounds(phases), PerEpochEnvelope())
    new.prepare()
    return new, old


@pytest.fixture(scope="module")
def balls():
    return per_epoch(BB)


@pytest.fixture(scope="module")
def shuffled():
    return per_epoch(SH)


def allocation_lines_mp(env, alpha):
    """L(α) at 100 digits from the recorded ladder points, δ_up(ε) the exact rational of random allocation's bound
    (mpmath; only the lines, not δ_up, are under test here)."""
    a, best = mpq(alpha), mp.mpf(0)
    for eps, order, add in env.per_epoch.allocation:
        d, x = mpq(env.curves.allocation.delta_orders(eps, order, add)[2]), mp.exp(mpq(eps))
        best = max(best, 1 - d - x * a, (1 - d - a) / x)
    return best


def assert_lines_rounded_down(env):
    with mp.workdps(100):
        for alpha in RATES:
            exact = allocation_lines_mp(env, alpha)
            mine = mpq(env.allocation_lower(alpha))
            assert mine <= exact, f"the allocation lines are rounded up at alpha = {alpha}"
            assert exact - mine < mp.mpf(10) ** -60


def test_allocation_lines_are_rounded_down(balls):
    new, _ = balls
    assert new.per_epoch.allocation and new.curves.allocation is not None
    assert_lines_rounded_down(new)


def test_flipping_the_lines_rounding_is_caught(balls, monkeypatch):
    """Mutation: the lines' Arb balls rounded up instead of down; the test above must fail."""
    from rdp_verify.foundations.results import upper_end
    from rdp_verify.tradeoff import envelope

    flipped = Envelopes(balls[0].curves, balls[0].per_epoch)  # the same ladder, nothing searched
    monkeypatch.setattr(envelope, "lower_end", upper_end)
    with pytest.raises(AssertionError, match="rounded up"):
        assert_lines_rounded_down(flipped)


def monte_carlo_pairs(t, sigma, alphas, n=100_000, seed=1):
    """The balls-in-bins worst-case pair of one epoch, P = (1/t)Σ_j N(e_j, σ²I_t) against Q = N(0, σ²I_t)
    (an explicit pair of neighbouring datasets: the others' gradient 0, the record's 1 against 0, so f ≤ T(P, Q)
    and f ≤ T(Q, P)): for each α the Neyman–Pearson test on L = (1/t)Σ_j exp((y_j − 1/2)/σ²), its threshold
    from a pilot sample, then (α̂, β̂) and their standard errors from fresh samples, both orders."""
    rng = np.random.default_rng(seed)

    def stat(with_record):
        y = rng.normal(0, sigma, (n, t))
        if with_record:
            y[np.arange(n), rng.integers(0, t, n)] += 1
        return np.exp((y - 0.5) / sigma**2).mean(axis=1)

    pilot_q, pilot_p = stat(False), stat(True)
    q, p = stat(False), stat(True)
    out = []
    for alpha in alphas:
        a = float(alpha)
        high = np.quantile(pilot_q, 1 - a)  # reject Q when L > high
        low = np.quantile(pilot_p, a)  # the other order: reject P when L < low
        for type1, type2 in ((q > high, p <= high), (p < low, q >= low)):
            a_hat, b_hat = type1.mean(), type2.mean()
            out.append((a_hat, np.sqrt(a_hat * (1 - a_hat) / n), b_hat, np.sqrt(b_hat * (1 - b_hat) / n)))
    return out


def test_balls_in_bins_lower_envelope_below_monte_carlo(balls):
    """f_low ≤ f ≤ T of an explicit pair: at α̂ + 5 s.e. (f_low is decreasing) below β̂ + 5 s.e., both orders."""
    new, _ = balls
    (p,) = BB
    for a_hat, sa, b_hat, sb in monte_carlo_pairs(p.batches_per_epoch, float(p.sigma),
                                                  [Fraction(1, 100), Fraction(1, 10), Fraction(1, 2)]):
        at = Fraction(min(a_hat + 5 * sa, 1.0))
        assert float(new.lower(at)) <= b_hat + 5 * sb


def delta_from_plds_numpy(plds):
    """(ε, δ_low(ε)) at every lattice point ε = k·h ≥ 0 up to past the largest loss: the larger over the composed
    PLDs of Σ_j M_j(1 − e^{ε − ℓ_j})_+, by suffix sums in double precision (numpy; independent of envelope.py)."""
    curves = []
    top = max(p.offset + p.length for p in plds)
    eps = np.arange(0, max(top, 1) + 2) * float(plds[0].h)
    for p in plds:
        masses = np.array([int(c) / (1 << p.bits) for c in p.coeffs.coeffs()])
        losses = (p.offset + np.arange(p.length)) * float(p.h)
        a = np.concatenate([np.cumsum(masses[::-1])[::-1], [0.0]])
        b = np.concatenate([np.cumsum((masses * np.exp(-losses))[::-1])[::-1], [0.0]])
        i = np.searchsorted(losses, eps, side="right")  # the first loss above ε
        curves.append(a[i] - np.exp(eps) * b[i])
    return eps, np.max(curves, axis=0)


def f_from_delta_numpy(eps, delta, alpha):
    """F(α) = sup over ε ≥ 0 of both families; δ_low is piecewise of the form A − e^ε·B between losses, so both
    suprema sit at a loss or at ε = 0, all among the lattice points."""
    a = float(alpha)
    return max(0.0, np.max(1 - delta - np.exp(eps) * a), np.max(np.exp(-eps) * (1 - delta - a)))


# slow: the shuffled run's composed maxima take the same composed_pld / composed_upper path as the balls-in-bins
# run's (default run); its envelopes stay checked by test_per_epoch_envelopes_tighter_than_before[shuffled]
@pytest.mark.parametrize("run", ["balls", pytest.param("shuffled", marks=pytest.mark.slow)])
def test_composed_upper_envelope_against_numpy(run, request):
    """F ≥ f_low, and F agrees with an independent double-precision evaluation of the same PLDs (the proven
    value above it by less than 1e-9: the steering found the minimum, and it is rounded up)."""
    from rdp_verify.curves.per_epoch import composed_pld

    new, _ = request.getfixturevalue(run)
    plds = [composed_pld(tuple(new.curves.phases), c) for c in new.per_epoch.composed]
    assert len(plds) == 2 and {c.order for c in new.per_epoch.composed} == {"forward", "reverse"}
    eps, delta = delta_from_plds_numpy(plds)
    for alpha in RATES:
        up = new.composed_upper(alpha)
        ref = f_from_delta_numpy(eps, delta, alpha)
        assert ref - 1e-12 <= float(up) <= ref + 1e-9
        assert new.lower(alpha) <= up


@pytest.mark.parametrize("run", ["balls", "shuffled"])
def test_per_epoch_envelopes_tighter_than_before(run, request):
    """Never looser than before the issue at any α, and strictly tighter where the new end applies: f_low for
    balls-in-bins (random allocation), f_up for both (the composed maxima); the gain is derived here, not recorded."""
    new, old = request.getfixturevalue(run)
    gains_low, gains_up = [], []
    for alpha in RATES:
        (nl, nu), (ol, ou) = new.bounds(alpha), old.bounds(alpha)
        assert ol <= nl <= nu <= ou
        gains_low.append(nl - ol)
        gains_up.append(ou - nu)
    if run == "balls":
        assert new.per_epoch.allocation and all(g > 0 for g in gains_low)
        assert max(gains_low) > 10 * max(gains_up)  # one epoch: the count test is nearly the composed maximum
    else:
        assert not new.per_epoch.allocation and all(g == 0 for g in gains_low)  # no amplified upper end
        assert all(g > 0 for g in gains_up)
    widths = [(new.bounds(a)[1] - new.bounds(a)[0]) / (old.bounds(a)[1] - old.bounds(a)[0]) for a in RATES]
    assert max(widths) < 1


def test_multi_epoch_allocation_lines_use_the_renyi_add_direction():
    """Balls-in-bins over 4 epochs: where the shifted Gaussian's add direction (paid once per epoch) decides, the
    ladder records the add direction's Rényi DP order instead, and f_low rises at every rate while staying below the
    explicit attacks' proven f_up (an independent proof: count tests and composed maxima); the same ladder with the
    add orders dropped is the bound as it was."""
    from rdp_verify.curves.per_epoch import PerEpochBounds
    from rdp_verify.tradeoff.envelope import PerEpochEnvelope

    # 4 epochs (3.7 CPU-s; 5 took 4.5): 44 of the ladder's 121 points record an add order, f_low rises by 0.012 to 0.42
    phases = (Phase(Fraction(1, 10), Fraction(7, 10), 40, sampler="balls-in-bins", batch_size=10, dataset_size=100),)
    new = Envelopes(PerEpochBounds(phases))
    found = new.prepare()
    assert any(add is not None for _, _, add in found.allocation)
    # only old's lower envelope is read, and the composed pairs bound f from above only: old gets the same run's
    # curves without them (composing and preparing them again took a third of the test)
    shifted = PerEpochEnvelope(tuple((e, o, None) for e, o, _ in found.allocation), ())
    old = Envelopes(new.curves, shifted)
    for alpha in RATES:
        low, up = new.bounds(alpha)
        assert old.lower(alpha) < low <= up


def test_a_composed_randomized_response_is_bracketed_at_every_alpha_around_neyman_pearson():
    """Five uses of randomized response (p = 1/2, k = 4, REPLACE_ONE), composed as one exact law: its trade-off
    function against Neyman–Pearson on an independent enumeration of the composed outcomes (exact Fractions over
    every sequence of the three outcome classes, the test rejecting where Q/P is largest, randomized at the boundary).
    At alpha = 0.1 the minimiser of the envelope lies at ε = 0, where the law's atom at loss 0 is a kink: the bracket
    must still close there (it was trivial, f ∈ [0, 0.9], before the tangent at the end point was used)."""
    import itertools

    from rdp_verify.mechanisms.randomized_response import RandomizedResponse
    from rdp_verify.tradeoff.curve import tradeoff

    rr, uses = RandomizedResponse(Fraction(1, 2), 4), 5
    one = [(Fraction(5, 8), Fraction(1, 8)), (Fraction(1, 8), Fraction(5, 8)), (Fraction(1, 4), Fraction(1, 4))]
    law: dict[Fraction, list[Fraction]] = {}
    for seq in itertools.product(one, repeat=uses):
        p = q = Fraction(1)
        for a, b in seq:
            p, q = p * a, q * b
        entry = law.setdefault(q / p, [Fraction(0), Fraction(0)])
        entry[0], entry[1] = entry[0] + p, entry[1] + q

    def exact_f(alpha: Fraction) -> Fraction:
        size = power = Fraction(0)
        for ratio in sorted(law, reverse=True):  # reject where Q/P is largest first
            p, q = law[ratio]
            take = min(Fraction(1), (alpha - size) / p) if size < alpha else Fraction(0)
            size, power = size + take * p, power + take * q
        return 1 - power

    alphas = [Fraction(1, 100), Fraction(1, 10), Fraction(1, 2)]
    trade = tradeoff((), fprs=alphas, leaves=[(rr, uses)])
    for alpha in alphas:
        low, up = trade.f(alpha)
        assert low <= exact_f(alpha) <= up and up - low < Fraction(1, 1000), (alpha, float(low), float(up))
