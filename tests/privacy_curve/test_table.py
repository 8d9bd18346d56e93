"""The one table (rdp_verify.privacy_curve.table): which proof brackets each event of a run, the relation rules,
refusals by name, non-private runs, and a Gaussian-family run resolved exactly as today's phases."""

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rdp_verify.events import model as m
from rdp_verify.events.flatten import to_phases
from rdp_verify.events.model import UnsupportedEvent
from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.run import Phase
from rdp_verify.mechanisms.discrete_laplace import DiscreteLaplace
from rdp_verify.mechanisms.gaussian import Gaussian
from rdp_verify.mechanisms.laplace import Laplace
from rdp_verify.mechanisms.mixture_of_gaussians import MixtureOfGaussians
from rdp_verify.mechanisms.randomized_response import RandomizedResponse
from rdp_verify.mechanisms.sampled_laplace import SampledLaplace
from rdp_verify.mechanisms.truncated_sampled_gaussian import TruncatedSampledGaussian
from rdp_verify.privacy_curve.table import resolve, supported, tree_depth
from tests.events.strategies import gaussian_family

F = Fraction
ADD, REPLACE, SPECIAL = (m.NeighboringRelation.ADD_OR_REMOVE_ONE, m.NeighboringRelation.REPLACE_ONE,
                         m.NeighboringRelation.REPLACE_SPECIAL)
LAP = m.LaplaceDpEvent(1)
SGM = m.PoissonSampledDpEvent(F(1, 100), m.GaussianDpEvent(1))


def sc(event, count):
    return m.SelfComposedDpEvent(event, count)


def comp(*events):
    return m.ComposedDpEvent(events)


# -- the table, row by row --------------------------------------------------------------------------------------


@pytest.mark.parametrize("event, relation, leaves", [
    (LAP, ADD, ((Laplace(F(1)), 1),)),
    (LAP, SPECIAL, ((Laplace(F(1)), 1),)),
    (sc(m.LaplaceDpEvent(10), 10), None, ((Laplace(F(10)), 10),)),
    (sc(m.RandomizedResponseDpEvent(F(1, 2), 4), 3), REPLACE, ((RandomizedResponse(F(1, 2), 4, "replace-one"), 3),)),
    (m.RandomizedResponseDpEvent(F(1, 2), 4), SPECIAL, ((RandomizedResponse(F(1, 2), 4, "replace-special"), 1),)),
    (sc(m.DiscreteLaplaceDpEvent(F(1, 2), 2), 3), ADD, ((DiscreteLaplace(F(1, 2), 2), 3),)),
    (sc(m.PoissonSampledDpEvent(F(1, 4), LAP), 5), ADD, ((SampledLaplace(F(1), F(1, 4)), 5),)),
    (m.PoissonSampledDpEvent(1, LAP), ADD, ((Laplace(F(1)), 1),)),  # q = 1: the whole dataset
    (m.MixtureOfGaussiansDpEvent(1, [0, 1, 2], [F(1, 2), F(1, 4), F(1, 4)]), ADD,
     ((MixtureOfGaussians(F(1), (F(0), F(1), F(2)), (F(1, 2), F(1, 4), F(1, 4))), 1),)),
    # tree aggregation: d = ⌈log2(max steps + 1)⌉ uses of Gaussian(σ)
    (m.SingleEpochTreeAggregationDpEvent(2, 7), SPECIAL, ((Gaussian(F(2)), 3),)),
    (m.SingleEpochTreeAggregationDpEvent(2, 8), SPECIAL, ((Gaussian(F(2)), 4),)),
    (m.SingleEpochTreeAggregationDpEvent(2, [3, 7, 1]), SPECIAL, ((Gaussian(F(2)), 3),)),
    (sc(m.SingleEpochTreeAggregationDpEvent(2, 1), 2), SPECIAL, ((Gaussian(F(2)), 2),)),
    # a Gaussian beside another mechanism: sensitivity 2 under REPLACE_ONE (dp_accounting's PLD reading)
    (comp(m.GaussianDpEvent(3), m.RandomizedResponseDpEvent(F(1, 2), 2)), REPLACE,
     ((Gaussian(F(3), F(2)), 1), (RandomizedResponse(F(1, 2), 2, "replace-one"), 1))),
    (comp(m.GaussianDpEvent(3), LAP), ADD, ((Gaussian(F(3), F(1)), 1), (Laplace(F(1)), 1))),
    # consecutive uses of one mechanism merge; others keep their order
    (comp(LAP, sc(LAP, 2), m.DiscreteLaplaceDpEvent(1, 1), LAP, m.NoOpDpEvent()), ADD,
     ((Laplace(F(1)), 3), (DiscreteLaplace(F(1), 1), 1), (Laplace(F(1)), 1))),
    # truncated Poisson sampling: every relation (as dp_accounting's PLD accountant)
    (sc(m.TruncatedSubsampledGaussianDpEvent(100, F(1, 10), 5, 1), 4), ADD,
     ((TruncatedSampledGaussian(100, F(1, 10), 5, F(1)), 4),)),
    (m.TruncatedSubsampledGaussianDpEvent(100, F(1, 10), 5, 1), REPLACE,
     ((TruncatedSampledGaussian(100, F(1, 10), 5, F(1), "replace-one"), 1),)),
    (m.TruncatedSubsampledGaussianDpEvent(100, F(1, 10), 5, 1), SPECIAL,
     ((TruncatedSampledGaussian(100, F(1, 10), 5, F(1), "replace-special"), 1),)),
])
def test_each_leaf_is_sent_to_its_mechanism(event, relation, leaves):
    run = resolve(event, relation)
    assert run.leaves == leaves and run.phases == () and not run.non_private and not run.empty
    assert run.event == event and run.relation == m.NeighboringRelation.of(relation)


def test_a_dp_sgm_run_with_laplace_releases_is_phases_and_leaves():
    run = resolve(comp(sc(SGM, 100), sc(m.LaplaceDpEvent(10), 2)))
    assert run.phases == (Phase(F(1, 100), F(1), 100),) and run.leaves == ((Laplace(F(10)), 2),)
    # under REPLACE_SPECIAL a Poisson-sampled Gaussian is the add/remove phase, even alone
    special = resolve(sc(SGM, 100), SPECIAL)
    assert special.phases == (Phase(F(1, 100), F(1), 100),) and special.leaves == ()
    assert resolve(sc(SGM, 100), SPECIAL).phases == tuple(to_phases(sc(SGM, 100), ADD))
    # a truncated Poisson sample that can never be truncated (B ≥ N) is the Poisson-sampled Gaussian's phase
    never = m.TruncatedSubsampledGaussianDpEvent(100, F(1, 100), 100, 1)
    for relation in (ADD, REPLACE, SPECIAL):
        assert resolve(sc(never, 7), relation).phases == resolve(sc(SGM, 7), relation).phases


@pytest.mark.parametrize("event, relation", [
    (m.MixtureOfGaussiansDpEvent(1, [0, 0], [F(1, 2), F(1, 2)]), ADD),  # the same law on both datasets
    (m.RandomizedResponseDpEvent(F(1, 2), 1), REPLACE),  # one bucket: a constant output
    (m.RandomizedResponseDpEvent(0, 1), REPLACE),  # ... even with no noise
    (m.SingleEpochTreeAggregationDpEvent(2, 0), SPECIAL),  # no steps
    (m.TruncatedSubsampledGaussianDpEvent(100, 0, 5, 1), ADD),  # q = 0: no record is ever sampled
    (comp(m.NoOpDpEvent(), sc(LAP, 0), m.PoissonSampledDpEvent(0, LAP)), ADD),
])
def test_runs_that_release_nothing_are_empty(event, relation):
    run = resolve(event, relation)
    assert run.empty and not run.non_private


@pytest.mark.parametrize("steps, depth", [(0, 0), (1, 1), (2, 2), (3, 2), (4, 3), (7, 3), (8, 4), ((5, 1000), 10),
                                          ((0, 0), 0)])
def test_tree_depth(steps, depth):
    assert tree_depth(steps) == depth


# -- the relations ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("event, relation, named", [
    (LAP, REPLACE, "LaplaceDpEvent"),
    (comp(sc(SGM, 10), LAP), REPLACE, "LaplaceDpEvent"),
    (m.DiscreteLaplaceDpEvent(1, 1), REPLACE, "DiscreteLaplaceDpEvent"),
    (m.MixtureOfGaussiansDpEvent(1, [1], [1]), REPLACE, "MixtureOfGaussiansDpEvent"),
    (m.PoissonSampledDpEvent(F(1, 2), LAP), REPLACE, "PoissonSampledDpEvent of a LaplaceDpEvent"),
    (m.RandomizedResponseDpEvent(F(1, 2), 2), ADD, "RandomizedResponseDpEvent"),
    (m.RandomizedResponseDpEvent(F(1, 2), 2), None, "RandomizedResponseDpEvent"),  # the default is ADD_OR_REMOVE_ONE
    (m.SingleEpochTreeAggregationDpEvent(1, 4), ADD, "SingleEpochTreeAggregationDpEvent"),
    (m.SingleEpochTreeAggregationDpEvent(1, 4), REPLACE, "SingleEpochTreeAggregationDpEvent"),
    (comp(m.SampledWithoutReplacementDpEvent(100, 10, m.GaussianDpEvent(1)), LAP), SPECIAL,
     "SampledWithoutReplacementDpEvent"),
])
def test_a_mechanism_under_a_relation_it_is_not_defined_for_is_refused_naming_both(event, relation, named):
    with pytest.raises(UnsupportedEvent) as info:
        resolve(event, relation)
    message = str(info.value)
    assert named in message and m.NeighboringRelation.of(relation).name in message and "\n" not in message
    assert not supported(event, relation)


def test_an_unknown_relation_is_an_input_error():
    with pytest.raises(InputError, match="neighboring_relation='ZERO_OUT' is not one of"):
        resolve(LAP, "ZERO_OUT")


# -- refusals by name -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("event, named", [
    (m.RepeatAndSelectDpEvent(LAP, 2, 1), "RepeatAndSelectDpEvent"),
    (m.UnsupportedDpEvent(), "UnsupportedDpEvent"),
    (m.SampledWithReplacementDpEvent(100, 10, LAP), "SampledWithReplacementDpEvent"),
    (m.PoissonSampledDpEvent(F(1, 2), m.DiscreteLaplaceDpEvent(1, 1)), "DiscreteLaplaceDpEvent"),
    (m.SampledWithoutReplacementDpEvent(100, 10, LAP), "LaplaceDpEvent"),
    (comp(m.ShuffledDpEvent(100, 10, 10, m.GaussianDpEvent(1)), LAP), "ShuffledDpEvent"),
])
@pytest.mark.parametrize("wrap", [lambda e: e, lambda e: comp(sc(SGM, 10), LAP, e)], ids=["alone", "composed"])
def test_unsupported_events_are_refused_by_name(event, named, wrap):
    with pytest.raises(UnsupportedEvent) as info:
        resolve(wrap(event), ADD)
    assert named in str(info.value) and "\n" not in str(info.value)
    assert not supported(wrap(event))


# -- non-private runs -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("event, relation", [
    (m.NonPrivateDpEvent(), ADD),
    (comp(sc(SGM, 10), LAP, m.NonPrivateDpEvent()), ADD),
    (m.PoissonSampledDpEvent(F(1, 10), m.NonPrivateDpEvent()), ADD),
    (m.LaplaceDpEvent(0), ADD),
    (comp(LAP, m.GaussianDpEvent(0)), ADD),
    (comp(sc(SGM, 10), m.PoissonSampledDpEvent(F(1, 100), m.GaussianDpEvent(0))), ADD),
    (m.RandomizedResponseDpEvent(0, 2), REPLACE),
    (m.SingleEpochTreeAggregationDpEvent(0, 7), SPECIAL),
])
def test_non_private_runs_are_marked_not_bounded(event, relation):
    run = resolve(event, relation)
    assert run.non_private and run.phases == () and run.leaves == () and supported(event, relation)


# -- the Gaussian family: today's phases, unchanged -------------------------------------------------------------


@pytest.mark.parametrize("event, relation", [
    (m.GaussianDpEvent(2), ADD),
    (m.GaussianDpEvent(2), REPLACE),
    (sc(SGM, 300), ADD),
    (sc(SGM, 300), REPLACE),
    (comp(sc(SGM, 100), sc(m.PoissonSampledDpEvent(F(1, 50), m.GaussianDpEvent(F(3, 2))), 20), sc(SGM, 5)), ADD),
    (sc(m.SampledWithoutReplacementDpEvent(1000, 10, m.GaussianDpEvent(1)), 50), REPLACE),
    (m.ShuffledDpEvent(100, 10, 25, m.GaussianDpEvent(1)), ADD),
    (m.BallsInBinsDpEvent(100, 10, 10, m.GaussianDpEvent(1)), ADD),
    (comp(m.NoOpDpEvent(), sc(SGM, 3)), ADD),
])
def test_a_gaussian_family_run_resolves_to_its_phases(event, relation):
    run = resolve(event, relation)
    assert run.phases == tuple(to_phases(event, relation)) and run.leaves == () and not run.non_private


def _outcome(fn):
    try:
        return fn()
    except InputError as exc:
        return type(exc), str(exc)


@settings(max_examples=50, deadline=None)
@given(gaussian_family, st.sampled_from([ADD, REPLACE]))
def test_random_gaussian_family_runs_resolve_to_their_phases(event, relation):
    """Every Gaussian-family tree: resolve's phases are to_phases', or both refuse alike; the differences: a zero
    noise multiplier (or NonPrivateDpEvent) resolve marks non-private instead of refusing, and a tree that releases
    nothing (e.g. a Poisson sample at q = 0 of a NoOpDpEvent, which to_phases refuses) is an empty run, refused by
    event_bracket."""
    theirs = _outcome(lambda: tuple(to_phases(event, relation)))
    ours = _outcome(lambda: resolve(event, relation))
    if isinstance(ours, tuple):
        # both refuse alike; where a tree is both unsupported and of zero noise, each names what it checks first
        # (to_phases refuses zero noise, which resolve would mark non-private)
        assert ours == theirs or ours[0] is UnsupportedEvent and (
            theirs[0] is UnsupportedEvent or theirs[1].startswith("noise_multiplier=0 ")), (ours, theirs)
    elif ours.non_private:
        assert isinstance(theirs, tuple)  # today a refusal (zero noise, NonPrivateDpEvent)
    elif ours.leaves:  # a mechanism beyond the family (the strategy's rare LaplaceDpEvent): today a refusal
        assert isinstance(theirs, tuple)
    elif ours.empty:
        assert theirs == () or theirs[0] is UnsupportedEvent
    else:
        assert ours.leaves == () and ours.phases == theirs


def test_a_million_uses_start_on_a_grid_that_fits():
    """10⁶ Laplace(1) releases: the first grid step keeps the composed loss (spread about 1000) within MAX_GRID
    points, instead of composing tens of millions of points at the loss scale over 1000 (it took minutes)."""
    from rdp_verify.curves.accountant import LEAF_RESOLUTION, MAX_GRID, initial_step

    leaves = resolve(sc(LAP, 10**6)).leaves
    h = initial_step((), F(1, 10**12), leaves)
    assert 40 * 1000 / h <= 2 * MAX_GRID and h <= F(1, 50)
    # few uses: the loss scale over the resolution of a second-order leaf (Laplace's connect-the-dots pairs)
    assert initial_step((), F(1, 10**12), resolve(sc(LAP, 3)).leaves) == F(1, LEAF_RESOLUTION[2])
