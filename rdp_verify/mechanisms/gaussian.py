"""The Gaussian mechanism f(D) + N(0, σ²) with sensitivity s: a symmetric pair, exact δ in closed form.

**Pair** (dp_accounting 0.6, ``pld/privacy_loss_mechanism.py``: ``AdditiveNoisePrivacyLoss`` lines
246-251, REMOVE: μ_upper(x) = μ(x + s), μ_lower(x) = μ(x); ``GaussianPrivacyLoss`` lines 1093-1131 and
``_privacy_loss_without_subsampling_remove`` line 1268):

    P = N(−s, σ²),   Q = N(0, σ²),   L(x) = log dP/dQ(x) = −s(2x + s)/(2σ²),

non-increasing in x; L > ℓ ⟺ x < t(ℓ) = −σ²ℓ/s − s/2, a rational. Under P, L ~ N(μ²/2, μ²) with
μ = s/σ, and under Q, −L has the same law: both directions have one PLD (computed once).

**Curve** (Balle & Wang 2018, ICML, "Improving the Gaussian mechanism", Theorem 8), for every real ε:

    δ(ε) = Φ(μ/2 − ε/μ) − e^ε·Φ(−μ/2 − ε/μ),   μ = s/σ.

**Events.** dp_accounting's ``GaussianDpEvent(noise_multiplier)`` is ``Gaussian(noise_multiplier, 1)``
under ADD_OR_REMOVE_ONE and REPLACE_SPECIAL, and ``Gaussian(noise_multiplier, 2)`` under REPLACE_ONE:
``pld_privacy_accountant.py`` lines 84-94 pass the neighbouring relation to
``from_gaussian_mechanism``, which for REPLACE_ONE uses AdjacencyType.REPLACE
(``privacy_loss_distribution.py`` line 941), μ_upper(x) = μ(x + s), μ_lower(x) = μ(x − s)
(``privacy_loss_mechanism.py`` lines 253-254): the means 2s apart.

**Rounding**: :mod:`rdp_verify.pld.rounding` (upper: losses and masses up, mass above the range
to +∞; lower: both down, mass below the range dropped). Φ is evaluated through erfc in Arb
(:func:`rdp_verify.foundations.normal.erfc_ball`), relative-accurate in the far tail.

**Rényi DP** (:func:`gaussian_rdp`; Mironov 2017, *Rényi Differential Privacy*, Proposition 7):
D_α(N(−s, σ²) ‖ N(0, σ²)) = α s²/(2σ²) for every α > 1, both orders (the pair is symmetric): an exact rational.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

from flint import arb, ctx

from ..foundations.normal import phi
from ..foundations.results import to_arb
from ..pld.rounding import Cut, MonotonePair, exact_cut
from .base import Mechanism, check_direction, check_positive

__all__ = ["Gaussian", "GaussianPair", "gaussian_rdp"]


def gaussian_rdp(sigma: Fraction, sensitivity: Fraction, alpha: Fraction) -> Fraction:
    """ε_α = α s²/(2σ²): the Rényi divergence of order α > 1 of N(−s, σ²) from N(0, σ²), either order (Mironov 2017,
    Proposition 7). Exact rational arithmetic: nothing is rounded."""
    return Fraction(alpha) * Fraction(sensitivity) ** 2 / (2 * Fraction(sigma) ** 2)


class GaussianPair(MonotonePair):
    """P = N(−s, σ²), Q = N(0, σ²) (module docstring)."""

    continuous_loss = True

    def __init__(self, sigma: Fraction, sensitivity: Fraction):
        self.sigma, self.s = sigma, sensitivity

    def p_cdf(self, x: arb) -> arb:
        return phi((x + to_arb(self.s)) / to_arb(self.sigma))

    def q_cdf(self, x: arb) -> arb:
        return phi(x / to_arb(self.sigma))

    def cut(self, level: Fraction, strict: bool) -> Cut:
        return exact_cut(-self.sigma ** 2 * level / self.s - self.s / 2)


@dataclass(frozen=True)
class Gaussian(Mechanism):
    """The Gaussian mechanism with standard deviation ``sigma`` and sensitivity ``sensitivity`` (exact, > 0)."""

    sigma: Fraction
    sensitivity: Fraction = Fraction(1)
    symmetric: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive(self.sigma, "sigma"))
        object.__setattr__(self, "sensitivity", check_positive(self.sensitivity, "sensitivity"))

    def pair(self) -> GaussianPair:
        return GaussianPair(self.sigma, self.sensitivity)

    def loss_scale(self) -> Fraction:
        """μ = s/σ, the standard deviation of the loss."""
        return self.sensitivity / self.sigma

    def delta_exact(self, epsilon: Fraction, prec: int, direction: str = "remove") -> arb:
        """A ball containing δ(ε) (Balle & Wang 2018, Theorem 8; module docstring), both directions (symmetric)."""
        check_direction(direction)
        epsilon = Fraction(epsilon)
        with ctx.workprec(prec):
            mu = to_arb(self.sensitivity) / to_arb(self.sigma)
            eps = to_arb(epsilon)
            return phi(mu / 2 - eps / mu) - eps.exp() * phi(-mu / 2 - eps / mu)

    def rdp(self, alpha: Fraction) -> tuple[Fraction, Fraction]:
        """(remove, add) Rényi divergences of order α: both α s²/(2σ²) exactly (:func:`gaussian_rdp`)."""
        eps = gaussian_rdp(self.sigma, self.sensitivity, alpha)
        return eps, eps
