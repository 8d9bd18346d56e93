"""Discrete Laplace: one use against the sum over loss atoms, k uses against exact enumeration in mpmath."""

from fractions import Fraction

import mpmath as mp
import pytest
from flint import ctx

from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.results import arb_to_bounded
from rdp_verify.mechanisms.discrete_laplace import DiscreteLaplace
from tests.mechanisms.checks import BITS, PREC, TAIL, bracket, composed, frac_mpf, holds, read, width

SLACK = Fraction(1, 10**40)


def atoms(a, s):
    """{j: (P, Q)} of the loss a·j, by summing the pmf tanh(a/2)e^{−a|x|} over x (geometric tails in closed form)."""
    z = mp.tanh(a / 2)
    out = {}
    for x in range(-s - 1, 2):  # x = −s − 1 stands for x ≤ −s − 1, x = 1 for x ≥ 1: their loss is that of −s, 0
        j = abs(x) - abs(x + s)
        if x == -s - 1 or x == 1:  # Σ_{y ≥ n} z·e^{−ay} = z·e^{−an}/(1 − e^{−a})
            p = z * mp.exp(-a * abs(x + s)) / (1 - mp.exp(-a))
            q = z * mp.exp(-a * abs(x)) / (1 - mp.exp(-a))
        else:
            p, q = z * mp.exp(-a * abs(x + s)), z * mp.exp(-a * abs(x))
        old = out.get(j, (0, 0))
        out[j] = (old[0] + p, old[1] + q)
    return out


def convolve(x, y):
    out = {}
    for i, (p1, q1) in x.items():
        for j, (p2, q2) in y.items():
            old = out.get(i + j, (0, 0))
            out[i + j] = (old[0] + p1 * p2, old[1] + q1 * q2)
    return out


def delta(table, a, eps):
    return sum((p - mp.exp(eps) * q for j, (p, q) in table.items() if a * j > eps), mp.mpf(0))


def test_one_use_is_exact_on_a_grid_through_the_atoms():
    m = DiscreteLaplace(Fraction(1, 2), 3)  # losses (1/2)·{3, 1, −1, −3}: on the grid h·ℤ for h = 1/4
    plds = m.plds(Fraction(1, 4), BITS, TAIL)
    with mp.workdps(50):
        table = atoms(mp.mpf(1) / 2, 3)
        assert abs(sum(p for p, _ in table.values()) - 1) < mp.mpf(10) ** -45
        for eps in (Fraction(-1), Fraction(0), Fraction(1, 3), Fraction(1, 2), Fraction(7, 5), Fraction(2)):
            lo, up = bracket(plds, "remove", eps)
            exact = m.delta_exact(eps, PREC)
            assert holds(lo, exact, up) and holds(exact, delta(table, mp.mpf(1) / 2, frac_mpf(eps)), exact, SLACK)
            assert width(lo, up) < Fraction(10, 2**BITS)  # only the masses' rounding


def test_one_use_off_the_grid_shrinks_like_h():
    m = DiscreteLaplace(Fraction(1, 3), 2)
    for eps in (Fraction(0), Fraction(1, 5)):
        widths = []
        for h in (Fraction(1, 50), Fraction(1, 100)):
            lo, up = bracket(m.plds(h, BITS, TAIL), "add", eps)
            assert holds(lo, m.delta_exact(eps, PREC), up)
            widths.append(width(lo, up))
        assert widths[1] <= Fraction(6, 10) * widths[0]


def test_k_uses_bracket_exact_enumeration():
    k, m = 7, DiscreteLaplace(Fraction(2, 5), 2)
    lower, upper = composed(m.plds(Fraction(1, 100), BITS, TAIL), "remove", k)
    with mp.workdps(50):
        one = atoms(mp.mpf(2) / 5, 2)
        table = one
        for _ in range(k - 1):
            table = convolve(table, one)
        for eps in (Fraction(0), Fraction(1), Fraction(2), Fraction(3)):
            lo, up = read(lower, eps), read(upper, eps)
            assert holds(lo, delta(table, mp.mpf(2) / 5, frac_mpf(eps)), up, SLACK)
            assert width(lo, up) < Fraction(1, 10**6)  # the losses 2/5·j lie on the grid: only the masses round


@pytest.mark.parametrize("a, s", [(Fraction(0), 1), (Fraction(-1), 1), (float("nan"), 1), (Fraction(1), 0),
                                  (Fraction(1), Fraction(1)), (Fraction(1), 1.0), (Fraction(1), -2)])
def test_parameters_are_validated(a, s):
    with pytest.raises(InputError):
        DiscreteLaplace(a, s)


# -- Rényi DP (discrete_laplace_rdp, a closed form derived in the module) against mpmath sums over ℤ ----------------


def renyi_sum(a, s, alpha):
    """D_α(DLap(a) − s ‖ DLap(a)) = log Σ_x P(x)^α Q(x)^{1−α}/(α − 1), summed over ℤ by mpmath (nsum to ±∞, the
    pmf tanh(a/2)·e^{−a·|x|} written out)."""
    with mp.workdps(50):
        av, al = frac_mpf(a), frac_mpf(alpha)
        pmf = lambda x: mp.tanh(av / 2) * mp.exp(-av * abs(x))  # noqa: E731
        term = lambda x: pmf(x + s) ** al * pmf(x) ** (1 - al)  # noqa: E731
        total = mp.nsum(term, [-mp.inf, -s]) + mp.nsum(term, [-s + 1, mp.inf])  # split at the kink
        return mp.log(total) / (al - 1)


@pytest.mark.parametrize("a, s, alpha", [(Fraction(1), 1, Fraction(2)), (Fraction(1, 2), 3, Fraction(5, 2)),
                                         (Fraction(2), 5, Fraction(11, 10)), (Fraction(1, 10), 2, Fraction(40)),
                                         (Fraction(3), 1, Fraction(1) + Fraction(1, 10**7))])
def test_renyi_dp_is_the_sum_over_the_integers(a, s, alpha):
    with ctx.workprec(300):
        remove, add = (arb_to_bounded(x) for x in DiscreteLaplace(a, s).rdp(alpha))
    assert remove == add and remove.upper <= a * s  # symmetric, and never above the pure-DP bound as
    with mp.workdps(50):
        ref = renyi_sum(a, s, alpha)
        assert abs(frac_mpf(remove.value) - ref) < mp.mpf(10) ** -35 * ref
    assert remove.upper - remove.lower < Fraction(1, 10**60) * remove.upper

