"""The common currency of the methods: a value with an error bound, held exactly.

Each method (quadrature, series, symbolic, rigorous) returns a
:class:`MethodResult` whose log A_α and log B_α are :class:`Bounded` numbers:
an exact rational midpoint and an exact rational radius, converted without
rounding from the library's binary floats (mpmath ``mpf``, Arb ``arb``). What the
radius means is stated by ``MethodResult.bound_kind``:

* ``"proven"`` -- a mathematical enclosure (ball arithmetic, Arb);
* ``"estimate"`` -- the method's own error estimate plus any proven tail or
  truncation bounds; not a proof.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from flint import arb, fmpq

__all__ = ["Bounded", "MethodResult", "MethodUnavailable", "mpf_to_fraction", "to_mpf", "to_arb", "lower_end", "upper_end",
           "bounded_to_arb", "arb_to_bounded"]


class MethodUnavailable(RuntimeError):
    """A method does not apply to these parameters (the reason is the message)."""


@dataclass(frozen=True)
class Bounded:
    """A real number known to lie in [value − error, value + error]."""

    value: Fraction
    error: Fraction

    def __post_init__(self) -> None:
        if self.error < 0:
            raise ValueError("error bound must be non-negative")

    @property
    def lower(self) -> Fraction:
        return self.value - self.error

    @property
    def upper(self) -> Fraction:
        return self.value + self.error

    @classmethod
    def between(cls, lower: Fraction, upper: Fraction) -> "Bounded":
        """The interval [lower, upper]."""
        return cls((lower + upper) / 2, (upper - lower) / 2)

    def overlaps(self, other: "Bounded") -> bool:
        return self.lower <= other.upper and other.lower <= self.upper

    def scaled(self, factor: Fraction) -> "Bounded":
        """Multiply by an exact positive rational (e.g. 1/(α − 1))."""
        return Bounded(self.value * factor, self.error * abs(factor))


def mpf_to_fraction(x: Any) -> Fraction:
    """Exact value of a finite mpmath ``mpf`` (a binary float m·2^e)."""
    import mpmath

    x = mpmath.mpf(x)
    if not mpmath.isfinite(x):
        raise ValueError(f"non-finite value {x}")
    man, exp = x.man_exp
    return Fraction(int(man)) * (Fraction(2) ** int(exp))


def to_mpf(x: Fraction) -> Any:
    """An exact rational as an mpmath number, rounded once to the current working precision."""
    import mpmath

    return mpmath.mpf(x.numerator) / x.denominator


def to_arb(x: Fraction) -> arb:
    """An exact rational as an Arb ball (exact when dyadic, else a tight ball at the current precision)."""
    return arb(fmpq(x.numerator, x.denominator))


def bounded_to_arb(b: Bounded) -> arb:
    """An Arb ball containing the whole interval [b.lower, b.upper]."""
    return to_arb(b.lower).union(to_arb(b.upper))


def arb_to_bounded(x: Any) -> Bounded:
    """Exact midpoint and radius of a finite Arb ball."""
    if not x.is_finite():
        raise ValueError(f"non-finite ball {x}")
    mid = x.mid()
    rad = x.rad()

    def exact(v: Any) -> Fraction:
        if v.is_zero():
            return Fraction(0)
        man, exp = v.man_exp()
        return Fraction(int(man)) * (Fraction(2) ** int(exp))

    return Bounded(exact(mid), exact(rad))


def lower_end(x: Any) -> Fraction:
    """The lower end of a finite Arb ball, exactly (rounded down: pessimistic for a lower bound)."""
    return arb_to_bounded(arb(x.lower())).value


def upper_end(x: Any) -> Fraction:
    """The upper end of a finite Arb ball, exactly (rounded up: pessimistic for an upper bound)."""
    return arb_to_bounded(arb(x.upper())).value


@dataclass(frozen=True)
class MethodResult:
    """log A_α and log B_α from one method, with error bounds and the work done.

    ``log_b`` is ``None`` when the method has no expansion for B_α (the symbolic
    method: (1 − q + q·μ1/μ0)^(1−α) has no finite binomial expansion); the reason
    is in ``notes``.
    """

    method: str
    bound_kind: str  # "proven" or "estimate"
    log_a: Bounded
    log_b: Bounded | None
    work: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def log_max(self) -> Bounded | None:
        """log max(A_α, B_α) as an interval; needs both moments."""
        if self.log_b is None:
            return None
        lo = max(self.log_a.lower, self.log_b.lower)
        hi = max(self.log_a.upper, self.log_b.upper)
        return Bounded.between(lo, hi)
