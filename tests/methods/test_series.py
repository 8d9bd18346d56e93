import mpmath
import pytest
from oracles import binomial_log_a, mp

from rdp_verify.foundations.inputs import SGM
from rdp_verify.methods import series


def test_integer_sum_matches_direct_sum():
    result = series.compute(SGM.parse("0.1", "0.5", "256"), 45)
    assert result.work["A"]["scheme"].startswith("finite binomial sum")
    with mpmath.workdps(80):
        assert abs(mp(result.log_a.value) - binomial_log_a("0.1", "0.5", 256)) <= mp(result.log_a.error)


def test_plain_split_used_where_it_converges():
    # q = 0.01, σ = 4: z1 ≈ 74 is far in the tail, the eq. (12) series converge fast.
    result = series.compute(SGM.parse("0.01", "4", "10.7"), 45)
    assert "split at z1" in result.work["A"]["scheme"]


@pytest.mark.parametrize("q, sigma, alpha", [("0.5", "0.5", "2.5"), ("0.9", "0.3", "3.5"), ("0.01", "1.1", "1.1")])
def test_hard_regime_switches_to_three_way_split(q, sigma, alpha):
    # Terms of eq. (12) decay like k^(−α−2) here; the three-way split must take over
    # and still reach the target.
    result = series.compute(SGM.parse(q, sigma, alpha), 45)
    assert result.work["A"]["scheme"].startswith("three-way")
    assert result.log_a.error < abs(result.log_a.value) * 1e-35


def test_truncation_bound_is_honest():
    # At 30 and 60 working digits the values must agree within the 30-digit bound.
    sgm = SGM.parse("0.4", "12", "58.7")
    low, high = series.compute(sgm, 30), series.compute(sgm, 60)
    for key in ("log_a", "log_b"):
        lo, hi = getattr(low, key), getattr(high, key)
        assert abs(lo.value - hi.value) <= lo.error + hi.error


def test_q_one_is_exact():
    result = series.compute(SGM.parse("1", "3", "2.5"), 30)
    assert result.log_a.error == 0 and result.log_a.value == result.log_b.value
