"""Exact δ(ε) of composed finite-outcome mechanisms (rdp_verify.mechanisms.finite_composition).

References: one use against randomized response's own sum over outcomes (``delta_exact``); several uses against
a brute-force sum over every sequence of outcomes (itertools.product, exact rationals); the proven grid bracket
of the same composition (rdp_verify.privacy_curve) must contain the exact value. The composed law (one atom per
likelihood ratio) against the same sequences grouped by ratio; its PLDs rounded once against the exact δ.
"""

import itertools
from fractions import Fraction as F

import pytest
from flint import arb, ctx

from rdp_verify.curves.accountant import bracket, folded
from rdp_verify.events.model import RandomizedResponseDpEvent, SelfComposedDpEvent
from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.results import to_arb
from rdp_verify.mechanisms.finite_composition import (
    MAX_TERMS,
    SelfComposed,
    composed_delta,
    composed_epsilon,
    composed_law,
    lattice,
    outcome_count,
    self_composed,
)
from rdp_verify.mechanisms.randomized_response import RandomizedResponse
from rdp_verify.pld.compose import delta_at
from rdp_verify.privacy_curve.certificate import certify_event, check_event_certificate, event_bracket
from rdp_verify.privacy_curve.table import resolve

PREC = 256


def brute_force(parts, epsilon, direction):
    """Σ over every sequence of outcomes of (P − e^ε Q)_+, the masses multiplied out as exact rationals."""
    uses = [(q, p) if direction == "add" else (p, q) for p, q, n in parts for _ in range(n)]
    with ctx.workprec(PREC):
        x, total = to_arb(epsilon).exp(), arb(0)
        for seq in itertools.product(*(range(len(p)) for p, _ in uses)):
            a = b = F(1)
            for (p, q), i in zip(uses, seq):
                a, b = a * p[i], b * q[i]
            t = to_arb(a) - x * to_arb(b)
            total += t if t > 0 else arb(0)
        return total


def contains(ball, other):
    return ball.overlaps(other) and ball.rad() < arb(2) ** -200 and other.rad() < arb(2) ** -200


RR = [RandomizedResponse(F(1, 2), 4), RandomizedResponse(F(1, 3), 2), RandomizedResponse(F(2, 5), 5, "replace-special"),
      RandomizedResponse(F(1), 3)]


@pytest.mark.parametrize("rr", RR, ids=str)
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_one_use_is_the_mechanisms_own_sum(rr, direction):
    p, q = rr.masses()
    for eps in (F(0), F(1, 3), F(2)):
        with ctx.workprec(PREC):
            assert contains(composed_delta([(p, q, 1)], eps, PREC, direction), rr.delta_exact(eps, PREC, direction))


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_compositions_are_the_sum_over_every_sequence_of_outcomes(direction):
    a, b = RR[0].masses(), RR[2].masses()
    for parts in ([(*a, 4)], [(*b, 5)], [(*a, 2), (*b, 3)]):
        for eps in (F(0), F(1, 2), F(3)):
            with ctx.workprec(PREC):
                assert contains(composed_delta(parts, eps, PREC, direction), brute_force(parts, eps, direction))


def test_the_grid_bracket_contains_the_exact_value():
    # 20 uses of randomized response under both relations: the proven grid bracket of δ(1) contains the exact δ
    for rr, relation in ((RR[0], "REPLACE_ONE"), (RR[2], "REPLACE_SPECIAL")):
        event = SelfComposedDpEvent(RandomizedResponseDpEvent(rr.noise_parameter, rr.num_buckets), 20)
        result = event_bracket(resolve(event, relation), epsilon=F(1))
        p, q = rr.masses()
        with ctx.workprec(PREC):
            exact = max((composed_delta([(p, q, 20)], F(1), PREC, d) for d in ("remove", "add")), key=lambda x: x.mid())
        assert to_arb(result.lower) < exact < to_arb(result.upper)


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_epsilon_of_delta_is_the_inverse_of_the_direct_sum(direction):
    # ε(δ) by the sorted segments; the defining property checked with the direct sum at 512 bits: δ(lower) > δ ≥ δ(upper)
    a, b = RR[0].masses(), RR[2].masses()
    for parts in ([(*a, 30)], [(*b, 40)], [(*a, 3), (*b, 4)], [(*RR[1].masses(), 7)]):
        for delta in (F(1, 10**5), F(1, 10), F(1, 3)):
            lower, upper = composed_epsilon(parts, delta, 128, direction)
            assert 0 < lower <= upper and upper - lower < F(1, 10**30) * upper
            with ctx.workprec(512):
                assert composed_delta(parts, lower, 512, direction) > to_arb(delta)
                assert composed_delta(parts, upper, 512, direction) <= to_arb(delta)


def test_epsilon_of_delta_at_the_ends_of_its_domain():
    p, q = RR[0].masses()
    with ctx.workprec(PREC):
        at_zero = composed_delta([(p, q, 5)], F(0), PREC)  # δ(0), the total variation distance
    assert composed_epsilon([(p, q, 5)], F(1), 128) == (0, 0)  # δ ≥ δ(0): ε = 0
    assert at_zero < 1 and composed_epsilon([(p, q, 5)], (1 + F(at_zero.upper().str(30, radius=False))) / 2, 128) == (0, 0)
    assert composed_epsilon([(p, q, 5)], F(0), 128)[1] > 0  # δ = 0: the largest loss, 5 log 5
    # an outcome with Q = 0 (probability 1/2 under P): no finite ε below δ = 1/2, ε = 0 from δ(0) = 1/2 on
    point = [((F(1, 2), F(1, 2)), (F(1), F(0)), 1)]
    assert composed_epsilon(point, F(1, 4), 128) == (0, None)
    assert composed_epsilon(point, F(1, 2), 128) == (0, 0)
    with pytest.raises(InputError, match="delta"):
        composed_epsilon([(p, q, 5)], F(-1, 10), 128)


def test_the_grid_bracket_of_epsilon_contains_the_exact_epsilon():
    for rr, relation in ((RR[0], "REPLACE_ONE"), (RR[2], "REPLACE_SPECIAL")):
        event = SelfComposedDpEvent(RandomizedResponseDpEvent(rr.noise_parameter, rr.num_buckets), 20)
        result = event_bracket(resolve(event, relation), delta=F(1, 10**5))
        p, q = rr.masses()
        ends = [composed_epsilon([(p, q, 20)], F(1, 10**5), 128, d) for d in ("remove", "add")]
        assert result.lower <= max(lo for lo, _ in ends) and max(up for _, up in ends) <= result.upper


def test_a_composed_randomized_response_certificate_is_cross_checked_exactly():
    event = SelfComposedDpEvent(RandomizedResponseDpEvent(F(1, 2), 4), 10)
    cert = certify_event(event, "REPLACE_ONE", delta=F(1, 10**5))
    cross = cert["cross_check"]
    assert cross["bound_kind"] == "proven" and cross["consistent"] and cross["informative"]
    assert cross["method"].startswith("exact hockey-stick divergence of the composition")
    assert check_event_certificate(cert) == []


def test_sizes_and_refusals():
    p, q = RR[0].masses()
    assert outcome_count([(p, q, 100)]) == 101 * 102 // 2 and outcome_count([(*RR[1].masses(), 100)]) == 101
    with pytest.raises(InputError, match="count vectors"):
        composed_delta([(p, q, 700)], F(1), PREC)
    assert outcome_count([(p, q, 700)]) > MAX_TERMS
    with pytest.raises(InputError, match="summing to 1"):
        composed_delta([((F(1, 2), F(1, 3)), (F(1, 2), F(1, 2)), 2)], F(1), PREC)
    with pytest.raises(InputError, match="direction"):
        composed_delta([(p, q, 2)], F(1), PREC, "both")


# -- the composition as one finite pair, rounded to the grid once (SelfComposed) ---------------------------------

def test_lattice_finds_the_largest_common_base():
    assert lattice([F(5), F(1, 5), F(1)]) == (F(5), [1, -1, 0])
    assert lattice([F(4), F(8), F(1, 2)]) == (F(2), [2, 3, -1])
    assert lattice([F(9, 4), F(27, 8)]) == (F(3, 2), [2, 3])
    assert lattice([F(1), F(1)]) == (F(2), [0, 0])
    assert lattice([F(6), F(2)]) is None and lattice([F(5, 2), F(1, 2)]) is None and lattice([F(0), F(2)]) is None


def sequences_law(p, q, n):
    """ratio -> (P, Q) over every sequence of n outcomes, exact rationals (independent of the count vectors)."""
    law = {}
    for seq in itertools.product(range(len(p)), repeat=n):
        a = b = F(1)
        for i in seq:
            a, b = a * p[i], b * q[i]
        x, y = law.get(a / b, (F(0), F(0)))
        law[a / b] = (x + a, y + b)
    return law


@pytest.mark.parametrize("rr", RR, ids=str)
@pytest.mark.parametrize("uses", [1, 2, 7])
def test_the_composed_law_is_the_sequences_law_grouped_by_ratio(rr, uses):
    p, q = rr.masses()
    law = composed_law(p, q, uses)
    found = {r: (F(a, law.denominator), F(b, law.denominator)) for r, a, b in zip(law.ratios, law.p, law.q)}
    assert len(found) == len(law.ratios) and all(a == r * b for r, (a, b) in found.items())
    assert found == sequences_law(p, q, uses)


@pytest.mark.parametrize("rr", RR, ids=str)
@pytest.mark.parametrize("direction", ["remove", "add"])
@pytest.mark.parametrize("tail", [F(1, 10**9), F(1, 50)])
def test_the_law_rounded_once_brackets_the_exact_delta(rr, direction, tail):
    p, q = rr.masses()
    plds = SelfComposed(rr, 12).plds(F(1, 100), 64, tail)
    assert plds["add", "upper"] is plds["remove", "upper"] if rr.is_symmetric() else True
    assert plds[direction, "lower"].total() <= 2**64 <= plds[direction, "upper"].total()  # masses down / up
    for eps in (F(0), F(1, 2), F(1), F(3)):
        exact = composed_delta([(p, q, 12)], eps, PREC, direction)
        low = delta_at(plds[direction, "lower"], eps, 128).lower()
        up = delta_at(plds[direction, "upper"], eps, 128).upper()
        assert low <= exact.upper() and exact.lower() <= up  # proven ends around the exact value
        if tail < F(1, 10**6):  # one cell's error (e^{h} − 1 of the mass above ε, about 1%) and the fixed point
            assert up - low <= exact.upper() * 3 / 100 + arb(2) ** -50


def test_the_accountant_composes_the_uses_as_one_law_and_brackets_the_exact_epsilon():
    assert isinstance(folded([(RR[0], 100)])[0][0], SelfComposed) and folded([(RR[0], 100)])[0][1] == 1
    assert folded([(RR[0], 1)]) == ((RR[0], 1),)
    for rr in RR[:3]:
        p, q = rr.masses()
        ends = [composed_epsilon([(p, q, 100)], F(1, 10**5), 128, d) for d in ("remove", "add")]
        result = bracket([], delta=F(1, 10**5), leaves=[(rr, 100)])
        assert result.lower <= max(lo for lo, _ in ends) and max(up for _, up in ends) <= result.upper
        assert result.relative_width() <= F(1, 1000)


def test_laws_too_large_are_left_to_the_grid():
    assert self_composed(RR[0], 10**5) is None and self_composed(RR[2], 10**5) is None  # past MAX_LAW_BITS
    assert self_composed(RR[0], 1) is None
    assert composed_law((F(1, 2), F(1, 2)), (F(1), F(0)), 3) is None  # a loss of +∞: no finite ratio
    with pytest.raises(InputError, match="no exact composed law"):
        SelfComposed(RR[0], 10**5).law()
