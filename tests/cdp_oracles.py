"""Independent mpmath references for the CDP tests: plain quadrature, no package maths.

With μ0 = N(0, σ²), μ = (1 − q)μ0 + qN(1, σ²) and w = μ/μ0 (MTZ19 Section 3):
K(γ) = log ∫ μ0 w^γ, KL(μ‖μ0) = ∫ μ log w, KL(μ0‖μ) = −∫ μ0 log w, computed with
mpmath's tanh-sinh quadrature split at the points where the integrands peak.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath


def _mp(x) -> mpmath.mpf:
    x = Fraction(x)
    return mpmath.mpf(x.numerator) / x.denominator


def _w(q, s, z):
    return 1 - q + q * mpmath.exp((2 * z - 1) / (2 * s * s))


def _points(q, s, extra=()):
    z1 = mpmath.mpf(1) / 2 + s * s * mpmath.log(1 / q - 1) if q < 1 else mpmath.mpf(0)
    pts = sorted({mpmath.mpf(0), mpmath.mpf(1), z1, *extra})
    return [-mpmath.inf, *pts, mpmath.inf]


def k(q, sigma, gamma, dps: int = 40) -> mpmath.mpf:
    """log E_{μ0}[w^γ]."""
    with mpmath.workdps(dps):
        q, s, g = _mp(q), _mp(sigma), _mp(gamma)
        f = lambda z: mpmath.npdf(z, 0, s) * _w(q, s, z) ** g  # noqa: E731
        return mpmath.log(mpmath.quad(f, _points(q, s, (g,))))


def kl(q, sigma, direction: str, dps: int = 40) -> mpmath.mpf:
    """KL(μ‖μ0) (direction "mu||mu0") or KL(μ0‖μ) ("mu0||mu")."""
    with mpmath.workdps(dps):
        q, s = _mp(q), _mp(sigma)
        if direction == "mu||mu0":
            f = lambda z: ((1 - q) * mpmath.npdf(z, 0, s) + q * mpmath.npdf(z, 1, s)) * mpmath.log(_w(q, s, z))  # noqa: E731
        else:
            f = lambda z: -mpmath.npdf(z, 0, s) * mpmath.log(_w(q, s, z))  # noqa: E731
        return mpmath.quad(f, _points(q, s))


def divergence(q, sigma, alpha, direction: str, dps: int = 40) -> mpmath.mpf:
    """D_α(μ‖μ0) = K(α)/(α−1) or D_α(μ0‖μ) = K(1−α)/(α−1)."""
    a = Fraction(alpha)
    g = a if direction == "mu||mu0" else 1 - a
    with mpmath.workdps(dps):
        return k(q, sigma, g, dps) / _mp(a - 1)


def centred_log_mgf(q, sigma, direction: str, lam, dps: int = 40) -> mpmath.mpf:
    """log E[e^{λ(L − E L)}] from the definitions: E_μ[w^λ] or E_{μ0}[w^{−λ}], minus λ·KL."""
    lam = Fraction(lam)
    with mpmath.workdps(dps):
        gamma = 1 + lam if direction == "mu||mu0" else -lam
        return k(q, sigma, gamma, dps) - _mp(lam) * kl(q, sigma, direction, dps)


def loss_cdf(q, sigma, direction: str, ell, dps: int = 30) -> mpmath.mpf:
    """Pr[L ≤ ℓ] by integrating the density up to the root of log w(z) = ±ℓ (findroot)."""
    with mpmath.workdps(dps):
        q, s, ell = _mp(q), _mp(sigma), _mp(ell)
        target = ell if direction == "mu||mu0" else -ell
        z = mpmath.findroot(lambda t: mpmath.log(_w(q, s, t)) - target, 0)
        if direction == "mu||mu0":
            dens = lambda t: (1 - q) * mpmath.npdf(t, 0, s) + q * mpmath.npdf(t, 1, s)  # noqa: E731
            return mpmath.quad(dens, [-mpmath.inf, z])
        return mpmath.quad(lambda t: mpmath.npdf(t, 0, s), [z, mpmath.inf])
