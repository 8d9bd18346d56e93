"""The f-DP peer oracle (:mod:`rdp_verify.reference.tradeoff_peers`): riskcal's and dp_accounting's trade-off values
and jax_privacy's auditors' ε, classified against references computed here in closed form with mpmath.

References: the Gaussian mechanism's trade-off curve G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) (Dong, Roth, Su 2022, eq. (6)) and
its privacy curve δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle, Wang 2018, Theorem 8), inverted by bisection;
Laplace's ε(δ) = 1/b + 2 log(1 − δ) (from δ(ε) = 1 − e^{(ε − 1/b)/2} on [0, 1/b]). None comes from rdp_verify.
"""

import math
import random
from fractions import Fraction
from pathlib import Path

import mpmath as mp
import pytest

from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.run import Phase
from rdp_verify.reference import tradeoff_peers as tp
from rdp_verify.reference.dp_compare import Target

ROOT = Path(__file__).resolve().parents[2]
DELTA = Fraction(1, 10**5)
ALPHAS = [Fraction(1, 10**10), Fraction(1, 10**8), Fraction(1, 10**6), Fraction(1, 10**4), Fraction(1, 100),
          Fraction(1, 10), Fraction(1, 2), Fraction(9, 10)]


def gaussian_tradeoff(mu, alpha: Fraction) -> mp.mpf:
    """G_μ(α) = Φ(Φ⁻¹(1 − α) − μ), Φ⁻¹(1 − α) = −√2 erfinv(2α − 1), at 60 digits."""
    with mp.workdps(60):
        a = mp.mpf(alpha.numerator) / alpha.denominator
        return mp.ncdf(-mp.sqrt(2) * mp.erfinv(2 * a - 1) - mu)


def gaussian_epsilon(mu, delta: Fraction) -> mp.mpf:
    """ε(δ) of μ-GDP (Balle–Wang), by bisection at 50 digits; 0 when δ(0) ≤ δ."""
    with mp.workdps(50):
        d = mp.mpf(delta.numerator) / delta.denominator

        def curve(e):
            return mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2)

        if curve(mp.mpf(0)) <= d:
            return mp.mpf(0)
        lo, hi = mp.mpf(0), mp.mpf(100)
        for _ in range(180):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if curve(mid) > d else (lo, mid)
        return hi


def ball(x, relative=Fraction(1, 10**40)) -> tuple[Fraction, Fraction]:
    """An exact rational interval around an mpmath number (relative half-width ``relative``, at least 1e-60)."""
    centre = Fraction(mp.nstr(x, 55, min_fixed=-mp.inf, max_fixed=mp.inf)) if x else Fraction(0)
    half = max(abs(centre) * relative, Fraction(1, 10**60)) if x else Fraction(0)
    return centre - half, centre + half


def gaussian_targets(sigma: Fraction, steps: int, alphas=ALPHAS) -> list[tp.CurveTarget]:
    """q = 1: f = G_μ exactly, μ = √T/σ; the targets' envelopes a 1e-40 ball around it."""
    mu = mp.sqrt(steps) * sigma.denominator / mp.mpf(sigma.numerator)
    return [tp.CurveTarget(Phase(Fraction(1), sigma, steps), a, *ball(gaussian_tradeoff(mu, a))) for a in alphas]


def peer(kind: str, name: str):
    loader = tp.load_curve if kind == "curve" else tp.load_auditor
    try:
        return loader(name)
    except tp.PeerUnavailable as exc:
        pytest.skip(str(exc))


# ---------------------------------------------------------------- classification (no peer needed)


@pytest.mark.parametrize("beta, expected", [
    (0.5, "exact"), (0.4, "exact"), (0.6, "exact"),  # inside [0.4, 0.6], ends included
    (0.6000000000000001, "unsafe"),  # above f_up: claims more privacy than the run has
    (0.39999999999999997, "conservative"),  # below f_low
    (1.0, "unsafe"), (0.0, "conservative"),
    (float("nan"), "failed"), (float("inf"), "failed"), (None, "failed"),
])
def test_beta_above_the_upper_envelope_is_unsafe(beta, expected):
    # 0.4 and 0.6 are not doubles: the ends are the doubles nearest them, so the comparison is exact
    assert tp.classify_beta(beta, Fraction(0.4), Fraction(0.6)) == expected


@pytest.mark.parametrize("epsilon, expected", [
    (2.0, "exact"), (1.5, "exact"), (2.5, "exact"),
    (2.5000000000000004, "unsafe"),  # a lower bound above the proven upper end: more leakage than the run has
    (1.4999999999999998, "conservative"), (0.0, "conservative"),
    (float("nan"), "failed"), (float("-inf"), "failed"), (None, "failed"),
])
def test_epsilon_lower_bound_above_the_proven_upper_end_is_unsafe(epsilon, expected):
    assert tp.classify_lower_bound(epsilon, Fraction(3, 2), Fraction(5, 2)) == expected


def test_the_classes_are_dp_compares_oriented_like_an_epsilon():
    # a TPR 1 - beta or an epsilon below the proven lower end claims more privacy: both unsafe, as in compare --dp
    from rdp_verify.reference.dp_compare import classify

    assert classify(0.1, Fraction(1, 5), Fraction(3, 10)) == "unsafe"
    assert tp.classify_beta(0.9, Fraction(7, 10), Fraction(4, 5)) == "unsafe"  # TPR 0.1 below [0.2, 0.3]


def test_at_an_end_and_the_table_print_no_peer_digits():
    phase = Phase(Fraction(1), Fraction(2), 4)
    lo, up = Fraction(1, 3), Fraction(1, 3) + Fraction(1, 10**30)
    near = float(up + Fraction(1, 10**12))  # outside, but within the noise
    far = 0.3333333333333333 + 1.234567e-4  # unsafe, by 1.2e-4
    points = [tp.TradeoffPoint("p", "curve", phase, Fraction(1, 10), v, None, lo, up, tp.classify_beta(v, lo, up))
              for v in (near, far)]
    assert [p.classification for p in points] == ["unsafe", "unsafe"]
    assert [tp.at_an_end(p) for p in points] == [True, False]
    text = tp.table(points)
    assert text.splitlines()[1].split() == ["p", "0", "1", "0", "1", "0"]
    flat = " ".join(text.split())
    assert "beta above f_upper by 0.00012" in flat and "1234567" not in flat and "33333333333333" not in flat


# ---------------------------------------------------------------- riskcal against the closed form (q = 1)


def test_riskcal_is_above_the_exact_gaussian_curve_at_q_1():
    """The issue's finding: for q = 1 riskcal's beta(alpha) lies above G_mu, i.e. it claims more privacy than the
    Gaussian mechanism has (unsafe), by up to 1.5e-4 at mu = 2 (alpha = 1e-8)."""
    peer("curve", "riskcal")
    points = tp.compare_curves(["riskcal"], gaussian_targets(Fraction(1, 2), 1) + gaussian_targets(Fraction(2), 4))
    assert len(points) == 2 * len(ALPHAS)
    assert {p.classification for p in points} == {"unsafe"}  # every alpha of both runs: above the exact curve
    # mu = 2, alpha = 1e-8: G = 0.999848078..., riskcal 0.99999999..., more than 1e-4 above
    at = next(p for p in points if p.phase.sigma == Fraction(1, 2) and p.at == Fraction(1, 10**8))
    assert at.value - gaussian_tradeoff(mp.mpf(2), Fraction(1, 10**8)) > mp.mpf("1e-4")


def test_riskcal_defect_is_its_reading_of_the_connect_the_dots_pmf():
    """The cause, shown on riskcal's own pieces: its closed-form Gaussian beta is G_mu (to 1e-12), and the same
    Algorithm 1 on dp_accounting's privacy-buckets pessimistic PLD (use_connect_dots=False) stays below G_mu;
    on the connect-the-dots PLD it reads by default it is above."""
    peer("curve", "riskcal")
    import numpy as np
    from dp_accounting.pld import privacy_loss_distribution as pld_module
    from riskcal.analysis import get_beta_from_gdp, get_beta_from_pld

    alphas = [Fraction(1, 10**6), Fraction(1, 100), Fraction(1, 2)]
    exact = [gaussian_tradeoff(mp.mpf(2), a) for a in alphas]
    grid = np.array([float(a) for a in alphas])
    assert all(abs(b - g) < 1e-12 for b, g in zip(get_beta_from_gdp(2.0, grid), exact))
    for connect_dots, above in ((True, True), (False, False)):
        pld = pld_module.from_gaussian_mechanism(0.5, use_connect_dots=connect_dots, value_discretization_interval=1e-4)
        got = get_beta_from_pld(pld, alpha=grid)
        assert all((b > g) == above for b, g in zip(got, exact)), (connect_dots, got)


# slow: dp_accounting's trade-off against the exact Gaussian curve (never unsafe, at most at an end) is covered by
# docs/library-authors.md:653, the same peer at q = 1, sigma = 0.5 with its classes compared (tests/test_docs.py,
# default run); here 2.4 CPU-s of its conjugate at mu = 1
@pytest.mark.slow
def test_dp_accounting_conjugate_is_never_above_the_exact_curve():
    """The trade-off dp_accounting's own (pessimistic) privacy curve implies stays at or below G_mu: the same PLD
    riskcal reads is not at fault; the conjugate's grid can only lower beta."""
    peer("curve", "dp_accounting_pld")
    points = tp.compare_curves(["dp_accounting_pld"], gaussian_targets(Fraction(2), 4))
    noise = mp.mpf(tp.NOISE_BETA.numerator) / tp.NOISE_BETA.denominator
    assert len(points) == len(ALPHAS)
    assert all(p.value <= gaussian_tradeoff(mp.mpf(1), p.at) + noise for p in points)
    assert all(p.classification != "unsafe" or tp.at_an_end(p) for p in points)
    assert sum(p.classification == "conservative" for p in points) >= len(ALPHAS) // 2


def test_a_raising_peer_is_failed_not_a_crash(monkeypatch):
    def broken(q, sigma, steps, alphas):
        raise RuntimeError("no")

    monkeypatch.setattr(tp, "load_curve", lambda name: broken)
    points = tp.compare_curves(["x"], gaussian_targets(Fraction(2), 4, ALPHAS[:2]))
    assert [p.classification for p in points] == ["failed", "failed"]
    assert "RuntimeError: no" in tp.table(points)


# ---------------------------------------------------------------- jax_privacy's auditors


def scores(seed: int, member, non_member, n: int = 500) -> tuple[list[float], list[float]]:
    rng = random.Random(seed)
    return [member(rng) for _ in range(n)], [non_member(rng) for _ in range(n)]


def exceed(name: str, true_epsilon: Fraction, seeds, member, non_member) -> int:
    """How many seeds' ε lower bound (significance 0.05, δ = 1e-5) is above the mechanism's true ε(δ), beyond the
    root finder's tolerance."""
    auditor = peer("auditor", name)
    count = 0
    for seed in seeds:
        value = auditor(*scores(seed, member, non_member), 0.05, float(DELTA))
        count += tp.classify_lower_bound(value, true_epsilon, true_epsilon + tp.NOISE_EPSILON) == "unsafe"
    return count


def test_epsilon_from_gdp_proves_leakage_of_a_mechanism_with_none():
    """Members and non-members scored by the same law (the run q = 1, sigma = 1e6, one step: mu = 1e-6, delta(0) =
    4e-7, so epsilon(1e-5) = 0 exactly). A valid 95 % lower bound exceeds 0 on about 5 % of seeds; jax_privacy's
    epsilon_from_gdp does on (nearly) every one: it takes |mu| of the boxes' corners, and a corner with
    FPR_U + FNR_U > 1 (a useless threshold) gives a negative mu whose absolute value is not a bound."""
    mu = mp.mpf("1e-6")
    assert gaussian_epsilon(mu, DELTA) == 0
    same = (lambda r: r.gauss(1e-6, 1), lambda r: r.gauss(0, 1))
    assert exceed("jax_privacy_gdp", Fraction(0), range(10), *same) >= 9  # a valid 5 % method: P(>= 9 of 10) < 2e-11
    assert exceed("jax_privacy_clopper_pearson", Fraction(0), range(10), *same) <= 2


def test_one_run_fdp_exceeds_the_true_epsilon_of_a_laplace_mechanism():
    """Laplace noise of scale 1 on a sensitivity-1 score: epsilon(1e-5) = 1 + 2 log(1 - 1e-5) < 1 (pure 1-DP).
    jax_privacy's one-run f-DP audit tests the Gaussian curve with the (epsilon, delta) of a Gaussian mechanism
    (``_gaussian_dp_blow_up_inverse``), not the (epsilon, delta)-DP curve, so on Laplace canaries it exceeds the true
    epsilon far more often than its significance allows; epsilon_from_gdp converts a GDP fit, and exceeds it always."""
    true = mp.mpf(1) + 2 * mp.log(1 - mp.mpf(DELTA.numerator) / DELTA.denominator)
    lo, hi = ball(true, Fraction(1, 10**30))
    assert hi < 1
    laplace = (lambda r: 1 + r.expovariate(1) - r.expovariate(1), lambda r: r.expovariate(1) - r.expovariate(1))
    assert exceed("jax_privacy_one_run_fdp", hi, range(8), *laplace) >= 3  # a valid 5 % method: P(>= 3 of 8) < 6e-3
    assert exceed("jax_privacy_gdp", hi, range(8), *laplace) >= 7
    assert exceed("jax_privacy_one_run", hi, range(8), *laplace) <= 2


def test_auditors_on_the_shipped_canaries_against_the_closed_form_epsilon():
    """examples/canaries-mu1.csv is drawn from N(1, 1) against N(0, 1): the run q = 1, sigma = 2, 4 steps exactly
    (mu = 1, epsilon(1e-5) = 4.3772 by Balle-Wang). No auditor exceeds it there. canaries-mu3.csv (mu = 3,
    epsilon(1e-5) = 16.675) is a far stronger attack: the estimates above 4.3772 flag it against the mu = 1 run,
    and none exceeds the mu = 3 mechanism's own epsilon."""
    for name in tp.TRADEOFF_PEERS:
        if tp.TRADEOFF_PEERS[name].kind == "auditor":
            peer("auditor", name)
    names = [n for n, p in tp.TRADEOFF_PEERS.items() if p.kind == "auditor"]
    run = Phase(Fraction(1), Fraction(2), 4)
    mu1 = Target(run, DELTA, *ball(gaussian_epsilon(mp.mpf(1), DELTA)))
    assert Fraction(43771, 10**4) < mu1.lower < mu1.upper < Fraction(43772, 10**4)
    canaries = [tp.parse_scores((ROOT / f).read_text(), f) for f in ("examples/canaries-mu1.csv",
                                                                     "examples/canaries-mu3.csv")]
    points = tp.compare_auditors(names, canaries, [mu1], Fraction(95, 100))
    assert len(points) == 8
    on = {(p.peer, p.at[0]): p for p in points}
    assert all(on[n, "examples/canaries-mu1.csv"].classification == "conservative" for n in names)
    assert on["jax_privacy_gdp", "examples/canaries-mu3.csv"].classification == "unsafe"
    mu3 = gaussian_epsilon(mp.mpf(3), DELTA)
    assert all(p.value < mu3 for p in points)


def test_an_auditor_is_run_once_per_file_and_delta(monkeypatch):
    calls = []

    def fake(members, non_members, significance, delta):
        calls.append((len(members), significance, delta))
        return 1.0

    monkeypatch.setattr(tp, "load_auditor", lambda name: fake)
    c = tp.Canaries("c.csv", (1.0, 2.0), (0.0,))
    runs = [Target(Phase(Fraction(1), Fraction(s), 1), DELTA, Fraction(1, 2), Fraction(3, 2)) for s in (1, 2)]
    points = tp.compare_auditors(["a"], [c], runs, Fraction(9, 10))
    assert [p.classification for p in points] == ["exact", "exact"]
    assert calls == [(2, pytest.approx(0.1), 1e-5)]
    with pytest.raises(InputError, match="confidence 3/2"):
        tp.compare_auditors(["a"], [c], runs, Fraction(3, 2))


# ---------------------------------------------------------------- inputs


@pytest.mark.parametrize("text, message", [
    ("threshold,tp,fp,tn,fn\n0.5,1,2,3,4\n", "the auditors need the columns score,member"),
    ("score,member\n0.3,1\n0.9,1\n", "need both members and non-members"),
    ("score,member\n0.3,yes\n", "member 'yes' is not a label"),
    ("score,member\nabc,1\n", "row 2: score"),
    ("score,member\n1e400,1\n0,0\n", "beyond the range of a double"),
    ("score,member\n", "has no rows"),
])
def test_bad_score_files_are_refused_in_one_line(text, message):
    with pytest.raises(InputError, match=message):
        tp.parse_scores(text, "f.csv")


def test_scores_are_the_nearest_doubles_and_split_by_label():
    c = tp.parse_scores("score,member\n0.1,1\n-2,0\n3/4,1\n", "f.csv")
    assert c.members == (0.1, 0.75) and c.non_members == (-2.0,) and c.label == "f.csv"


def test_unknown_names_are_refused():
    with pytest.raises(InputError, match="unknown trade-off curve peer 'jax_privacy_gdp'"):
        tp.load_curve("jax_privacy_gdp")
    with pytest.raises(InputError, match="unknown trade-off auditor peer 'riskcal'"):
        tp.load_auditor("riskcal")


def test_every_peer_names_its_install_line():
    assert {p.library for p in tp.TRADEOFF_PEERS.values()} == {"riskcal", "dp_accounting", "jax_privacy"}
    assert all("pip install" in p.install for p in tp.TRADEOFF_PEERS.values())
    assert math.isfinite(float(tp.NOISE_BETA)) and tp.NOISE_BETA < Fraction(1, 10**10)
