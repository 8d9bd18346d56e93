"""CertifiedAccountant: Opacus's accountant protocol (step, get_epsilon, history, state_dict), proven."""

from fractions import Fraction

import mpmath
import pytest

from rdp_verify.accountants import CertifiedAccountant, CertifiedPldAccountant
from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.run import Phase
from tests.curve_oracles import gaussian_epsilon


def test_history_merges_consecutive_equal_steps_as_opacus_does():
    acc = CertifiedAccountant()
    for sigma, q in [(1.0, 0.01)] * 3 + [(1.2, 0.01)] * 2 + [(1.0, 0.01)]:
        acc.step(noise_multiplier=sigma, sample_rate=q)
    assert acc.history == [(1.0, 0.01, 3), (1.2, 0.01, 2), (1.0, 0.01, 1)] and len(acc) == 3


def test_gaussian_closed_form():
    acc = CertifiedAccountant()
    for _ in range(9):
        acc.step(noise_multiplier=3.0, sample_rate=1.0)
    truth = gaussian_epsilon(Fraction(1, 10**5), 1)  # mu = sqrt(9)/3
    eps = acc.get_epsilon(delta=1e-5)
    assert truth <= eps <= truth * (1 + mpmath.mpf("2e-3"))


def test_same_answer_as_the_dp_accounting_interface():
    # 20 steps of q = 0.1, sigma = 2: 0.7 CPU-s for epsilon(1e-5) and delta(1) (200 steps of q = 0.02, sigma = 1.5: 1.7)
    acc = CertifiedAccountant()
    for _ in range(20):
        acc.step(noise_multiplier=2.0, sample_rate=0.1)
    pld = CertifiedPldAccountant()
    pld._ledger.extend([Phase(Fraction(1, 10), Fraction(2), 20)])
    assert acc.get_epsilon(1e-5) == pld.get_epsilon(1e-5)
    assert acc.get_delta(1.0) == pld.get_delta(1.0)


def test_state_dict_round_trip_and_refusals():
    acc = CertifiedAccountant()
    for _ in range(30):
        acc.step(noise_multiplier=1.1, sample_rate=0.05)
    eps = acc.get_epsilon(1e-5)
    fresh = CertifiedAccountant()
    fresh.load_state_dict(acc.state_dict())
    assert fresh.history == acc.history and fresh.get_epsilon(1e-5) == eps
    with pytest.raises(ValueError, match="cannot be loaded"):
        fresh.load_state_dict({"history": [], "mechanism": "prv"})
    with pytest.raises(ValueError, match="`mechanism`"):
        fresh.load_state_dict({"history": []})
    with pytest.raises(ValueError, match="empty"):
        fresh.load_state_dict({})


def test_float_knobs_accepted_unknown_refused_bad_numbers_refused():
    acc = CertifiedAccountant()
    acc.step(noise_multiplier=2.0, sample_rate=0.1)
    assert acc.get_epsilon(1e-5, eps_error=0.01, delta_error=1e-8) == acc.get_epsilon(1e-5)
    with pytest.raises(TypeError, match="alphas"):
        acc.get_epsilon(1e-5, alphas=[2, 3])
    with pytest.raises(ValueError, match="finite"):
        acc.step(noise_multiplier=float("nan"), sample_rate=0.1)
    with pytest.raises(ValueError, match="delta"):
        acc.get_epsilon(1.5)
    with pytest.raises(ValueError, match="no epsilon"):
        CertifiedAccountant().certificate()


@pytest.mark.parametrize("noise_multiplier, sample_rate, message", [
    (-1.0, 0.01, "noise_multiplier=-1.0 must be positive"),
    (0.0, 0.01, "noise_multiplier=0.0 must be positive"),
    (1e7, 0.01, "noise_multiplier=10000000.0 is outside the supported range [0.05, 1e6]"),
    (1.0, 1.5, "sample_rate=1.5 is outside (0, 1]: it is a sampling probability"),
    (1.0, -0.01, "sample_rate=-0.01 is outside (0, 1]"),
    (1.0, "nan", "sample_rate='nan' is not a number"),
    (1.0, float("inf"), "sample_rate=inf is not a finite number"),
])
def test_a_bad_step_is_refused_at_once_naming_opacus_argument(noise_multiplier, sample_rate, message):
    acc = CertifiedAccountant()
    acc.step(noise_multiplier=1.0, sample_rate=0.01)
    with pytest.raises(InputError) as info:
        acc.step(noise_multiplier=noise_multiplier, sample_rate=sample_rate)
    assert str(info.value).startswith(message) and "alpha" not in str(info.value)
    assert acc.history == [(1.0, 0.01, 1)]  # nothing recorded


@pytest.mark.parametrize("query, message", [
    (lambda acc: acc.get_epsilon(1e-300), "delta=1e-300 is below the supported minimum 1e-40"),
    (lambda acc: acc.get_epsilon(delta=0.0), "delta=0.0 must lie strictly between 0 and 1"),
    (lambda acc: acc.get_epsilon(1.0), "delta=1.0 must lie strictly between 0 and 1"),
    (lambda acc: acc.get_epsilon("NaN"), "delta='NaN' is not a number"),
    (lambda acc: acc.get_delta(-1.0), "epsilon=-1.0 must be non-negative"),
])
def test_bad_queries_are_refused_before_anything_is_computed(query, message):
    acc = CertifiedAccountant()
    acc.step(noise_multiplier=1.0, sample_rate=0.01)
    with pytest.raises(InputError) as info:
        query(acc)
    assert str(info.value).startswith(message)
    with pytest.raises(ValueError, match="no epsilon"):
        acc.certificate()


@pytest.mark.parametrize("history, message", [
    ([(1.0, 0.01, 0)], "num_steps=0 must be a whole number of at least 1"),
    ([(-2.0, 0.01, 5)], "noise_multiplier=-2.0 must be positive"),
    ([(1.0, 2.0, 5)], "sample_rate=2.0 is outside (0, 1]"),
])
def test_a_loaded_history_is_validated_with_the_same_names(history, message):
    acc = CertifiedAccountant()
    acc.load_state_dict({"history": history, "mechanism": acc.mechanism()})
    with pytest.raises(InputError) as info:
        acc.get_epsilon(1e-5)
    assert str(info.value).startswith(message)


def test_a_bad_tolerance_is_refused():
    with pytest.raises(InputError, match=r"^tolerance=1.5 must lie strictly between 0 and 1$"):
        CertifiedAccountant(tolerance="1.5")
