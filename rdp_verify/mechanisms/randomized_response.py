"""Randomized response over k buckets with noise parameter p: at most three loss atoms, exact δ.

**Mechanism** (dp_accounting 0.6, ``dp_event.py`` ``RandomizedResponseDpEvent`` lines 246-260): with
probability 1 − p output the input bucket, with probability p a uniformly random one of the k.

**Pairs** (``pld/privacy_loss_distribution.py``, ``from_randomized_response`` lines 664-791, the
mechanism is defined only for these two relations; ``pld_privacy_accountant.py`` lines 60-83):

* REPLACE_ONE (``neighbours="replace-one"``, lines 750-767), symmetric: outcomes (x, x′, other)
  with P = (1 − p(k−1)/k, p/k, (k−2)p/k) and Q = (p/k, 1 − p(k−1)/k, (k−2)p/k); losses ±log r,
  r = (1 − p(k−1)/k)/(p/k), and 0.
* REPLACE_SPECIAL (``neighbours="replace-special"``, lines 768-791): x against the special input ⊥
  whose output is uniform: outcomes (x, other) with P = (1 − p(k−1)/k, (k−1)p/k), Q = (1/k, 1 − 1/k);
  remove is (P, Q) and add (Q, P), as dp_accounting's ``symmetric=False`` PLD.

The masses are exact rationals and the losses log(P_i/Q_i) are ordered by the exact ratios
(:class:`rdp_verify.pld.rounding.FinitePair`); each loss is rounded to the grid by an Arb
comparison of P_i/Q_i with e^{kh} (never equal for a rational ratio ≠ 1 and kh ≠ 0, e^{kh} being
transcendental; at ratio 1 the loss is exactly 0).

**Curve** (exact): δ(ε) = Σ_i (P_i − e^ε·Q_i)_+.

**Rounding**: :mod:`rdp_verify.pld.rounding`; the loss is bounded: nothing is cut.

**Rényi DP** (:func:`finite_rdp`): the Rényi divergence of two finite distributions, for α > 1,

    D_α(P ‖ Q) = (1/(α − 1))·log Σ_i P_i^α Q_i^{1−α}   (Rényi 1961; Mironov 2017, Definition 3),

a finite sum over the outcomes (every Q_i > 0 here, since 0 < p ≤ 1). The mechanism's ε_α is the larger of
D_α(P ‖ Q) (remove) and D_α(Q ‖ P) (add): the same under REPLACE_ONE, not under REPLACE_SPECIAL. Evaluated in Arb from
the exact masses as log1p(Σ_i Q_i·(r_i^α − 1 − α(r_i − 1)))/(α − 1), r_i = P_i/Q_i (Σ_i Q_i(r_i − 1) = 0 exactly, and
every term is ≥ 0: no cancellation between terms); the ball contains D_α. dp_accounting 0.6's RDP accountant
(``_compute_randomized_response_rdp``) states the same sums.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

from flint import arb, ctx

from ..foundations.inputs import InputError
from ..foundations.results import to_arb
from ..pld.rounding import FinitePair
from .base import Mechanism, check_direction, check_probability, check_whole
from .finite_composition import SelfComposed, self_composed

__all__ = ["RandomizedResponse", "NEIGHBOURS", "finite_rdp"]

NEIGHBOURS = ("replace-one", "replace-special")


def _positive_part(x: arb) -> arb:
    """A ball containing max(t, 0) for every t in x."""
    if x >= 0:
        return x
    if x <= 0:
        return arb(0)
    return arb(0).union(arb(x.upper()))


def finite_rdp(p: Sequence[Fraction], q: Sequence[Fraction], alpha: Fraction) -> arb:
    """A ball (at the working precision) containing D_α(P ‖ Q) of two finite distributions given by exact masses
    (each Q_i > 0, each sum 1), α > 1 (module docstring)."""
    a = Fraction(alpha)
    if any(b <= 0 for b in q) or sum(p) != 1 or sum(q) != 1:
        raise InputError("finite_rdp needs two distributions with every Q_i > 0")
    total = arb(0)
    for x, y in zip(p, q):
        r = Fraction(x) / Fraction(y)
        if r == 0:  # r^α = 0: the term is Q_i·(α − 1), exactly
            total += to_arb(Fraction(y) * (a - 1))
        elif r != 1:
            total += to_arb(Fraction(y)) * ((to_arb(a) * to_arb(r).log()).expm1() - to_arb(a * (r - 1)))
    return total.log1p() / to_arb(a - 1)


@dataclass(frozen=True)
class RandomizedResponse(Mechanism):
    """Randomized response with ``noise_parameter`` p ∈ (0, 1] over ``num_buckets`` k ≥ 2 buckets, under
    ``neighbours`` "replace-one" (dp_accounting's default) or "replace-special"."""

    noise_parameter: Fraction
    num_buckets: int
    neighbours: str = "replace-one"

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise_parameter",
                           check_probability(self.noise_parameter, "noise_parameter", closed=True))
        check_whole(self.num_buckets, "num_buckets", 2)
        if self.neighbours not in NEIGHBOURS:
            raise InputError(f"neighbours={self.neighbours!r} must be one of {', '.join(NEIGHBOURS)} (dp_accounting "
                             f"defines randomized response only for REPLACE_ONE and REPLACE_SPECIAL)")

    def masses(self) -> tuple[tuple[Fraction, ...], tuple[Fraction, ...]]:
        """(P, Q): the remove pair's exact masses, outcomes of zero mass left out (module docstring)."""
        p, k = self.noise_parameter, self.num_buckets
        keep = 1 - p * (k - 1) / k
        if self.neighbours == "replace-one":
            pairs = [(keep, p / k), (p / k, keep), ((k - 2) * p / k, (k - 2) * p / k)]
        else:
            pairs = [(keep, Fraction(1, k)), ((k - 1) * p / k, 1 - Fraction(1, k))]
        pairs = [(a, b) for a, b in pairs if a > 0 or b > 0]
        return tuple(a for a, _ in pairs), tuple(b for _, b in pairs)

    def is_symmetric(self) -> bool:
        return self.neighbours == "replace-one"

    def finite_masses(self) -> tuple[tuple[Fraction, ...], tuple[Fraction, ...]]:
        return self.masses()

    def pair(self) -> FinitePair:
        return FinitePair(*self.masses())

    def self_composed(self, uses: int) -> SelfComposed | None:
        """``uses`` uses as one mechanism with the exact composed law (the losses ±log r and 0 lie on the lattice
        log r·ℤ), rounded to a grid once: :class:`rdp_verify.mechanisms.finite_composition.SelfComposed`."""
        return self_composed(self, uses)

    def loss_scale(self) -> Fraction:
        """A rational ≥ the largest absolute loss over 2: the bit length of the largest likelihood ratio (heuristic)."""
        p, q = self.masses()
        ratio = max(max(a / b, b / a) for a, b in zip(p, q))
        return Fraction(max(1, ratio.numerator.bit_length() - ratio.denominator.bit_length()), 2)

    def delta_exact(self, epsilon: Fraction, prec: int, direction: str = "remove") -> arb:
        """A ball containing the direction's δ(ε) = Σ (P_i − e^ε Q_i)_+ (exact masses)."""
        p, q = self.masses()
        if check_direction(direction) == "add":
            p, q = q, p
        with ctx.workprec(prec):
            x = to_arb(Fraction(epsilon)).exp()
            return sum((_positive_part(to_arb(a) - x * to_arb(b)) for a, b in zip(p, q)), arb(0))

    def rdp(self, alpha: Fraction) -> tuple[arb, arb]:
        """(remove, add): balls at the working precision containing D_α(P ‖ Q) and D_α(Q ‖ P) of the remove pair
        (:func:`finite_rdp`)."""
        p, q = self.masses()
        return finite_rdp(p, q, alpha), finite_rdp(q, p, alpha)
