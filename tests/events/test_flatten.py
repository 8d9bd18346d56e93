"""Flattening a run: counted components, and the phases of today's accountants (a drop-in for ``_phases``)."""

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rdp_verify.accountants.dp_accounting_api import CertifiedPldAccountant
from rdp_verify.events import model as m
from rdp_verify.events.flatten import Component, components, phases_to_event, to_phases
from rdp_verify.events.read import from_dp_accounting
from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.run import Phase
from tests.events.strategies import gaussian_family, trees

G = m.GaussianDpEvent
SGM = m.PoissonSampledDpEvent("0.01", G(1))
ADD, REPLACE = m.NeighboringRelation.ADD_OR_REMOVE_ONE, m.NeighboringRelation.REPLACE_ONE


def sc(event, count):
    return m.SelfComposedDpEvent(event, count)


def comp(*events):
    return m.ComposedDpEvent(events)


# -- components -------------------------------------------------------------------------------------------------


def test_counts_multiply_compositions_concatenate_and_nothing_disappears():
    lap = m.LaplaceDpEvent(2)
    run = comp(sc(comp(sc(SGM, 10), m.NoOpDpEvent(), lap), 3), sc(G(5), 0), m.PoissonSampledDpEvent(0, lap), lap)
    assert components(run) == (Component(SGM, 30), Component(lap, 3), Component(lap, 1))
    assert components(comp()) == () == components(sc(m.NonPrivateDpEvent(), 0))
    assert components(m.SampledWithoutReplacementDpEvent(10, 0, G(1))) == ()
    assert components(m.ShuffledDpEvent(10, 5, 0, G(1))) == ()


def test_a_component_knows_its_wrapper_and_mechanism():
    (c,) = components(sc(SGM, 5))
    assert (c.wrapper, c.mechanism, c.count, c.non_private) == (SGM, G(1), 5, False)
    (c,) = components(G(2))
    assert (c.wrapper, c.mechanism) == (None, G(2))


def test_non_private_is_a_marker_even_under_sampling():
    assert components(sc(m.NonPrivateDpEvent(), 4)) == (Component(m.NonPrivateDpEvent(), 4),)
    inner = comp(G(1), m.NonPrivateDpEvent())
    assert components(m.PoissonSampledDpEvent("0.5", inner)) == (Component(m.NonPrivateDpEvent(), 1),)
    assert components(m.PoissonSampledDpEvent(0, inner)) == ()


def test_trivial_sampling_reduces_exactly():
    inner = comp(G(1), m.LaplaceDpEvent(1))
    assert components(m.PoissonSampledDpEvent(1, sc(inner, 2))) == (Component(G(1), 2), Component(m.LaplaceDpEvent(1), 2))
    assert components(m.SampledWithoutReplacementDpEvent(7, 7, inner)) == components(inner)
    nested = m.PoissonSampledDpEvent("0.5", sc(comp(m.NoOpDpEvent(), m.PoissonSampledDpEvent("0.1", G(1))), 1))
    assert components(nested) == (Component(m.PoissonSampledDpEvent("0.05", G(1)), 1),)
    assert components(m.PoissonSampledDpEvent("0.5", sc(G(1), 1))) == (Component(m.PoissonSampledDpEvent("0.5", G(1)),
                                                                                 1),)


@pytest.mark.parametrize("event, message", [
    (m.PoissonSampledDpEvent("0.5", comp(G(1), G(2))), "PoissonSampledDpEvent of ComposedDpEvent is not supported: it "
                                                       "samples a composition of 2 mechanisms on one sample"),
    (m.PoissonSampledDpEvent("0.5", sc(G(1), 3)), "PoissonSampledDpEvent of SelfComposedDpEvent is not supported: it "
                                                  "samples 3 applications of GaussianDpEvent on one sample"),
    (m.SampledWithoutReplacementDpEvent(10, 5, SGM), "SampledWithoutReplacementDpEvent of PoissonSampledDpEvent is "
                                                     "not supported: it samples another sampling (PoissonSampledDpEvent)"),
    (m.ShuffledDpEvent(10, 5, 3, m.SampledWithReplacementDpEvent(5, 5, G(1))), "ShuffledDpEvent of SampledWith"
                                                                                "ReplacementDpEvent is not supported"),
    (m.PoissonSampledDpEvent("0.5", m.SampledWithoutReplacementDpEvent(10, 10, comp(G(1), G(1)))),
     "PoissonSampledDpEvent of SampledWithoutReplacementDpEvent is not supported: it samples a composition"),
])
def test_nested_sampling_is_refused_by_name(event, message):
    with pytest.raises(m.UnsupportedEvent) as info:
        components(event)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


@settings(max_examples=150, deadline=None)
@given(trees)
def test_flattening_raises_nothing_but_refusals(event):
    try:
        out = components(event)
    except m.UnsupportedEvent as exc:
        assert " is not supported: it samples " in str(exc)
        return
    for c in out:
        assert c.count >= 1 and not isinstance(c.mechanism, (m.NoOpDpEvent, m.ComposedDpEvent, m.SelfComposedDpEvent))
        assert c.wrapper is None or not isinstance(c.mechanism, m.SAMPLING_WRAPPERS)
    assert components(m.SelfComposedDpEvent(event, 3)) == tuple(Component(c.event, 3 * c.count) for c in out)
    assert components(comp(event, event)) == out + out


# -- phases -----------------------------------------------------------------------------------------------------


def test_phases_of_the_gaussian_family():
    run = comp(sc(SGM, 100), G(2), m.PoissonSampledDpEvent(0, G(1)), sc(m.NoOpDpEvent(), 4))
    assert to_phases(run) == [Phase(Fraction(1, 100), Fraction(1), 100), Phase(Fraction(1), Fraction(2), 1)]
    wor = sc(m.SampledWithoutReplacementDpEvent(60000, 600, G(2)), 30)
    assert to_phases(wor, REPLACE) == [Phase(Fraction(1, 100), Fraction(2), 30, "fixed", "replace-one", 600, 60000)]
    shuffled = sc(m.ShuffledDpEvent(600, 60, 15, G(1)), 2)
    assert to_phases(shuffled, "REPLACE_ONE") == [Phase(Fraction(1, 10), Fraction(1), 15, "shuffle", "replace-one",
                                                        60, 600)] * 2
    with pytest.raises(InputError, match="steps=1e7 is beyond the supported maximum 1e6"):
        to_phases(sc(m.BallsInBinsDpEvent(600, 60, 10, G(1)), 10**6))  # refused before a million phases are made
    with pytest.raises(m.UnsupportedEvent, match="^LaplaceDpEvent under shuffle sampling: only GaussianDpEvent"):
        to_phases(m.ShuffledDpEvent(600, 60, 10, m.LaplaceDpEvent(1)))
    with pytest.raises(InputError, match=r"^neighboring_relation=NeighboringRelation.REPLACE_SPECIAL: one of "
                                         r"ADD_OR_REMOVE_ONE, REPLACE_ONE is supported$"):
        to_phases(SGM, m.NeighboringRelation.REPLACE_SPECIAL)


@pytest.mark.parametrize("phases", [
    [],
    [Phase(Fraction(1, 100), Fraction(1), 1000)],
    [Phase(Fraction(1), Fraction(3), 1), Phase(Fraction(1, 50), Fraction(3, 2), 7)],
    [Phase(Fraction(1, 100), Fraction(2), 30, "fixed", "replace-one", 600, 60000),
     Phase(Fraction(1, 10), Fraction(1), 5, neighbours="replace-one")],
    [Phase(Fraction(1, 10), Fraction(1), 15, "shuffle", "add-remove", 60, 600),
     Phase(Fraction(1, 10), Fraction(1), 1, "balls-in-bins", "add-remove", 60, 600)],
])
def test_phases_to_event_and_back(phases):
    event, relation = phases_to_event(phases)
    assert to_phases(event, relation) == phases
    assert relation is (REPLACE if any(p.neighbours == "replace-one" for p in phases) else ADD)


def test_phases_to_event_refuses_mixed_relations():
    with pytest.raises(InputError, match="same neighbour relation, got add-remove and replace-one"):
        phases_to_event([Phase(Fraction(1, 10), Fraction(1), 5), Phase(Fraction(1, 10), Fraction(1), 5,
                                                                       neighbours="replace-one")])


# -- to_phases against CertifiedPldAccountant._phases -----------------------------------------------------------


def _outcome(call):
    try:
        return "phases", call()
    except InputError as exc:  # both: a value outside the run domain (Phase, check_q, check_run_sigma)
        return "refused", str(exc)
    except Exception as exc:  # theirs: UnsupportedEventError (ours is an InputError, above)
        if type(exc).__name__ != "UnsupportedEventError":
            raise
        return "refused", str(exc)


def _same(event, relation):
    theirs = _outcome(lambda: CertifiedPldAccountant(relation.name)._phases(event, 1))
    ours = _outcome(lambda: to_phases(event, relation))
    assert ours == theirs, event


DP_SGD_CASES = [
    SGM, sc(SGM, 1000), G(2), sc(G(2), 16), m.NoOpDpEvent(), comp(), comp(sc(SGM, 3), G(1), m.NoOpDpEvent()),
    m.PoissonSampledDpEvent(0, G(1)), m.PoissonSampledDpEvent(0, G(0)), m.PoissonSampledDpEvent(1, G(1)),
    m.SampledWithoutReplacementDpEvent(60000, 600, G(2)), m.SampledWithoutReplacementDpEvent(10, 0, G(0)),
    sc(m.LaplaceDpEvent(1), 0), comp(sc(comp(m.LaplaceDpEvent(1)), 0)), sc(sc(SGM, 1000), 1000),
    # refusals
    G(0), G("0.01"), G(2 * 10**6), m.PoissonSampledDpEvent("1e-13", G(1)), m.PoissonSampledDpEvent("0.5", G(0)),
    m.PoissonSampledDpEvent(0, m.LaplaceDpEvent(1)), m.PoissonSampledDpEvent("0.5", sc(G(1), 1)),
    m.SampledWithoutReplacementDpEvent(10, 5, m.LaplaceDpEvent(1)),
    m.SampledWithoutReplacementDpEvent(10**13, 1, G(1)), m.SampledWithReplacementDpEvent(10, 5, G(1)),
    m.LaplaceDpEvent(1), m.NonPrivateDpEvent(), m.UnsupportedDpEvent(), m.DiscreteGaussianDpEvent(1, 1),
    m.ZCDpEvent(1), sc(SGM, 2 * 10**6), comp(sc(SGM, 5), m.LaplaceDpEvent(1)), m.ShuffledDpEvent(10, 5, 1, G(1)),
    # truncated Poisson sampling: a phase when no batch can be truncated (B ≥ N), nothing at q = 0, else refused
    m.TruncatedSubsampledGaussianDpEvent(10, "0.1", 10, 1), sc(m.TruncatedSubsampledGaussianDpEvent(10, "0.1", 12, 2), 5),
    m.TruncatedSubsampledGaussianDpEvent(10, 0, 2, 1), m.TruncatedSubsampledGaussianDpEvent(10, "0.1", 9, 1),
    m.TruncatedSubsampledGaussianDpEvent(10, "1e-13", 10, 1), m.TruncatedSubsampledGaussianDpEvent(10, "0.1", 10, 0),
]


@pytest.mark.parametrize("relation", [ADD, REPLACE])
@pytest.mark.parametrize("event", DP_SGD_CASES, ids=range(len(DP_SGD_CASES)))
def test_to_phases_is_phases_of_the_accountant(event, relation):
    if isinstance(event, m.ShuffledDpEvent):  # our extension: the accountant knows no such event
        assert to_phases(event, relation)[0].sampler == "shuffle"
        return
    _same(event, relation)


@settings(max_examples=150, deadline=None)
@given(gaussian_family, st.sampled_from([ADD, REPLACE]))
def test_to_phases_is_phases_of_the_accountant_on_random_runs(event, relation):
    _same(event, relation)


def test_on_dp_accountings_own_events_messages_agree_up_to_the_event_named(dp_event):
    d = dp_event
    sgm = lambda q, s: d.PoissonSampledDpEvent(q, d.GaussianDpEvent(s))  # noqa: E731
    for event in [sgm(0.01, 1.0), d.SelfComposedDpEvent(sgm(0.02, 1.5), 300), d.GaussianDpEvent(0.01),
                  sgm(1e-13, 1.0), d.LaplaceDpEvent(1.0), d.PoissonSampledDpEvent(0.1, d.LaplaceDpEvent(1.0)),
                  d.ComposedDpEvent([sgm(0.1, 1.0)] * 3), d.SampledWithoutReplacementDpEvent(100, 10,
                                                                                          d.GaussianDpEvent(1.0))]:
        for relation in (ADD, REPLACE):
            theirs = _outcome(lambda: CertifiedPldAccountant(relation.name)._phases(event, 1))
            assert _outcome(lambda: to_phases(from_dp_accounting(event), relation)) == theirs
    # invalid events are refused when read, with the accountant's message followed by the event's name ...
    for event, theirs in [
        (sgm(0.01, -1.0), "noise_multiplier=-1.0 must be positive"),
        (d.SelfComposedDpEvent(sgm(0.01, 1.0), -1), "count=-1 must be a non-negative integer"),
        (sgm("nan", 1.0), "sampling_probability='nan' is not a number (use a decimal like 0.01, 1e-6 or a ratio like "
                          "1/3)"),
        (d.SampledWithoutReplacementDpEvent(10, 20, d.GaussianDpEvent(1.0)),
         "sample_size=20 must lie in [0, source_dataset_size=10]"),
    ]:
        with pytest.raises(InputError) as info:
            from_dp_accounting(event)
        assert str(info.value).startswith(theirs) and str(info.value).endswith("DpEvent)")
    # ... but for two spellings: [0, 1] (the model allows q = 0) and a float's repr (to_phases sees exact numbers)
    with pytest.raises(InputError, match=r"^sampling_probability=1.5 is outside \[0, 1\]: it is a sampling"):
        from_dp_accounting(sgm(1.5, 1.0))
    with pytest.raises(InputError, match=r"^noise_multiplier=0 must be positive$"):
        to_phases(from_dp_accounting(d.GaussianDpEvent(0.0)))  # the accountant: noise_multiplier=0.0 must ...


@pytest.fixture
def dp_event():
    return pytest.importorskip("dp_accounting.dp_event", reason="dp_accounting is not installed")
