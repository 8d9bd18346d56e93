"""The (ε, δ) peer adapters evaluate the libraries' own accountants, torch-free, and fail clearly.

Reference: for q = 1 a run of T steps is the Gaussian mechanism with μ = √T/σ, whose exact ε(δ) is
Balle & Wang (2018, Theorem 8), evaluated independently in tests/curve_oracles.py.
"""

import math
import subprocess
import sys

import pytest
from curve_oracles import gaussian_epsilon

from rdp_verify.foundations.inputs import InputError
from rdp_verify.reference import dp_peers


def peer(name):
    try:
        return dp_peers.load_dp(name)
    except dp_peers.PeerUnavailable as exc:
        pytest.skip(str(exc))


SIGMA, STEPS, DELTA = 2.0, 16, 1e-5
EXACT = float(gaussian_epsilon(DELTA, math.sqrt(STEPS) / SIGMA))  # μ = 2


@pytest.mark.parametrize("name", ["dp_accounting_pld", "prv_accountant", "opacus_prv"])
def test_tight_accountants_are_close_to_the_gaussian_closed_form(name):
    got = peer(name)([(1.0, SIGMA, STEPS)], DELTA)
    if got.error is None:  # dp_accounting's pessimistic PLD: an upper estimate, close at its default grid
        assert EXACT <= got.epsilon <= EXACT + 1e-2
    else:  # PRV: eps_lower ≤ ε ≤ eps_upper, a window of about twice the stated eps_error
        assert got.lower <= EXACT <= got.epsilon <= got.lower + 2 * got.error + 1e-3


@pytest.mark.parametrize("name", ["dp_accounting_rdp", "opacus_rdp", "autodp"])
def test_rdp_accountants_are_upper_bounds_of_the_closed_form(name):
    got = peer(name)([(1.0, SIGMA, STEPS)], DELTA)
    assert got.error is None and EXACT < got.epsilon < EXACT + 1.0


@pytest.mark.parametrize("name", [
    # slow: dp_accounting's PLD kinds compose phases in the same loop of _dp_accounting as dp_accounting_rdp and
    # dp_accounting_rdp_fixed (default run)
    pytest.param(name, marks=pytest.mark.slow) if name in ("dp_accounting_pld", "dp_accounting_pld_replace_one")
    else name for name in dp_peers.DP_PEERS])
def test_phases_compose_like_one_run(name):
    # two phases of equal parameters are one run of their summed steps (100 steps: prv_accountant takes 0.5 CPU-s, 1.6
    # at 1000)
    fn = peer(name)
    sizes = (600, 60000) if dp_peers.DP_PEERS[name].sampler == "fixed" else ()  # a batch of 600 of 60000: q = 0.01
    split = fn([(0.01, 1.0, 30, *sizes), (0.01, 1.0, 70, *sizes)], 1e-5)
    whole = fn([(0.01, 1.0, 100, *sizes)], 1e-5)
    assert split.epsilon == pytest.approx(whole.epsilon, rel=1e-2)


def test_the_replace_one_peers_read_sigma_as_documented():
    """dp_accounting's REPLACE_ONE PLD at q = 1 is the Gaussian mechanism at sensitivity 2 (μ = 2·√T/σ); its RDP bound
    for fixed-size batches, given σ/2 by the adapter, is an upper bound of that same mechanism at q = 1."""
    exact = float(gaussian_epsilon(DELTA, 2 * math.sqrt(STEPS) / SIGMA))
    pld = peer("dp_accounting_pld_replace_one")([(1.0, SIGMA, STEPS)], DELTA)
    assert exact <= pld.epsilon <= exact + 1e-2
    fixed = peer("dp_accounting_rdp_fixed")([(1.0, SIGMA, STEPS, 100, 100)], DELTA)
    assert exact < fixed.epsilon < exact + 2.0


def test_unknown_peer_and_empty_run_are_refused():
    with pytest.raises(InputError, match="unknown"):
        dp_peers.load_dp("nope")
    with pytest.raises(InputError, match="at least one phase"):
        peer("dp_accounting_rdp")([], 1e-5)


def test_library_errors_propagate_for_the_caller_to_classify():
    with pytest.raises(ValueError, match="Floating point errors"):
        # 100 steps of the MNIST rate: prv_accountant raises the same error as for all 14063 (0.3 s instead of 5 s)
        peer("prv_accountant")([(256 / 60000, 1.1, 100)], 1e-20)


def test_opacus_runs_without_torch_and_without_registering_opacus():
    peer("opacus_prv")
    code = ("import sys\n"
            "from rdp_verify.reference import dp_peers\n"
            "print(dp_peers.load_dp('opacus_prv')([(0.01, 1.0, 100)], 1e-5).epsilon > 0,"
            " any(m.split('.')[0] in ('opacus', 'torch') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "False"]


def test_opacus_get_noise_multiplier_meets_its_target_under_its_own_accountant():
    peer("opacus_prv")
    sigma = dp_peers.opacus_get_noise_multiplier(target_epsilon=2.0, target_delta=1e-5, sample_rate=0.01,
                                                 steps=1000, accountant="rdp")
    eps = peer("opacus_rdp")([(0.01, sigma, 1000)], 1e-5).epsilon
    assert 2.0 - 0.01 <= eps <= 2.0  # Opacus's loop stops within epsilon_tolerance = 0.01 below the target


# -- event peers: dp_accounting's accountants on event trees ------------------------------------------------

def event_peer(name):
    try:
        return dp_peers.load_event_peer(name)
    except dp_peers.PeerUnavailable as exc:
        pytest.skip(str(exc))


def test_every_golden_tree_becomes_dp_accountings_own_event_and_back():
    dp = pytest.importorskip("dp_accounting")
    from rdp_verify.events.read import from_dp_accounting
    from rdp_verify.reference import golden_events
    for case in golden_events.CASES:
        theirs = dp_peers.to_dp_accounting(case.event)
        assert type(theirs).__module__ == dp.dp_event.__name__
        assert from_dp_accounting(theirs) == case.event  # shortest decimals of the doubles: the same exact numbers


def test_an_rdp_verify_extension_is_refused_by_name():
    pytest.importorskip("dp_accounting")
    from rdp_verify.events.model import DiscreteGaussianDpEvent
    with pytest.raises(dp_peers.PeerRefused, match="no DiscreteGaussianDpEvent"):
        dp_peers.to_dp_accounting(DiscreteGaussianDpEvent(1, 1))


def test_event_peers_answer_refuse_and_count():
    from fractions import Fraction

    from rdp_verify.events.model import (
        LaplaceDpEvent,
        NeighboringRelation,
        RandomizedResponseDpEvent,
        SelfComposedDpEvent,
        SingleEpochTreeAggregationDpEvent,
    )
    pld, rdp = event_peer("dp_accounting_pld"), event_peer("dp_accounting_rdp")
    add, one = NeighboringRelation.ADD_OR_REMOVE_ONE, NeighboringRelation.REPLACE_ONE
    exact = 1 + 2 * math.log(1 - 1e-5)  # Laplace(b = 1) once: ε(δ) = 1/b + 2 log(1 − δ)
    assert pld(LaplaceDpEvent(1), add, 1e-5).epsilon == pytest.approx(exact, rel=1e-6)
    assert rdp(LaplaceDpEvent(1), add, 1e-5).epsilon >= exact
    with pytest.raises(dp_peers.PeerRefused, match="SingleEpochTreeAggregationDpEvent"):
        pld(SingleEpochTreeAggregationDpEvent(1, 10), add, 1e-5)
    with pytest.raises(dp_peers.PeerRefused, match="REPLACE_SPECIAL"):
        rdp(SingleEpochTreeAggregationDpEvent(1, 10), add, 1e-5)
    rr3 = SelfComposedDpEvent(RandomizedResponseDpEvent(Fraction(1, 2), 4), 3)
    assert pld(rr3, one, 1e-5).epsilon == pytest.approx(math.log(5), rel=1e-3)  # the defect: one use counted
    assert rdp(rr3, one, 1e-5).epsilon > 3 * math.log(5) - 1e-3  # the RDP accountant counts three


def test_unknown_event_peer_is_an_input_error():
    with pytest.raises(InputError, match="unknown event peer"):
        dp_peers.load_event_peer("nope")
