"""Decimal grids: consecutive indices are neighbouring values with the stated significant digits."""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rdp_verify.calibration.grid import DecimalGrid
from rdp_verify.foundations.inputs import InputError


def significant_digits(x: Fraction) -> int:
    text = format(x.numerator * 10**30 // x.denominator, "d").rstrip("0")
    return len(text) if x.denominator == 1 or x * 10**30 % 1 == 0 else 99


def test_three_digit_grid_around_one_and_ten():
    g = DecimalGrid(3)
    assert [g.value(n) for n in (-2, -1, 0, 1, 899, 900, 901)] == [
        Fraction("0.998"), Fraction("0.999"), 1, Fraction("1.01"), Fraction("9.99"), 10, Fraction("10.1")]


def test_integer_grid_keeps_every_small_whole_number():
    g = DecimalGrid(3, integer=True)
    assert [g.value(n) for n in (1, 2, 99, 100, 101, 999, 1000, 1001)] == [1, 2, 99, 100, 101, 999, 1000, 1010]


@given(st.fractions(min_value=Fraction(1, 10**6), max_value=Fraction(10**7)), st.integers(1, 4), st.booleans())
def test_index_at_or_below_is_the_largest_grid_value_below(x, digits, integer):
    g = DecimalGrid(digits, integer)
    if integer and x < 1:
        return
    n = g.index_at_or_below(x)
    assert g.value(n) <= x < g.value(n + 1)
    assert g.index_at_or_below(g.value(n)) == n
    assert significant_digits(g.value(n)) <= digits
    assert g.value(n) < g.value(n + 1)
    m = g.index_at_or_above(x)
    assert g.value(m) >= x and (m == n or g.value(n) < x)


def test_bad_digits_and_values_are_refused():
    with pytest.raises(InputError, match="digits"):
        DecimalGrid(0)
    with pytest.raises(InputError, match="below the integer grid"):
        DecimalGrid(3, integer=True).index_at_or_below(Fraction(1, 2))
    with pytest.raises(InputError, match="not positive"):
        DecimalGrid(3).index_at_or_below(Fraction(0))
