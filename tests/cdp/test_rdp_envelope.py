"""ε_α against lines ξ + ρα: analytic pieces, cell sweeps and the best-ρ search vs mpmath."""

from fractions import Fraction as F

import mpmath
from cdp_oracles import divergence

from rdp_verify.cdp.privacy_loss import SGMLoss
from rdp_verify.cdp.rdp_envelope import (
    analytic_witness,
    gaussian_line_holds,
    search_witness,
    sup_ratio,
    sweep,
)

Q, SIGMA, RHO = F(1, 100), F(1), F(1, 1000)


def mp(x: F) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def crossing_reference() -> mpmath.mpf:
    """The order where D_α(μ‖μ0) = ρα, by mpmath root finding on quadrature (independent). 20 digits: the bracket
    it must fall in is 1e-6 relative wide (30 digits, the same root to 14 digits, took 1.6 times as long)."""
    with mpmath.workdps(20):
        return mpmath.findroot(lambda a: divergence(Q, SIGMA, F(mpmath.nstr(a, 20)), "mu||mu0", 20) - mp(RHO) * a, 9.6)


def test_gaussian_line_is_exact_at_one_over_two_sigma_squared():
    loss = SGMLoss(Q, F(2))
    assert gaussian_line_holds(loss, F(0), F(1, 8))
    assert not gaussian_line_holds(loss, F(0), F(1, 8) - F(1, 10**30))


def test_analytic_witness_is_a_true_violation():
    loss = SGMLoss(Q, SIGMA)
    w = analytic_witness(loss, F(0), RHO)
    assert w is not None and w.divergence_lower > w.claimed
    assert divergence(Q, SIGMA, w.alpha, "mu||mu0") > mp(w.claimed)  # quadrature agrees
    assert analytic_witness(loss, F(0), F(1, 2)) is None  # ρ = 1/(2σ²): no witness exists


def test_zcdp_witness_search_finds_a_grid_order():
    loss = SGMLoss(Q, SIGMA)
    w, evaluations = search_witness(loss, F(0), RHO, None)
    assert w.alpha == 13 and evaluations <= 30
    # independent: integer order, binomial sum of Section 3.3 (tests/oracles.py)
    from oracles import binomial_log_a
    assert binomial_log_a("0.01", "1", 13) / 12 > mp(w.claimed)


def test_sweep_brackets_the_crossing():
    loss = SGMLoss(Q, SIGMA)
    r = sweep(loss, F(0), RHO, F(10**6), tol=F(1, 10**6))
    ref = crossing_reference()
    assert mp(r.proven_to) <= ref <= mp(r.witness.alpha)
    assert r.witness.alpha - r.proven_to <= r.proven_to / 10**6 and not r.exhausted


def test_sweep_proves_a_true_tcdp_range():
    loss = SGMLoss(Q, SIGMA)
    r = sweep(loss, F(0), RHO, F(6))
    assert r.witness is None and r.proven_to == 6 and r.evaluations < 30


def test_sup_ratio_encloses_the_grid_maximum():
    loss = SGMLoss(Q, SIGMA)
    r = sup_ratio(loss, F(6))
    assert r.upper <= r.lower * (1 + F(1, 10**6))
    # D_α/α is increasing here, so the sup over (1, 6) is the value at α → 6 (quadrature)
    ref = divergence(Q, SIGMA, F(6), "mu||mu0") / 6
    assert mp(r.lower) <= ref <= mp(r.upper) * (1 + mpmath.mpf("1e-12"))
