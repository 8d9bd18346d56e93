"""Exact rationals to decimal text with a stated rounding direction.

Certificates carry numbers as decimal strings. An interval's lower end is
rounded down and its upper end up, so the printed interval always contains
the computed one; error bounds are rounded up. Values are rounded to nearest.
Strings are plain decimals for moderate magnitudes and ``d.ddde±XX``
otherwise; both parse back exactly with :class:`fractions.Fraction`.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from .results import Bounded

__all__ = ["decimal_text", "interval_json", "parse_decimal", "float_rounded"]

Rounding = Literal["down", "up", "nearest"]


def _floor_log10(a: Fraction) -> int:
    """⌊log10 a⌋ for a > 0, exactly."""
    e = math.floor((a.numerator.bit_length() - a.denominator.bit_length()) * math.log10(2))  # within 1 of it
    while Fraction(10) ** e > a:
        e -= 1
    while Fraction(10) ** (e + 1) <= a:
        e += 1
    return e


def _round_int(x: Fraction, mode: Rounding) -> int:
    if mode == "down":
        return x.numerator // x.denominator
    if mode == "up":
        return -((-x.numerator) // x.denominator)
    return round(x)


def decimal_text(x: Fraction, digits: int, rounding: Rounding = "nearest") -> str:
    """``x`` with ``digits`` significant digits, rounded toward −∞, +∞ or nearest."""
    if digits < 1:
        raise ValueError("digits must be positive")
    x = Fraction(x)
    if x == 0:
        return "0"
    negative = x < 0
    mode: Rounding = rounding
    if negative and rounding != "nearest":
        mode = "up" if rounding == "down" else "down"  # rounding |x| the other way
    a = abs(x)
    e = _floor_log10(a)
    mantissa = _round_int(a / Fraction(10) ** (e - digits + 1), mode)
    if mantissa >= 10**digits:  # rounding carried into a new digit
        e += 1
        mantissa = _round_int(a / Fraction(10) ** (e - digits + 1), mode)
    mantissa_text = str(mantissa).rstrip("0") or "0"
    sign = "-" if negative else ""
    if -6 <= e < 21:
        point = e + 1  # digits before the decimal point
        if point <= 0:
            body = "0." + "0" * (-point) + mantissa_text
        elif point >= len(mantissa_text):
            body = mantissa_text + "0" * (point - len(mantissa_text))
        else:
            body = mantissa_text[:point] + "." + mantissa_text[point:]
        return sign + body
    tail = mantissa_text[1:]
    return f"{sign}{mantissa_text[0]}{'.' + tail if tail else ''}e{e:+d}"


def interval_json(x: "Bounded", digits: int) -> dict[str, str]:
    """``{"lower", "upper"}`` of x as decimal strings rounded outward to ``digits`` significant digits.

    The printed interval contains x, so a claim read from it stays true.
    """
    return {"lower": decimal_text(x.lower, digits, "down"), "upper": decimal_text(x.upper, digits, "up")}


def parse_decimal(text: str) -> Fraction:
    """Exact value of a decimal string written by :func:`decimal_text`."""
    return Fraction(text)


def float_rounded(x: Fraction, rounding: Rounding) -> float:
    """The double nearest to ``x`` ("nearest"), or the nearest one above ("up") or below ("down") it.

    ``float(Fraction)`` is correctly rounded (CPython divides the integers exactly); one
    ``nextafter`` step fixes the direction. Beyond the double range "up" gives +inf.
    """
    x = Fraction(x)
    try:
        f = float(x)
    except OverflowError:
        f = math.inf if x > 0 else -math.inf
    if rounding == "up" and math.isfinite(f) and Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    elif rounding == "down" and math.isfinite(f) and Fraction(f) > x:
        f = math.nextafter(f, -math.inf)
    elif rounding == "down" and f == math.inf:
        f = sys.float_info.max
    elif rounding == "up" and f == -math.inf:
        f = -sys.float_info.max
    return f
