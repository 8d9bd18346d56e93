"""Certificates of the CDP family: the issue's required claims, DR16 Theorems 3.2-3.5, tCDP search."""

from fractions import Fraction as F

import mpmath
import pytest
from oracles import binomial_log_a

from rdp_verify.cdp.certificate import schema_errors
from rdp_verify.cdp.concentrated import (
    best_rho,
    compose,
    concentrated,
    dp_to_cdp,
    largest_omega,
    tcdp,
    tcdp_order_end,
    zcdp,
)
from rdp_verify.certificates.certificate import content_hash
from rdp_verify.foundations.inputs import InputError

Q, SIGMA = F(1, 100), F(1)


def valid(cert):
    assert schema_errors(cert) == [] and cert["content_hash"] == content_hash(cert)
    return cert


def test_false_zcdp_claim_is_refuted_with_witness():
    # The issue: "SGM with q = 0.01, σ = 1 is 0.001-zCDP" is false.
    cert = valid(zcdp(Q, SIGMA, F(1, 1000)))
    w = cert["witness"]
    assert cert["verdict"] == "refuted" and w["alpha"] == "13" and w["lambda"] == "12"
    # independent check of the witness: D_13(μ‖μ0) from the plain binomial sum (tests/oracles.py)
    d13 = binomial_log_a("0.01", "1", 13) / 12
    assert F(w["divergence_lower"]) <= F(mpmath.nstr(d13, 30)) and F(w["claimed_bound"]) == F(13, 1000)
    assert d13 > mpmath.mpf(13) / 1000
    assert F(w["log_mgf_lower"]) > F(w["claimed_log_mgf"]) == F(12 * 13, 1000)  # Definition 12's M_λ form


def test_true_zcdp_claim_holds():
    # The issue: Gaussian σ = 2 is 0.125-zCDP: D_α = α/(2σ²) = α/8 exactly.
    cert = valid(zcdp(F(1), F(2), F(1, 8), delta=F(1, 10**5)))
    assert cert["verdict"] == "holds" and cert["best_rho"]["attained"]
    # Bun-Steinke Prop 1.3 by hand: 1/8 + 2 sqrt(log(1e5)/8) = 2.52426295600...
    assert abs(F(cert["implies"]["approx_dp"]["epsilon_upper"]) - F("2.524262956")) < F(1, 10**9)
    assert zcdp(F(1), F(2), F(1, 8) - F(1, 10**12))["verdict"] == "refuted"


def test_sgm_at_the_gaussian_rho_holds_by_quasi_convexity():
    cert = zcdp(Q, SIGMA, F(1, 2))
    assert cert["verdict"] == "holds" and "quasi-convexity" in cert["proof"] and not cert["best_rho"]["attained"]


@pytest.mark.parametrize("sigma,group", [(F(2), 1), (F(3), 2), (F("0.5"), 3)])
def test_theorem_3_2_and_corollary_3_3_exact(sigma, group):
    tau = group / sigma  # τ = sΔ/σ, Δ = 1
    assert valid(concentrated(F(1), sigma, tau * tau / 2, tau, group))["verdict"] == "holds"
    mean_low = concentrated(F(1), sigma, tau * tau / 2 - F(1, 10**20), tau, group)
    assert mean_low["verdict"] == "refuted" and mean_low["witness"]["part"] == "mean"
    tau_low = concentrated(F(1), sigma, tau * tau / 2, tau - F(1, 10**20), group)
    assert tau_low["verdict"] == "refuted" and tau_low["witness"]["part"] == "subgaussian"


def test_sgm_cdp_holds_and_converts():
    cert = valid(concentrated(Q, SIGMA, F(1, 1000), F(1), delta=F(1, 10**5)))
    assert cert["verdict"] == "holds"
    assert cert["implies"]["zcdp"] == {"xi": "-0.499", "rho": "0.5", "source": "eq. (14) with lambda >= 0"}
    refuted = concentrated(Q, SIGMA, F(1, 20000), F(1))  # KL ≈ 8.4e-5 > 5e-5
    assert refuted["verdict"] == "refuted" and refuted["witness"]["part"] == "mean"


def test_group_privacy_for_sgm_is_refused():
    with pytest.raises(InputError):
        concentrated(Q, SIGMA, F(1), F(2), group=2)


def test_composition_matches_direct_gaussian():
    cert = valid(compose([F(1), F(2), F(3)]))
    # 1/σ_eq² = 1 + 1/4 + 1/9 = 49/36 (hand-derived)
    assert cert["direct"]["sigma_equivalent_squared"] == "36/49"
    assert cert["theorem_bound"] == {"mu": "49/72", "tau_squared": "49/36"}
    assert cert["tight"] and cert["verdict"] == "holds"


def test_theorem_3_5_randomized_response():
    eps = F(1)
    cert = valid(dp_to_cdp(eps))
    # hand-derived: mean of the ±ε loss with p = e^ε/(1+e^ε) is ε·tanh(ε/2); bound ε(e^ε−1)/2
    mean = F(mpmath.nstr(mpmath.tanh(0.5), 20))
    assert F(cert["expected_loss"]["lower"]) - F(1, 10**14) <= mean <= F(cert["expected_loss"]["upper"]) + F(1, 10**14)
    assert cert["lemma_3_10_symmetric"] and cert["mean_le_bound"] and cert["verdict"] == "holds"
    # optimal standard τ² = 2ε tanh(ε/2), checked by maximising 2ψ(λ)/λ² with mpmath (independent)
    p = mpmath.e / (1 + mpmath.e)
    m = 2 * p - 1
    psi = lambda lam: mpmath.log(p * mpmath.exp(lam * (1 - m)) + (1 - p) * mpmath.exp(lam * (-1 - m)))  # noqa: E731
    best = max(2 * psi(mpmath.mpf(x) / 100) / (mpmath.mpf(x) / 100) ** 2 for x in range(-600, 600) if x)
    assert abs(best - F(cert["optimal_tau_squared"]["upper"])) < 1e-3
    assert dp_to_cdp(eps, tau=F("0.97"))["verdict"] == "holds"  # 0.97² = 0.9409 ≥ 0.9242
    assert dp_to_cdp(eps, tau=F("0.95"))["verdict"] == "refuted"  # 0.9025 < 0.9242


def test_theorem_3_5_antipodal_with_stay():
    cert = dp_to_cdp(F(2), stay=F(1, 3))
    assert cert["verdict"] == "holds" and cert["lemma_3_10_symmetric"]


def test_tcdp_best_rho_and_largest_omega_are_consistent():
    omega = F(5)
    br = valid(best_rho(Q, SIGMA, omega))
    lo, hi = F(br["best_rho"]["lower"]), F(br["best_rho"]["upper"])
    assert tcdp(Q, SIGMA, hi * (1 + F(1, 1000)), omega)["verdict"] == "holds"
    assert tcdp(Q, SIGMA, lo * (1 - F(1, 1000)), omega)["verdict"] == "refuted"
    rho = F(1, 1000)
    lw = valid(largest_omega(Q, SIGMA, rho))
    w_lo, w_hi = F(lw["largest_omega"]["lower"]), F(lw["largest_omega"]["upper"])
    assert tcdp(Q, SIGMA, rho, w_lo - F(1, 10))["verdict"] == "holds"
    refuted = tcdp(Q, SIGMA, rho, w_hi + F(1, 10))
    assert refuted["verdict"] == "refuted" and F(refuted["witness"]["alpha"]) < w_hi + F(11, 10)
    # the best ρ at the proven ω is at most ρ
    assert F(best_rho(Q, SIGMA, w_lo - F(1, 10))["best_rho"]["lower"]) <= rho


def test_tcdp_conventions_differ_by_one():
    assert tcdp_order_end(F(5), "mtz19") == 6 and tcdp_order_end(F(5), "bdrs18") == 5
    a = largest_omega(Q, SIGMA, F(1, 1000), "mtz19")["largest_omega"]
    b = largest_omega(Q, SIGMA, F(1, 1000), "bdrs18")["largest_omega"]
    assert F(b["lower"]) - F(a["lower"]) == 1
    with pytest.raises(InputError):
        tcdp_order_end(F(1), "bdrs18")
