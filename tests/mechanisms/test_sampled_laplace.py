"""Poisson-sampled Laplace: one use, both directions, against mpmath quadrature of the two densities; five uses
against dp_accounting's PLDs (a peer)."""

from fractions import Fraction

import mpmath as mp
import pytest

from rdp_verify.foundations.inputs import InputError
from rdp_verify.mechanisms.laplace import Laplace
from rdp_verify.mechanisms.sampled_laplace import SampledLaplace
from rdp_verify.pld.rounding import discretize
from tests.mechanisms.checks import BITS, PREC, TAIL, brackets_and_shrinks, composed, frac_mpf, holds
from tests.mechanisms.peer import assert_consistent, peer_deltas

SLACK = Fraction(1, 10**25)


def reference(b, q, s, eps, direction):
    """∫ (A − e^ε B)_+ for (A, B) = (P, Q) (remove) or (Q, P) (add), split where A = e^ε B (independent of the module)."""
    def lap(x, c):
        return mp.exp(-abs(x - c) / b) / (2 * b)

    def p(x):
        return (1 - q) * lap(x, 0) + q * lap(x, -s)

    a, bb = (p, lambda x: lap(x, 0)) if direction == "remove" else (lambda x: lap(x, 0), p)
    e = mp.exp(eps)

    def gap(x):
        return mp.log(a(x)) - mp.log(bb(x)) - eps

    points = [-mp.inf, -s, 0, mp.inf]
    if gap(-s) * gap(0) < 0:  # the ratio is monotone on (−s, 0) and constant outside
        points.insert(2, mp.findroot(gap, (-s, mp.mpf(0)), solver="anderson"))
    return mp.quad(lambda x: max(a(x) - e * bb(x), 0), points)


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_one_use_brackets_the_quadrature_and_shrinks_like_h(direction):
    m = SampledLaplace(Fraction(1, 2), Fraction(1, 5))
    coarse, fine = (m.plds(h, BITS, TAIL) for h in (Fraction(1, 200), Fraction(1, 400)))
    with mp.workdps(40):
        for eps in (Fraction(-1, 4), Fraction(0), Fraction(1, 10), Fraction(1, 5)):
            ref = reference(mp.mpf(1) / 2, mp.mpf(1) / 5, 1, frac_mpf(eps), direction)
            exact = m.delta_exact(eps, PREC, direction)
            assert holds(exact, ref, exact, SLACK)
            brackets_and_shrinks(coarse, fine, direction, eps, ref, SLACK)


def test_the_directions_differ_and_q_one_is_laplace():
    m = SampledLaplace(Fraction(1), Fraction(1, 10))
    assert not m.delta_exact(Fraction(1, 20), PREC).overlaps(m.delta_exact(Fraction(1, 20), PREC, "add"))
    full, lap = SampledLaplace(Fraction(1), Fraction(1)), Laplace(Fraction(1))
    assert full.is_symmetric()
    a = full.plds(Fraction(1, 64), BITS, TAIL)  # sampling at q = 1 rounds the Laplace pair's losses
    b = {(d, bound): pld for d in ("remove", "add")
         for bound, pld in zip(("upper", "lower"), discretize(lap.pair(), d, Fraction(1, 64), BITS, TAIL))}
    assert all(a[key].coeffs == b[key].coeffs and a[key].offset == b[key].offset for key in a)


def test_five_uses_agree_with_dp_accounting():
    k, m = 5, SampledLaplace(Fraction(1), Fraction(1, 4))
    plds = m.plds(Fraction(1, 500), BITS, TAIL)
    lowers, uppers = {}, {}
    for direction in ("remove", "add"):
        lowers[direction], uppers[direction] = composed(plds, direction, k)

    def build(pessimistic):
        from dp_accounting.pld import privacy_loss_distribution as pld
        return pld.from_laplace_mechanism(1.0, sampling_prob=0.25, pessimistic_estimate=pessimistic,
                                          value_discretization_interval=1e-4)

    assert_consistent(lowers, uppers, peer_deltas(build, k, [Fraction(1, 4), Fraction(1), Fraction(2)]))


@pytest.mark.parametrize("b, q", [(Fraction(1), Fraction(0)), (Fraction(1), Fraction(3, 2)), (Fraction(0), Fraction(1, 2)),
                                  (float("nan"), Fraction(1, 2)), (Fraction(1), float("inf"))])
def test_parameters_are_validated(b, q):
    with pytest.raises(InputError):
        SampledLaplace(b, q)
