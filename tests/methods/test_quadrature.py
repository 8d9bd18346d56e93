import mpmath
import pytest
from oracles import binomial_log_a, mp

from rdp_verify.foundations.inputs import SGM
from rdp_verify.methods import quadrature


@pytest.mark.parametrize("q, sigma, alpha", [("0.01", "4", 32), ("0.99", "0.5", 256), ("0.5", "0.5", 2), ("1", "1", 3)])
def test_estimate_covers_direct_sum(q, sigma, alpha):
    result = quadrature.compute(SGM.parse(q, sigma, str(alpha)), 45)
    with mpmath.workdps(80):
        assert abs(mp(result.log_a.value) - binomial_log_a(q, sigma, alpha)) <= mp(result.log_a.error)
    assert result.bound_kind == "estimate"


def test_error_bound_shrinks_with_precision():
    sgm = SGM.parse("0.5", "0.5", "2.5")
    low, high = quadrature.compute(sgm, 30), quadrature.compute(sgm, 60)
    assert high.log_a.error < low.log_a.error * 1e-20
    assert low.log_a.overlaps(high.log_a) and low.log_b.overlaps(high.log_b)


def test_reports_work_and_tails():
    result = quadrature.compute(SGM.parse("0.01", "1.1", "10.7"), 40)
    work = result.work["A"]
    assert work["subintervals"] >= 3 and work["evaluations"] > 100
    assert float(work["relative_tail_bound"]) < 1e-40
