"""Issue 39: a verdict is the conclusion of every test its report prints.

One million canaries (numpy's default_rng(0): 500,000 members scored N(2.1, 1), then 500,000 non-members N(0, 1))
against the exactly 1-GDP run q = 1, sigma = 2, 4 steps printed ``verdict: consistent`` beside "mu >= 1.00906"
and "G_mu has epsilon >= 7.94565" above the proven epsilon 7.86874: the verdict tested the canaries only against a
231-vertex hull of the envelope. Now the one-run f-DP test (Mahloujifar, Melis, Chaudhuri 2024) is held against
the run's exact curve G_mu (q = 1) or the envelope of its proven (epsilon, delta) lines refined where the deciding
thresholds read it (rdp_verify.tradeoff.one_run.deciding_rejects), and every printed empirical bound above the
run's proven upper end makes the verdict ``bug`` (one-run: Steinke, Nasr, Jagielski 2023; clopper-pearson: the
boxes of Nasr et al. 2023). The million-canary file itself is in tests/cli/test_audit_canaries.py (slow)."""

from fractions import Fraction
from types import SimpleNamespace

import mpmath as mp
import numpy as np
import pytest

from rdp_verify.foundations.run import Phase
from rdp_verify.tradeoff import audit_canaries, parse_canaries, read_canaries, tradeoff
from rdp_verify.tradeoff import one_run as o

CONFIDENCE = Fraction(95, 100)


def normal_scores(shift, seed, n):
    """The issue's attack: numpy's default_rng(seed) draws n member scores from N(shift, 1), then n non-member
    scores from N(0, 1); each score is written as Python's repr of the double (its shortest round-trip text)."""
    rng = np.random.default_rng(seed)
    members, others = rng.normal(shift, 1, n), rng.normal(0, 1, n)
    rows = [f"{float(x)!r},1" for x in members] + [f"{float(x)!r},0" for x in others]
    return "score,member\n" + "\n".join(rows) + "\n"


@pytest.fixture(scope="module")
def mu_one():
    """q = 1, sigma = 2, 4 steps: the Gaussian mechanism with mu = sqrt(4)/2 = 1 exactly."""
    return tradeoff([Phase(q=Fraction(1), sigma=Fraction(2), steps=4)], fprs=[Fraction(1, 10**10)])


@pytest.fixture(scope="module")
def flipped():
    """A smaller seeded attack whose verdict flipped as the issue's did: 10,000 members N(2.6, 1), 10,000
    non-members N(0, 1), seed 0. Its G_mu line proves mu >= 1.03546 > 1, yet the 231-vertex hull of the envelope
    (what the verdict used) is rejected by no threshold."""
    return o.Guesses.from_counts(parse_canaries(normal_scores(2.6, 0, 10_000)))


def exceeded(report, trade):
    """Which printed empirical lower bounds exceed the run's proven upper ends (exact comparisons of the printed
    decimals): the empirical epsilon against the printed proven epsilon; mu against the run's proven mu upper end;
    for q = 1 runs (curve G_mu) the printed epsilon of G_mu against the printed proven epsilon."""
    out = []
    up = report["proven_epsilon"]["upper"]
    emp = report["empirical_epsilon_lower"]
    if up is not None and emp is not None and Fraction(emp) > Fraction(up):
        out.append("epsilon")
    if report.get("gdp_mu_lower") not in (None, "0"):
        mu_up = trade.mu_upper()
        if mu_up is not None and Fraction(report["gdp_mu_lower"]) > mu_up:
            out.append("mu")
        g = report["gaussian_epsilon_lower"]
        if all(p.q == 1 for p in trade.phases) and g is not None and up is not None and Fraction(g) > Fraction(up):
            out.append("G_mu epsilon")
    return out


def test_the_flipped_attack_is_a_bug(mu_one, flipped):
    level = o.one_run_level(flipped, CONFIDENCE, "any-threshold")
    assert o.fdp_run_rejects(flipped, level, o.hull_from_envelope(mu_one.f_lower)) is None  # what the verdict saw
    report = o.audit_one_run(mu_one, flipped, method="one-run-fdp", confidence=CONFIDENCE, delta=Fraction(1, 10**14))
    assert report["gdp_mu_lower"] == "1.03546" and "mu" in exceeded(report, mu_one)
    assert report["verdict"] == "bug" and report["rejecting"] is not None
    assert "rejects the run's exact trade-off curve G_mu, mu = 1 (q = 1" in report["verdict_reason"]


def test_each_printed_bound_decides_on_its_own(mu_one, flipped, monkeypatch):
    """With the deciding test made blind (it never rejects), the printed mu above the run's mu = 1 still makes the
    verdict bug, naming that threshold and test."""
    monkeypatch.setattr(o, "deciding_rejects",
                        lambda trade, g, level: (None, o.DecidingCurve("gaussian", Fraction(1), exact=True)))
    report = o.audit_one_run(mu_one, flipped, method="one-run-fdp", confidence=CONFIDENCE, delta=Fraction(1, 10**14))
    assert report["verdict"] == "bug" and Fraction(report["empirical_epsilon_lower"]) < 7  # not the epsilon line
    reason = report["verdict_reason"]
    assert "rejects G_mu for mu = 1.03546" in reason and "mu-GDP for mu = 1," in reason
    assert report["rejecting"]["correct"] <= report["rejecting"]["guesses"]


@pytest.mark.parametrize("method", o.METHODS)
def test_the_printed_epsilon_decides_when_the_deciding_test_misses(method, monkeypatch):
    """examples/canaries-one-run-mu4.csv against q = 1, sigma = 8, 4 steps (mu = 1/4): the printed empirical epsilon
    (about 4) exceeds the proven 1.18175; with the deciding test blind the verdict is still bug, by that line."""
    monkeypatch.setattr(o, "one_run_rejects", lambda *a, **k: None)
    monkeypatch.setattr(o, "deciding_rejects",
                        lambda trade, g, level: (None, o.DecidingCurve("gaussian", Fraction(1, 4), exact=True)))
    run = tradeoff([Phase(q=Fraction(1), sigma=Fraction(8), steps=4)], fprs=[Fraction(1, 10**10)])
    report = o.audit_one_run(run, read_canaries("examples/canaries-one-run-mu4.csv"), method=method,
                             confidence=CONFIDENCE, delta=Fraction(1, 10**7))
    assert "epsilon" in exceeded(report, run) and report["verdict"] == "bug"
    assert "-DP at level 0.000025 (confidence 0.95, Bonferroni), the printed empirical epsilon" in \
        report["verdict_reason"]
    assert report["rejecting"]["rank"] == report["strongest"]["rank"]


def test_clopper_pearson_printed_epsilon_decides():
    """A thousand members and a thousand non-members perfectly separated, against the 1-GDP run: the empirical
    epsilon at 1e-5 (4.5) exceeds the proven 4.37718. With an envelope that sees nothing (f_low = 0, f_up = 1 - alpha)
    no box lies below it, and the verdict is still bug, by the printed epsilon."""
    run = tradeoff([Phase(q=Fraction(1), sigma=Fraction(2), steps=4)], fprs=[Fraction(1, 1000)])
    blind = SimpleNamespace(curves=run.curves, f_lower=lambda a: Fraction(0),
                            envelopes=SimpleNamespace(upper=lambda a: 1 - a))
    counts = parse_canaries("threshold,tp,fp,tn,fn\n0,1000,0,1000,0\n")
    report = audit_canaries(blind, counts)
    assert report["below_curve"] == [] and Fraction(report["empirical_epsilon_lower"]) > 4.5
    assert report["verdict"] == "bug" and "above the run's proven epsilon <= 4.37718" in report["verdict_reason"]
    assert audit_canaries(run, counts)["verdict"] == "bug"  # the real envelope: its box lies below G_1 too


def _property(run, method, shift, seed, n, delta):
    counts = parse_canaries(normal_scores(shift, seed, n))
    if method == "clopper-pearson":
        report = audit_canaries(run, counts, delta=delta)
    else:
        report = o.audit_one_run(run, counts, method=method, confidence=CONFIDENCE, delta=delta)
    over = exceeded(report, run)
    assert not over or report["verdict"] == "bug", (over, report["verdict_reason"])
    return over, report["verdict"]


RUNS = {"mu1": (Phase(q=Fraction(1), sigma=Fraction(2), steps=4),),
        "q0.99": (Phase(q=Fraction(99, 100), sigma=Fraction(2), steps=4),)}


@pytest.fixture(scope="module")
def runs():
    return {k: tradeoff(list(v), fprs=[Fraction(1, 10**10)]) for k, v in RUNS.items()}


@pytest.mark.parametrize("name, method, shift, seed, n", [
    ("mu1", "one-run-fdp", 2.6, 1, 5000), ("mu1", "one-run", 2.6, 0, 5000), ("q0.99", "one-run-fdp", 2.8, 0, 5000),
    ("mu1", "clopper-pearson", 3.0, 0, 500)])
def test_property_bug_whenever_a_printed_bound_exceeds_the_proven_end(runs, name, method, shift, seed, n):
    delta = Fraction(1, 10**5) if method == "clopper-pearson" else Fraction(1, 10**14)
    _property(runs[name], method, shift, seed, n, delta)


@pytest.mark.slow
def test_property_sweep(runs):
    """The same property over 5 seeds, 4 shifts around the boundary, both runs and the three methods; some cases
    print a bound above the proven end (not a vacuous sweep), and every one of those says bug."""
    seen = []
    for name in runs:
        for shift in (2.2, 2.5, 2.8, 3.2):
            for seed in range(5):
                for method in ("one-run-fdp", "one-run"):
                    seen.append(_property(runs[name], method, shift, seed, 5000, Fraction(1, 10**14)))
                seen.append(_property(runs[name], "clopper-pearson", shift + 1, seed, 1000, Fraction(1, 10**5)))
    assert sum(bool(over) for over, _ in seen) >= 10


def test_refined_lines_find_a_bug_the_coarse_hull_missed(runs, flipped):
    """q = 0.99 (not Gaussian: the envelope of its proven (epsilon, delta) lines, refined where the deciding thresholds
    read it). The flipped attack rejects it; the old 231-vertex hull of f_low is rejected by no threshold."""
    run = runs["q0.99"]
    level = o.one_run_level(flipped, CONFIDENCE, "any-threshold")
    assert o.fdp_run_rejects(flipped, level, o.hull_from_envelope(run.f_lower)) is None
    hit, curve = o.deciding_rejects(run, flipped, level)
    assert hit is not None and curve.kind == "lines" and curve.refined > 0
    report = o.audit_one_run(run, flipped, method="one-run-fdp", confidence=CONFIDENCE, delta=Fraction(1, 10**14))
    assert report["verdict"] == "bug" and "(epsilon, delta) lines" in report["verdict_reason"]


def g1(a):
    """G_1(alpha) in 60 digits."""
    return mp.ncdf(mp.sqrt(2) * mp.erfinv(1 - 2 * a) - 1)


def test_lines_lie_below_the_exact_curve_and_close_to_it(mu_one):
    """The lines machinery on the 1-GDP run (whose delta(epsilon) is G_1's): every vertex of the envelope lies on or
    below G_1 (60 digits), so the piecewise-linear f' does; and it is a tangent construction, close to G_1."""
    with mp.workdps(60):
        ladder = o._Ladder(mu_one)
        curve, count = ladder.curve([Fraction(j, 8) for j in range(80)])
        assert count == 80 and curve.xs[0] == 0 and curve.xs[-1] == 1 and curve.ys[-1] == 0
        assert all(a < b for a, b in zip(curve.xs, curve.xs[1:]))
        assert all(a >= b for a, b in zip(curve.ys, curve.ys[1:]))
        gaps = []
        for x, y in zip(curve.xs[1:-1], curve.ys[1:-1]):
            exact = g1(mp.mpf(x.numerator) / x.denominator)
            assert mp.mpf(y.numerator) / y.denominator <= exact
            gaps.append(exact - mp.mpf(y.numerator) / y.denominator)
        assert max(gaps) < mp.mpf("0.001")  # between two tangents 1/8 apart in epsilon (a vertex), at most 8e-4


def critical(m, k, level, curve):
    """The smallest number of correct guesses among k proven to reject ``curve``."""
    lo, hi = 0, k + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if o.fdp_rejects(m, k, mid, level, curve) else (mid, hi)
    return hi


@pytest.mark.parametrize("k", [60, 300, pytest.param(2000, marks=pytest.mark.slow),
                               pytest.param(6000, marks=pytest.mark.slow)])
def test_the_lines_lose_no_power(mu_one, k):
    """On the 1-GDP run, the envelope of lines 1/8 apart needs exactly as many correct guesses to reject as G_1 itself
    (20000 canaries, level 1/400000); the 231-vertex hull needs more from k = 2000 on."""
    level = Fraction(1, 400_000)
    lines, _ = o._Ladder(mu_one).curve([Fraction(j, 8) for j in range(80)])
    assert critical(20_000, k, level, lines) == critical(20_000, k, level, o.GdpCurve(Fraction(1)))


def test_a_ball_outside_the_unit_interval_is_undecided():
    """HullCurve's inverse blow-up of a ball reaching beyond 1 (radii grown at low precision) is not finite, so the
    recursion repeats at a higher precision (before: StopIteration, or with bisection IndexError, which stopped
    the proof for k = 6000 of 20000 canaries against the envelope of lines)."""
    from flint import arb

    hull = o.HullCurve((Fraction(0), Fraction(1, 2), Fraction(1)), (Fraction(1), Fraction(1, 4), Fraction(0)))
    assert not hull.inverse_arb(arb(1, 0.5)).is_finite() and hull.inverse_arb(arb("0.5")).is_finite()
    assert not o.lines_curve([(Fraction(3), Fraction(1, 100))]).inverse_arb(arb(1, 0.5)).is_finite()


@pytest.mark.parametrize("mu_squared, mu", [(Fraction(1), Fraction(1)), (Fraction(9, 4), Fraction(3, 2))])
def test_gaussian_mu_is_exact_for_squares(mu_squared, mu):
    assert o.gaussian_mu(mu_squared) == mu
    two = o.gaussian_mu(Fraction(2))
    assert two * two > 2 and two - Fraction(14142135623730950488, 10**19) < Fraction(1, 10**18)
