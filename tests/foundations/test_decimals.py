from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rdp_verify.foundations.decimals import decimal_text

fractions = st.fractions(min_value=Fraction(-(10**30)), max_value=Fraction(10**30)).filter(lambda x: x != 0)


@given(fractions, st.integers(min_value=1, max_value=40))
def test_directed_rounding_brackets(x, digits):
    lo = Fraction(decimal_text(x, digits, "down"))
    hi = Fraction(decimal_text(x, digits, "up"))
    assert lo <= x <= hi
    assert abs(Fraction(decimal_text(x, digits)) - x) <= hi - lo


@given(fractions, st.integers(min_value=1, max_value=40))
def test_significant_digits(x, digits):
    text = decimal_text(x, digits, "up")
    mantissa = text.lstrip("-").split("e")[0].replace(".", "").strip("0")
    assert len(mantissa) <= digits


@pytest.mark.parametrize(
    "x, digits, mode, text",
    [
        (Fraction(1, 3), 3, "down", "0.333"),
        (Fraction(1, 3), 3, "up", "0.334"),
        (Fraction(-1, 3), 3, "down", "-0.334"),
        (Fraction(2, 3), 3, "nearest", "0.667"),
        (Fraction(999999, 1000), 3, "up", "1000"),
        (Fraction(1, 10**9), 2, "nearest", "1e-9"),
        (Fraction(123456, 10**12), 3, "nearest", "1.23e-7"),
        (Fraction(10**25), 3, "nearest", "1e+25"),
        (Fraction(0), 5, "up", "0"),
    ],
)
def test_examples(x, digits, mode, text):
    assert decimal_text(x, digits, mode) == text
