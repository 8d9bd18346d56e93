"""The standard normal distribution in Arb ball arithmetic, in one place: Φ, its upper tail and its quantile.

Every bound of the toolkit that needs Φ(x) = erfc(−x/√2)/2 takes it from here (the RDP methods of
:mod:`rdp_verify.methods` keep their own, independent evaluations, as cross-checks must). erfc is Arb's
(python-flint ``arb.erfc``, a rigorous enclosure); :func:`erfc_ball` keeps it tight deep in the tail, where Arb's
erfc of an *inexact* ball loses every digit (x ≈ 7e5): by the mean value theorem erfc over the ball [m − r, m + r]
lies within r·max|erfc'| of erfc(m), and for x ≥ 0 the slope's size 2e^{−t²}/√π is largest at the lower end. For
an exact argument (r = 0) the result is Arb's erfc itself. The balls are computed at the caller's working
precision (``flint.ctx.prec``).
"""

from __future__ import annotations

from flint import arb

__all__ = ["erfc_ball", "phi", "phi_bar", "inverse_phi"]


def erfc_ball(x: arb) -> arb:
    """A ball containing erfc(t) for every t in the ball x, tight relative to its value also for x ≫ 0."""
    if not x.lower() > 0:
        return x.erfc()
    m, r = arb(x.mid()), arb(x.rad())
    slope = 2 * (-(x.lower() * x.lower())).exp() / arb.pi().sqrt()
    return m.erfc() + arb(0, (r * slope).upper())


def phi(x: arb) -> arb:
    """A ball containing Φ(x) = erfc(−x/√2)/2, accurate relative to its value also for x ≪ 0."""
    return erfc_ball(-x / arb(2).sqrt()) / 2


def phi_bar(x: arb) -> arb:
    """A ball containing 1 − Φ(x) = Φ(−x) = erfc(x/√2)/2, accurate relative to its value also for x ≫ 0."""
    return erfc_ball(x / arb(2).sqrt()) / 2


def inverse_phi(p: arb) -> arb:
    """Φ⁻¹(p) = −√2·erfcinv(2p), a ball containing the quantile of every p in the ball p ⊂ (0, 1)."""
    return -arb(2).sqrt() * (2 * p).erfcinv()
