"""Theorem 5 beyond the Gaussian: A_α ≥ B_α for the sampled Laplace mechanism.

Theorem 5 of Mironov–Talwar–Zhang 2019 holds for any noise whose density is
centrally symmetric (ν(x) = 1 − x maps μ0 to μ1; Section 3.1). For Laplace
noise of scale b, μ0 = Lap(0, b), μ1 = Lap(1, b), μ = (1 − q)μ0 + qμ1:

    A_α = E_{μ0}[(μ/μ0)^α] = M(α),   B_α = E_μ[(μ0/μ)^α] = M(1 − α),
    M(γ) = ∫ μ0(x) w(x)^γ dx,   w = 1 − q + q r,   r(x) = μ1/μ0 = e^{(abs(x) − abs(x − 1))/b}.

r is piecewise exponential with kinks at 0 and 1: r = e^{−1/b} on (−∞, 0],
e^{(2x−1)/b} on [0, 1], e^{1/b} on [1, ∞). With ∫_{−∞}^0 μ0 = 1/2 and
∫_1^∞ μ0 = e^{−1/b}/2 the outer pieces are closed forms:

    M(γ) = ½ w₋^γ + ½ e^{−1/b} w₊^γ + ∫_0^1 e^{−x/b}/(2b) (1 − q + q e^{(2x−1)/b})^γ dx,
    w₋ = 1 − q + q e^{−1/b},   w₊ = 1 − q + q e^{1/b}.

The middle piece is computed two ways:

* **proven**: Arb ``acb.integral`` (rigorous adaptive Gauss–Legendre with the
  analytic flag honoured; the branch points of w^γ lie at Im x = ±πb/2 + …,
  off the segment) plus the outer pieces in ball arithmetic;
* **estimate**: mpmath tanh-sinh quadrature with its own error estimate (not a proof).

``theorem5_report`` decides A_α ≥ B_α on the proven balls, raising the
precision while the two overlap; at q = 1, A_α = B_α exactly (μ0 and μ1 are
mirror images), at q = 0 both are 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
from flint import acb, arb, ctx

from ..foundations.decimals import interval_json
from ..foundations.inputs import (
    InputError,
    fraction_text,
    parse_alpha,
    parse_q,
    parse_rational,
)
from ..foundations.results import Bounded, arb_to_bounded, mpf_to_fraction, to_arb, to_mpf

__all__ = ["SampledLaplace", "log_moment_arb", "log_moment_mpmath", "theorem5_report"]

B_MIN, B_MAX = Fraction(1, 10), Fraction(10**4)
MAX_PREC = 4096


@dataclass(frozen=True)
class SampledLaplace:
    """Poisson-sampled Laplace mechanism: rate q, noise scale b (sensitivity 1), order α."""

    q: Fraction
    b: Fraction
    alpha: Fraction

    @classmethod
    def parse(cls, q: str, b: str, alpha: str) -> "SampledLaplace":
        scale = parse_rational(b, "b")
        if not B_MIN <= scale <= B_MAX:
            raise InputError(f"b={b.strip()} is outside the supported range [0.1, 1e4]")
        return cls(parse_q(q), scale, parse_alpha(alpha))

    def texts(self) -> dict[str, str]:
        return {"q": fraction_text(self.q), "b": fraction_text(self.b), "alpha": fraction_text(self.alpha)}


def log_moment_arb(point: SampledLaplace, gamma: Fraction, prec: int) -> arb:
    """Proven ball for log M(γ) at working precision ``prec`` bits."""
    saved = ctx.prec
    try:
        ctx.prec = prec
        q, g, inv_b = to_arb(point.q), to_arb(gamma), 1 / to_arb(point.b)
        e = inv_b.exp()
        outer = ((1 - q + q / e).log() * g).exp() / 2 + ((1 - q + q * e).log() * g).exp() / (2 * e)

        def f(z: acb, analytic: bool) -> acb:
            w = 1 - q + q * ((2 * z - 1) * inv_b).exp()
            return (-z * inv_b + g * w.log(analytic=analytic)).exp() * inv_b / 2

        middle = acb.integral(f, 0, 1, rel_tol=arb(2) ** (-prec), abs_tol=outer.lower() * arb(2) ** (-prec),
                              eval_limit=400_000, depth_limit=4000)
        if not middle.is_finite():
            raise ArithmeticError("acb.integral did not converge on [0, 1]")
        return (outer + middle.real).log()
    finally:
        ctx.prec = saved


def log_moment_mpmath(point: SampledLaplace, gamma: Fraction, dps: int) -> Bounded:
    """log M(γ) by mpmath tanh-sinh on [0, 1] (an **estimate**: mpmath's own error estimate, widened ×10)."""
    with mpmath.workdps(dps + 15):
        q, g, b = (to_mpf(x) for x in (point.q, gamma, point.b))
        e = mpmath.exp(1 / b)
        outer = (1 - q + q / e) ** g / 2 + (1 - q + q * e) ** g / (2 * e)
        middle, err = mpmath.quad(lambda x: mpmath.exp(-x / b) / (2 * b) * (1 - q + q * mpmath.exp((2 * x - 1) / b)) ** g,
                                  [0, mpmath.mpf(1) / 2, 1], error=True)
        total = outer + middle
        rounding = abs(total) * mpmath.mpf(10) ** (-(dps + 10))
        value = mpmath.log(total)
        error = (10 * err + rounding) / total
        return Bounded(mpf_to_fraction(value), mpf_to_fraction(error))


def _enclose(point: SampledLaplace, dps: int) -> tuple[arb, arb, int]:
    """Proven log A_α, log B_α, raising the precision until A ≥ B is decided (or MAX_PREC)."""
    prec = math.ceil(dps * math.log2(10)) + 20
    while True:
        log_a = log_moment_arb(point, point.alpha, prec)
        log_b = log_moment_arb(point, 1 - point.alpha, prec)
        gap = log_a - log_b
        if point.q == 1 or gap > 0 or gap < 0 or prec >= MAX_PREC:
            return log_a, log_b, prec
        prec = min(2 * prec, MAX_PREC)


def theorem5_report(point: SampledLaplace, dps: int = 30) -> dict[str, Any]:
    """log A_α and log B_α (proven and estimated) and whether A_α ≥ B_α is proven."""
    log_a, log_b, prec = _enclose(point, dps)
    la, lb = arb_to_bounded(log_a), arb_to_bounded(log_b)
    gap = Bounded(la.value - lb.value, la.error + lb.error)
    est_a = log_moment_mpmath(point, point.alpha, dps)
    est_b = log_moment_mpmath(point, 1 - point.alpha, dps)
    if point.q == 1:  # A = B exactly; the two independent balls must overlap
        status = "equal (q = 1: mu0 and mu1 are mirror images, A = B exactly)" if la.overlaps(lb) else \
            "inconsistent: q = 1 balls for A and B do not overlap, a bug"
    elif gap.lower > 0:
        status = "A > B (proven)"
    elif gap.upper < 0:
        status = "A < B (proven): contradicts Theorem 5, a bug"
    else:
        status = "undecided"
    return {
        "mechanism": "Poisson-sampled Laplace: mu0 = Lap(0, b), mu1 = Lap(1, b), mu = (1 - q) mu0 + q mu1",
        **point.texts(),
        "log_A": interval_json(la, 25),
        "log_B": interval_json(lb, 25),
        "log_A_minus_log_B": interval_json(gap, 10),
        "precision_bits": prec,
        "estimate": {
            "method": "mpmath tanh-sinh on [0, 1] + closed-form outer pieces (error estimate, not a proof)",
            "log_A": interval_json(est_a, 25),
            "log_B": interval_json(est_b, 25),
            "agrees_with_proven": est_a.overlaps(la) and est_b.overlaps(lb),
        },
        "theorem5": status,
        "holds": status.startswith(("A > B", "equal")),
    }
