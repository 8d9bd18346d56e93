"""Canary audits: exact Clopper–Pearson bounds (against mpmath's incomplete beta), parsing and refusals, and
verdicts on synthetic attacks whose true trade-off curve is known."""

import random
from fractions import Fraction

import mpmath as mp
import pytest

from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.run import Phase
from rdp_verify.tradeoff import audit_canaries, parse_canaries, read_canaries, tradeoff
from rdp_verify.tradeoff.canaries import clopper_pearson_upper, empirical_epsilon

mp.mp.dps = 30


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


def scores(mu, seed, n=500):
    rng = random.Random(seed)
    rows = [f"{rng.gauss(mu, 1):.6f},1" for _ in range(n)] + [f"{rng.gauss(0, 1):.6f},0" for _ in range(n)]
    return "score,member\n" + "\n".join(rows)


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
    import importlib.util
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "examples"
    spec = importlib.util.spec_from_file_location("make_canaries", examples / "make_canaries.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (examples / "canaries-mu3.csv").read_text() == module.scores(3, 2026)
    assert (examples / "canaries-mu1.csv").read_text() == module.scores(1, 2027)


def test_bonferroni_over_data_chosen_thresholds():
    """With scores, thresholds are chosen by the data: the level divides by max(m, members, non-members)."""
    from rdp_verify.tradeoff.canaries import bonferroni_level

    tied = parse_canaries("score,member\n" + "1,1\n" * 40 + "0,0\n" * 30)  # two distinct scores
    assert len(tied) == 2 and bonferroni_level(tied, Fraction(95, 100)) == Fraction(1, 20) / 80
    given = parse_canaries("threshold,tp,fp,tn,fn\n0,40,0,30,0\n1,20,0,30,20\n")  # fixed in advance
    assert bonferroni_level(given, Fraction(95, 100)) == Fraction(1, 20) / 4


def test_a_byte_order_mark_is_read(tmp_path):
    # issue 27: a CSV saved by a spreadsheet starts with a UTF-8 byte-order mark; before, the first column was
    # read as "\ufeffscore" and the file refused as lacking a score column
    plain = "score,member\n3,1\n2,1\n1,0\n0,0\n"
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + plain.encode())
    assert read_canaries(path) == parse_canaries(plain)
