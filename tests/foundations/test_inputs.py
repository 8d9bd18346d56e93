from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rdp_verify.foundations.inputs import (
    SGM,
    InputError,
    fraction_text,
    parse_alpha,
    parse_alphas,
    parse_dps,
    parse_q,
    parse_rational,
    parse_sigma,
)


@pytest.mark.parametrize(
    "text, value",
    [
        ("0.1", Fraction(1, 10)),
        ("0.01", Fraction(1, 100)),
        ("1e-6", Fraction(1, 10**6)),
        ("2.5E3", Fraction(2500)),
        ("1/3", Fraction(1, 3)),
        (" 4 ", Fraction(4)),
        (".5", Fraction(1, 2)),
        ("-2", Fraction(-2)),
    ],
)
def test_parse_is_exact(text, value):
    assert parse_rational(text, "x") == value


def test_point_one_is_not_the_double():
    # The double nearest 0.1 is 3602879701896397/2^55; we must hold 1/10.
    assert parse_q("0.1") == Fraction(1, 10) != Fraction(0.1)


@pytest.mark.parametrize("text", ["", "nan", "NaN", "inf", "-inf", "0x10", "1_000", "1e", "e5", "1/0", "abc", "1.2.3", "1e-401", "9" * 101])
def test_unparsable(text):
    with pytest.raises(InputError) as info:
        parse_rational(text, "x")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "parser, text",
    [
        (parse_q, "0"),
        (parse_q, "-0.1"),
        (parse_q, "1.0001"),
        (parse_q, "1e-13"),
        (parse_sigma, "0"),
        (parse_sigma, "-1"),
        (parse_sigma, "0.09"),
        (parse_sigma, "10001"),
        (parse_alpha, "1"),
        (parse_alpha, "0.5"),
        (parse_alpha, "1000000.5"),
        (parse_alpha, "1.0000000001"),
        (parse_dps, "9"),
        (parse_dps, "301"),
        (parse_dps, "ten"),
    ],
)
def test_out_of_domain(parser, text):
    with pytest.raises(InputError):
        parser(text)


def test_domain_edges_accepted():
    assert parse_q("1") == 1
    assert parse_q("1e-12") == Fraction(1, 10**12)
    assert parse_sigma("0.1") == Fraction(1, 10)
    assert parse_sigma("1e4") == 10**4
    assert parse_alpha("1e6") == 10**6
    assert parse_alpha("1.000000001") == 1 + Fraction(1, 10**9)


def test_alpha_list():
    assert parse_alphas("1.5,2,32") == [Fraction(3, 2), 2, 32]
    with pytest.raises(InputError):
        parse_alphas("2,2")
    with pytest.raises(InputError):
        parse_alphas("2,,3")


def test_sgm_texts_round_trip():
    sgm = SGM.parse("1/3", "1.1", "2.5")
    assert sgm.texts() == {"q": "1/3", "sigma": "1.1", "alpha": "2.5"}
    assert not sgm.integer_order and SGM.parse("0.5", "1", "32").integer_order


@given(st.fractions(min_value=-10**6, max_value=10**6))
def test_fraction_text_round_trip(x):
    text = fraction_text(x)
    assert parse_rational(text, "x") == x
