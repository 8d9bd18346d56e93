import re
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rdp_verify.foundations.inputs import (
    DELTA_MIN,
    MAX_STEPS,
    SGM,
    InputError,
    check_alpha,
    check_delta,
    check_epsilon,
    check_q,
    check_run_sigma,
    check_sigma,
    check_steps,
    check_tolerance,
    fraction_text,
    parse_alpha,
    parse_alphas,
    parse_delta,
    parse_dps,
    parse_epsilon,
    parse_q,
    parse_rational,
    parse_run_sigma,
    parse_sigma,
    parse_steps,
    parse_tolerance,
    parse_whole,
    short_text,
)
from rdp_verify.foundations.run import Phase


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


# -- one validator per quantity: the caller's name, the value as given, the same limit everywhere ----------------

@pytest.mark.parametrize("check, value, name, message", [
    (check_delta, Fraction(1, 10**300), "target_delta", "target_delta=1e-300 is below the supported minimum 1e-40"),
    (check_delta, Fraction(0), "delta", "delta=0 must lie strictly between 0 and 1"),
    (check_delta, Fraction(1), "delta", "delta=1 must lie strictly between 0 and 1"),
    (check_delta, Fraction(-1, 10**5), "delta", "delta=-1e-5 must lie strictly between 0 and 1"),
    (check_epsilon, Fraction(-1, 2), "target_epsilon", "target_epsilon=-0.5 must be non-negative"),
    (check_q, Fraction(3, 2), "sample_rate", "sample_rate=1.5 is outside (0, 1]: it is a sampling probability"),
    (check_q, Fraction(0), "sampling_probability", "sampling_probability=0 is outside (0, 1]"),
    (check_q, Fraction(1, 10**13), "q", "q=1e-13 is below the supported minimum 1e-12"),
    (check_sigma, Fraction(-1), "sigma", "sigma=-1 must be positive"),
    (check_sigma, Fraction(1, 20), "sigma", "sigma=0.05 is outside the supported range [0.1, 1e4]"),
    (check_run_sigma, Fraction(-1), "noise_multiplier", "noise_multiplier=-1 must be positive"),
    (check_run_sigma, Fraction(2 * 10**6), "noise_multiplier", "noise_multiplier=2e6 is outside the supported range "
                                                               "[0.05, 1e6]"),
    (check_alpha, Fraction(1), "alpha", "alpha=1 must be greater than 1"),
    (check_alpha, Fraction(1, 2), "order", "order=0.5 must be greater than 1"),
    (check_alpha, Fraction(10**7), "alpha", "alpha=1e7 is above the supported maximum 1e6"),
    (check_alpha, 1 + Fraction(1, 10**12), "alpha", "is closer to 1 than the supported 1 + 1e-9"),
    (check_steps, 0, "num_steps", "num_steps=0 must be a whole number of at least 1"),
    (check_steps, MAX_STEPS + 1, "steps", "steps=1000001 is beyond the supported maximum 1e6"),
    (check_steps, 2.5, "steps", "steps=2.5 must be a whole number of at least 1"),
    (check_steps, True, "steps", "steps=True must be a whole number of at least 1"),
    (check_tolerance, Fraction(0), "tolerance", "tolerance=0 must lie strictly between 0 and 1"),
    (check_tolerance, Fraction(1), "rtol", "rtol=1 must lie strictly between 0 and 1"),
    (check_delta, 1e-5, "delta", "delta=1e-05 must be an exact rational (a Fraction, or text such as '1e-5')"),
    (check_q, "0.1", "q", "q='0.1' must be an exact rational"),
])
def test_validators_name_the_callers_argument_and_show_its_value(check, value, name, message):
    with pytest.raises(InputError) as info:
        check(value, name)
    assert message in str(info.value) and str(info.value).startswith(f"{name}=") and "\n" not in str(info.value)


@pytest.mark.parametrize("parse, text, name, message", [
    (parse_delta, "1e-300", "--delta", "--delta=1e-300 is below the supported minimum 1e-40"),
    (parse_delta, "0", "delta", "delta=0 must lie strictly between 0 and 1"),
    (parse_delta, "1", "delta", "delta=1 must lie strictly between 0 and 1"),
    (parse_delta, "NaN", "delta", "delta='NaN' is not a number"),
    (parse_delta, " 1e-41 ", "delta", "delta=1e-41 is below the supported minimum 1e-40"),  # as given, stripped
    (parse_epsilon, "-1", "epsilon", "epsilon=-1 must be non-negative"),
    (parse_q, "1.5", "q", "q=1.5 is outside (0, 1]"),
    (parse_run_sigma, "-0.5", "sigma", "sigma=-0.5 must be positive"),
    (parse_steps, "0", "steps", "steps=0 must be a whole number of at least 1"),
    (parse_steps, "2.5", "steps", "steps=2.5 must be a whole number of at least 1"),
    (parse_steps, "1e7", "steps", "steps=1e7 is beyond the supported maximum 1e6"),
    (parse_whole, "0", "batch_size", "batch_size=0 must be a whole number of at least 1"),
    (parse_alpha, "1", "alpha", "alpha=1 must be greater than 1"),
    (parse_tolerance, "1", "tolerance", "tolerance=1 must lie strictly between 0 and 1"),
])
def test_parsers_show_the_text_as_given(parse, text, name, message):
    with pytest.raises(InputError) as info:
        parse(text, name)
    assert str(info.value).startswith(message)


def test_the_limits_accept_their_edges():
    assert parse_delta("1e-40") == DELTA_MIN and check_delta(Fraction(999, 1000)) == Fraction(999, 1000)
    assert parse_epsilon("0") == 0 and check_epsilon(Fraction(1, 10**9), positive=True) == Fraction(1, 10**9)
    assert parse_steps("1") == 1 and parse_steps("1e6") == MAX_STEPS == check_steps(10**6)
    assert parse_run_sigma("0.05") == Fraction(1, 20) and check_run_sigma(Fraction(10**6)) == 10**6
    assert check_q(1) == 1 and isinstance(check_q(1), Fraction)  # ints are exact; the result is a Fraction
    with pytest.raises(InputError, match="target_epsilon=0 must be positive"):
        check_epsilon(Fraction(0), "target_epsilon", positive=True)


@pytest.mark.parametrize("value, text", [
    (Fraction(1, 10**300), "1e-300"),
    (DELTA_MIN, "1e-40"),
    (Fraction(10**6), "1e6"),
    (Fraction(1, 20), "0.05"),
    (Fraction(14063), "14063"),
    (Fraction(1, 3), "1/3"),
    (Fraction(-1, 10**5), "-1e-5"),
    (Fraction(0), "0"),
    (Fraction(0.1), "0.1..."),  # the double nearest 0.1: 55 digits, rounded and marked
    (Fraction(10**40 + 1, 3 * 10**70), "3.33333e-31..."),
])
def test_short_text_is_exact_and_short_or_marked_rounded(value, text):
    assert short_text(value) == text
    if not text.endswith("..."):
        assert Fraction(text) == value


def test_phase_validates_with_the_shared_limits_and_holds_fractions():
    assert Phase(1, 2, 3) == Phase(Fraction(1), Fraction(2), 3) and isinstance(Phase(1, 2, 3).q, Fraction)
    for args, message in [((Fraction(3, 2), Fraction(1), 10), "q=1.5 is outside (0, 1]"),
                          ((Fraction(1, 10), Fraction(-1), 10), "sigma=-1 must be positive"),
                          ((Fraction(1, 10), Fraction(1), 0), "steps=0 must be a whole number"),
                          ((Fraction(1, 10), Fraction(1), MAX_STEPS + 1), "steps=1000001 is beyond"),
                          ((0.1, Fraction(1), 10), "q=0.1 must be an exact rational")]:
        with pytest.raises(InputError, match=re.escape(message)):
            Phase(*args)
