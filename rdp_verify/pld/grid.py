"""The loss grid of a discretised pair (losses log(anchor) + kh) and the Arb working precision for it.

Knows no mechanism: the grid a mechanism's step is discretised on is chosen by that mechanism
(:func:`rdp_verify.curves.discretize.grid_range` for the Sampled Gaussian step).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

__all__ = ["GUARD_BITS", "Grid", "precision"]

GUARD_BITS = 64  # Arb precision above the fixed-point bits: covers second-difference cancellation


@dataclass(frozen=True)
class Grid:
    """Losses log(anchor) + kh for k_lo ≤ k ≤ k_hi (remove direction); x_k = anchor·e^{kh}.

    The anchor is 1 (the usual lattice h·ℤ) or, when nearly all of Q's mass of the likelihood ratio
    Λ sits in a sliver just above its infimum 1 − q (σ ≪ 1: the steps that miss the record), a
    rational just above that sliver (:func:`rdp_verify.curves.discretize.anchor_for`), with x_{k_lo} ≤ 1 − q.
    The range must straddle x = 1: x_{k_lo} < 1 < x_{k_hi} (the trivial floor (1 − x)_+ is used at both ends).
    """

    h: Fraction
    k_lo: int
    k_hi: int
    anchor: Fraction = Fraction(1)

    def __post_init__(self) -> None:
        if not (self.h > 0 and self.k_lo < self.k_hi and 0 < self.anchor <= 1):
            raise ValueError("need h > 0, k_lo < k_hi and 0 < anchor <= 1")

    @property
    def size(self) -> int:
        return self.k_hi - self.k_lo + 1


def precision(bits: int, h: Fraction) -> int:
    """Arb working precision for a grid step h: the masses are second differences of H over cells of
    width about h, which cancel about 2·log2(1/h) bits, on top of the fixed-point bits and the guard."""
    return bits + GUARD_BITS + 2 * max(0, h.denominator.bit_length() - h.numerator.bit_length())
