"""A_α in ball arithmetic, fast for many orders at one (q, σ): series and a band.

This is the rigorous method's fast path (used by :mod:`rdp_verify.methods.rigorous`)
for A_α = M(α) = ∫ μ0 w^α, w = 1 − q + q·r, r(z) = exp((2z − 1)/(2σ²)),
z1 = 1/2 + σ² ln(1/q − 1). The line is split at c ≈ z1 − sσ² and
c' ≈ z1 + sσ² (exact dyadic numbers):

* **Left**, (−∞, c]: A_L = (1−q)^α Σ_k C(α,k) E_k with
  E_k = (q/(1−q))^k e^{(k²−k)/(2σ²)} ½erfc((k − c)/(σ√2)) (Section 3.3). E_k does
  not depend on α, so it is computed once per (q, σ) and shared by all orders.
* **Right**, [c', ∞): A_R = q^α Σ_k C(α,k) ((1−q)/q)^k e^{(m²−m)/(2σ²)}
  ½erfc((c' − m)/(σ√2)), m = α − k.
* **Band**, [c, c']: n-point Gauss–Legendre quadrature. log μ0 and log w at the
  nodes do not depend on α and are shared.

Error bounds, all enclosed in the ball:

* *Series truncation.* On (−∞, c], ∫ μ0 r^{k+1} ≤ r(c) ∫ μ0 r^k, so consecutive
  terms satisfy abs(t_{k+1}) ≤ abs(t_k) · abs(α − k)/(k + 1) · ρ with
  ρ = q r(c)/(1 − q) = e^{(c − z1)/σ²}; for k ≥ K, abs(α − k)/(k + 1) ≤
  R_K = max(1, (K + α)/(K + 1)), so with x = ρ R_K < 1 the terms from K on sum
  to at most abs(t_K)/(1 − x). The right series is the mirror image with
  ρ' = (1 − q)/(q r(c')) = e^{−(c' − z1)/σ²}.
* *Gauss–Legendre.* If f is analytic in the Bernstein ellipse E_ρ of a panel
  [a, b] and abs(f) ≤ M there, the (m + 1)-point rule errs by at most
  (64/15)·h·M·ρ^{−2m}/(ρ² − 1), h = (b − a)/2 (Trefethen, *Approximation Theory
  and Approximation Practice*, Thm 19.3, whose I_m uses m + 1 nodes); an n-point
  rule therefore uses the exponent 2(n − 1). μ0 w^α is analytic for abs(Im z) < πσ² (the branch points of w^α are at
  z1 + iπσ²(2j + 1)); we take the ellipse's half-height Y ≤ min(3πσ²/4, 5σ/2).
  On it abs(μ0(z)) = μ0(Re z) e^{(Im z)²/(2σ²)} and abs(w(z)) ≤ w(Re z) (triangle
  inequality), so for α > 0, M ≤ e^{Y²/(2σ²)} · max over the ellipse's real
  extent of μ0(x) w(x)^α, which we bound on eight pieces by (max μ0) · (w at the
  right end)^α. The band is cut into panels short enough that each ellipse has
  ρ ≥ 2.3 (large σ makes the band long compared with the strip).
* *Negligible regions.* A region whose closed-form upper bound (the tail bounds
  of :mod:`rdp_verify.methods.quadrature`) is below its share of the tolerance is not
  summed; its bound enters as the interval [0, bound].

The fast path declines (returns ``None``) when a series would need more than
``MAX_TERMS`` terms or the band more than ``MAX_NODES`` nodes; the caller then
uses ``acb.integral``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

from flint import arb, ctx

from ..foundations.results import to_arb

__all__ = ["SharedSGM", "shared_context"]

SPLIT = 2  # s: the band is [z1 − sσ², z1 + sσ²]
MAX_TERMS = 160
NODE_COUNTS = (16, 24, 32, 48, 64, 96, 128)
MAX_NODES = NODE_COUNTS[-1]
PIECES = 8
MAX_PANELS = 64


def _dyadic(x: arb) -> arb:
    return arb(float(x.mid()))


@lru_cache(maxsize=64)
def _gauss_legendre(n: int, prec: int) -> tuple[tuple[arb, arb], ...]:
    saved = ctx.prec
    try:
        ctx.prec = prec
        return tuple(arb.legendre_p_root(n, k, weight=True) for k in range(n))
    finally:
        ctx.prec = saved


class SharedSGM:
    """Everything about SG_{q,σ} that the orders share, at one working precision.

    Create and use it under ``ctx.prec == prec`` (see :func:`shared_context`).
    """

    def __init__(self, q: Fraction, sigma: Fraction, prec: int):
        if not 0 < q < 1:
            raise ValueError("the series fast path needs 0 < q < 1")
        self.prec = prec
        self.q_exact = q
        self.q = to_arb(q)
        self.sigma = to_arb(sigma)
        self.s2 = to_arb(sigma * sigma)
        self.log_q = self.q.log()
        self.log_1mq = (1 - self.q).log()
        self.ratio = self.q / (1 - self.q)
        self.lognorm = -(self.sigma.log() + (2 * arb.pi()).log() / 2)
        self.z1 = arb(0.5) + self.s2 * (self.log_1mq - self.log_q)
        self.c_lo = _dyadic(self.z1 - SPLIT * self.s2)
        self.c_hi = _dyadic(self.z1 + SPLIT * self.s2)
        self.rho_lo = ((self.c_lo - self.z1) / self.s2).exp()  # q r(c)/(1−q)
        self.rho_hi = (-(self.c_hi - self.z1) / self.s2).exp()  # (1−q)/(q r(c'))
        self.root2s = self.sigma * arb(2).sqrt()
        self._left: list[arb] = []
        self._expm1: list[arb] = []
        self._band = _Band(self)

    # -- shared tables --------------------------------------------------------------
    def left_term(self, k: int) -> arb:
        """E_k = (q/(1−q))^k ∫_{−∞}^{c} μ0 r^k, computed once per k."""
        while len(self._left) <= k:
            j = len(self._left)
            gauss = (to_arb(Fraction(j * j - j, 2)) / self.s2).exp() * ((j - self.c_lo) / self.root2s).erfc() / 2
            self._left.append(self.ratio**j * gauss)
        return self._left[k]

    def expm1_term(self, k: int) -> arb:
        """e^{(k²−k)/(2σ²)} − 1, computed once per k (integer orders)."""
        while len(self._expm1) <= k:
            j = len(self._expm1)
            self._expm1.append((to_arb(Fraction(j * j - j, 2)) / self.s2).expm1())
        return self._expm1[k]

    def log_w(self, x: arb) -> arb:
        return (1 - self.q + self.q * ((2 * x - 1) / (2 * self.s2)).exp()).log()

    def log_phi(self, x: arb) -> arb:
        """log Φ(x/σ) for a moderate x (used for region bounds only)."""
        return ((-x / self.root2s).erfc() / 2).log()

    # -- A_α --------------------------------------------------------------------------
    def log_a_integer(self, alpha: int) -> arb:
        """log A_α = log1p(Σ_{k≥2} C(α,k)(1−q)^{α−k}q^k (e^{(k²−k)/(2σ²)} − 1)), α integer."""
        coef = to_arb(Fraction(alpha * (alpha - 1), 2)) * (1 - self.q) ** (alpha - 2) * self.q * self.q
        excess = arb(0)
        for k in range(2, alpha + 1):
            excess += coef * self.expm1_term(k)
            coef = coef * (alpha - k) / (k + 1) * self.ratio
        return excess.log1p()

    def log_a(self, alpha: Fraction) -> arb | None:
        """Ball for log A_α (α > 1), or None if the fast path does not apply."""
        tol = arb(2) ** (-self.prec) / 4  # each part; A_α ≥ 1
        g = to_arb(alpha)
        left = self._left_series(g, tol)
        right = self._right_series(g, tol) if left is not None else None
        band = self._band.integral(g, tol) if right is not None else None
        if band is None:
            return None
        return (left + right + band).log()

    def _left_series(self, g: arb, tol: arb) -> arb | None:
        bound = (g * self.log_w(self.c_lo) + self.log_phi(self.c_lo)).exp()  # w(c)^α Φ(c/σ)
        if bound < tol:
            return _interval_to(bound)
        scale = (self.log_1mq * g).exp()
        return _summed(lambda k: self.left_term(k), g, self.rho_lo, tol / scale, scale)

    def _right_series(self, g: arb, tol: arb) -> arb | None:
        # (1 + (1−q)/(q r(c')))^α q^α e^{(α²−α)/(2σ²)} Φ̄((c'−α)/σ): the right region's bound
        bound = (
            g * (1 + self.rho_hi).log() + g * self.log_q + (g * g - g) / (2 * self.s2)
            + (((self.c_hi - g) / self.root2s).erfc() / 2).log()
        ).exp()
        if bound < tol:
            return _interval_to(bound)
        scale = (self.log_q * g).exp()
        inv_ratio, half_s2 = 1 / self.ratio, 1 / (2 * self.s2)

        def term(k: int) -> arb:
            m = g - k
            return inv_ratio**k * ((m * m - m) * half_s2).exp() * ((self.c_hi - m) / self.root2s).erfc() / 2

        return _summed(term, g, self.rho_hi, tol / scale, scale)


def _summed(term, g: arb, rho: arb, tol: arb, scale: arb) -> arb | None:
    """scale · Σ_k C(α,k)·term(k), stopped with the geometric remainder bound.

    abs(t_{k+1}) ≤ abs(t_k)·(α − k)/(k + 1)·ρ, and for k ≥ K, abs(α − k)/(k + 1) ≤
    (K + α)/(K + 1) because α > 1; so once x = ρ(K + α)/(K + 1) < 1 the terms
    from K on sum to at most abs(t_K)/(1 − x).
    """
    total, coef = arb(0), arb(1)
    for k in range(MAX_TERMS):
        t = coef * term(k)
        x = rho * (g + k) / (k + 1)
        if x < 1:
            remainder = abs(t) / (1 - x)
            if remainder < tol:
                return scale * (total + arb(0, remainder.upper()))
        total += t
        coef = coef * (g - k) / (k + 1)
    return None


class _Band:
    """Composite Gauss–Legendre on [c, c'] with Bernstein-ellipse bounds (α > 0).

    The band is cut into panels of half-length ≤ Y/0.95 so that every panel's
    ellipse parameter is ρ ≥ 2.3; panels whose whole contribution is below their
    share of the tolerance are bounded instead of summed.
    """

    def __init__(self, sgm: SharedSGM):
        height = min(3 * arb.pi() * sgm.s2 / 4, 5 * sgm.sigma / 2)  # Y: ellipse half-height
        count = math.ceil(float(((sgm.c_hi - sgm.c_lo) / 2 / (height * 0.95)).upper()))
        self.usable = count <= MAX_PANELS
        edges = [sgm.c_lo + (sgm.c_hi - sgm.c_lo) * j / count for j in range(count + 1)] if self.usable else []
        self.panels = [_Panel(sgm, a, b, height) for a, b in zip(edges[:-1], edges[1:])]

    def integral(self, g: arb, tol: arb) -> arb | None:
        if not self.usable:
            return None
        share = tol / len(self.panels)
        total = arb(0)
        for panel in self.panels:
            part = panel.integral(g, share)
            if part is None:
                return None
            total += part
        return total


class _Panel:
    """One Gauss–Legendre panel [a, b] of the band."""

    def __init__(self, sgm: SharedSGM, a: arb, b: arb, height: arb):
        self.sgm = sgm
        self.h = (b - a) / 2
        self.mid = (a + b) / 2
        ratio = height / self.h
        self.rho = ratio + (ratio * ratio + 1).sqrt()  # Y = h(ρ − 1/ρ)/2
        self.log_rho = self.rho.log()
        # log of (64/15) h e^{Y²/(2σ²)} / (ρ² − 1): the α-independent part of the bound
        self.log_const = (arb(64) / 15 * self.h / (self.rho**2 - 1)).log() + height * height / (2 * sgm.s2)
        self.log_width = (2 * self.h).log()
        half_width = self.h * (self.rho + 1 / self.rho) / 2
        lo, hi = _dyadic(self.mid - half_width) - 1, _dyadic(self.mid + half_width) + 1
        edges = [lo + (hi - lo) * j / PIECES for j in range(PIECES + 1)]
        self.pieces = []  # (max log μ0, log w at the right end) on pieces of the ellipse's real extent
        for x, y in zip(edges[:-1], edges[1:]):
            nearest = arb(0) if (x < 0 < y) else (x if abs(x) < abs(y) else y)
            self.pieces.append((-(nearest * nearest) / (2 * sgm.s2) + sgm.lognorm, sgm.log_w(y)))
        self._nodes: dict[int, list[tuple[arb, arb, arb]]] = {}

    def nodes(self, n: int) -> list[tuple[arb, arb, arb]]:
        """(weight·h, log μ0(x), log w(x)) at the n Gauss–Legendre nodes."""
        if n not in self._nodes:
            s = self.sgm
            rows = []
            for t, weight in _gauss_legendre(n, s.prec):
                x = self.mid + self.h * t
                rows.append((weight * self.h, -(x * x) / (2 * s.s2) + s.lognorm, s.log_w(x)))
            self._nodes[n] = rows
        return self._nodes[n]

    def integral(self, g: arb, tol: arb) -> arb | None:
        log_sup = max((lm + g * lw).upper() for lm, lw in self.pieces)
        log_tol = tol.log()
        if log_sup + self.log_width < log_tol:  # the whole panel is negligible
            return _interval_to((log_sup + self.log_width).exp())
        log_m = self.log_const + log_sup
        for n in NODE_COUNTS:
            log_err = log_m - 2 * (n - 1) * self.log_rho  # n nodes: m = n − 1 in Thm 19.3
            if log_err < log_tol:
                total = arb(0)
                for weight, lm, lw in self.nodes(n):
                    total += weight * (lm + g * lw).exp()
                return total + arb(0, log_err.exp().upper())
        return None


def _interval_to(bound: arb) -> arb:
    """The interval [0, bound]."""
    up = bound.upper()
    return arb(up / 2, up / 2)


@lru_cache(maxsize=16)
def shared_context(q: Fraction, sigma: Fraction, prec: int) -> SharedSGM:
    """A cached :class:`SharedSGM`; call it with ``ctx.prec == prec``."""
    return SharedSGM(q, sigma, prec)
