"""τ-subgaussianity of the centred SGM loss: proofs and witnesses vs mpmath quadrature."""

import functools
from fractions import Fraction as F

import cdp_oracles
import mpmath
import pytest
from cdp_oracles import centred_log_mgf
from flint import arb

from rdp_verify.cdp.privacy_loss import DIRECTIONS, SGMLoss
from rdp_verify.cdp.subgaussian import check_subgaussian, quadratic_threshold


def test_quadratic_threshold():
    assert quadratic_threshold(F(-1), arb(0), arb(1)) == 1  # 1 − x² ≤ 0 from x = 1
    assert quadratic_threshold(F(-1), arb(0), arb(-1)) == 0  # always negative
    assert quadratic_threshold(F(0), arb(-2), arb(4)) == 2  # linear: −2x + 4
    assert quadratic_threshold(F(0), arb(1), arb(0)) is None
    assert quadratic_threshold(F(1), arb(-5), arb(0)) is None


# slow: (0.01, 1, 1) is a "holds" verdict on the same path as (0.1, 1, 1.2) and (0.01, 4, 0.25) (default run)
@pytest.mark.parametrize("q,sigma,tau", [pytest.param("0.01", "1", "1", marks=pytest.mark.slow), ("0.1", "1", "1.2"),
                                         ("0.01", "4", "0.25")])
def test_holds_is_consistent_with_quadrature(monkeypatch, q, sigma, tau):
    # the six spot checks of a direction share its KL (the centring term of centred_log_mgf): one quadrature, not six
    monkeypatch.setattr(cdp_oracles, "kl", functools.lru_cache(maxsize=None)(cdp_oracles.kl))
    loss = SGMLoss(F(q), F(sigma), 20)
    for d in DIRECTIONS:
        r = check_subgaussian(loss, d, F(tau))
        assert r.verdict == "holds", r.reason
        # spot checks of the proven inequality, by quadrature at 20 digits (1.7 CPU-s for both cases; 30 took 3.0): the
        # right side exceeds the left by a factor 1.7 or more at every point
        for lam in ("-30", "-3", "-0.5", "0.25", "2", "25"):
            assert centred_log_mgf(q, sigma, d, lam, 20) <= mpmath.mpf(lam) ** 2 * mpmath.mpf(tau) ** 2 / 2


def test_tau_below_one_over_sigma_is_refuted_with_a_true_witness():
    q, sigma, tau = "0.01", "1", "0.99"
    loss = SGMLoss(F(q), F(sigma), 20)
    for d in DIRECTIONS:
        r = check_subgaussian(loss, d, F(tau))
        assert r.verdict == "refuted" and r.excess_lower > 0
        lam = r.witness_lambda
        excess = centred_log_mgf(q, sigma, d, lam, 40) - mpmath.mpf(lam.numerator) ** 2 / lam.denominator ** 2 * mpmath.mpf(tau) ** 2 / 2
        assert excess >= mpmath.mpf(r.excess_lower.numerator) / r.excess_lower.denominator * (1 - mpmath.mpf("1e-10"))


def test_gaussian_is_exact():
    loss = SGMLoss(F(1), F(2))
    assert check_subgaussian(loss, "mu||mu0", F(1, 2)).verdict == "holds"  # τ = 1/σ (DR16 Thm 3.2)
    r = check_subgaussian(loss, "mu0||mu", F(1, 2) - F(1, 10**9))
    assert r.verdict == "refuted" and r.witness_lambda == 1 and r.excess_lower > 0


def test_loose_curvature_bound_gives_inconclusive_not_holds():
    # q = 1/2, σ = 1, τ = 1: the Brascamp-Lieb bound 1/(σ² − 1/4) > τ² at the centre, so no proof there
    r = check_subgaussian(SGMLoss(F(1, 2), F(1), 20), "mu||mu0", F(1), budget=40)
    assert r.verdict == "inconclusive" and "unresolved_gamma" in r.pieces
    # the proof fails on both sides of the centre γ = 1 (the degenerate centre piece), so
    # the reported unverified range must cover cells on both sides, not only the last one tried
    (centre, _), (lo, hi) = r.pieces["centre_gamma"], r.pieces["unresolved_gamma"]
    assert lo < centre < hi and r.pieces["left_tail_to_gamma"] <= lo and hi <= r.pieces["right_tail_from_gamma"]
