"""The privacy curve of runs whose every phase has q = 1: the Gaussian mechanism, in closed form.

With q = 1 every step is the Gaussian mechanism N(0, σ_i²) vs N(Δ, σ_i²) (ℓ2-sensitivity Δ = 1 under
add/remove, Δ = 2 under replace-one, whether the batch is Poisson or fixed-size: all N records), and T_i
adaptive steps compose to the Gaussian mechanism with μ² = Σ_i Δ²T_i/σ_i² (Dong, Roth, Su 2022,
Corollary 3.3: μ-GDP composes as √(Σ μ_i²), and GDP is exactly the Gaussian pair). Both
directions have the same curve, the analytic Gaussian mechanism's (Balle & Wang 2018, Theorem 8):

    δ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2),

continuous and strictly decreasing in ε ≥ 0. It is evaluated in Arb ball arithmetic (Φ of
:mod:`rdp_verify.foundations.normal`, which keeps relative accuracy far in the tail), the precision raised until the ball is narrow
against its value, so every returned ball contains the exact δ(ε). The ε(δ) bracket is found by
bisection on exact rationals, each end verified by such a ball: δ(ε_lower) > δ and δ(ε_upper) ≤ δ,
proven. No discretisation is involved: the bracket is as tight as asked (relative width ≤ 1e-15).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

from flint import arb, ctx

from ..foundations.normal import phi
from ..foundations.results import arb_to_bounded, to_arb
from ..foundations.run import Phase

__all__ = ["GaussianCurve", "is_gaussian_run", "FLOOR"]

RELATIVE_WIDTH = Fraction(1, 10**15)  # the ε bracket's width: far below any tolerance asked for
FLOOR = Fraction(1, 10**1000)  # δ(ε) (and G_μ(α), rdp_verify.tradeoff.envelope) below it is reported as [0, FLOOR]
_START_PREC = 128
_MAX_PREC = 1 << 16


def _sensitivity(phase: Phase) -> int:
    """The ℓ2 sensitivity of one step's sum of clipped gradients: 1 (add/remove), 2 (replace-one)."""
    return 2 if phase.neighbours == "replace-one" else 1


def is_gaussian_run(phases: Sequence[Phase]) -> bool:
    """Every phase samples with q = 1 (the whole dataset in every step)."""
    return all(p.q == 1 for p in phases)


@dataclass(frozen=True)
class GaussianCurve:
    """The exact privacy curve of a q = 1 run (module docstring); ``mu_squared`` = Σ Δ²T_i/σ_i² exactly."""

    phases: tuple[Phase, ...]

    @property
    def mu_squared(self) -> Fraction:
        return sum((Fraction(p.steps) * _sensitivity(p) ** 2 / (p.sigma * p.sigma) for p in self.phases), Fraction(0))

    def delta(self, epsilon: Fraction) -> arb:
        """A ball containing δ(ε), narrow against its value (relative radius below 2^−60)."""
        prec = _START_PREC
        while True:
            with ctx.workprec(prec):
                mu = to_arb(self.mu_squared).sqrt()
                eps = to_arb(Fraction(epsilon))
                a = -eps / mu + mu / 2
                value = phi(a) - eps.exp() * phi(a - mu)
                if value > 0 and value.rad() < value.mid().abs_lower() * arb(2) ** -60:
                    return value
                if prec >= _MAX_PREC:
                    return value
            prec *= 2

    def delta_bounds(self, epsilon: Fraction) -> tuple[Fraction, Fraction]:
        """Proven [δ_lower, δ_upper] at ε as exact rationals; below :data:`FLOOR` the interval [0, FLOOR]."""
        ball = self.delta(epsilon)
        if ball.upper() < to_arb(FLOOR):  # exact rationals of 10^−10^6 size would not fit in memory
            return Fraction(0), FLOOR
        exact = arb_to_bounded(ball)
        return max(exact.lower, Fraction(0)), min(exact.upper, Fraction(1))

    def epsilon_bounds(self, delta: Fraction) -> tuple[Fraction, Fraction]:
        """Proven [ε_lower, ε_upper] with δ(ε_lower) > δ (or ε_lower = 0) and δ(ε_upper) ≤ δ."""
        delta = Fraction(delta)
        if self.delta_bounds(Fraction(0))[1] <= delta:
            return Fraction(0), Fraction(0)  # δ(0) ≤ δ: ε(δ) = 0 exactly

        target = to_arb(delta)

        def above(eps: Fraction) -> bool:  # δ(ε) > δ, proven (a ball straddling δ counts as not proven)
            return bool(self.delta(eps) > target)

        def below(eps: Fraction) -> bool:  # δ(ε) ≤ δ, proven
            return bool(self.delta(eps) <= target)

        hi = Fraction(1)
        while not below(hi):
            hi *= 2
        lo = Fraction(0) if not above(hi / 2) else hi / 2
        # bisection on the exact rationals: invariant δ(lo) > δ (or lo = 0) and δ(hi) ≤ δ, proven
        while hi - lo > RELATIVE_WIDTH * hi:
            mid = _short_between(lo, hi)
            if below(mid):
                hi = mid
            elif above(mid):
                lo = mid
            else:  # the ball at mid straddles δ: mid is within rounding of the root
                break
        return lo, hi


def _short_between(lo: Fraction, hi: Fraction) -> Fraction:
    """A rational with a small denominator (a dyadic) strictly inside (lo, hi)."""
    mid = (lo + hi) / 2
    bits = 1
    while True:
        scale = 2**bits
        x = Fraction(round(mid * scale), scale)
        if lo < x < hi:
            return x
        bits += 1
