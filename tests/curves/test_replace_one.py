"""Replace-one neighbours: the curves of one step against independent quadrature, the brackets of whole runs
against closed forms and against dp_accounting (REPLACE_ONE PLD; the RDP of fixed-size batches)."""

from fractions import Fraction

import mpmath as mp
import pytest
from flint import arb, ctx
from mutations import assert_every_field_checked, edited

from rdp_verify.curves.accountant import bracket
from rdp_verify.curves.certificate import (
    POLICY,
    SCHEMA,
    certificate_of,
    certify_run,
    check_run_certificate,
    compare,
    recompute,
)
from rdp_verify.curves.replace_one import ReplaceOneCurve, SymmetrisedCurve
from rdp_verify.foundations.results import to_arb
from rdp_verify.foundations.run import Phase
from tests.curve_oracles import contains, gaussian_epsilon, replace_curve, step_curve_closed

PREC = 200


def _value(curve, x):
    with ctx.workprec(PREC):
        xa = to_arb(Fraction(x))
        g_side = not xa > 1
        value, _ = curve.values(xa, g_side)
        return value + (1 - xa) if g_side else value  # H = G + (1 − x)


def _mid(ball):
    return mp.mpf(ball.mid().str(50, radius=False))


# slow: per (q, σ) one point on each side of x = 1 (G for x ≤ 1, H above) stays in the default run, every x at one
# (q, σ) at least: the rest take the same two branches of ReplaceOneCurve.values
DEFAULT_POINTS = {("0.01", "1"): ("0.2", "1.03"), ("0.3", "0.5"): ("0.97", "5"), ("0.001", "3"): ("1", "1.03")}


@pytest.mark.parametrize("q, sigma, x", [
    pytest.param(q, sigma, x, id=f"{x}-{q}-{sigma}",
                 marks=() if x in DEFAULT_POINTS[(q, sigma)] else pytest.mark.slow)
    for q, sigma in DEFAULT_POINTS for x in ["0.2", "0.97", "1", "1.03", "5"]])
def test_curve_matches_quadrature_of_the_densities(q, sigma, x):
    curve = ReplaceOneCurve(Fraction(q), Fraction(sigma), PREC)
    ours, reference = _value(curve, x), replace_curve(q, sigma, x)
    assert abs(_mid(ours) - reference) <= mp.mpf(10) ** -25 + abs(reference) * mp.mpf(10) ** -20


@pytest.mark.parametrize("x", ["0.5", "1.7", "12"])
def test_the_pair_is_symmetric(x):
    """H(x) = 1 − x + x·H(1/x): the mirror z ↦ −z swaps the two distributions."""
    curve = ReplaceOneCurve(Fraction(1, 20), Fraction(4, 5), PREC)
    xf = Fraction(x)
    left, right = _value(curve, xf), _value(curve, 1 / xf)
    with ctx.workprec(PREC):
        assert abs(left - (1 - to_arb(xf) + to_arb(xf) * right)) < arb(2) ** -150


@pytest.mark.parametrize("lo, hi", [("0.9", "0.91"), pytest.param("1", "1.01", marks=pytest.mark.slow),
                                    pytest.param("2", "2.05", marks=pytest.mark.slow)])
def test_curvature_bound_covers_the_second_derivative(lo, hi):
    q, sigma = Fraction(1, 50), Fraction(7, 10)
    curve = ReplaceOneCurve(q, sigma, PREC)
    with ctx.workprec(PREC):
        bound = _mid(curve.curvature_bound(to_arb(Fraction(lo)), to_arb(Fraction(hi))))
    # the second derivative of the quadrature curve by the central difference (H(x + h) − 2H(x) + H(x − h))/h² at
    # 30 digits, h = 1e-8: truncation (h²/12 times the fourth derivative) and rounding (4e-30/h²) near 1e-14, far
    # below the 1e-8 slack (within 6e-14 of mp.diff at 40 digits at every point of the three cells; mp.diff works
    # at 66 digits, 3 times the cost)
    with mp.workdps(30):
        h = mp.mpf(10) ** -8
        for t in (0, mp.mpf(1) / 3, mp.mpf(2) / 3, 1):
            x = mp.mpf(lo) + t * (mp.mpf(hi) - mp.mpf(lo))
            values = [replace_curve(q, sigma, y) for y in (x - h, x, x + h)]
            second = (values[0] - 2 * values[1] + values[2]) / h**2
            assert second <= bound * (1 + mp.mpf(10) ** -8)


@pytest.mark.parametrize("x", ["0.3", "1", "2.5"])
def test_symmetrised_curve_is_the_remove_curve_of_half_sigma_and_its_perspective(x):
    q, sigma = Fraction(1, 100), Fraction(3, 2)
    ours = _value(SymmetrisedCurve(q, sigma, PREC), x)
    xm = mp.mpf(Fraction(x).numerator) / Fraction(x).denominator
    reference = (step_curve_closed(q, sigma / 2, xm) if xm >= 1
                 else 1 - xm + xm * step_curve_closed(q, sigma / 2, 1 / xm))
    assert abs(_mid(ours) - reference) <= mp.mpf(10) ** -25


@pytest.mark.parametrize("sampler, sizes", [("poisson", (None, None)), ("fixed", (40, 40))])
def test_full_batches_are_the_gaussian_mechanism_at_sensitivity_two(sampler, sizes):
    phase = Phase(Fraction(1), Fraction(2), 9, sampler, "replace-one", *sizes)
    result = bracket([phase], delta=Fraction(1, 10**5))
    assert result.method == "closed form"
    assert contains(result.lower, result.upper, gaussian_epsilon(Fraction(1, 10**5), 2 * mp.sqrt(9) / 2),
                    slack=mp.mpf(10) ** -12)


def test_one_poisson_step_contains_the_quadrature_curve():
    phase = Phase(Fraction(1, 10), Fraction(1, 2), 1, neighbours="replace-one")
    result = bracket([phase], epsilon=Fraction(1))
    assert contains(result.lower, result.upper, replace_curve(Fraction(1, 10), Fraction(1, 2), mp.e))
    assert result.relative_width() <= Fraction(1, 1000)


def test_one_fixed_step_contains_the_remove_curve_of_half_sigma():
    """One step: the upper end is H*(e^ε) = H(e^ε) of SG(q, σ/2)'s remove pair, attained by an actual pair."""
    phase = Phase(Fraction(1, 10), Fraction(2), 1, "fixed", "replace-one", 10, 100)
    result = bracket([phase], epsilon=Fraction(1, 2))
    assert contains(result.lower, result.upper, step_curve_closed(Fraction(1, 10), Fraction(1), mp.exp(0.5)))


def test_issue_run_meets_the_width_and_contains_dp_accountings_replace_one_value():
    """q = 0.01, σ = 1, T = 1000, δ = 1e-5: relative width ≤ 1e-3; dp_accounting's REPLACE_ONE PLD
    (connect-the-dots, discretisation 1e-4) lies inside, up to its own discretisation error (its change
    from discretisation 1e-3 to 1e-4)."""
    result = bracket([Phase(Fraction(1, 100), Fraction(1), 1000, neighbours="replace-one")], delta=Fraction(1, 10**5))
    assert result.relative_width() <= Fraction(1, 1000)
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    def theirs(interval):
        acc = pld_privacy_accountant.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE,
                                                   value_discretization_interval=interval)
        acc.compose(dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0)), 1000)
        return acc.get_epsilon(1e-5)

    fine, coarse = theirs(1e-4), theirs(1e-3)
    assert contains(result.lower, result.upper, mp.mpf(fine), slack=abs(coarse - fine))


@pytest.fixture(scope="module")
def fixed_run():
    """The bracket of one fixed-size run (q = 0.01, σ = 2, T = 50, 600 of 60000), shared by the two tests below
    (they only read its ends). Its relative width is the gap between the two pairs (0.041 at every grid), so at the
    default tolerance the walk refines once for nothing; tolerance 1/10 stops at the first grid (a third of the
    work), the ends proven all the same."""
    return bracket([Phase(Fraction(1, 100), Fraction(2), 50, "fixed", "replace-one", 600, 60000)],
                   delta=Fraction(1, 10**5), tolerance=Fraction(1, 10))


def test_fixed_size_batches_stay_under_dp_accountings_rdp_bound(fixed_run):
    """dp_accounting's RDP for SampledWithoutReplacementDpEvent (Wang, Balle, Kasiviswanathan 2019, Theorem 27)
    reads noise_multiplier relative to the sum's sensitivity (2 under replace-one): σ/2 is the same mechanism."""
    result = fixed_run
    assert 0 < result.lower <= result.upper
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import rdp_privacy_accountant

    acc = rdp_privacy_accountant.RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    acc.compose(dp_accounting.SampledWithoutReplacementDpEvent(60000, 600, dp_accounting.GaussianDpEvent(1.0)), 50)
    assert result.upper <= Fraction(acc.get_epsilon(1e-5))


def test_fixed_size_lower_end_is_the_sgm_at_half_sigma(fixed_run):
    """The lower end comes from an actual pair that realises SG(q, σ/2)'s remove (or add) pair in every step:
    it cannot exceed that run's proven upper end, and the fixed run's upper end is at least its lower end."""
    fixed = fixed_run
    sgm = bracket([Phase(Fraction(1, 100), Fraction(1), 50)], delta=Fraction(1, 10**5))
    assert fixed.lower <= sgm.upper and sgm.lower <= fixed.upper


# fixed: the first grid 5× coarser (bracket's coarsen, as the calibration ladder's first rungs): its width is the
# gap between two pairs (0.027 at every grid), so the walk still refines and stops (the refinements are recorded)
@pytest.mark.parametrize("sampler, sizes, coarsen", [("poisson", (None, None), 1), ("fixed", (20, 1000), 5)])
def test_certificates_name_the_pair_and_every_field_is_verified(sampler, sizes, coarsen):
    phase = Phase(Fraction(1, 50), Fraction(3, 2), 50, sampler, "replace-one", *sizes)
    result = bracket([phase], delta=Fraction(1, 10**6), coarsen=coarsen)
    cert = certificate_of(result, delta=Fraction(1, 10**6))  # certify_run is bracket + certificate_of
    (grid,) = cert["settings"]["grids"]
    assert grid["pair"] == ("replace-one" if sampler == "poisson" else "fixed-replace-one")
    assert cert["inputs"]["phases"][0]["neighbours"] == "replace-one" and "replace-one" in cert["assumptions"]["neighbours"]
    assert cert["verdict"] == "certified" and check_run_certificate(cert) == []
    assert assert_every_field_checked(cert, recompute(cert), POLICY, compare, SCHEMA) > 60
    assert check_run_certificate(edited(cert, "inputs.phases.0.neighbours", "add-remove"))


# slow: the (q = 1/2, σ = 1/10) poisson corner and the (q = 1/2, σ = 100, 1000 steps) fixed corner run the same
# certify_run paths as the default poisson (1e-6, 100, 1) and fixed (1e-6, 100, 1) corners (one per sampler)
CORNERS = [pytest.param("poisson", Fraction(1, 2), Fraction(1, 10), 1, marks=pytest.mark.slow),
           ("poisson", Fraction(1, 10**6), Fraction(100), 1),
           pytest.param("fixed", Fraction(1, 2), Fraction(100), 1000, marks=pytest.mark.slow),
           ("fixed", Fraction(1, 10**6), Fraction(100), 1)]
SLOW_CORNERS = [("poisson", Fraction(1, 10**6), Fraction(1, 10), 1000), ("fixed", Fraction(1, 10**6), Fraction(1, 10), 1000),
                ("fixed", Fraction(1, 2), Fraction(1, 10), 1000)]


def _corner(sampler, q, sigma, steps):
    sizes = (None, None) if sampler == "poisson" else (int(q * 10**6), 10**6)
    cert = certify_run([Phase(q, sigma, steps, sampler, "replace-one", *sizes)], delta=Fraction(1, 10**30))
    assert cert["verdict"] in ("certified", "partial") and cert["epsilon"]["upper"] is not None
    assert Fraction(cert["epsilon"]["lower"]) <= Fraction(cert["epsilon"]["upper"])
    return cert


@pytest.mark.parametrize("sampler, q, sigma, steps", CORNERS)
def test_corners_of_the_domain_give_a_finite_proven_bracket(sampler, q, sigma, steps):
    assert _corner(sampler, q, sigma, steps)["verdict"] == "certified"


@pytest.mark.slow
@pytest.mark.parametrize("sampler, q, sigma, steps", SLOW_CORNERS)
def test_slow_corners_give_a_finite_bracket_or_say_partial(sampler, q, sigma, steps):
    """Fixed-size batches with q = 1e-6 and σ = 0.1 are partial: SG(q, σ/2)'s lower pair collapses on the
    symmetric grid (docs/samplers.md, limits)."""
    _corner(sampler, q, sigma, steps)
