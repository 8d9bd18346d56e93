from fractions import Fraction

import mpmath
import pytest
from oracles import binomial_log_a, mp

from rdp_verify.foundations.inputs import SGM
from rdp_verify.foundations.results import MethodUnavailable
from rdp_verify.methods import symbolic


@pytest.mark.parametrize("q, sigma, alpha", [("0.01", "4", 32), ("1e-12", "1e4", 2), ("0.99", "0.3", 64)])
def test_matches_direct_sum(q, sigma, alpha):
    result = symbolic.compute(SGM.parse(q, sigma, str(alpha)), 30)
    assert result.log_b is None
    with mpmath.workdps(80):
        assert abs(mp(result.log_a.value) - binomial_log_a(q, sigma, alpha)) <= mp(result.log_a.error)


def test_expression_is_exact_sympy():
    expr = symbolic.excess_expression(Fraction(1, 2), Fraction(1), 2)
    # A_2 − 1 = q²(e^{1/σ²} − 1) with q = 1/2, σ = 1
    import sympy

    assert sympy.simplify(expr - sympy.Rational(1, 4) * (sympy.E - 1)) == 0


@pytest.mark.parametrize("alpha", ["2.5", "65"])
def test_not_applicable(alpha):
    with pytest.raises(MethodUnavailable):
        symbolic.compute(SGM.parse("0.1", "1", alpha), 30)
