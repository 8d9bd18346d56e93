"""Results are values (issue 40, "proofs are mutable"): a bracket, its proof and the certificate sealed from it do
not depend on what else was computed before or after, from the same objects or in the same process."""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction

import pytest

from rdp_verify.certificates.certificate import dumps
from rdp_verify.curves.accountant import bracket, delta_bracket, epsilon_bracket, forget_kept
from rdp_verify.curves.certificate import certificate_of, certify_run, check_run_certificate
from rdp_verify.curves.per_epoch import PerEpochBounds
from rdp_verify.foundations.run import Phase
from rdp_verify.tradeoff.certificate import certificate_of as tradeoff_certificate
from rdp_verify.tradeoff.curve import tradeoff

DELTA = Fraction(1, 10**5)
# one epoch of 100 shuffled steps (batch 600 of 60,000, sigma 0.8): the per-epoch bracket, whose lower end rests on
# searched tests; and a Poisson run on discrete pairs
SHUFFLED = Phase(Fraction(1, 100), Fraction(4, 5), 100, "shuffle", "add-remove", 600, 60_000)
POISSON = Phase(Fraction(1, 100), Fraction(1), 50)


def test_per_epoch_bounds_are_frozen():
    curves = PerEpochBounds((SHUFFLED,))
    with pytest.raises(dataclasses.FrozenInstanceError):
        curves.given = ()  # type: ignore[misc]


def test_a_bracket_keeps_its_proof_whatever_is_computed_after_it():
    # before: a bound computed later from the same curves overwrote the tests the earlier bracket's certificate
    # records (audit/report.py had to read them "before delta_bracket computes its own")
    first = bracket([SHUFFLED], delta=DELTA)
    sealed_at_once = dumps(certificate_of(first, delta=DELTA))
    other = delta_bracket(first.curves, Fraction(1, 10))  # another point: other tests decide there
    assert other.proof.given != first.proof.given  # the case this test is about: the two points' tests differ
    assert dumps(certificate_of(first, delta=DELTA)) == sealed_at_once
    assert check_run_certificate(json.loads(sealed_at_once)) == []


def test_a_proof_gives_the_bracket_it_came_from():
    first = epsilon_bracket(PerEpochBounds((SHUFFLED,)), DELTA)
    again = epsilon_bracket(first.proof, DELTA)  # at the recorded tests: the same ends, the same proof
    assert (again.lower, again.upper) == (first.lower, first.upper) and again.proof == first.proof


def test_a_tradeoff_certificate_does_not_change_the_tradeoff_it_seals():
    # before: sealing froze the caller's curves in place, so trade.f computed before and after differed
    trade = tradeoff([SHUFFLED])
    before = trade.f(Fraction(1, 10))
    curves = trade.curves
    cert = tradeoff_certificate(trade)
    assert trade.curves is curves and curves.given is None and trade.f(Fraction(1, 10)) == before
    assert cert == tradeoff_certificate(tradeoff([SHUFFLED]))


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_two_runs_certified_in_either_order_give_byte_identical_certificates(order):
    runs = [[POISSON], [SHUFFLED]]
    forget_kept()  # no reuse from other tests of this process: each order starts from nothing
    certs = {}
    for i in order:
        certs[i] = dumps(certify_run(runs[i], delta=DELTA))
    alone = {}
    for i in (0, 1):
        forget_kept()
        alone[i] = dumps(certify_run(runs[i], delta=DELTA))
    assert certs == alone
