"""One-run audits (rdp_verify.tradeoff.one_run): p-values against exact and 60-digit sums, the f-DP recursion
against a 60-digit evaluation, jax_privacy's CanaryScoreAuditor numbers on its own test setup, and the seeded
example files against a run."""

from fractions import Fraction
from math import comb
from statistics import NormalDist

import mpmath as mp
import numpy as np
import pytest

from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.results import lower_end, upper_end
from rdp_verify.foundations.run import Phase
from rdp_verify.tradeoff import one_run as o
from rdp_verify.tradeoff import read_canaries, tradeoff


@pytest.fixture(autouse=True)
def _digits():
    """60 digits for this module\'s mpmath references, restored after each test (a module-level mp.dps
    would depend on the order in which the test files are imported)."""
    with mp.workdps(60):
        yield


def exact_p_value_half(m, r, v, delta):
    """Steinke et al.'s p-value at eps = 0 (q = 1/2) in exact rationals: beta + 2 m delta max_i S_i / i."""
    pmf = [Fraction(comb(r, j), 2**r) for j in range(r + 1)]
    beta = sum(pmf[v:], Fraction(0))
    best, total = Fraction(0), Fraction(0)
    for i in range(1, v + 1):
        total += pmf[v - i]
        best = max(best, total / i)
    return min(beta + 2 * m * Fraction(delta) * best, Fraction(1))


def mp_p_value(m, r, v, eps, delta):
    """The same p-value at any eps by direct summation in 60 digits (every i, every term)."""
    q = 1 / (1 + mp.exp(-mp.mpf(eps.numerator) / eps.denominator))
    pmf = [comb(r, j) * q**j * (1 - q) ** (r - j) for j in range(r + 1)]
    beta = mp.fsum(pmf[v:])
    best, total = mp.mpf(0), mp.mpf(0)
    for i in range(1, v + 1):
        total += pmf[v - i]
        best = max(best, total / i)
    return min(beta + 2 * m * mp.mpf(delta.numerator) / delta.denominator * best, mp.mpf(1))


@pytest.mark.parametrize("m, r, v, delta", [(10, 10, 9, Fraction(1, 10**6)), (40, 30, 25, Fraction(1, 1000)),
                                             (100, 60, 45, Fraction(0)), (7, 5, 5, Fraction(1, 7)),
                                             (50, 50, 1, Fraction(1, 10**3))])
def test_p_value_at_eps_zero_encloses_the_exact_rational(m, r, v, delta):
    exact = exact_p_value_half(m, r, v, delta)
    up = o.one_run_p_value_upper(m, r, v, Fraction(0), delta)
    assert exact <= up <= exact * (1 + Fraction(1, 10**25))


@pytest.mark.parametrize("m, r, v, eps, delta", [(20000, 3376, 2807, Fraction(113, 100), Fraction(1, 10**6)),
                                                  (1000, 400, 390, Fraction(3), Fraction(1, 10**5)),
                                                  (500, 200, 120, Fraction(1, 3), Fraction(1, 100))])
def test_p_value_upper_bounds_a_60_digit_direct_sum(m, r, v, eps, delta):
    ref = mp_p_value(m, r, v, eps, delta)
    up = o.one_run_p_value_upper(m, r, v, eps, delta)
    assert ref <= mp.mpf(up.numerator) / up.denominator <= ref * (1 + mp.mpf(10) ** -18)
    assert abs(o.one_run_p_value_float(m, r, v, float(eps), float(delta)) / float(ref) - 1) < 1e-9


def mp_recursion(m, k, c, level, mu):
    """The recursion of Mahloujifar et al. against G_mu in 60 digits: r + h - k/m at the end."""
    r, h = mp.mpf(level.numerator) / level.denominator * c / m, mp.mpf(level.numerator) / level.denominator * (k - c) / m
    target = mp.mpf(k) / m
    for i in range(c - 1, -1, -1):
        if r + h > target:
            break
        g = mp.ncdf(-mp.sqrt(2) * mp.erfinv(1 - 2 * r) - mu)
        if g <= h:
            break
        r, h = r + (g - h) * mp.mpf(i) / (k - i), g
    return r + h - target


@pytest.mark.parametrize("k, c, mu", [(406, 379, "0.4819"), (406, 379, "0.4821"), (448, 417, "0.481"),
                                      (938, 934, "0.97"), (120, 80, "0.3")])
def test_recursion_verdict_matches_a_60_digit_evaluation(k, c, mu):
    level = Fraction(1, 7720)
    ref = mp_recursion(20000, k, c, level, mp.mpf(mu))
    assert abs(ref) > mp.mpf(10) ** -40  # the cases are decided
    assert o.fdp_rejects(20000, k, c, level, o.GdpCurve(Fraction(mu))) == (ref > 0)


def test_inverse_blow_ups_enclose_the_closed_forms():
    from flint import arb

    for t in ("1e-9", "0.001", "0.3"):
        tb = arb(t)
        g = o.GdpCurve(Fraction(3, 2)).inverse_arb(tb)
        assert g.contains(arb(str(mp.ncdf(-mp.sqrt(2) * mp.erfinv(1 - 2 * mp.mpf(t)) - mp.mpf(1.5)))))
        e = o.EpsDeltaCurve(Fraction(1), Fraction(1, 10**6)).inverse_arb(tb)
        ref = max(0, 1 - mp.mpf("1e-6") - mp.e + mp.e * mp.mpf(t), (mp.mpf(t) - mp.mpf("1e-6")) / mp.e)
        assert e.contains(arb(str(ref))) or (ref == 0 and e.contains(arb(0)))


def test_hull_of_an_envelope_lies_below_the_exact_curve():
    from flint import arb

    run = tradeoff([Phase(q=Fraction(1), sigma=Fraction(2), steps=4)], fprs=[Fraction(1, 10**10)])  # mu = 1
    hull = o.hull_from_envelope(run.f_lower)
    xs, ys = hull.xs, hull.ys
    assert xs[0] == 0 and xs[-1] == 1 and ys[-1] == 0
    assert all(a < b for a, b in zip(xs, xs[1:])) and all(a >= b for a, b in zip(ys, ys[1:]))

    def g1(a):  # G_1(alpha), 60 digits
        return mp.ncdf(mp.sqrt(2) * mp.erfinv(1 - 2 * a) - 1)

    for x, y in zip(xs[1:-1], ys[1:-1]):  # the inner vertices, hence the whole convex piecewise-linear hull
        assert mp.mpf(y.numerator) / y.denominator <= g1(mp.mpf(x.numerator) / x.denominator)
    for t in ("1e-12", "1e-6", "0.01", "0.5"):  # B^-1 of the hull at most the exact G_1(1 - t), and close
        b = hull.inverse_arb(arb(t))
        exact = g1(1 - mp.mpf(t))
        up, low = upper_end(b), lower_end(b)
        assert mp.mpf(up.numerator) / up.denominator <= exact * (1 + mp.mpf(10) ** -30)
        assert mp.mpf(low.numerator) / low.denominator >= exact * mp.mpf("0.5")


def test_the_gaussian_epsilon_is_a_lower_end():
    mu, delta = Fraction(3, 2), Fraction(1, 10**6)
    eps = o.gaussian_epsilon_lower(mu, delta)
    m = mp.mpf(1.5)
    e = mp.mpf(eps.numerator) / eps.denominator
    d = mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)  # Balle & Wang 2018, Theorem 8
    assert d > mp.mpf("1e-6") and d < mp.mpf("1e-6") * (1 + mp.mpf(10) ** -9)


# ------------------------------------------------------------------------------------------------------
# jax_privacy's test of CanaryScoreAuditor (tests/auditing_test.py, test_epsilon_one_run_close): n = 10000
# in and out canaries with deterministic normal scores, significance 0.05, delta 1e-6; its expected values.
JAX_EXPECTED = {1: (1.13346, 2.164749), 2: (2.311945, 4.7218075), 4: (4.395568, 9.133752)}


def deterministic_normal(mu, n):
    nd = NormalDist()
    return np.array([nd.inv_cdf((i + 0.5) / n) for i in range(n)]) + mu


def hull_vertices(inn, out):
    """Vertices of the ROC's strict upper convex hull, +inf threshold included: the count jax_privacy's
    Bonferroni divides by (its _pareto_frontier), computed here by Andrew's monotone chain."""
    thresholds = np.concatenate((np.union1d(inn, out), [np.inf]))
    fn = np.searchsorted(np.sort(inn), thresholds, side="left")
    tn = np.searchsorted(np.sort(out), thresholds, side="left")
    hull = []
    for p in zip(fn.tolist(), tn.tolist()):
        while len(hull) >= 2 and ((hull[-1][0] - hull[-2][0]) * (p[1] - hull[-1][1])
                                  - (hull[-1][1] - hull[-2][1]) * (p[0] - hull[-1][0])) >= 0:
            hull.pop()
        hull.append(p)
    return len(hull)


def jax_setup(shift, n=10_000):
    inn, out = deterministic_normal(shift, n), deterministic_normal(0, n)
    thresholds = np.unique(np.concatenate([inn, out]))[::-1]
    tp = n - np.searchsorted(np.sort(inn), thresholds, side="left")
    fp = n - np.searchsorted(np.sort(out), thresholds, side="left")
    return o.Guesses(tuple(map(str, thresholds)), tp + fp, tp, 2 * n), hull_vertices(inn, out)


@pytest.mark.parametrize("shift", [4, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)])
def test_jax_privacy_numbers_at_its_level(shift):
    g, vertices = jax_setup(shift)
    level, delta = Fraction(5, 100) / vertices, Fraction(1, 10**6)
    eps = o.epsilon_one_run_lower(g, delta, level)
    mu = o.mu_one_run_fdp_lower(g, level)
    one_run, fdp = JAX_EXPECTED[shift]
    assert abs(float(eps.value) / one_run - 1) < 1e-3 and eps.p_value <= level
    assert abs(float(o.gaussian_epsilon_lower(mu.value, delta)) / fdp - 1) < 1e-3


def test_at_the_honest_level_no_threshold_can_reject_eps_delta():
    # with level gamma/m = 1/400000: every p-value is at least 2 m delta (1 - beta)/v + beta >= min(1, 2 m delta/v)
    # >= 2 * 20000 * 1e-6 / 10000 = 4e-6 > 2.5e-6, so the (eps, delta) test says nothing on this setup, while
    # jax_privacy (dividing by the ROC hull's vertices, a count the labels choose) reports 4.395568
    g, _ = jax_setup(4)
    level = Fraction(5, 100) / g.m
    assert o.epsilon_one_run_lower(g, Fraction(1, 10**6), level) is None
    assert all(o.one_run_p_value_upper(g.m, int(r), int(v), Fraction(0), Fraction(1, 10**6)) > level
               for r, v in list(zip(g.n_guess, g.n_correct))[::997] if v > 0)


# ------------------------------------------------------------------------------------------------------
# the seeded example files (examples/make_canaries.py) against the run --q 1 --sigma 8 --steps 4 (mu = 1/4)


@pytest.fixture(scope="module")
def run_quarter():
    return tradeoff([Phase(q=Fraction(1), sigma=Fraction(8), steps=4)], fprs=[Fraction(1, 10**10)])


@pytest.mark.parametrize("method", o.METHODS)
@pytest.mark.parametrize("name, verdict", [("canaries-one-run-mu4.csv", "bug"),
                                           ("canaries-one-run-mu025.csv", "consistent")])
def test_example_files_against_the_run(run_quarter, method, name, verdict):
    counts = read_canaries(f"examples/{name}")
    report = o.audit_one_run(run_quarter, counts, method=method, confidence=Fraction(95, 100),
                             delta=Fraction(1, 10**7))
    assert report["verdict"] == verdict and report["level"] == "0.000025"
    if verdict == "bug":
        hit = report["rejecting"]
        assert hit["guesses"] >= hit["correct"] > 0
        if method == "one-run":  # proven: the p-value at (eps_upper, delta) is at most the level
            assert Fraction(hit["p_value_upper"]) <= Fraction(report["level"])


def test_without_a_run_only_the_bounds(run_quarter):
    report = o.audit_one_run(None, read_canaries("examples/canaries-one-run-mu4.csv"), method="one-run",
                             confidence=Fraction(95, 100), delta=Fraction(1, 10**7))
    assert report["verdict"] is None and Fraction(report["empirical_epsilon_lower"]) > 1
    # the reported epsilon is proven at the named threshold, independently re-checked here in 60 digits
    s = report["strongest"]
    ref = mp_p_value(report["canary_count"], s["guesses"], s["correct"], Fraction(report["empirical_epsilon_lower"]),
                     Fraction(1, 10**7))
    assert ref <= mp.mpf(1) / 40000


def test_bad_input_is_refused():
    with pytest.raises(InputError):
        o.one_run_p_value_upper(10, 5, 6, Fraction(1), Fraction(0))
    with pytest.raises(InputError):
        o.epsilon_one_run_lower(o.Guesses(("1",), np.array([3]), np.array([2]), 10), Fraction(1, 10**5), Fraction(1, 2))
    from rdp_verify.tradeoff.canaries import Counts

    with pytest.raises(InputError, match="same canaries"):
        o.Guesses.from_counts([Counts("1", 3, 1, 4, 2), Counts("0", 5, 5, 0, 1)])


# ------------------------------------------------------------------------------------------------------
# the command line and the sealed report


def cli(capsys, *argv):
    from rdp_verify.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


QUARTER = ["--q", "1", "--sigma", "8", "--steps", "4", "--delta", "1e-7"]


@pytest.mark.parametrize("name, code", [("canaries-one-run-mu4.csv", 1), ("canaries-one-run-mu025.csv", 0)])
def test_cli_exit_codes_and_the_report_checks(capsys, tmp_path, name, code):
    path = tmp_path / "r.json"
    got, out, _ = cli(capsys, "audit", *QUARTER, "--method", "one-run", "--canaries", f"examples/{name}",
                      "--out", str(path))
    assert got == code and ("verdict: bug" in out) == (code == 1)
    checked, report, err = cli(capsys, "check", str(path))
    assert checked == 0 and "confirmed (1 one-run audit report" in report and err == ""


def test_a_forged_report_fails_its_check(capsys, tmp_path):
    import json

    from rdp_verify.certificates.certificate import content_hash

    path = tmp_path / "r.json"
    cli(capsys, "audit", "--delta", "1e-7", "--method", "one-run", "--canaries", "examples/canaries-one-run-mu4.csv",
        "--out", str(path))
    report = json.loads(path.read_text())
    assert report["run"] is None and report["verdict"] is None
    report["empirical_epsilon_lower"] = "5"  # claims more than the guesses show
    report["content_hash"] = content_hash(report)
    path.write_text(json.dumps(report))
    code, out, _ = cli(capsys, "check", str(path))
    assert code == 1 and "empirical_epsilon_lower" in out


@pytest.mark.parametrize("argv, message", [
    (["audit", "--method", "one-run", *QUARTER[:6]], "--method"),
    (["audit", *QUARTER, "--method", "one-run", "--canaries", "examples/canaries-one-run-mu4.csv", "--confidence", "2"],
     "confidence 2 must lie strictly between 0 and 1"),
])
def test_cli_refusals(capsys, argv, message):
    code, _, err = cli(capsys, *argv)
    assert code == 2 and message in err and err.count("\n") == 1


def test_counts_rows_not_nested_are_refused_unless_fixed_in_advance(tmp_path):
    from rdp_verify.tradeoff.canaries import Counts

    rows = [Counts("a", 30, 5, 45, 20), Counts("b", 10, 1, 49, 40), Counts("c", 40, 30, 20, 10)]
    with pytest.raises(InputError, match="fixed-in-advance"):
        o.audit_one_run(None, rows, method="one-run", confidence=Fraction(95, 100), delta=Fraction(1, 10**6))
    report = o.audit_one_run(None, rows, method="one-run", confidence=Fraction(95, 100), delta=Fraction(1, 10**6),
                             rule="fixed-in-advance")
    assert report["level"] == "1/60"  # 0.05 over the 3 rows


def test_hull_stays_below_a_curve_that_starts_below_one():
    # f_{eps, delta} with e^eps = 3, delta = 1/2: f(0) = 1/2 and f = 0 from 1/2 on (a point (a, 0) says nothing
    # about f(0)); every vertex of the hull lies on or below f
    def f(a):
        return max(Fraction(0), 1 - Fraction(1, 2) - 3 * a, (1 - Fraction(1, 2) - a) / 3)

    hull = o.hull_from_envelope(f)
    assert all(y <= f(x) for x, y in zip(hull.xs, hull.ys)) and hull.ys[0] <= Fraction(1, 2)
