"""Laplace mechanism: one use against the closed form, two uses and Laplace + Gaussian against mpmath
quadrature over the exact law of the Laplace loss, ten uses against dp_accounting's own two PLDs (a peer, tests/mechanisms/peer.py)."""

from fractions import Fraction

import mpmath as mp
import pytest
from flint import arb, ctx

from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.results import arb_to_bounded, to_arb
from rdp_verify.mechanisms.gaussian import Gaussian
from rdp_verify.mechanisms.laplace import Laplace, LaplaceCurve
from rdp_verify.pld.compose import Budget, compose, products_needed
from tests.mechanisms.checks import (
    BITS,
    PREC,
    TAIL,
    brackets_and_shrinks,
    composed,
    frac_mpf,
    holds,
    read,
    width,
)
from tests.mechanisms.checks import (
    bracket as bracket_of,
)
from tests.mechanisms.peer import assert_consistent, peer_deltas

EPSILONS = [Fraction(-3, 2), Fraction(0), Fraction(1, 3), Fraction(9, 10), Fraction(1)]
SLACK = Fraction(1, 10**25)  # mpmath quadrature at 40 digits


def delta_one(eps, e0):
    """δ(ε) of one Laplace use, every real ε (independent of the module)."""
    if eps >= e0:
        return mp.mpf(0)
    if eps <= -e0:
        return 1 - mp.exp(eps)
    return 1 - mp.exp((eps - e0) / 2)


def expect_over_loss(f, e0, points=()):
    """E[f(L)] for L the Laplace loss under P: atoms 1/2 at ε₀ and e^{−ε₀}/2 at −ε₀, density e^{(ℓ−ε₀)/2}/4 between."""
    inner = sorted({-e0, e0, *[p for p in points if -e0 < p < e0]})
    return (f(e0) / 2 + mp.exp(-e0) * f(-e0) / 2
            + mp.quad(lambda ell: mp.exp((ell - e0) / 2) / 4 * f(ell), inner))


def test_the_law_of_the_loss_has_mass_one():
    with mp.workdps(40):
        assert abs(expect_over_loss(lambda ell: 1, mp.mpf(3) / 4) - 1) < mp.mpf(10) ** -35


def test_one_use_brackets_the_closed_form_and_shrinks_like_h():
    m = Laplace(Fraction(4, 3), Fraction(4, 3))  # ε₀ = 1
    coarse, fine = (m.plds(h, BITS, TAIL) for h in (Fraction(1, 64), Fraction(1, 128)))
    assert coarse["remove", "upper"].inf == 0  # bounded loss: nothing cut
    for eps in EPSILONS:
        exact = m.delta_exact(eps, PREC)
        brackets_and_shrinks(coarse, fine, "add", eps, exact)
        assert holds(m.hockey_stick(eps, PREC), exact, m.hockey_stick(eps, PREC))
    with mp.workdps(40):
        for eps in EPSILONS:
            assert holds(m.delta_exact(eps, PREC), delta_one(frac_mpf(eps), 1), m.delta_exact(eps, PREC), SLACK)


def test_two_uses_bracket_the_quadrature():
    m = Laplace(Fraction(2))  # ε₀ = 1/2
    lower, upper = composed(m.plds(Fraction(1, 200), BITS, TAIL), "remove", 2)
    with mp.workdps(40):
        e0 = mp.mpf(1) / 2
        for eps in (Fraction(0), Fraction(1, 4), Fraction(3, 4)):
            x = frac_mpf(eps)
            reference = expect_over_loss(lambda ell: delta_one(x - ell, e0), e0, (x - e0, x + e0))
            lo, up = read(lower, eps), read(upper, eps)
            assert holds(lo, reference, up, SLACK)
            assert width(lo, up) < Fraction(1, 100)


def test_laplace_and_gaussian_composed_bracket_the_quadrature():
    h, lap, gauss = Fraction(1, 200), Laplace(Fraction(1)), Gaussian(Fraction(2))
    a, b = lap.plds(h, BITS, TAIL), gauss.plds(h, BITS, TAIL)
    budget = Budget(int(TAIL * 2**BITS), 2, products_needed([1, 1]))
    with mp.workdps(40):
        mu = mp.mpf(1) / 2
        for eps in (Fraction(0), Fraction(1, 2), Fraction(1)):
            x = frac_mpf(eps)

            def gaussian(e):
                return mp.ncdf(mu / 2 - e / mu) - mp.exp(e) * mp.ncdf(-mu / 2 - e / mu)

            reference = expect_over_loss(lambda ell: gaussian(x - ell), mp.mpf(1))
            lo = read(compose([(a["remove", "lower"], 1), (b["remove", "lower"], 1)], budget), eps)
            up = read(compose([(a["remove", "upper"], 1), (b["remove", "upper"], 1)], budget), eps)
            assert holds(lo, reference, up, SLACK)
            assert width(lo, up) < Fraction(1, 100)


def test_ten_uses_agree_with_dp_accounting():
    k, m = 10, Laplace(Fraction(1))
    lower, upper = composed(m.plds(Fraction(1, 500), BITS, TAIL), "remove", k)

    def build(pessimistic):
        from dp_accounting.pld import privacy_loss_distribution as pld
        return pld.from_laplace_mechanism(1.0, pessimistic_estimate=pessimistic, value_discretization_interval=1e-4)

    epsilons = [Fraction(1), Fraction(3), Fraction(6)]
    assert_consistent({"remove": lower}, {"remove": upper}, peer_deltas(build, k, epsilons))
    assert all(width(read(lower, eps), read(upper, eps)) < Fraction(5, 100) for eps in epsilons)


# -- the curve behind the connect-the-dots and lowered-chord pairs (LaplaceCurve) ---------------------------------


def test_the_curve_its_slopes_and_curvature_against_the_closed_form():
    """H(e^{kh}) = δ(kh) (the closed form, mpmath), H' by mpmath's numerical derivative of δ(log x), and the
    curvature bound of each cell ≥ H'' (numerical second derivative) inside it; kinks exactly on the grid."""
    e0, h = Fraction(1), Fraction(1, 8)
    curve = LaplaceCurve(e0, h, 200)
    with mp.workdps(40):
        def H(x):
            return delta_one(mp.log(x), 1)
        for k in range(-10, 11):
            x = mp.exp(frac_mpf(k * h))
            with ctx.workprec(200):
                arb_x = (to_arb(h) * k).exp()
                value, slope = curve.values(arb_x, g_side=False, k=k)
                g_value, g_slope = curve.values(arb_x, g_side=True, k=k)
            assert holds(value, H(x), value, SLACK) and holds(g_value, H(x) - (1 - x), g_value, SLACK)
            assert holds(g_slope - 1, mp.diff(H, x, direction=-1), g_slope - 1, Fraction(1, 10**15))
            left, right = mp.diff(H, x, direction=-1), mp.diff(H, x, direction=1)
            assert holds(slope, left, slope, Fraction(1, 10**15)) and holds(slope, right, slope, Fraction(1, 10**15))
            if k < 10:
                with ctx.workprec(200):
                    bound = curve.curvature_bound(arb_x, (to_arb(h) * (k + 1)).exp(), ks=(k, k + 1))
                inside = [mp.exp(frac_mpf(k * h) + frac_mpf(h) * t) for t in (mp.mpf(1) / 10, mp.mpf(1) / 2, mp.mpf(9) / 10)]
                assert all(mp.diff(H, y, 2) <= frac_mpf(read_point(bound)) * (1 + mp.mpf(10) ** -20) for y in inside)
        assert curve.curvature_bound(arb(1), arb(2), ks=(7, 9)) == arb.pos_inf()  # the kink at k = 8 inside


def read_point(ball):
    return Fraction(ball.mid().str(40, radius=False)) if ball.is_finite() else None


def test_the_pairs_are_second_order_where_the_atoms_are_grid_points():
    m = Laplace(Fraction(1))  # ε₀ = 1: a grid point of 1/50 and 1/100
    coarse, fine = (m.plds(h, BITS, TAIL) for h in (Fraction(1, 50), Fraction(1, 100)))
    for eps in (Fraction(-1, 2), Fraction(0), Fraction(1, 3), Fraction(9, 10)):
        widths = brackets_and_shrinks(coarse, fine, "remove", eps, m.delta_exact(eps, PREC))
        assert widths[1] <= widths[0] * Fraction(3, 10)  # about a quarter: second order


def test_atoms_inside_cells_are_still_bracketed():
    """ε₀ = 1 is no grid point of h = 3/100 (kinks inside cells: only the tangent bounds hold there)."""
    m = Laplace(Fraction(1))
    plds = m.plds(Fraction(3, 100), BITS, TAIL)
    for eps in EPSILONS:
        lo, up = bracket_of(plds, "remove", eps)
        assert holds(lo, m.delta_exact(eps, PREC), up)
    lower, upper = composed(plds, "remove", 2)
    with mp.workdps(40):
        for eps in (Fraction(0), Fraction(3, 4), Fraction(3, 2)):
            x = frac_mpf(eps)
            reference = expect_over_loss(lambda ell: delta_one(x - ell, 1), mp.mpf(1), (x - 1, x + 1))
            assert holds(read(lower, eps), reference, read(upper, eps), SLACK)


@pytest.mark.parametrize("bad", [float("nan"), float("-inf"), Fraction(-2), Fraction(0), 1.0])
def test_parameters_are_validated(bad):
    with pytest.raises(InputError):
        Laplace(bad)
    with pytest.raises(InputError):
        Laplace(Fraction(1), bad)


# -- Rényi DP (laplace_rdp, Mironov 2017 Proposition 6) against mpmath quadrature of the divergence integral ----------


def renyi_quadrature(b, alpha):
    """D_α(Lap(−1, b) ‖ Lap(0, b)) = log ∫ p^α q^{1−α} dx/(α − 1), by mpmath quadrature split at the kinks."""
    with mp.workdps(40):
        b, a = frac_mpf(b), frac_mpf(alpha)
        p = lambda x: mp.exp(-abs(x + 1) / b) / (2 * b)  # noqa: E731
        q = lambda x: mp.exp(-abs(x) / b) / (2 * b)  # noqa: E731
        integral = mp.quad(lambda x: p(x) ** a * q(x) ** (1 - a), [-mp.inf, -1, 0, mp.inf])
        return mp.log(integral) / (a - 1)


@pytest.mark.parametrize("b, alpha", [(Fraction(1), Fraction(3, 2)), (Fraction(1), Fraction(2)),
                                      (Fraction(1, 2), Fraction(8)), (Fraction(20), Fraction(32)),
                                      (Fraction(3), Fraction(1) + Fraction(1, 10**6))])
def test_renyi_dp_contains_the_quadrature(b, alpha):
    with ctx.workprec(200):
        remove, add = (arb_to_bounded(x) for x in Laplace(b).rdp(alpha))
    assert remove == add  # symmetric: the same ball
    with mp.workdps(40):
        ref, slack = renyi_quadrature(b, alpha), mp.mpf(10) ** -30
        assert frac_mpf(remove.lower) - slack <= ref <= frac_mpf(remove.upper) + slack
    assert remove.upper - remove.lower < Fraction(1, 10**50) * remove.upper


def test_renyi_dp_matches_dp_accountings_laplace_rdp():
    rdp = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    for b in (Fraction(1, 3), Fraction(1), Fraction(7)):
        for alpha in (Fraction(11, 10), Fraction(2), Fraction(50)):
            with ctx.workprec(120):
                ours = float(Laplace(b).rdp(alpha)[0].mid())
            assert ours == pytest.approx(rdp._laplace_rdp(float(1 / b), float(alpha)), rel=1e-12)
