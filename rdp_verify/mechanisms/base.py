"""The interface every mechanism module subclasses: :class:`Mechanism`, a mechanism's worst-case pair and its proven
discretisation, and the checks of the mechanisms' arguments (one line per refusal).

A mechanism gives its remove pair (a :class:`~rdp_verify.pld.rounding.MonotonePair`); its PLDs are that pair's losses
rounded up and down to h·ℤ by :func:`rdp_verify.pld.rounding.discretize`, where the proof is stated in full.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from fractions import Fraction
from typing import ClassVar

from flint import arb, ctx

from ..foundations.inputs import InputError, short_text
from ..pld.compose import PLD
from ..pld.rounding import DIRECTIONS, MAX_BITS, MonotonePair, discretize, hockey_stick

__all__ = ["Mechanism", "check_positive", "check_probability", "check_whole", "check_grid", "check_direction"]


class Mechanism(ABC):
    """A mechanism's worst-case pair and its proven discretisation (subclasses are frozen dataclasses)."""

    symmetric: ClassVar[bool] = False  # both directions have the same PLD (then computed once)
    # the (name, text) of the proof of its discretisation, when it is not the rounding of losses every certificate
    # names: a certificate of a run with this mechanism records it (rdp_verify.privacy_curve.certificate)
    proof: ClassVar[tuple[str, str] | None] = None
    # why ``rdp --event`` has no proven Rényi DP for it, when it has none (None: it has one, or a generic refusal)
    no_rdp: ClassVar[str | None] = None

    @abstractmethod
    def pair(self) -> MonotonePair:
        """The remove pair (P, Q) = (mechanism on D, on D′); add is (Q, P)."""

    @abstractmethod
    def loss_scale(self) -> Fraction:
        """A characteristic size of the loss (a heuristic for the grid step)."""

    def is_symmetric(self) -> bool:
        return self.symmetric

    def finite_masses(self) -> tuple[tuple[Fraction, ...], tuple[Fraction, ...]] | None:
        """The remove pair's exact masses (P, Q) when the mechanism has finitely many outcomes (their compositions
        are then exact: :mod:`rdp_verify.mechanisms.finite_composition`), else None."""
        return None

    def plds(self, h: Fraction, bits: int, tail: Fraction) -> dict[tuple[str, str], PLD]:
        """PLDs on h·ℤ keyed by (direction, bound): ("remove" | "add", "upper" | "lower"); the upper ones have
        losses and masses rounded up, the lower ones down (:mod:`rdp_verify.pld.rounding`)."""
        h, bits, tail = check_grid(h, bits, tail)
        out: dict[tuple[str, str], PLD] = {}
        for direction in DIRECTIONS:
            if direction == "add" and self.is_symmetric():
                upper, lower = out["remove", "upper"], out["remove", "lower"]
            else:
                upper, lower = self.discretized(direction, h, bits, tail)
            out[direction, "upper"], out[direction, "lower"] = upper, lower
        return out

    def discretized(self, direction: str, h: Fraction, bits: int, tail: Fraction) -> tuple[PLD, PLD]:
        """(upper, lower) of one direction on h·ℤ: the pair's loss rounded up and down (:func:`discretize`)."""
        return discretize(self.pair(), direction, h, bits, tail)

    def hockey_stick(self, epsilon: Fraction, prec: int, direction: str = "remove") -> arb:
        """A ball containing the direction's δ(ε) of one use, from the pair (Neyman–Pearson)."""
        check_direction(direction)
        epsilon = _exact(epsilon, "epsilon")
        with ctx.workprec(prec):
            return hockey_stick(self.pair(), direction, epsilon)

    def initial_step(self, tolerance: Fraction) -> Fraction:
        """A grid step h ≈ tolerance × :meth:`loss_scale`, a power of two: a heuristic only (any h > 0 gives
        proven bounds; the bracket's width shrinks like O(h))."""
        tolerance = check_probability(tolerance, "tolerance")
        target = tolerance * self.loss_scale()
        k = target.numerator.bit_length() - target.denominator.bit_length()
        return Fraction(2) ** (k - 1)


# -- validation (one line per refusal) --------------------------------------------------------------------

def _exact(value: object, name: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (Fraction, int)):
        raise InputError(f"{name}={value!r} must be an exact rational (a Fraction or an int)")
    return Fraction(value)


def check_positive(value: object, name: str) -> Fraction:
    """An exact rational > 0, else :class:`InputError`."""
    x = _exact(value, name)
    if x <= 0:
        raise InputError(f"{name}={short_text(x)} must be positive")
    return x


def check_probability(value: object, name: str, *, closed: bool = False) -> Fraction:
    """An exact rational in (0, 1) (``closed``: (0, 1]), else :class:`InputError`."""
    x = _exact(value, name)
    if not (0 < x < 1 or (closed and x == 1)):
        raise InputError(f"{name}={short_text(x)} is outside (0, 1{']' if closed else ')'}")
    return x


def check_whole(value: object, name: str, minimum: int) -> int:
    """A whole number ≥ minimum, else :class:`InputError`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InputError(f"{name}={value!r} must be a whole number of at least {minimum}")
    return value


def check_direction(direction: object) -> str:
    """"remove" or "add", else :class:`InputError`."""
    if direction not in DIRECTIONS:
        raise InputError(f"direction={direction!r} must be 'remove' or 'add'")
    return direction


def check_grid(h: object, bits: object, tail: object) -> tuple[Fraction, int, Fraction]:
    """The arguments of :meth:`Mechanism.plds`: h > 0, 1 ≤ bits ≤ 4096, tail in (0, 1)."""
    h = check_positive(h, "h")
    bits = check_whole(bits, "bits", 1)
    if bits > MAX_BITS:
        raise InputError(f"bits={bits} is beyond the supported maximum {MAX_BITS}")
    return h, bits, check_probability(tail, "tail")
