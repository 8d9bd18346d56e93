"""dp_accounting (the peers extra) as a reference: its pessimistic and optimistic PLDs at a fine grid."""

from __future__ import annotations

from fractions import Fraction

import pytest

from tests.mechanisms.checks import holds, read

SLACK = Fraction(1, 10**9)  # the peer computes in double precision


def peer_deltas(build, k: int, epsilons) -> dict:
    """{ε: (optimistic δ, pessimistic δ)} of dp_accounting's PLD ``build(pessimistic)`` composed k times (the peer
    reports the larger of its remove and add directions)."""
    pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    plds = {b: build(b).self_compose(k) for b in (False, True)}
    return {eps: tuple(Fraction(plds[b].get_delta_for_epsilon(float(eps))) for b in (False, True)) for eps in epsilons}


def assert_consistent(lowers: dict, uppers: dict, peer: dict) -> None:
    """Our max-over-directions bracket and the peer's [optimistic, pessimistic] are consistent: ours lower ≤ its
    pessimistic, its optimistic ≤ ours upper."""
    for eps, (opt, pess) in peer.items():
        lo = max((read(p, eps) for p in lowers.values()), key=lambda b: b.mid())
        up = max((read(p, eps) for p in uppers.values()), key=lambda b: b.mid())
        assert opt <= pess + SLACK
        assert holds(lo, pess, up + 1, SLACK) and holds(lo - 1, opt, up, SLACK)
