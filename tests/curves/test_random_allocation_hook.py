"""The random-allocation upper end in the per-epoch bracket: against the peer's bound, the lower end, no
amplification, and a forged certificate (needs the per_epoch/certificate hook)."""

import json

import pytest
from mutations import edited

from rdp_verify.curves.accountant import bracket
from rdp_verify.curves.certificate import certify_run, check_run_certificate
from rdp_verify.curves.per_epoch import PerEpochBounds
from tests.curves.test_random_allocation import DELTA, PEER_COMBINED, phase

# random-allocation 1.0.5, allocation_epsilon_combined (checked live by test_random_allocation.py, under -m slow)
PEER = {e: PEER_COMBINED[e] for e in (1, 3)}


@pytest.mark.parametrize("epochs", [1, 3, 5, 10])
def test_the_upper_end_lies_between_the_lower_end_and_no_amplification(epochs):
    result = bracket([phase(epochs)], delta=DELTA)
    no_amplification = PerEpochBounds((phase(epochs),)).upper.epsilon_bounds(DELTA)[1]
    assert result.lower <= result.upper < no_amplification
    assert result.proof.upper_order is not None
    if epochs in PEER:  # the same theorem and conversion: ours is its proven rounding up
        assert float(result.upper) <= PEER[epochs] * (1 + 1e-12)


def test_shuffling_and_replace_one_keep_the_no_amplification_end():
    shuffled = bracket([phase(1, sampler="shuffle")], delta=DELTA)
    assert shuffled.curves.allocation is None and shuffled.proof.upper_order is None


@pytest.fixture(scope="module")
def one_epoch_cert():
    """certify_run of the one-epoch run, computed once for the tests below (edited() works on a copy)."""
    return certify_run([phase(1)], delta=DELTA)


def test_the_random_allocation_order_is_recorded_and_confirmed(one_epoch_cert):
    assert one_epoch_cert["settings"]["upper_random_allocation_order"] == 4
    assert check_run_certificate(json.loads(json.dumps(one_epoch_cert))) == []


@pytest.mark.parametrize("value", [5, 2, 300])
def test_a_forged_order_is_caught(one_epoch_cert, value):
    problems = check_run_certificate(edited(one_epoch_cert, "settings.upper_random_allocation_order", value))
    assert problems
