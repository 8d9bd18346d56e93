"""Antipodal pairs and randomized response (DR16 Definition 3.4, Theorem 3.5)."""

from fractions import Fraction as F

import mpmath

from rdp_verify.cdp.dp_to_cdp import (
    antipodal,
    subgaussian_witness,
    theorem35_mean_bound,
)


def test_antipodal_pair_is_a_pair_of_distributions_with_losses_pm_eps():
    pair = antipodal(F(3, 2), F(1, 4))
    assert sum(pair.p).contains(1) and sum(pair.q).contains(1)
    for pi, qi, li in zip(pair.p, pair.q, pair.losses):
        assert (pi / qi).log().contains(li) if pi > 0 else True
    assert (pair.mean() - pair.mean_reverse()).contains(0)  # Lemma 3.10


def test_mean_formula_by_hand():
    # mean = ε(e^ε − 1)s with s = (1 − r)/(1 + e^ε)
    eps, r = mpmath.mpf(3) / 2, mpmath.mpf(1) / 4
    ref = eps * mpmath.expm1(eps) * (1 - r) / (1 + mpmath.exp(eps))
    assert abs(float(antipodal(F(3, 2), F(1, 4)).mean().mid()) - float(ref)) < 1e-14
    assert abs(float(theorem35_mean_bound(F(3, 2)).mid()) - float(eps * mpmath.expm1(eps) / 2)) < 1e-14


def test_witness_only_below_the_optimal_standard():
    pair = antipodal(F(1))
    opt = float(pair.optimal_tau_squared().mid()) ** 0.5  # sqrt(2 tanh(1/2)) ≈ 0.9614
    assert subgaussian_witness(pair, F(str(round(opt + 0.001, 4)))) is None
    tau = F(str(round(opt - 0.01, 4)))
    lam, excess = subgaussian_witness(pair, tau)
    # independently: the loss is ±1 with probabilities e/(1 + e), 1/(1 + e); the witness
    # must make log E e^{λ(L − E L)} exceed λ²τ²/2
    with mpmath.workdps(30):
        p, lm = mpmath.e / (1 + mpmath.e), mpmath.mpf(lam.numerator) / lam.denominator
        mean = 2 * p - 1
        mgf = p * mpmath.exp(lm * (1 - mean)) + (1 - p) * mpmath.exp(lm * (-1 - mean))
        assert excess > 0 and mpmath.log(mgf) - lm**2 * mpmath.mpf(tau.numerator) ** 2 / tau.denominator**2 / 2 > 0
