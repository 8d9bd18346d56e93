"""The discrete Gaussian mechanism f(D) + N_Z(0, σ²) on ℤ with integer sensitivity s: a symmetric pair.

**The noise** (Canonne, Kamath, Steinke 2020, "The Discrete Gaussian for Differential Privacy", NeurIPS,
Definition 1): P[X = x] = e^{−x²/(2σ²)}/Z on ℤ, Z = Σ_{z∈ℤ} e^{−z²/(2σ²)}. Unlike dp_accounting's
``DiscreteGaussianPrivacyLoss``, which truncates the noise to [−⌈11.6σ⌉, ⌈11.6σ⌉] by default, this is the
untruncated mechanism of the paper (rdp_verify's ``DiscreteGaussianDpEvent`` extension, :mod:`rdp_verify.events`).

**Pair** (remove; add is the same law reflected): P = N_Z(−s, σ²), Q = N_Z(0, σ²), with the loss

    L(x) = (x² − (x + s)²)/(2σ²) = −s(2x + s)/(2σ²),

decreasing in x, taking the values −s(2x + s)/(2σ²) at the integers (atoms s²/σ² apart). The cuts are
half-integers: {L > ℓ} = {x ≤ ⌈y⌉ − 1} and {L ≥ ℓ} = {x ≤ ⌊y⌋}, y = −(2σ²ℓ/s + s)/2 (exact rationals). Under Q,
−L has the law of L under P (x ↦ −x − s), so one PLD serves both directions.

**The CDF, enclosed.** With K = ⌈σ·√(2·(bits + 64)·log 2)⌉ + s + 1, the partial sums S(n) = Σ_{−K ≤ z ≤ n}
e^{−z²/(2σ²)} are exact sums of Arb balls, and each tail beyond ±K is at most ∫_K^∞ e^{−u²/(2σ²)}du =
σ√(π/2)·erfc(K/(σ√2)) (the summand decreases on z ≥ 0). So Z ∈ S(K) + [0, 2T] and F(n) = P(X ≤ n) ∈
(S(n) + [0, T])/Z for −K ≤ n < K (F(n) ≤ T/Z below −K, ≥ 1 − T/Z above K), T the tail bound: every CDF value is
a ball containing the truth, as :class:`~rdp_verify.pld.rounding.MonotonePair` requires. K makes T about
2^−(bits + 64) of Z.

**Exact δ of one use** (:meth:`~rdp_verify.mechanisms.base.Mechanism.hockey_stick`): the Neyman–Pearson
region {L > ε} = {x < t}, δ(ε) = F_P(t) − e^ε F_Q(t) (Canonne, Kamath, Steinke 2020, Theorem 7 states the same
sum). **Rounding**: :mod:`rdp_verify.pld.rounding` (losses and masses up for the upper end, down for the lower).

**Rényi DP** (:func:`discrete_gaussian_rdp`, derived here). Completing the square,
α(x + s)² + (1 − α)x² = (x + αs)² − α(α − 1)s², so for α > 1

    Σ_x P(x)^α Q(x)^{1−α} = e^{α(α−1)s²/(2σ²)}·θ(αs)/θ(0),   θ(c) = Σ_{x∈ℤ} e^{−(x+c)²/(2σ²)},
    ε_α = αs²/(2σ²) + log(θ(αs)/θ(0))/(α − 1),

both orders (the pair is symmetric). By Poisson summation θ(c) = σ√(2π)·Σ_k e^{−2π²σ²k²}·cos(2πkc) =
σ√(2π)·θ₃(c, τ) with τ = 2πiσ² (Jacobi's θ₃(z, τ) = Σ_n e^{πiτn² + 2πinz}, Arb's ``acb.modular_theta``,
rigorous; Nielsen 2021, arXiv 2109.14920, writes the Rényi divergences of discrete normal laws through theta functions
the same way). θ is 1-periodic, so c enters as αs mod 1, an exact rational; at c = 0 (αs an integer) the ratio is
exactly 1 and ε_α = αs²/(2σ²), an exact rational. Every Fourier coefficient is positive, so θ(c) ≤ θ(0) and
ε_α ≤ αs²/(2σ²): the bound of Canonne, Kamath, Steinke 2020 (Section 2: the discrete Gaussian is
½(s/σ)²-concentrated DP, proven by this argument), which the ball never exceeds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import ClassVar

from flint import acb, arb, ctx

from ..foundations.normal import phi_bar
from ..foundations.results import to_arb
from ..pld.rounding import Cut, MonotonePair, exact_cut
from .base import Mechanism, check_positive, check_whole

__all__ = ["DiscreteGaussian", "DiscreteGaussianPair", "discrete_gaussian_rdp"]

GUARD = 64  # bits by which the tail beyond ±K stays below the working precision


@lru_cache(maxsize=16)
def _sums(sigma: Fraction, extra: int, prec: int) -> tuple[int, tuple[arb, ...], arb, arb]:
    """(K, prefix sums S(−K), …, S(K), the normaliser Z as a ball, the one-sided tail bound T) at ``prec`` bits."""
    with ctx.workprec(prec):
        k = math.ceil(float(sigma) * math.sqrt(2 * (prec + GUARD) * math.log(2))) + extra + 1
        two_s2 = 2 * to_arb(sigma) ** 2
        total, prefix = arb(0), []
        for z in range(-k, k + 1):
            total += (-(arb(z) ** 2) / two_s2).exp()
            prefix.append(total)
        s = to_arb(sigma)
        tail = (s * (2 * arb.pi()).sqrt() * phi_bar(arb(k) / s)).upper()  # σ√(π/2)·erfc(K/(σ√2))
        norm = total + arb(0).union(2 * tail)
    return k, tuple(prefix), norm, tail


def dgauss_cdf(x: arb, centre: int, sigma: Fraction, extra: int) -> arb:
    """A ball containing P(X ≤ x) for X ~ N_Z(centre, σ²) at the exact point x (module docstring)."""
    k, prefix, norm, tail = _sums(sigma, extra, ctx.prec)
    n = int(x.floor().unique_fmpz()) - centre
    if n < -k:
        return arb(0).union(tail / norm)
    if n >= k:
        return 1 - arb(0).union(tail / norm)
    return (prefix[n + k] + arb(0).union(tail)) / norm


def discrete_gaussian_rdp(sigma: Fraction, sensitivity: int, alpha: Fraction) -> Fraction | arb:
    """The Rényi divergence of order α > 1 of N_Z(−s, σ²) from N_Z(0, σ²), either order (module docstring): an exact
    rational when αs is an integer, else a ball at the working precision."""
    sigma, s, alpha = Fraction(sigma), int(sensitivity), Fraction(alpha)
    gaussian = alpha * s * s / (2 * sigma * sigma)
    c = (alpha * s) % 1
    if c == 0:
        return gaussian
    tau = acb(0, 2 * arb.pi() * to_arb(sigma) ** 2)
    ratio = acb(to_arb(c)).modular_theta(tau)[2] / acb(0).modular_theta(tau)[2]
    return to_arb(gaussian) + ratio.real.log() / to_arb(alpha - 1)


class DiscreteGaussianPair(MonotonePair):
    """P = N_Z(−s, σ²), Q = N_Z(0, σ²) on ℤ (module docstring)."""

    def __init__(self, sigma: Fraction, sensitivity: int):
        self.sigma, self.s = sigma, sensitivity

    def p_cdf(self, x: arb) -> arb:
        return dgauss_cdf(x, -self.s, self.sigma, self.s)

    def q_cdf(self, x: arb) -> arb:
        return dgauss_cdf(x, 0, self.sigma, self.s)

    def cut(self, level: Fraction, strict: bool) -> Cut:
        """The half-integer cut (module docstring): the loss is unbounded, so every level has one on ℤ."""
        y = -(2 * self.sigma ** 2 * level / self.s + self.s) / 2
        m = math.ceil(y) - 1 if strict else math.floor(y)
        return exact_cut(Fraction(2 * m + 1, 2))


@dataclass(frozen=True)
class DiscreteGaussian(Mechanism):
    """N_Z(0, σ²) noise (``sigma`` exact > 0) on integer values with integer ``sensitivity`` ≥ 1."""

    sigma: Fraction
    sensitivity: int = 1
    symmetric: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive(self.sigma, "sigma"))
        check_whole(self.sensitivity, "sensitivity", 1)

    def pair(self) -> DiscreteGaussianPair:
        return DiscreteGaussianPair(self.sigma, self.sensitivity)

    def loss_scale(self) -> Fraction:
        """s/σ (the spread of the loss, as for the continuous Gaussian), at least s²/(2σ²)."""
        s, sigma = Fraction(self.sensitivity), self.sigma
        return max(s / sigma, s * s / (2 * sigma * sigma))

    def rdp(self, alpha: Fraction) -> tuple[Fraction | arb, Fraction | arb]:
        """(remove, add) Rényi divergences of order α (:func:`discrete_gaussian_rdp`; symmetric)."""
        eps = discrete_gaussian_rdp(self.sigma, self.sensitivity, alpha)
        return eps, eps
