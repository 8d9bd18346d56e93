"""The Poisson-sampled Laplace mechanism: sampling probability q, noise scale b, sensitivity s.

**Pair** (dp_accounting 0.6, ``pld/privacy_loss_mechanism.py``: ``AdditiveNoisePrivacyLoss`` lines
267-273 and ``LaplacePrivacyLoss`` lines 869-880, with sampling probability q):

    remove:  P = (1 − q)·Lap(0, b) + q·Lap(−s, b),   Q = Lap(0, b),
    add:     P = Lap(0, b),   Q = (1 − q)·Lap(0, b) + q·Lap(s, b),

and the add pair, reflected x ↦ −x (Lap(0, b) is symmetric), is the remove pair swapped, as
:mod:`rdp_verify.pld.rounding` takes it. The remove loss is

    L(x) = log(1 − q + q·e^{L₁(x)}),   L₁(x) = (abs(x) − abs(x + s))/b   (the Laplace pair's loss),

non-increasing in x, with atoms at log(1 − q + q·e^{±ε₀}), ε₀ = s/b, and {L > ℓ} = {L₁ > g(ℓ)},
g(ℓ) = log((e^ℓ − 1 + q)/q) (:class:`rdp_verify.pld.rounding.PoissonSampled`). dp_accounting's
own formula: ``_privacy_loss_remove`` (line 559, ``log_a_times_exp_b_plus_c(q, loss, 1 − q)``) and
``_privacy_loss_add`` = −``_privacy_loss_remove``(−x). For q < 1 the two directions differ (the remove
direction has the larger δ for ε > 0, ``from_privacy_guarantee``'s note at lines 1064-1067).

**Curve** (Neyman–Pearson, closed form): δ(ε) = P(X < t) − e^ε·Q(X < t) for remove with
t = −(b·g(ε) + s)/2 (clamped to the plateaus), and Q(X > t′) − e^ε·P(X > t′) for add with
t′ the cut of {L ≥ −ε}; Laplace CDFs are elementary.

**Events.** dp_accounting's ``PoissonSampledDpEvent(q, LaplaceDpEvent(noise_multiplier))`` is
``SampledLaplace(noise_multiplier, q)`` (sensitivity 1) under ADD_OR_REMOVE_ONE and REPLACE_SPECIAL
(``pld_privacy_accountant.py`` lines 183-205: ``from_laplace_mechanism(parameter=noise_multiplier,
sampling_prob=q)``, whose ``_pld_for_subsampled_mechanism`` keeps the REMOVE and ADD PLDs separately,
``privacy_loss_distribution.py`` lines 794-818).

**Rounding**: :mod:`rdp_verify.pld.rounding` (the cut of g(ℓ), an Arb ball, is enclosed by the
Laplace cuts at its two rational ends).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

from flint import arb

from ..pld.rounding import PoissonSampled
from .base import Mechanism, check_positive, check_probability
from .laplace import LaplacePair

__all__ = ["SampledLaplace"]


@dataclass(frozen=True)
class SampledLaplace(Mechanism):
    """Poisson sampling with probability ``q`` ∈ (0, 1] of the Laplace mechanism Lap(``b``), sensitivity
    ``sensitivity`` (exact rationals)."""

    b: Fraction
    q: Fraction
    sensitivity: Fraction = Fraction(1)
    no_rdp: ClassVar[str] = ("PoissonSampledDpEvent of a LaplaceDpEvent has no proven Renyi DP here (dp_accounting's "
                             "RDP accountant refuses it too; rdp-verify dp --event brackets its privacy curve)")

    def __post_init__(self) -> None:
        object.__setattr__(self, "b", check_positive(self.b, "b"))
        object.__setattr__(self, "q", check_probability(self.q, "q", closed=True))
        object.__setattr__(self, "sensitivity", check_positive(self.sensitivity, "sensitivity"))

    def is_symmetric(self) -> bool:
        return self.q == 1  # q = 1 is the Laplace mechanism

    def pair(self) -> PoissonSampled:
        return PoissonSampled(LaplacePair(self.b, self.sensitivity), self.q)

    def loss_scale(self) -> Fraction:
        """q·(e^{ε₀} − 1) ≈ the largest remove loss for small q, with e^{ε₀} bounded by 1 + ε₀ + ε₀² (a
        rational heuristic; capped by ε₀)."""
        e0 = self.sensitivity / self.b
        return min(e0, self.q * (e0 + e0 * e0))

    def delta_exact(self, epsilon: Fraction, prec: int, direction: str = "remove") -> arb:
        """A ball containing the direction's δ(ε) (module docstring: the Neyman–Pearson closed form)."""
        return self.hockey_stick(epsilon, prec, direction)
