"""The event classes: dp_accounting 0.6's, one to one, exact and validated when built."""

import dataclasses
from fractions import Fraction

import pytest

from rdp_verify.events import model as m
from rdp_verify.foundations.files import MAX_DEPTH
from rdp_verify.foundations.inputs import InputError


@pytest.fixture
def dp_event():
    return pytest.importorskip("dp_accounting.dp_event", reason="dp_accounting is not installed")


def test_every_dp_accounting_class_has_a_twin_with_its_fields_in_order(dp_event):
    attr = pytest.importorskip("attr")
    theirs = {name: cls for name, cls in vars(dp_event).items()
              if isinstance(cls, type) and issubclass(cls, dp_event.DpEvent) and cls is not dp_event.DpEvent}
    assert set(theirs) == m.DP_ACCOUNTING_EVENTS
    for name, cls in theirs.items():
        ours = [f.name for f in dataclasses.fields(m.EVENT_CLASSES[name])]
        assert ours == [a.name for a in attr.fields(cls)], name
    assert m.EXTENSIONS == {"DiscreteGaussianDpEvent", "ShuffledDpEvent", "BallsInBinsDpEvent"}
    assert not hasattr(dp_event, "EpsilonDeltaDpEvent")  # not in 0.6, so not here


def test_numbers_are_exact_and_counts_are_ints():
    assert m.GaussianDpEvent("0.1").noise_multiplier == Fraction(1, 10)
    assert type(m.GaussianDpEvent(2).noise_multiplier) is Fraction
    assert m.PoissonSampledDpEvent("1/3", m.NoOpDpEvent()).sampling_probability == Fraction(1, 3)
    assert m.ZCDpEvent("1e-5").xi == 0
    mog = m.MixtureOfGaussiansDpEvent(1, [0, "1.5"], ["1/3", "2/3"])
    assert mog.sensitivities == (0, Fraction(3, 2)) and isinstance(mog.sampling_probs, tuple)
    assert m.ComposedDpEvent([m.NoOpDpEvent()]).events == (m.NoOpDpEvent(),)
    assert m.SingleEpochTreeAggregationDpEvent(1, [2, 3]).step_counts == (2, 3)
    assert m.SingleEpochTreeAggregationDpEvent(1, 4).step_counts == 4
    assert m.RepeatAndSelectDpEvent(m.NoOpDpEvent(), 2, "inf").shape == float("inf")


def test_events_are_frozen_hashable_values():
    a = m.SelfComposedDpEvent(m.GaussianDpEvent("1.0"), 3)
    b = m.SelfComposedDpEvent(m.GaussianDpEvent(1), 3)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.count = 4
    assert m.GaussianDpEvent(1) != m.LaplaceDpEvent(1)


G = m.GaussianDpEvent(1)


@pytest.mark.parametrize("build, message", [
    (lambda: m.GaussianDpEvent(-1), "noise_multiplier=-1 must be positive or zero (in GaussianDpEvent)"),
    (lambda: m.GaussianDpEvent("-1.0"), "noise_multiplier=-1.0 must be positive or zero (in GaussianDpEvent)"),
    (lambda: m.GaussianDpEvent(1.5), "noise_multiplier=1.5 is a float: give a Fraction, an int or exact text such "
                                     "as '1.5'"),
    (lambda: m.GaussianDpEvent("nan"), "noise_multiplier='nan' is not a number"),
    (lambda: m.GaussianDpEvent("inf"), "noise_multiplier='inf' is not a number"),
    (lambda: m.GaussianDpEvent(True), "noise_multiplier=True is a bool, not a number (in GaussianDpEvent)"),
    (lambda: m.GaussianDpEvent(None), "noise_multiplier=<NoneType> is not a number"),
    (lambda: m.LaplaceDpEvent("-2"), "noise_multiplier=-2 must be positive or zero (in LaplaceDpEvent)"),
    (lambda: m.DiscreteLaplaceDpEvent(0, 1), "noise_parameter=0 must be positive (in DiscreteLaplaceDpEvent)"),
    (lambda: m.DiscreteLaplaceDpEvent(1, -1), "sensitivity=-1 must be a non-negative integer (in Discrete"),
    (lambda: m.DiscreteLaplaceDpEvent(1, 1.0), "sensitivity=1.0 must be a non-negative integer"),
    (lambda: m.DiscreteGaussianDpEvent(0, 1), "sigma=0 must be positive (in DiscreteGaussianDpEvent)"),
    (lambda: m.DiscreteGaussianDpEvent(1, "2"), "sensitivity='2' must be a non-negative integer"),
    (lambda: m.RandomizedResponseDpEvent("1.5", 2), "noise_parameter=1.5 is outside [0, 1]: it is a probability "
                                                    "(in RandomizedResponseDpEvent)"),
    (lambda: m.RandomizedResponseDpEvent("0.5", 0), "num_buckets=0 must be a whole number of at least 1"),
    (lambda: m.MixtureOfGaussiansDpEvent(0, [1], [1]), "standard_deviation=0 must be positive"),
    (lambda: m.MixtureOfGaussiansDpEvent(1, [-1], [1]), "sensitivities[0]=-1 must be positive or zero"),
    (lambda: m.MixtureOfGaussiansDpEvent(1, [], []), "sensitivities=[] must be a non-empty list"),
    (lambda: m.MixtureOfGaussiansDpEvent(1, 1, [1]), "sensitivities=<int> must be a list"),
    (lambda: m.MixtureOfGaussiansDpEvent(1, [0, 1], ["0.5", "0.6"]), "sampling_probs=<sum 1.1> must sum to exactly 1"),
    (lambda: m.MixtureOfGaussiansDpEvent(1, [0, 1], [1]), "sampling_probs=<1 values> must have as many entries as "
                                                          "sensitivities (2)"),
    (lambda: m.MixtureOfGaussiansDpEvent(1, [0], ["1.5"]), "sampling_probs[0]=1.5 is outside [0, 1]"),
    (lambda: m.ZCDpEvent(-1), "rho=-1 must be positive or zero (in ZCDpEvent)"),
    (lambda: m.ZCDpEvent(1, "-0.5"), "xi=-0.5 must be positive or zero (in ZCDpEvent)"),
    (lambda: m.SingleEpochTreeAggregationDpEvent(1, -1), "step_counts=-1 must be a non-negative integer"),
    (lambda: m.SingleEpochTreeAggregationDpEvent(1, [1, -2]), "step_counts[1]=-2 must be a non-negative integer"),
    (lambda: m.SingleEpochTreeAggregationDpEvent(1, []), "step_counts=[] must be an integer or a non-empty list"),
    (lambda: m.TruncatedSubsampledGaussianDpEvent(0, "0.1", 1, 1), "dataset_size=0 must be a whole number"),
    (lambda: m.TruncatedSubsampledGaussianDpEvent(10, "-0.1", 1, 1), "sampling_probability=-0.1 is outside [0, 1]: "
                                                                     "it is a sampling probability"),
    (lambda: m.TruncatedSubsampledGaussianDpEvent(10, "0.1", 0, 1), "truncated_batch_size=0 must be a whole number"),
    (lambda: m.TruncatedSubsampledGaussianDpEvent(10, "0.1", 1, -1), "noise_multiplier=-1 must be positive or zero"),
    (lambda: m.SelfComposedDpEvent(G, -1), "count=-1 must be a non-negative integer (in SelfComposedDpEvent)"),
    (lambda: m.SelfComposedDpEvent(G, True), "count=True must be a non-negative integer"),
    (lambda: m.SelfComposedDpEvent("G", 1), "event=<str> is not an event"),
    (lambda: m.ComposedDpEvent([G, {}]), "events[1]=<dict> is not an event (a rdp_verify.events DpEvent) (in "
                                         "ComposedDpEvent)"),
    (lambda: m.ComposedDpEvent(G), "events=<GaussianDpEvent> must be a list (in ComposedDpEvent)"),
    (lambda: m.RepeatAndSelectDpEvent(G, -1, 1), "mean=-1 must be positive or zero"),
    (lambda: m.RepeatAndSelectDpEvent(G, 1, "-inf"), "shape='-inf' is not a number"),
    (lambda: m.RepeatAndSelectDpEvent(G, 1, float("nan")), "shape=nan is a float"),
    (lambda: m.PoissonSampledDpEvent("1.5", G), "sampling_probability=1.5 is outside [0, 1]: it is a sampling "
                                                "probability (in PoissonSampledDpEvent)"),
    (lambda: m.PoissonSampledDpEvent(1, None), "event=<NoneType> is not an event"),
    (lambda: m.SampledWithoutReplacementDpEvent(10, 20, G), "sample_size=20 must lie in [0, source_dataset_size=10] "
                                                            "(in SampledWithoutReplacementDpEvent)"),
    (lambda: m.SampledWithoutReplacementDpEvent(-1, 0, G), "source_dataset_size=-1 must be a non-negative integer"),
    (lambda: m.SampledWithReplacementDpEvent(10, -1, G), "sample_size=-1 must be a non-negative integer"),
    (lambda: m.ShuffledDpEvent(10, 20, 1, G), "batch_size=20 exceeds dataset_size=10 (in ShuffledDpEvent)"),
    (lambda: m.BallsInBinsDpEvent(10, 3, 1, G), "dataset_size=10 is not a multiple of batch_size=3"),
    (lambda: m.ShuffledDpEvent(10, 0, 1, G), "batch_size=0 must be a whole number of at least 1"),
    (lambda: m.BallsInBinsDpEvent(10, 5, -1, G), "steps=-1 must be a non-negative integer (in BallsInBinsDpEvent)"),
])
def test_each_field_is_refused_in_one_line_naming_field_and_event(build, message):
    with pytest.raises(InputError) as info:
        build()
    text = str(info.value)
    assert text.startswith(message) and "\n" not in text and "DpEvent)" in text


def test_zero_noise_and_empty_samples_are_valid_events():
    # what an accountant can bound is its business: the model only refuses what is not an event
    assert m.GaussianDpEvent(0).noise_multiplier == 0
    assert m.PoissonSampledDpEvent(0, G).sampling_probability == 0
    assert m.SampledWithoutReplacementDpEvent(0, 0, G).sample_size == 0
    assert m.ComposedDpEvent([]).events == ()


def test_depth_is_bounded_when_built_so_every_event_can_be_written():
    event = G
    for depth in range(2, MAX_DEPTH + 1):
        event = m.SelfComposedDpEvent(event, 2)
        assert event._depth == depth
    with pytest.raises(InputError, match=f"nests arrays and objects {MAX_DEPTH + 1} deep in its JSON form"):
        m.PoissonSampledDpEvent(1, event)
    assert m.ComposedDpEvent([]). _depth == 2 and m.MixtureOfGaussiansDpEvent(1, [0], [1])._depth == 2


def test_neighboring_relation_mirrors_dp_accountings():
    rel = m.NeighboringRelation
    assert [(r.name, r.value) for r in rel] == [("ADD_OR_REMOVE_ONE", 1), ("REPLACE_ONE", 2), ("REPLACE_SPECIAL", 3)]
    assert rel.of(None) is rel.ADD_OR_REMOVE_ONE and rel.of("REPLACE_ONE") is rel.REPLACE_ONE
    with pytest.raises(InputError, match="neighboring_relation='zero-out' is not one of ADD_OR_REMOVE_ONE"):
        rel.of("zero-out")


def test_neighboring_relation_of_dp_accountings_enum(dp_event):
    from dp_accounting.privacy_accountant import NeighboringRelation as Theirs

    assert [r.name for r in Theirs] == [r.name for r in m.NeighboringRelation]
    assert all(m.NeighboringRelation.of(r).value == r.value for r in Theirs)
