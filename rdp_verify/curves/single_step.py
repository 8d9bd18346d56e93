"""The exact hockey-stick curve of one SGM step, from Gaussian CDFs in Arb ball arithmetic.

One step of SG(q, σ) with add/remove-one neighbours has two dominating pairs (Mironov, Talwar,
Zhang 2019, Theorem 4; Zhu, Dong, Wang 2022, Theorem 11): **remove** (P, Q) = (μ, μ0) and **add**
(P, Q) = (μ0, μ), with μ0 = N(0, σ²), μ1 = N(1, σ²), μ = (1 − q)μ0 + qμ1. For the remove pair the
likelihood ratio is Λ = dP/dQ = w(z) = 1 − q + q·e^{(2z − 1)/(2σ²)}, increasing in z. Its curve,
for x = e^ε ≥ 0,

    H(x) = E_Q[(Λ − x)_+] = sup_S P(S) − x·Q(S)      (the hockey-stick divergence H_{e^ε}(P‖Q)),

is convex and non-increasing with H(0) = 1. With t = x − 1 + q and z_x = 1/2 + σ²·log(t/q) (the
point where Λ = x), Λ > x ⟺ z > z_x, so in terms of Φ (the standard normal CDF, Φ̄ = 1 − Φ)::

    H(x)  = q·Φ̄((z_x − 1)/σ) − t·Φ̄(z_x/σ),               t > 0,
    G(x)  = H(x) − (1 − x) = t·Φ(z_x/σ) − q·Φ((z_x − 1)/σ),   t > 0,
    H'(x) = −Q(Λ > x) = −Φ̄(z_x/σ),
    H''(x) = σ·φ(z_x/σ)/t   (the density of Λ under Q),

and H(x) = 1 − x, G = 0, H'' = 0 for t ≤ 0 (Λ ≥ 1 − q). Both H and G are differences of two
positive terms; G is evaluated where x < 1 and H where x ≥ 1, so each keeps full relative
accuracy (the two terms never cancel to more than a factor of about z_x²/σ²). The add pair's
curve is the perspective H_add(x) = 1 − x + x·H(1/x) (swap P and Q), so one curve serves both
directions (:mod:`rdp_verify.curves.discretize`). q = 1 is the Gaussian mechanism: the same
formulas with t = x.

Every value is an Arb ball (python-flint) at the working precision ``prec``; q and σ enter as
exact rationals, so every returned ball contains the exact value.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, ctx

from ..foundations.normal import phi, phi_bar
from ..foundations.results import to_arb

__all__ = ["StepCurve"]


class StepCurve:
    """H, G, H' and bounds on H'' of the remove pair of SG(q, σ), at ``prec`` bits."""

    def __init__(self, q: Fraction, sigma: Fraction, prec: int):
        self.prec = prec
        self.q_exact = q
        with ctx.workprec(prec):
            self.q = to_arb(q)
            self.one_minus_q = to_arb(1 - q)
            self.sigma = to_arb(sigma)
            self.s2 = to_arb(sigma * sigma)
            self.norm = 1 / (2 * arb.pi()).sqrt()
            # H'' = σφ(z/σ)/t is largest at t_c, where z = −1 (see curvature_bound)
            self.t_c = self.q * (-(arb(3) / (2 * self.s2))).exp()

    def _z(self, t: arb) -> arb:
        return arb(0.5) + self.s2 * (t / self.q).log()

    def values(self, x: arb, g_side: bool, t: arb | None = None, k: int | None = None) -> tuple[arb, arb]:
        """(G(x), G'(x)) if ``g_side`` else (H(x), H'(x)): the value and slope with full relative accuracy.

        G' = H' + 1 = Q(Λ < x) = Φ(z_x/σ), H' = −Φ̄(z_x/σ). ``t`` = x − (1 − q) may be given when it is
        known more exactly than the difference (at x = 1 − q it is exactly 0).
        """
        with ctx.workprec(self.prec):
            t = x - self.one_minus_q if t is None else t
            if t <= 0:
                return (arb(0), arb(0)) if g_side else (1 - x, arb(-1))
            if not t > 0:  # the ball straddles t = 0: only possible for a wide x
                raise ArithmeticError("x straddles 1 - q; raise the precision")
            z = self._z(t)
            zs, z1s = z / self.sigma, (z - 1) / self.sigma
            if g_side:
                cdf = phi(zs)
                return t * cdf - self.q * phi(z1s), cdf
            tail = phi_bar(zs)
            return self.q * phi_bar(z1s) - t * tail, -tail

    def slope(self, x: arb) -> arb:
        """H'(x) = −Q(Λ > x)."""
        with ctx.workprec(self.prec):
            t = x - self.one_minus_q
            if t <= 0:
                return arb(-1)
            return -phi_bar(self._z(t) / self.sigma)

    def _curvature(self, t: arb) -> arb:
        z = self._z(t) / self.sigma
        return self.sigma * self.norm * (-(z * z) / 2).exp() / t

    def curvature_bound(self, x_lo: arb, x_hi: arb, ks: tuple[int, int] | None = None) -> arb:
        """An exact upper bound (an Arb point) of sup H'' over [x_lo, x_hi].

        H''(x) = f(t) = σφ(z/σ)/t with t = x − 1 + q is unimodal: d/dt log f = −(z + 1)/t and z
        increases with t, so f increases up to t_c (z = −1) and decreases after it; f = 0 for t ≤ 0.
        The supremum over the interval is therefore f at its right end (interval left of t_c), at its
        left end (right of t_c), or f(t_c): three point evaluations in ball arithmetic.
        """
        with ctx.workprec(self.prec):
            t_lo, t_hi = x_lo - self.one_minus_q, x_hi - self.one_minus_q
            right, left = t_hi.upper(), t_lo.lower()  # exact points enclosing the interval
            if not right > 0:
                return arb(0)
            if right <= self.t_c:
                value = self._curvature(right)
            elif left >= self.t_c:
                value = self._curvature(left)
            else:
                value = self._curvature(self.t_c)
            bound = value.upper()
            if not bound.is_finite():
                raise ArithmeticError("curvature bound is not finite; raise the precision")
            return bound
