"""CertifiedPldAccountant: dp_accounting's PrivacyAccountant interface, answers proven and rounded up."""

import json
import math
import subprocess
import sys
from fractions import Fraction

import mpmath
import pytest

from rdp_verify.accountants import CertifiedPldAccountant
from rdp_verify.curves.certificate import check_run_certificate
from rdp_verify.foundations.inputs import InputError
from tests.curve_oracles import gaussian_delta, gaussian_epsilon

dp_event = pytest.importorskip("dp_accounting.dp_event", reason="dp_accounting is not installed")
privacy_accountant = pytest.importorskip("dp_accounting.privacy_accountant")


def sgm(q, sigma):
    return dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma))


def test_gaussian_run_brackets_the_closed_form():
    # q = 1: T Gaussian steps are one Gaussian with mu = sqrt(T)/sigma (Balle-Wang 2018, Theorem 8)
    acc = CertifiedPldAccountant().compose(dp_event.GaussianDpEvent(2.0), 16)
    eps = acc.get_epsilon(1e-6)
    truth = gaussian_epsilon(Fraction(1, 10**6), 2)
    assert truth <= eps <= truth * (1 + mpmath.mpf("2e-3"))
    cert = acc.certificate()
    assert cert["verdict"] == "certified" and float(Fraction(cert["epsilon"]["upper"])) <= eps
    delta = acc.get_delta(1.5)
    assert gaussian_delta(Fraction(3, 2), 2) <= delta <= gaussian_delta(Fraction(3, 2), 2) * (1 + mpmath.mpf("1e-2"))


def test_every_way_of_writing_the_run_is_the_same_run():
    step = sgm(0.02, 1.5)
    ways = [
        CertifiedPldAccountant().compose(step, 300),
        CertifiedPldAccountant().compose(dp_event.SelfComposedDpEvent(step, 100), 3),
        CertifiedPldAccountant().compose(dp_event.ComposedDpEvent([step] * 150)).compose(step, 150),
        CertifiedPldAccountant().compose(dp_event.NoOpDpEvent()).compose(sgm(0.0, 1.5), 7).compose(step, 300),
    ]
    assert all(w.phases == ways[0].phases for w in ways)
    assert [(p.q, p.sigma, p.steps) for p in ways[0].phases] == [(Fraction(1, 50), Fraction(3, 2), 300)]
    eps = {w.get_epsilon(1e-5) for w in ways}
    assert len(eps) == 1  # bit-identical answers


def test_floats_are_read_as_the_decimals_they_print_as():
    acc = CertifiedPldAccountant().compose(sgm(0.1, 1.1), 5)
    assert (acc.phases[0].q, acc.phases[0].sigma) == (Fraction(1, 10), Fraction(11, 10))


def test_answers_are_upper_ends_rounded_up_and_the_certificate_checks():
    acc = CertifiedPldAccountant().compose(sgm(0.05, 1.2), 40)
    eps = acc.get_epsilon(1e-5)
    cert = acc.certificate()
    upper = Fraction(cert["epsilon"]["upper"])
    assert Fraction(math.nextafter(eps, -math.inf)) < upper <= Fraction(eps)  # the next double up
    assert check_run_certificate(json.loads(json.dumps(cert))) == []


def test_ledger_is_dp_accountings_event():
    step = sgm(0.01, 1.0)
    acc = CertifiedPldAccountant().compose(step, 10).compose(dp_event.GaussianDpEvent(3.0))
    assert acc.ledger == dp_event.ComposedDpEvent([dp_event.SelfComposedDpEvent(step, 10),
                                                   dp_event.GaussianDpEvent(3.0)])


@pytest.mark.parametrize("event", [
    dp_event.ZCDpEvent(0.1),
    dp_event.RandomizedResponseDpEvent(0.5, 4),  # defined under REPLACE_ONE / REPLACE_SPECIAL only
    dp_event.PoissonSampledDpEvent(0.1, dp_event.DiscreteLaplaceDpEvent(1.0, 1)),
    dp_event.SampledWithoutReplacementDpEvent(100, 10, dp_event.GaussianDpEvent(1.0)),
    dp_event.PoissonSampledDpEvent(1.5, dp_event.GaussianDpEvent(1.0)),
    dp_event.SampledWithReplacementDpEvent(100, 10, dp_event.GaussianDpEvent(1.0)),
    dp_event.UnsupportedDpEvent(),
])
def test_unsupported_events_are_refused_with_dp_accountings_error(event):
    acc = CertifiedPldAccountant().compose(sgm(0.01, 1.0), 10)
    assert not acc.supports(event)
    with pytest.raises(privacy_accountant.UnsupportedEventError):
        acc.compose(event)
    assert [p.steps for p in acc.phases] == [10]  # nothing half-composed


def test_too_many_steps_and_bad_queries():
    acc = CertifiedPldAccountant().compose(sgm(0.01, 1.0), 10**6)
    assert not acc.supports(sgm(0.01, 1.0))  # beyond the supported 1e6 steps in all
    with pytest.raises(ValueError, match="delta"):
        acc.get_epsilon(0.0)
    with pytest.raises(ValueError, match="finite"):
        acc.get_epsilon(float("nan"))
    with pytest.raises(ValueError, match="REPLACE_SPECIAL"):  # the message lists the relations supported
        CertifiedPldAccountant("NEIGHBOURS_OF_MY_CHOICE")
    assert CertifiedPldAccountant().get_epsilon(1e-5) == 0.0 and CertifiedPldAccountant().get_delta(1.0) == 0.0


@pytest.mark.parametrize("query, message", [
    (lambda acc: acc.get_epsilon(1e-300), "target_delta=1e-300 is below the supported minimum 1e-40"),
    (lambda acc: acc.get_epsilon(0.0), "target_delta=0.0 must lie strictly between 0 and 1"),
    (lambda acc: acc.get_epsilon(1), "target_delta=1 must lie strictly between 0 and 1"),
    (lambda acc: acc.get_epsilon("NaN"), "target_delta='NaN' is not a number"),
    (lambda acc: acc.get_epsilon(Fraction(1, 10**50)), "target_delta=1e-50 is below the supported minimum 1e-40"),
    (lambda acc: acc.get_delta(-0.5), "target_epsilon=-0.5 must be non-negative"),
    (lambda acc: CertifiedPldAccountant(tolerance="0"), "tolerance=0 must lie strictly between 0 and 1"),
])
@pytest.mark.parametrize("steps", [0, 10])
def test_bad_queries_are_refused_before_anything_is_computed(query, message, steps):
    acc = CertifiedPldAccountant().compose(sgm(0.01, 1.0), steps)  # also an empty run, whose answer would be 0
    with pytest.raises(InputError) as info:
        query(acc)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)
    with pytest.raises(ValueError, match="no epsilon or delta has been computed yet"):
        acc.certificate()


@pytest.mark.parametrize("event, message", [
    (sgm(0.01, -1.0), "noise_multiplier=-1.0 must be positive"),
    (dp_event.GaussianDpEvent(0.01), "noise_multiplier=0.01 is outside the supported range [0.05, 1e6]"),
    (sgm(1.5, 1.0), "sampling_probability=1.5 is outside (0, 1]: it is a sampling probability"),
    (sgm(1e-13, 1.0), "sampling_probability=1e-13 is below the supported minimum 1e-12"),
    (sgm("nan", 1.0), "sampling_probability='nan' is not a number"),
    (dp_event.SelfComposedDpEvent(sgm(0.01, 1.0), -1), "count=-1 must be a non-negative integer"),
    (dp_event.SelfComposedDpEvent(sgm(0.01, 1.0), 2 * 10**6), "steps=2e6 is beyond the supported maximum 1e6"),
])
def test_bad_events_name_the_field_and_show_the_value(event, message):
    acc = CertifiedPldAccountant()
    assert not acc.supports(event)
    with pytest.raises(privacy_accountant.UnsupportedEventError) as info:
        acc.compose(event)
    assert str(info.value).startswith(message) and acc.phases == []


def test_no_dp_accounting_needed_and_no_torch():
    # duck-typed events named as dp_accounting's; dp_accounting blocked from importing
    code = """
import sys
sys.modules['dp_accounting'] = None
import rdp_verify.accountants as a
class GaussianDpEvent:
    def __init__(self, s): self.noise_multiplier = s
class PoissonSampledDpEvent:
    def __init__(self, q, e): self.sampling_probability, self.event = q, e
class LaplaceDpEvent: pass
acc = a.CertifiedPldAccountant().compose(PoissonSampledDpEvent(0.05, GaussianDpEvent(1.5)), 20)
try:
    acc.compose(LaplaceDpEvent())
except a.UnsupportedEventError:
    pass
print(acc.neighboring_relation, acc.get_epsilon(1e-5) > 0, 'torch' in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["ADD_OR_REMOVE_ONE", "True", "False"]


def test_replace_one_reads_sigma_as_dp_accountings_pld_accountant_does():
    """Under REPLACE_ONE, GaussianDpEvent(σ) is the Gaussian mechanism at sensitivity 2 (records in the unit ball):
    μ = 2·√T/σ, as dp_accounting's PLD accountant reads it."""
    relation = privacy_accountant.NeighboringRelation.REPLACE_ONE
    acc = CertifiedPldAccountant(relation).compose(dp_event.GaussianDpEvent(2.0), 1)
    assert acc.neighboring_relation is relation and acc.phases[0].neighbours == "replace-one"
    eps = acc.get_epsilon(1e-5)
    assert abs(eps - float(gaussian_epsilon(Fraction(1, 10**5), 1.0))) <= 1e-9 * eps


def test_fixed_size_batches_under_replace_one_only():
    # batches of 100 of 1000 (q = 0.1): the fixed-size pair's grid is 4x cheaper than at 600 of 60000, the same mapping
    wor = dp_event.SampledWithoutReplacementDpEvent(1000, 100, dp_event.GaussianDpEvent(2.0))
    assert not CertifiedPldAccountant().supports(wor)  # add/remove: no proven bound
    acc = CertifiedPldAccountant(privacy_accountant.NeighboringRelation.REPLACE_ONE).compose(wor, 30)
    (phase,) = acc.phases
    assert (phase.sampler, phase.batch_size, phase.dataset_size, phase.steps) == ("fixed", 100, 1000, 30)
    assert acc.get_epsilon(1e-5) > 0 and check_run_certificate(acc.certificate()) == []


def test_a_registered_privacy_accountant():
    # issue 27: isinstance(CertifiedPldAccountant(), dp_accounting.PrivacyAccountant) was False
    dp_accounting = pytest.importorskip("dp_accounting")
    assert isinstance(CertifiedPldAccountant(), dp_accounting.PrivacyAccountant)
    assert issubclass(CertifiedPldAccountant, dp_accounting.PrivacyAccountant)


def test_registration_waits_for_dp_accounting_and_never_imports_it():
    code = ("import sys; from rdp_verify.accountants import CertifiedPldAccountant; a = CertifiedPldAccountant(); "
            "assert 'dp_accounting' not in sys.modules; import dp_accounting; "
            "assert not issubclass(CertifiedPldAccountant, dp_accounting.PrivacyAccountant); "
            "assert isinstance(CertifiedPldAccountant(), dp_accounting.PrivacyAccountant)")
    pytest.importorskip("dp_accounting")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_other_mechanisms_and_non_private_events_are_answered():
    """Beyond the SGM family: a Laplace release beside DP-SGD steps gets a proven answer (above the steps' own ε,
    with the event certificate), and a non-private event is ε = inf, δ = 1, never a finite number."""
    # 10 steps of q = 0.1, sigma = 2: 0.6 CPU-s for both answers (100 steps of q = 0.01, sigma = 1: 2.2)
    steps = CertifiedPldAccountant().compose(sgm(0.1, 2.0), 10)
    both = CertifiedPldAccountant().compose(sgm(0.1, 2.0), 10).compose(dp_event.LaplaceDpEvent(10.0), 2)
    assert both.supports(dp_event.PoissonSampledDpEvent(0.1, dp_event.LaplaceDpEvent(1.0)))
    assert both.get_epsilon(1e-5) > steps.get_epsilon(1e-5)
    assert both.certificate()["format"] == "rdp_verify event privacy curve"
    for event in (dp_event.NonPrivateDpEvent(), sgm(0.1, 0.0)):
        acc = CertifiedPldAccountant().compose(sgm(0.01, 1.0), 10).compose(event)
        assert acc.get_epsilon(1e-5) == math.inf and acc.get_delta(1.0) == 1.0


def test_a_zcdp_run_gets_its_conversion_and_no_lower_end():
    acc = CertifiedPldAccountant().compose(dp_event.ZCDpEvent(0.1), 2)
    eps = acc.get_epsilon(1e-5)
    assert 0 < eps <= 0.2 + 2 * math.sqrt(0.2 * math.log(1e5))  # Bun & Steinke's conversion, Proposition 1.3
    assert acc.certificate()["epsilon"]["lower"] == "0"
