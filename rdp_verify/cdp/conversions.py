"""Conversions among CDP, zCDP, tCDP, RDP and (ε, δ)-DP, as proven upper bounds.

Each function returns exact rationals where the conversion is rational and otherwise
an upper bound rounded up from an Arb ball (so the implied guarantee is never
overstated). Sources:

* (μ, τ)-CDP ⇒ (ε, δ)-DP with ε = μ + τ·√(2 log(1/δ)): DR16 Corollary 3.1 bounds
  Pr[L ≥ μ + tτ] ≤ e^{−t²/2} in both directions, and Pr[L > ε] ≤ δ implies
  (ε, δ)-DP (Pr[M(x) ∈ S] ≤ e^ε Pr[M(y) ∈ S] + Pr[L > ε]).
* (μ, τ)-CDP ⇒ (μ − τ²/2, τ²/2)-zCDP: for λ ≥ 0, E[e^{λL}] ≤ e^{λμ + λ²τ²/2}, i.e.
  by eq. (14) D_{λ+1} ≤ μ + λτ²/2 = (μ − τ²/2) + (λ + 1)τ²/2, which is (ξ, ρ)-zCDP in the
  form of MTZ19 Definition 12 (derived here from E[e^{λL}] = e^{λ E L}·E[e^{λ(L − E L)}], λ ≥ 0).
* (ξ, ρ)-zCDP ⇒ (ξ + ρ + 2√(ρ log(1/δ)), δ)-DP: Bun–Steinke 2016, Proposition 1.3 / Lemma 3.5.
* (ξ, ρ)-zCDP ⇒ (α, ξ + ρα)-RDP for every α > 1, and (ρ, ω)-tCDP ⇒ (α, ρα)-RDP on the
  tCDP order range: MTZ19 Definition 12 read through eq. (14).
* ε-DP ⇒ ε²/2-zCDP (Bun–Steinke 2016, Proposition 1.4) and ⇒ (ε(e^ε − 1)/2, ε)-CDP (DR16 Theorem 3.5).
* Gaussian mechanism, exact (ε, δ) curve from its loss N(τ²/2, τ²):
  δ(ε) = Φ(τ/2 − ε/τ) − e^ε Φ(−τ/2 − ε/τ) (Balle & Wang 2018, Theorem 8), the
  reference every conversion above must not beat.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, ctx

from ..foundations.inputs import InputError, check_delta
from ..foundations.normal import phi
from ..foundations.results import arb_to_bounded, to_arb

__all__ = [
    "cdp_to_dp",
    "cdp_to_zcdp",
    "zcdp_to_dp",
    "zcdp_to_rdp",
    "dp_to_zcdp",
    "gaussian_delta",
]

PREC = 192


def _up(x: arb) -> Fraction:
    return arb_to_bounded(x).upper


def _check(**values: Fraction) -> None:
    """Refuse what the definitions exclude: τ > 0; μ, ρ, ε ≥ 0; α > 1."""
    for name, x in values.items():
        if not isinstance(x, Fraction):
            raise InputError(f"{name}={x!r} must be an exact Fraction")
        if name == "tau" and x <= 0:
            raise InputError(f"tau={x} must be positive")
        if name in ("mu", "rho", "epsilon") and x < 0:
            raise InputError(f"{name}={x} must be non-negative")
        if name == "alpha" and x <= 1:
            raise InputError(f"alpha={x} must be greater than 1")


def cdp_to_dp(mu: Fraction, tau: Fraction, delta: Fraction) -> Fraction:
    """An upper bound of μ + τ√(2 log(1/δ)): (μ, τ)-CDP ⇒ (ε, δ)-DP."""
    _check(mu=mu, tau=tau)
    check_delta(delta)
    with ctx.workprec(PREC):
        return _up(to_arb(mu) + to_arb(tau) * (2 * (1 / to_arb(delta)).log()).sqrt())


def cdp_to_zcdp(mu: Fraction, tau: Fraction) -> tuple[Fraction, Fraction]:
    """(ξ, ρ) = (μ − τ²/2, τ²/2), exact: (μ, τ)-CDP ⇒ (ξ, ρ)-zCDP."""
    _check(mu=mu, tau=tau)
    return mu - tau * tau / 2, tau * tau / 2


def zcdp_to_dp(rho: Fraction, delta: Fraction, xi: Fraction = Fraction(0)) -> Fraction:
    """An upper bound of ξ + ρ + 2√(ρ log(1/δ)): (ξ, ρ)-zCDP ⇒ (ε, δ)-DP."""
    _check(rho=rho)
    if xi < -rho:
        raise InputError(f"xi={xi} below -rho: (xi, rho)-zCDP needs xi + rho*alpha >= 0 for all alpha > 1")
    check_delta(delta)
    with ctx.workprec(PREC):
        r = to_arb(rho)
        return _up(to_arb(xi) + r + 2 * (r * (1 / to_arb(delta)).log()).sqrt())


def zcdp_to_rdp(xi: Fraction, rho: Fraction, alpha: Fraction) -> Fraction:
    """ε_α = ξ + ρα, exact: (ξ, ρ)-zCDP ⇒ (α, ξ + ρα)-RDP."""
    _check(rho=rho, alpha=alpha)
    return xi + rho * alpha


def dp_to_zcdp(epsilon: Fraction) -> Fraction:
    """ρ = ε²/2, exact: ε-DP ⇒ ρ-zCDP."""
    _check(epsilon=epsilon)
    return epsilon * epsilon / 2


def gaussian_delta(tau: Fraction, epsilon: Fraction) -> arb:
    """δ(ε) of the Gaussian mechanism with τ = Δ/σ, exactly (Arb ball)."""
    _check(tau=tau, epsilon=epsilon)
    with ctx.workprec(PREC):
        t, e = to_arb(tau), to_arb(epsilon)
        return phi(t / 2 - e / t) - e.exp() * phi(-t / 2 - e / t)
