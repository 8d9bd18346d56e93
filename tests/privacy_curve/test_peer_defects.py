"""Defects of dp_accounting found by the event-tree brackets, each shown against an exact computation.

dp_accounting 0.6's PLD accountant composes a ``RandomizedResponseDpEvent`` once whatever its count:
``compose(event, n)`` and ``SelfComposedDpEvent(event, n)`` both answer with one use (its ``_maybe_compose`` has no
``self_compose(count)`` in that branch, unlike Laplace's and the mixture's). Randomized response with p = 1/2 over
k = 4 buckets under REPLACE_ONE has the privacy losses ±log 5 (the true answer's output with probability
1 − p(k − 1)/k = 5/8 against p/k = 1/8) and 0; three uses reach the loss 3·log 5 with probability (5/8)³ = 0.244,
so ε(1e-5) lies within 1e-4 below 3·log 5 = 4.8283 (exact enumeration) — three times its 1.6095 = log 5.
"""

import math
from fractions import Fraction

import pytest

from rdp_verify.events.model import NeighboringRelation, RandomizedResponseDpEvent, SelfComposedDpEvent
from rdp_verify.privacy_curve.certificate import event_bracket
from rdp_verify.privacy_curve.table import resolve


def _exact_delta(epsilon: float, uses: int) -> float:
    """δ(ε) of `uses` randomized responses (p = 1/2, k = 4, REPLACE_ONE), by enumerating the counts of ±log 5."""
    up, down, zero = 5 / 8, 1 / 8, 1 / 4  # P-masses of the losses +log 5, −log 5, 0
    total = 0.0
    for a in range(uses + 1):
        for b in range(uses + 1 - a):
            loss = (a - b) * math.log(5)
            mass = math.comb(uses, a) * math.comb(uses - a, b) * up**a * down**b * zero**(uses - a - b)
            total += mass * max(0.0, 1 - math.exp(epsilon - loss))
    return total


def test_three_randomized_responses_are_3_log_5_and_dp_accounting_counts_one():
    event = SelfComposedDpEvent(RandomizedResponseDpEvent(Fraction(1, 2), 4), 3)
    result = event_bracket(resolve(event, NeighboringRelation.REPLACE_ONE), delta=Fraction(1, 10**5))
    exact = 3 * math.log(5)
    assert _exact_delta(exact - 1e-4, 3) > 1e-5 and _exact_delta(exact, 3) == 0  # ε(1e-5) ∈ (3 log 5 − 1e-4, 3 log 5]
    assert float(result.lower) <= exact and exact - 1e-4 <= float(result.upper) <= exact + 1e-2

    dp_accounting = pytest.importorskip("dp_accounting")
    relation = dp_accounting.NeighboringRelation.REPLACE_ONE
    rr = dp_accounting.dp_event.RandomizedResponseDpEvent(0.5, 4)
    theirs = dp_accounting.pld.PLDAccountant(relation).compose(rr, 3).get_epsilon(1e-5)
    separately = dp_accounting.pld.PLDAccountant(relation)
    for _ in range(3):
        separately.compose(rr)
    assert theirs == pytest.approx(math.log(5), rel=1e-3)  # one use: the defect
    assert float(result.lower) > 2.9 * theirs  # proven: their answer is false, not merely loose
    assert separately.get_epsilon(1e-5) == pytest.approx(exact, rel=1e-3)  # three separate composes are right
