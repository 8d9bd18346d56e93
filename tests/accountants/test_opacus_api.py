"""CertifiedAccountant: Opacus's accountant protocol (step, get_epsilon, history, state_dict), proven."""

from fractions import Fraction

import mpmath
import pytest

from rdp_verify.accountants import CertifiedAccountant, CertifiedPldAccountant
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
    acc = CertifiedAccountant()
    for _ in range(200):
        acc.step(noise_multiplier=1.5, sample_rate=0.02)
    pld = CertifiedPldAccountant()
    pld._ledger.extend([(Fraction(1, 50), Fraction(3, 2), 200)])
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
