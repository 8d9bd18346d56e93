"""Shuffling and balls-in-bins: the no-amplification upper end against the Gaussian closed form, the explicit
pair's model against a simulation of the actual samplers, and the bracket's certificate."""

import copy
import json
from fractions import Fraction
from functools import lru_cache

import mpmath as mp
import numpy as np
import pytest
from flint import ctx
from mutations import assert_every_field_checked, edited

from rdp_verify.curves.accountant import bracket
from rdp_verify.curves.certificate import POLICY, SCHEMA, certify_run, check_run_certificate, compare, recompute
from rdp_verify.curves.per_epoch import Composed, PerEpochBounds, _composed_delta, _exceed, _shifts
from rdp_verify.foundations.results import to_arb
from rdp_verify.foundations.run import Phase
from tests.curve_oracles import chua_epsilon, gaussian_epsilon

DELTA = Fraction(1, 10**5)


def shuffle(sigma="1.3", epochs=3, neighbours="add-remove", sampler="shuffle", batch=250, n=60000):
    t = n // batch
    return Phase(Fraction(batch, n), Fraction(sigma), epochs * t, sampler, neighbours, batch, n)


# slow: shuffle under replace-one takes the equality branch with sensitivity 2 as balls-in-bins under replace-one
# (default run) does, and the shuffle sampler's equality branch is covered by shuffle under add-remove (default run)
@pytest.mark.parametrize("sampler, neighbours, sensitivity", [
    ("shuffle", "add-remove", 1), pytest.param("shuffle", "replace-one", 2, marks=pytest.mark.slow),
    ("balls-in-bins", "add-remove", 1), ("balls-in-bins", "replace-one", 2)])
def test_upper_end_is_the_gaussian_mechanism_once_per_epoch(sampler, neighbours, sensitivity):
    result = bracket([shuffle(epochs=3, neighbours=neighbours, sampler=sampler)], delta=DELTA)
    mu = sensitivity * mp.sqrt(3) / mp.mpf("1.3")
    reference = gaussian_epsilon(DELTA, mu)
    assert result.method == "per-epoch bounds"
    upper = mp.mpf(result.upper.numerator) / result.upper.denominator
    if sampler == "balls-in-bins" and neighbours == "add-remove":  # random allocation amplifies: never above it
        assert upper < reference
    else:
        assert abs(upper - reference) <= reference * mp.mpf(10) ** -12
    assert 0 < result.lower <= result.upper


def test_a_partial_epoch_counts_as_begun_above_and_is_dropped_below():
    phase = Phase(Fraction(1, 4), Fraction(1), 9, "shuffle", "add-remove", 5, 20)  # 2 full epochs and 1 step
    curves = PerEpochBounds((phase,))
    assert curves.mu_squared == 3  # three epochs begun, sensitivity 1, sigma 1
    assert phase.epochs == (2, 3)


@lru_cache(maxsize=None)
def _composed_run(sampler, epochs):
    """bracket([shuffle(sigma="0.8", epochs, sampler, batch=600)], delta=DELTA), computed once per run for the module
    (deterministic; the tests below only read it): the runs of the composed-maximum test, read by the epochs and the
    balls-in-bins tests too."""
    return bracket([shuffle(sigma="0.8", epochs=epochs, sampler=sampler, batch=600)], delta=DELTA)


def test_more_epochs_never_lower_the_proven_lower_end():
    lows = [_composed_run("shuffle", e).lower for e in (1, 3, 5)]
    assert lows[0] <= lows[1] <= lows[2]


def _simulate(sampler, c, g, n=8, b=2, sigma=1.0, trials=400_000, seed=7):
    """The explicit pair's statistic from the actual sampler: N records, record 0 the differing one (gradient g),
    the others c; each trial one epoch; returns max over the t steps of (noisy sum − b·c)."""
    rng = np.random.default_rng(seed)
    t = n // b
    c = float(c)  # a Fraction would make ``sums - b * c`` an array of Python objects (6 s; the same floats)
    grads = np.full(n, c)
    grads[0] = g
    if sampler == "shuffle":
        order = rng.permuted(np.tile(np.arange(n), (trials, 1)), axis=1)
        step_of = np.empty_like(order)
        np.put_along_axis(step_of, order, np.repeat(np.arange(t), b)[None, :].repeat(trials, 0), axis=1)
    else:
        step_of = rng.integers(0, t, size=(trials, n))
    sums = np.zeros((trials, t))
    for record in range(n):
        np.add.at(sums, (np.arange(trials), step_of[:, record]), grads[record])
    return (sums - b * c + rng.normal(0, sigma, size=(trials, t))).max(axis=1)


@pytest.mark.parametrize("sampler, neighbours, c", [
    ("shuffle", "add-remove", Fraction(-1)),
    pytest.param("shuffle", "replace-one", Fraction(1, 2), marks=pytest.mark.slow),
    pytest.param("balls-in-bins", "add-remove", Fraction(0), marks=pytest.mark.slow),
    ("balls-in-bins", "replace-one", Fraction(0))])
def test_the_pairs_model_matches_a_simulation_of_the_sampler(sampler, neighbours, c):
    """The modelled law of an epoch's largest step, F_m(τ) = Φ(τ/σ)^{t−1}Φ((τ − m)/σ), against the sampler
    run on an actual dataset (both datasets of the pair), within 5 standard errors."""
    phase = Phase(Fraction(1, 4), Fraction(1), 4, sampler, neighbours, 2, 8)
    m1, m0 = _shifts(phase, c)
    g_other = -1 if neighbours == "replace-one" else 0
    for g, m in ((1, m1), (g_other, m0)):
        maxima = _simulate(sampler, c, g)
        for tau in (Fraction(1, 2), Fraction(2)):
            with ctx.workprec(128):
                model = float(_exceed(phase, m, to_arb(tau)).mid())
            seen = float((maxima > float(tau)).mean())
            assert abs(seen - model) <= 5 * np.sqrt(model * (1 - model) / len(maxima))


def test_balls_in_bins_never_uses_other_gradients():
    """Random batch sizes make the others' sum unknown unless their gradient is 0."""
    result = _composed_run("balls-in-bins", 1)
    assert all(t.others == 0 for t in result.proof.given)


def test_the_chua_et_al_example_shuffle_lower_end_exceeds_the_poisson_curve():
    """The authors' example (google-research dpsgd_batch_sampler_accounting/example.py): σ = 0.35, 1000 steps
    per epoch, one epoch. At ε = 4 the proven lower end of δ for shuffling exceeds the proven upper end for
    Poisson sampling at the same rate: shuffling is provably less private here."""
    shuffled = bracket([Phase(Fraction(1, 1000), Fraction(35, 100), 1000, "shuffle", "add-remove", 60, 60000)],
                       epsilon=Fraction(4))
    # Poisson's upper end on a grid 8x coarser (0.5 s instead of 5 s): proven all the same, and looser (0.3 %
    # wide instead of 0.005 %), so it only makes the inequality harder; it is 60 times below the shuffled lower end
    poisson = bracket([Phase(Fraction(1, 1000), Fraction(35, 100), 1000)], epsilon=Fraction(4),
                      tolerance=Fraction(1, 10), coarsen=8)
    assert shuffled.lower > poisson.upper


@lru_cache(maxsize=None)
def _two_epochs(target):
    return certify_run([shuffle(epochs=2)], **dict(target))


def two_epochs(**target):
    """certify_run([shuffle(epochs=2)], **target), computed once per target for the module (the same certificate
    each call: deterministic); each test gets its own copy."""
    return copy.deepcopy(_two_epochs(tuple(target.items())))


@pytest.mark.parametrize("target", [{"delta": DELTA}, {"epsilon": Fraction(2)}])
def test_certificate_is_rechecked_and_every_field_verified(target):
    cert = two_epochs(**target)
    assert check_run_certificate(json.loads(json.dumps(cert))) == []
    assert cert["method"] == "per-epoch bounds" and cert["settings"]["lower_tests"]
    assert cert["settings"]["lower_composed"]["others_gradient"] == "-1"
    assert assert_every_field_checked(cert, recompute(cert), POLICY, compare, SCHEMA) > 40


@pytest.mark.parametrize("path, value", [("settings.lower_tests.0.threshold", "1"),
                                         ("settings.lower_tests.0.others_gradient", "3"),
                                         ("settings.lower_composed.others_gradient", "-1/2"),
                                         ("settings.lower_composed.grid_step", "1/8"),
                                         ("settings.lower_composed.edges", 100000),
                                         ("inputs.phases.0.sampler", "balls-in-bins")])
def test_a_resealed_forgery_of_the_tests_or_the_sampler_is_caught(path, value):
    cert = two_epochs(delta=DELTA)
    problems = check_run_certificate(edited(cert, path, value))
    assert problems and all(":" in p for p in problems)


# slow: 3 epochs take the same composed-maximum path as 1 and 5 epochs of the same sampler (default run)
@pytest.mark.parametrize("epochs", [1, pytest.param(3, marks=pytest.mark.slow), 5])
@pytest.mark.parametrize("sampler, c", [("shuffle", -1), ("balls-in-bins", 0)])
def test_the_lower_end_reaches_the_composed_maximum_statistic(sampler, c, epochs):
    """Chua et al.'s composed max-statistic lower bound (computed independently, above) at σ = 0.8, 100 steps per
    epoch, δ = 1e-5: the proven lower end is within 0.1 % of it (bins, loss grid and the search over c and the
    order lose less) and below the proven upper end."""
    result = _composed_run(sampler, epochs)
    reference = chua_epsilon(1 - c, -c, 0.8, 100, epochs, 1e-5)
    assert reference * (1 - 1e-3) <= result.lower <= result.upper
    assert result.proof.given_composed.others == c


def _binned_delta(comp, m, m_other, sigma, t, epochs, epsilon):
    """The exact δ(ε) of the E-fold product of the binned pair (mpmath, every E-tuple of cells enumerated)."""
    import itertools

    def cells(shift):
        cdf = [mp.mpf(0)] + [mp.ncdf(z) ** (t - 1) * mp.ncdf(z - shift / sigma)
                             for z in (mp.mpf((comp.lowest + j * comp.width).numerator) / (comp.lowest + j * comp.width).denominator
                                       for j in range(comp.edges))] + [mp.mpf(1)]
        return [b - a for a, b in zip(cdf, cdf[1:])]

    p, q = cells(m), cells(m_other)
    total = mp.mpf(0)
    for combo in itertools.product(range(len(p)), repeat=epochs):
        total += max(mp.mpf(0), mp.fprod(p[i] for i in combo) - mp.exp(epsilon) * mp.fprod(q[i] for i in combo))
    return total


@pytest.mark.parametrize("order", ["forward", "reverse"])
def test_composed_losses_are_rounded_down_and_by_less_than_the_grid_step(order):
    """On a coarse loss grid (h = 1/8) the proven δ(ε) of the binned pair over two epochs lies between the exact
    δ (mpmath, enumerated) at ε + E·h and at ε: every loss rounded down, by less than h."""
    phase = shuffle(sigma="0.8", epochs=2, batch=600)
    comp = Composed(order, Fraction(-1), Fraction(1), Fraction(1, 2), 7, Fraction(1, 8), 64)
    m, m_other = (2, 1) if order == "forward" else (1, 2)
    sigma = mp.mpf("0.8")
    for eps in (Fraction(1, 2), Fraction(2)):
        proven = _composed_delta((phase,), comp, eps)
        proven = mp.mpf(proven.numerator) / proven.denominator
        exact = _binned_delta(comp, m, m_other, sigma, 100, 2, mp.mpf(eps.numerator) / eps.denominator)
        shifted = _binned_delta(comp, m, m_other, sigma, 100, 2, mp.mpf(eps.numerator) / eps.denominator + 2 / 8)
        assert shifted * (1 - mp.mpf(10) ** -9) <= proven <= exact


@pytest.mark.slow
def test_the_documented_comparison_table_is_what_the_script_prints():
    """docs/samplers.md shows examples/shuffle_vs_poisson.py's table (about a minute and a half)."""
    import runpy
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    table = runpy.run_path(str(root / "examples" / "shuffle_vs_poisson.py"))["table"]()
    assert table in (root / "docs" / "samplers.md").read_text(encoding="utf-8")
