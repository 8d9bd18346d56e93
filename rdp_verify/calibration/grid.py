"""Decimal grids of a fixed number of significant digits, indexed by consecutive integers.

With ``digits`` = d, the real grid is every m·10^k with 10^(d−1) ≤ m < 10^d and k ∈ ℤ (for d = 3:
…, 0.998, 0.999, 1.00, 1.01, …, 9.99, 10.0, 10.1, …). Index n maps to

    value(n) = (10^(d−1) + n mod P) · 10^(⌊n / P⌋ − (d−1)),   P = 9·10^(d−1) values per decade,

so value(0) = 1 and consecutive indices are neighbouring grid values. The integer grid (numbers of
steps) is every whole number with at most d significant digits: 1, 2, …, 10^(d−1) − 1, then the real
grid from 10^(d−1) on. Index arithmetic is exact (Fractions), so "the next smaller grid value" is a
well-defined number, not a float neighbour.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..foundations.inputs import InputError

__all__ = ["DecimalGrid"]


def _decade(x: Fraction) -> int:
    """k with 10^k ≤ x < 10^(k+1), exactly (x > 0)."""
    k = len(str(x.numerator)) - len(str(x.denominator))
    while Fraction(10) ** k > x:
        k -= 1
    while Fraction(10) ** (k + 1) <= x:
        k += 1
    return k


@dataclass(frozen=True)
class DecimalGrid:
    """The decimal grid of ``digits`` significant digits (whole numbers only if ``integer``)."""

    digits: int = 3
    integer: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.digits, bool) or not isinstance(self.digits, int) or not 1 <= self.digits <= 6:
            raise InputError(f"digits={self.digits!r} must be a whole number from 1 to 6")

    @property
    def _per_decade(self) -> int:
        return 9 * 10 ** (self.digits - 1)

    @property
    def _small(self) -> int:  # the integer grid's whole numbers below 10^(d−1), indexed by themselves
        return 10 ** (self.digits - 1)

    def _real_value(self, n: int) -> Fraction:
        k, r = divmod(n, self._per_decade)
        return (self._small + r) * Fraction(10) ** (k - (self.digits - 1))

    def _real_index(self, x: Fraction) -> int:
        k = _decade(x)
        m = int(x * Fraction(10) ** (self.digits - 1 - k))  # ⌊x·10^(d−1−k)⌋ ∈ [10^(d−1), 10^d)
        return k * self._per_decade + (m - self._small)

    def value(self, n: int) -> Fraction:
        """The grid value of index ``n``."""
        if not self.integer:
            return self._real_value(n)
        if n < 1:
            raise InputError(f"index {n} is below the integer grid's first value 1")
        if n < self._small:
            return Fraction(n)
        return self._real_value(n - self._small + (self.digits - 1) * self._per_decade)

    def index_at_or_below(self, x: Fraction) -> int:
        """The index of the largest grid value ≤ x (x ≥ 1 on the integer grid, x > 0 otherwise)."""
        x = Fraction(x)
        if not self.integer:
            if x <= 0:
                raise InputError(f"{x} is not positive")
            return self._real_index(x)
        if x < 1:
            raise InputError(f"{x} is below the integer grid's first value 1")
        if x < self._small:
            return int(x)
        return self._real_index(x) - (self.digits - 1) * self._per_decade + self._small

    def index_at_or_above(self, x: Fraction) -> int:
        """The index of the smallest grid value ≥ x."""
        n = self.index_at_or_below(x)
        return n if self.value(n) == x else n + 1

    def describe(self) -> str:
        kind = "whole numbers" if self.integer else "decimal values"
        return f"{kind} with at most {self.digits} significant digits"
