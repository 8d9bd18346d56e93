"""Canary audits: exact Clopper–Pearson bounds (against mpmath's incomplete beta), exact parsing and refusals,
the level rules (a cherry-picked threshold), the screen against the exhaustive audit, and verdicts on synthetic
attacks whose true trade-off curve is known."""

import json
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.run import Phase
from rdp_verify.tradeoff import audit_canaries, parse_canaries, read_canaries, tradeoff
from rdp_verify.tradeoff.canaries import clopper_pearson_upper, empirical_epsilon
from rdp_verify.tradeoff.canary_report import check_canary_report


@pytest.fixture(autouse=True)
def _digits():
    """30 digits for this module\'s mpmath references, restored after each test (a module-level mp.dps
    would depend on the order in which the test files are imported)."""
    with mp.workdps(30):
        yield


@pytest.mark.parametrize("k,n,level", [(0, 1000, Fraction(1, 40)), (5, 100, Fraction(1, 40)), (99, 100, Fraction(1, 10**4)),
                                       (3, 10**6, Fraction(1, 10**7)), (500, 1000, Fraction(1, 2))])
def test_clopper_pearson_against_mpmath(k, n, level):
    p = clopper_pearson_upper(k, n, level)

    def cdf(x):  # P(Binomial(n, x) ≤ k) = 1 − I_x(k + 1, n − k)
        return 1 - mp.betainc(k + 1, n - k, 0, mp.mpf(x.numerator) / x.denominator, regularized=True)

    assert cdf(p) <= mp.mpf(level.numerator) / level.denominator  # at or above the exact quantile
    assert cdf(p * (1 - Fraction(1, 10**5))) > mp.mpf(level.numerator) / level.denominator  # and close to it
    if k == 0:  # closed form: 1 − level^{1/n}
        assert abs(mp.mpf(p.numerator) / p.denominator - (1 - (mp.mpf(level.numerator) / level.denominator) ** (mp.mpf(1) / n))) < 1e-6 * p


def test_all_trials_are_events():
    assert clopper_pearson_upper(7, 7, Fraction(1, 100)) == 1


def test_empirical_epsilon():
    # log((1 − δ − FNR)/FPR) and log((1 − δ − FPR)/FNR): the larger, rounded down
    eps = empirical_epsilon(Fraction(1, 100), Fraction(1, 2), Fraction(0))
    assert abs(float(eps) - float(mp.log(50))) < 1e-12 and mp.mpf(eps.numerator) / eps.denominator <= mp.log(50)
    assert empirical_epsilon(Fraction(1), Fraction(1), Fraction(0)) is None


def _generator():
    """examples/make_canaries.py, the one seeded generator of canary scores."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "make_canaries", Path(__file__).resolve().parents[2] / "examples" / "make_canaries.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_canaries = _generator()


def scores(mu, seed, n=500, digits=6):
    return make_canaries.scores(mu, seed, n, digits)


@pytest.fixture(scope="module")
def mu_one():
    return tradeoff([Phase(Fraction(1), Fraction(2), 4)])  # exactly 1-GDP


@pytest.mark.parametrize("mu,verdict", [(3, "bug"), pytest.param(2.5, "bug", marks=pytest.mark.slow), (1, "consistent"),
                                        pytest.param(0.5, "consistent", marks=pytest.mark.slow)])
def test_synthetic_attacks(mu_one, mu, verdict):
    """Scores N(μ', 1) vs N(0, 1): the best test's curve is G_μ'. Far above the certified μ = 1: bug; at or
    below it: consistent (fixed seeds)."""
    report = audit_canaries(mu_one, parse_canaries(scores(mu, seed=11)))
    assert report["verdict"] == verdict
    assert report["thresholds"] > 900 and Fraction(report["bonferroni_level"]) == Fraction(1, 40 * report["thresholds"])
    emp, proven = Fraction(report["empirical_epsilon_lower"]), Fraction(report["proven_epsilon"]["upper"])
    if verdict == "consistent":
        assert emp < proven  # a consistent attack never proves more than the certified epsilon
    assert report["auditing_gap"] == f"{float(emp / proven):.6g}" or abs(float(report["auditing_gap"]) - float(emp / proven)) < 1e-5


def test_counts_at_the_boundary(mu_one):
    # perfect separation: with 1000 of each, the box is tiny and far below G_1; with 3 of each it is not
    big = parse_canaries("threshold,tp,fp,tn,fn\n0,1000,0,1000,0\n")
    assert audit_canaries(mu_one, big)["verdict"] == "bug"
    small = parse_canaries("threshold,tp,fp,tn,fn\n0,3,0,3,0\n")
    assert audit_canaries(mu_one, small)["verdict"] == "consistent"
    # a constant score: one threshold, everything called a member (FPR = 1, FNR = 0): consistent
    constant = parse_canaries("score,member\n0.5,1\n0.5,0\n0.5,1\n")
    assert len(constant) == 1 and audit_canaries(mu_one, constant)["verdict"] == "consistent"


@pytest.mark.parametrize("text,message", [
    ("score,member\n1,1\n2,1\n", "both members and non-members"),
    ("score,member\n1,0\n2,0\n", "both members and non-members"),
    ("score\n1\n2\n", "needs the columns"),
    ("score,member\n1,maybe\n", "is not a label"),
    # issue 27: only 1 and 0 are labels (before: yes/no, in/out, true/false were guessed); a row with more
    # cells than the header (before: 1,1,9 read as score 1, member 1); digits that are not ASCII
    ("score,member\n1,yes\n0,no\n", "is not a label"),
    ("score,member\n1,true\n0,false\n", "is not a label"),
    ("score,member\n1,1,9\n0,0\n", "3 cells, the header 2"),
    ("threshold,tp,fp,tn,fn\n1,\u00b2,1,1,1\n", "not a whole number"),
    ("threshold,tp,fp,tn,fn\n1," + "9" * 5000 + ",1,1,1\n", "not a whole number"),
    ("score,member\nnan,1\n2,0\n", "score"),
    ("threshold,tp,fp,tn,fn\n0,-1,2,3,4\n", "not a whole number"),
    ("threshold,tp,fp,tn,fn\n0,0,2,3,0\n", "members"),
    ("", "is empty"),
    ("score,member\n", "no rows"),
])
def test_bad_files(text, message):
    with pytest.raises(InputError, match=message):
        parse_canaries(text)


def test_bad_confidence_and_delta(mu_one):
    counts = parse_canaries("threshold,tp,fp,tn,fn\n0,3,0,3,0\n")
    for bad in (Fraction(0), Fraction(1), Fraction(3, 2)):
        with pytest.raises(InputError, match="confidence"):
            audit_canaries(mu_one, counts, confidence=bad)
    with pytest.raises(InputError):
        audit_canaries(mu_one, counts, delta=Fraction(2))


def test_shipped_canary_files_are_reproducible():
    """examples/make_canaries.py regenerates the shipped files byte for byte."""
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "examples"
    assert (examples / "canaries-mu3.csv").read_text() == make_canaries.scores(3, 2026)
    assert (examples / "canaries-mu1.csv").read_text() == make_canaries.scores(1, 2027)


def test_bonferroni_over_data_chosen_thresholds():
    """With scores, thresholds are chosen by the data: the level divides by max(m, members, non-members); counts
    rows get that level too unless they are said to be fixed in advance (then gamma/(2m))."""
    from rdp_verify.tradeoff.canaries import bonferroni_level

    tied = parse_canaries("score,member\n" + "1,1\n" * 40 + "0,0\n" * 30)  # two distinct scores
    assert len(tied) == 2 and bonferroni_level(tied, Fraction(95, 100)) == Fraction(1, 20) / 80
    given = parse_canaries("threshold,tp,fp,tn,fn\n0,40,0,30,0\n1,20,0,30,20\n")
    assert bonferroni_level(given, Fraction(95, 100)) == Fraction(1, 20) / 80
    assert bonferroni_level(given, Fraction(95, 100), fixed_in_advance=True) == Fraction(1, 20) / 4
    with pytest.raises(InputError, match="chosen by the data, not fixed in advance"):
        bonferroni_level(tied, Fraction(95, 100), fixed_in_advance=True)


@pytest.mark.parametrize("text,why", [
    ("threshold,tp,fp,tn,fn\n0,40,0,30,0\n1,20,0,31,20\n", "the same members and non-members"),
    ("threshold,tp,fp,tn,fn\n0,40,2,28,0\n1,20,5,25,20\n", "not nested"),
    ("threshold,tp,fp,tn,fn\n0,20,0,30,20\n1,40,2,28,0\n", "a higher threshold has more positives"),
    ("threshold,tp,fp,tn,fn\n0.5,20,0,30,20\n0.5,40,2,28,0\n", "a higher threshold has more positives"),
])
def test_counts_rows_that_cannot_be_one_attack_are_refused(mu_one, text, why):
    """Issue 30: without --thresholds-fixed-in-advance, counts rows get the level valid for any threshold of one
    list of scores, so rows that cannot be that are refused in one line; with the flag they are audited."""
    counts = parse_canaries(text)
    with pytest.raises(InputError, match=why) as caught:
        audit_canaries(mu_one, counts)
    assert "--thresholds-fixed-in-advance" in str(caught.value) and "\n" not in str(caught.value)
    report = audit_canaries(mu_one, counts, fixed_in_advance=True)
    assert report["level_rule"] == "fixed-in-advance" and Fraction(report["bonferroni_level"]) == Fraction(1, 80)


def test_labels_as_thresholds_are_checked_by_their_counts(mu_one):
    nested = parse_canaries("threshold,tp,fp,tn,fn\nhigh,20,0,30,20\nlow,40,2,28,0\n")
    assert audit_canaries(mu_one, nested)["level_rule"] == "any-threshold"


def test_cherry_picking_a_threshold_no_longer_says_bug(mu_one):
    """Issue 30: an attack exactly as strong as the run (scores N(1, 1) against N(0, 1), a 1-GDP run), the
    best-looking threshold picked after seeing the scores (the one whose box at the single-row Bonferroni
    level gamma/2 reaches furthest below G_1, found with scipy) and submitted alone. At gamma/(2m) = gamma/2 that
    is a false bug on seeds 0 and 4 of 10; at the level valid for any threshold of the scores, never."""
    from scipy.special import betainccinv, ndtr, ndtri

    def bound(k, n, level):
        k = np.asarray(k, dtype=float)
        out = np.ones_like(k)
        out[k < n] = betainccinv(k[k < n] + 1, n - k[k < n], level)
        return out

    def g1(a):
        return ndtr(ndtri(1 - a) - 1)

    fixed_bugs = []
    for seed in range(10):
        c = parse_canaries(scores(1, seed, n=1000, digits=4))
        fpr, fnr = bound(c.fp, 1000, 0.025), bound(c.fn, 1000, 0.025)
        best = c[int(np.argmax(np.maximum(g1(fpr) - fnr, g1(fnr) - fpr)))]
        row = parse_canaries(f"threshold,tp,fp,tn,fn\n{best.threshold},{best.tp},{best.fp},{best.tn},{best.fn}\n")
        honest = audit_canaries(mu_one, row)
        assert honest["verdict"] == "consistent" and honest["level_rule"] == "any-threshold"
        assert Fraction(honest["bonferroni_level"]) == Fraction(1, 20) / 2000
        if audit_canaries(mu_one, row, fixed_in_advance=True)["verdict"] == "bug":
            fixed_bugs.append(seed)
    assert fixed_bugs == [0, 4]  # what the per-row level says of a row picked after the fact


def exact_counts(text):
    """Reference: thresholds by exact value (Fractions), highest first, with (tp, fp) -- no floats at all."""
    rows = [line.split(",") for line in text.strip().splitlines()[1:]]
    values = sorted({Fraction(s) if "/" not in s else Fraction(*map(int, s.split("/"))) for s, _ in rows},
                    reverse=True)
    scored = [(Fraction(s) if "/" not in s else Fraction(*map(int, s.split("/"))), m == "1") for s, m in rows]
    return [(v, sum(m for x, m in scored if x >= v), sum(not m for x, m in scored if x >= v)) for v in values]


@pytest.mark.parametrize("text", [
    # one value written two ways is one threshold; two values that round to one double are two, in exact order
    "score,member\n1.0,1\n1,0\n1.00,1\n0.5,0\n",
    "score,member\n0.1,1\n0.1000000000000000000001,0\n0.09999999999999999999,1\n0.1,0\n0,0\n",
    "score,member\n1/3,1\n0.3333333333333333,0\n0.33333333333333331,1\n2/6,0\n",
    "score,member\n1e400,1\n2e400,0\n-1e400,1\n-0,0\n0,1\n+0.0,0\n1e-400,1\n",
    "score,member\n" + "".join(f"{(i * 7919) % 101 / 8},{i % 3 == 0:d}\n" for i in range(300)),
])
def test_scores_are_read_exactly(text):
    table = parse_canaries(text)
    reference = exact_counts(text)
    assert [(Fraction(c.threshold), c.tp, c.fp) for c in table] == reference
    assert all(c.from_scores and c.members + c.non_members == len(text.strip().splitlines()) - 1 for c in table)


def test_the_screen_changes_nothing():
    """Issue 30: the screened audit (blocks of thresholds cleared by proven bounds at their corners, a branch and
    bound for the empirical epsilon) and the exhaustive one (every threshold's box proven) give the same report,
    field for field, on 20000 canaries (scores to 2 decimals: about 700 thresholds, each box in a few ms)."""
    run = tradeoff([Phase(Fraction(1), Fraction(2), 4)], fprs=[Fraction(1, 10**4)])
    counts = parse_canaries(scores(1, 3, n=10**4, digits=2))
    screened = audit_canaries(run, counts)
    assert screened == audit_canaries(run, counts, screen=False)
    assert screened["verdict"] == "consistent" and len(counts) > 600 and screened["strongest"]["rank"] == 110


def test_the_screen_changes_nothing_when_boxes_lie_below(mu_one):
    counts = parse_canaries(scores(1.5, 4, n=2000, digits=2))
    screened = audit_canaries(mu_one, counts)
    assert screened == audit_canaries(mu_one, counts, screen=False)
    assert screened["verdict"] == "bug" and len(screened["below_curve"]) == 10
    assert screened["verdict_reason"].startswith("at least 10 threshold(s) have their whole confidence box below")
    rows = "threshold,tp,fp,tn,fn\n" + "".join(f"{c.threshold},{c.tp},{c.fp},{c.tn},{c.fn}\n" for c in counts)
    as_rows = parse_canaries(rows)  # the same thresholds as counts rows (a chain: screened too)
    assert as_rows.monotone and not as_rows.from_scores
    from_rows = audit_canaries(mu_one, as_rows)
    assert from_rows == audit_canaries(mu_one, as_rows, screen=False)
    assert [b["rank"] for b in from_rows["below_curve"]] == [b["rank"] for b in screened["below_curve"]]


def test_the_screen_changes_nothing_on_a_subsampled_run():
    run = tradeoff([Phase(Fraction(1, 2), Fraction(1), 3)], fprs=[Fraction(1, 200)])
    counts = parse_canaries(scores(2.5, 8, n=120, digits=2))
    screened = audit_canaries(run, counts)
    assert screened == audit_canaries(run, counts, screen=False) and screened["verdict"] == "bug"


@pytest.mark.slow
def test_a_million_canaries(tmp_path):
    """Issue 30: a million canaries through the command line (seconds on 2 cores; the benchmark times it), with the
    verdict and empirical epsilon of an independent float64 check (scipy's incomplete beta inverse, G_1 in
    closed form): the screened audit's epsilon is proven, the float one within 1e-6 of it."""
    from scipy.special import betainccinv, ndtr, ndtri

    from rdp_verify.cli import main

    for mu, seed, verdict in ((1, 7, "consistent"), (1.05, 8, "bug")):
        path, out = tmp_path / "million.csv", tmp_path / "r.json"
        path.write_text(scores(mu, seed, n=500000, digits=6))
        code = main(["audit", "--q", "1", "--sigma", "2", "--steps", "4", "--canaries", str(path), "--out", str(out)])
        report = json.loads(out.read_text())
        assert code == (verdict == "bug") and report["verdict"] == verdict
        counts = read_canaries(path)
        level = float(Fraction(report["bonferroni_level"]))
        fpr = betainccinv(counts.fp + 1.0, 500000.0 - counts.fp, level)
        fnr = betainccinv(counts.fn + 1.0, 500000.0 - counts.fn, level)
        fpr[counts.fp == 500000], fnr[counts.fn == 500000] = 1.0, 1.0
        g = ndtr(ndtri(1 - fpr) - 1)
        assert bool(((fnr < g) & (fpr + fnr < 1)).any()) == (verdict == "bug")
        with np.errstate(divide="ignore", invalid="ignore"):
            eps = np.nanmax(np.maximum(np.log((1 - 1e-5 - fnr) / fpr), np.log((1 - 1e-5 - fpr) / fnr)))
        assert abs(eps - float(report["empirical_epsilon_lower"])) < 1e-5
        assert check_canary_report(report) == []
        assert out.stat().st_size < 2 * 2**20  # the membership sequence, not a million rows of counts


def test_a_byte_order_mark_is_read(tmp_path):
    # issue 27: a CSV saved by a spreadsheet starts with a UTF-8 byte-order mark; before, the first column was
    # read as "\ufeffscore" and the file refused as lacking a score column
    plain = "score,member\n3,1\n2,1\n1,0\n0,0\n"
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + plain.encode())
    assert read_canaries(path) == parse_canaries(plain)
