"""Reading and writing events: the JSON form, dp_accounting's named tuples and objects, the one-line text."""

import json
import time
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import pytest
from hypothesis import given, settings

from rdp_verify.events import model as m
from rdp_verify.events.read import from_dp_accounting, from_named_tuple_json, load_event, render, to_json
from rdp_verify.events.schema import SCHEMA_NAME, event_schema
from rdp_verify.foundations.inputs import InputError
from tests.events.strategies import trees

SCHEMA_FILE = Path(m.__file__).parents[1] / "certificates" / "schemas" / f"{SCHEMA_NAME}.schema.json"
VALIDATOR = jsonschema.Draft202012Validator(event_schema())

G = m.GaussianDpEvent
EVERY_CLASS = m.ComposedDpEvent([
    m.SelfComposedDpEvent(m.PoissonSampledDpEvent("0.01", G(1)), 1000),
    m.LaplaceDpEvent(2), m.DiscreteLaplaceDpEvent("0.5", 2), m.DiscreteGaussianDpEvent("1/3", 1),
    m.RandomizedResponseDpEvent("0.25", 4), m.MixtureOfGaussiansDpEvent(1, [0, 1], ["1/3", "2/3"]),
    m.ZCDpEvent("0.5", "1e-3"), m.SingleEpochTreeAggregationDpEvent("1.5", [3, 4]),
    m.SingleEpochTreeAggregationDpEvent(2, 5), m.TruncatedSubsampledGaussianDpEvent(1000, "0.01", 20, 1),
    m.RepeatAndSelectDpEvent(G(1), 3, "inf"), m.RepeatAndSelectDpEvent(G(1), 3, 1),
    m.SampledWithoutReplacementDpEvent(60000, 600, G(2)), m.SampledWithReplacementDpEvent(100, 150, G(2)),
    m.ShuffledDpEvent(60000, 600, 250, G(1)), m.BallsInBinsDpEvent(600, 60, 3, G(1)),
    m.NoOpDpEvent(), m.NonPrivateDpEvent(), m.UnsupportedDpEvent(), m.ComposedDpEvent([]),
])


def test_every_class_round_trips_through_json_text():
    assert {type(e).__name__ for e in EVERY_CLASS.events} | {"ComposedDpEvent", "SelfComposedDpEvent",
                                                              "PoissonSampledDpEvent", "GaussianDpEvent"} == set(
        m.EVENT_CLASSES)
    text = json.dumps(to_json(EVERY_CLASS))
    assert from_named_tuple_json(json.loads(text)) == EVERY_CLASS
    assert VALIDATOR.is_valid(json.loads(text))


def test_the_json_form_is_exact_text():
    assert to_json(m.SelfComposedDpEvent(m.PoissonSampledDpEvent("1/3", G("1.10")), 7)) == {
        "class_name": "SelfComposedDpEvent", "count": 7,
        "event": {"class_name": "PoissonSampledDpEvent", "sampling_probability": "1/3",
                  "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "1.1"}}}
    assert to_json(m.RepeatAndSelectDpEvent(G(1), 2, float("inf")))["shape"] == "inf"


def test_load_event_reads_numbers_exactly_from_their_text(tmp_path):
    path = tmp_path / "event.json"
    path.write_text('{"class_name": "PoissonSampledDpEvent", "sampling_probability": 0.1000000000000000000001, '
                    '"event": {"class_name": "GaussianDpEvent", "noise_multiplier": 1}, "module_name": '
                    '"dp_accounting.dp_event"}')
    event = load_event(path)
    assert event.sampling_probability == Fraction("0.1000000000000000000001") and event.event == G(1)
    path.write_text(json.dumps(to_json(EVERY_CLASS)))
    assert load_event(path) == EVERY_CLASS


def test_parsed_floats_are_read_as_the_decimals_they_print_as():
    assert from_named_tuple_json({"class_name": "GaussianDpEvent", "noise_multiplier": 1.1}) == G("1.1")
    assert from_named_tuple_json(["dp_accounting.dp_event", "ZCDpEvent", 0.5]) == m.ZCDpEvent("0.5")


def test_dp_accountings_json_of_to_named_tuple_is_read(dp_event):
    d = dp_event
    theirs = d.ComposedDpEvent([
        d.SelfComposedDpEvent(d.PoissonSampledDpEvent(0.01, d.GaussianDpEvent(1.0)), 1000),
        d.LaplaceDpEvent(2.0), d.DiscreteLaplaceDpEvent(0.5, 2), d.RandomizedResponseDpEvent(0.25, 4),
        d.MixtureOfGaussiansDpEvent(1.0, [0, 1], [0.25, 0.75]), d.ZCDpEvent(0.5), d.ZCDpEvent(0.5, 0.001),
        d.SingleEpochTreeAggregationDpEvent(1.5, [3, 4]), d.SingleEpochTreeAggregationDpEvent(2.0, 5),
        d.TruncatedSubsampledGaussianDpEvent(1000, 0.01, 20, 1.0), d.RepeatAndSelectDpEvent(d.GaussianDpEvent(1.0),
                                                                                            3.0, 1.0),
        d.SampledWithoutReplacementDpEvent(60000, 600, d.GaussianDpEvent(2.0)),
        d.SampledWithReplacementDpEvent(100, 150, d.GaussianDpEvent(2.0)),
        d.NoOpDpEvent(), d.NonPrivateDpEvent(), d.UnsupportedDpEvent(), d.ComposedDpEvent([]),
    ])
    ours = from_dp_accounting(theirs)
    as_lists = json.loads(json.dumps(theirs.to_named_tuple()))  # json writes named tuples as lists
    assert as_lists[:2] == ["dp_accounting.dp_event", "ComposedDpEvent"]
    assert from_named_tuple_json(as_lists) == ours
    assert from_named_tuple_json(json.loads(json.dumps(theirs.to_named_tuple()._asdict()))) == ours
    assert from_named_tuple_json(theirs.to_named_tuple()) == ours == from_dp_accounting(theirs.to_named_tuple())
    assert VALIDATOR.is_valid(as_lists)
    assert ours.events[0] == m.SelfComposedDpEvent(m.PoissonSampledDpEvent("0.01", G(1)), 1000)
    assert ours.events[4].sampling_probs == (Fraction(1, 4), Fraction(3, 4))
    assert from_dp_accounting(d.RepeatAndSelectDpEvent(d.NoOpDpEvent(), 2.0, float("inf"))).shape == float("inf")


@pytest.fixture
def dp_event():
    return pytest.importorskip("dp_accounting.dp_event", reason="dp_accounting is not installed")


def test_live_objects_are_read_by_class_name_and_fields_without_dp_accounting():
    GaussianDpEvent = type("GaussianDpEvent", (), {})
    PoissonSampledDpEvent = type("PoissonSampledDpEvent", (), {})
    g = GaussianDpEvent()
    g.noise_multiplier = 1.1
    p = PoissonSampledDpEvent()
    p.sampling_probability, p.event = 0.01, g
    assert from_dp_accounting(p) == m.PoissonSampledDpEvent("0.01", G("1.1"))
    assert from_dp_accounting(G(1)) == G(1)
    with pytest.raises(InputError, match=r"^missing field 'noise_multiplier' \(in GaussianDpEvent\)$"):
        from_dp_accounting(GaussianDpEvent())


@pytest.mark.parametrize("obj, message", [
    ({"class_name": "EpsilonDeltaDpEvent", "epsilon": 1}, "class_name='EpsilonDeltaDpEvent' is not an event class "
                                                           "of dp_accounting 0.6 nor an rdp_verify extension"),
    ({"class_name": 3}, "class_name=3 is not text"),
    ({"noise_multiplier": "1"}, "class_name=None is not text"),
    ({"class_name": "GaussianDpEvent"}, "missing field 'noise_multiplier' (in GaussianDpEvent)"),
    ({"class_name": "GaussianDpEvent", "noise_multiplier": "1", "sigma": 1},
     "unknown field 'sigma' (in GaussianDpEvent; its fields: noise_multiplier)"),
    ({"class_name": "GaussianDpEvent", "noise_multiplier": "1", "module_name": "mylib.events"},
     "module_name='mylib.events' is not one of rdp_verify.events, rdp_verify.events.model, dp_accounting.dp_event"),
    ({"class_name": "ShuffledDpEvent", "module_name": "dp_accounting.dp_event"},
     "module_name='dp_accounting.dp_event' is not one of rdp_verify.events, rdp_verify.events.model (in Shuffled"),
    ({"class_name": "GaussianDpEvent", "noise_multiplier": "nan"}, "noise_multiplier='nan' is not a number"),
    ({"class_name": "GaussianDpEvent", "noise_multiplier": float("nan")},
     "noise_multiplier=nan is not a finite number (in GaussianDpEvent)"),
    ({"class_name": "GaussianDpEvent", "noise_multiplier": float("inf")}, "noise_multiplier=inf is not a finite"),
    ({"class_name": "GaussianDpEvent", "noise_multiplier": -1.0}, "noise_multiplier=-1.0 must be positive or zero"),
    ({"class_name": "GaussianDpEvent", "noise_multiplier": None}, "noise_multiplier=<NoneType> is not a number"),
    ({"class_name": "GaussianDpEvent", "noise_multiplier": [1]}, "noise_multiplier=<list> is not a number"),
    ({"class_name": "SelfComposedDpEvent", "event": {"class_name": "NoOpDpEvent"}, "count": "-3"},
     "count=-3 must be a non-negative integer (in SelfComposedDpEvent)"),
    ({"class_name": "SelfComposedDpEvent", "event": {"class_name": "NoOpDpEvent"}, "count": 2.5},
     "count=2.5 must be a non-negative integer"),
    ({"class_name": "SelfComposedDpEvent", "event": {"class_name": "NoOpDpEvent"}, "count": True},
     "count=True must be a non-negative integer"),
    ({"class_name": "SelfComposedDpEvent", "event": 7, "count": 1}, "an event must be an object with 'class_name'"),
    ({"class_name": "ComposedDpEvent", "events": {"class_name": "NoOpDpEvent"}}, "events=<dict> must be a list"),
    ({"class_name": "MixtureOfGaussiansDpEvent", "standard_deviation": 1, "sensitivities": [0, 1],
      "sampling_probs": [0.3, 0.3]}, "sampling_probs=<sum 0.6> must sum to exactly 1"),
    (["dp_accounting.dp_event", "GaussianDpEvent"], "GaussianDpEvent as a list [module_name, class_name, "
                                                    "noise_multiplier] has 0 field(s), not 1"),
    (["dp_accounting.dp_event", "GaussianDpEvent", 1, 2], "GaussianDpEvent as a list [module_name, class_name, "
                                                          "noise_multiplier] has 2 field(s), not 1"),
    (["dp_accounting.dp_event"], "an event must be an object with 'class_name'"),
    ("GaussianDpEvent", "an event must be an object with 'class_name'"),
])
def test_refusals_are_one_line_and_name_the_event_and_field(obj, message):
    with pytest.raises(InputError) as info:
        from_named_tuple_json(obj)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_an_unknown_class_is_an_unsupported_event():
    with pytest.raises(m.UnsupportedEvent, match="^LaplaceMechanism is not an event class of dp_accounting 0.6"):
        from_dp_accounting(type("LaplaceMechanism", (), {})())


def _nested(depth, leaf, wrap):
    obj = leaf
    for _ in range(depth):
        obj = wrap(obj)
    return obj


def _cycle():
    obj = {"class_name": "SelfComposedDpEvent", "count": 1}
    obj["event"] = obj
    return obj


@pytest.mark.parametrize("obj", [
    _nested(100000, {"class_name": "NoOpDpEvent"},
            lambda e: {"class_name": "SelfComposedDpEvent", "event": e, "count": 1}),
    _nested(100000, ["m", "NoOpDpEvent"], lambda e: ["dp_accounting.dp_event", "ComposedDpEvent", [e]]),
    _cycle(),
])
def test_hostile_nesting_is_refused_at_once(obj):
    start = time.perf_counter()
    with pytest.raises(InputError, match="nests arrays and objects more than 64 deep"):
        from_named_tuple_json(obj)
    assert time.perf_counter() - start < 1


def test_hostile_nesting_of_live_objects_and_files_is_refused_at_once(tmp_path):
    SelfComposedDpEvent = type("SelfComposedDpEvent", (), {"__init__": lambda self, e: setattr(self, "event", e),
                                                           "count": 1})
    live = _nested(100000, SimpleNamespace(), SelfComposedDpEvent)
    start = time.perf_counter()
    with pytest.raises(InputError, match="more than 64 deep"):
        from_dp_accounting(live)
    path = tmp_path / "deep.json"
    path.write_text('{"class_name": "SelfComposedDpEvent", "count": 1, "event": ' * 100000 + "{}" + "}" * 100000)
    with pytest.raises(InputError, match=r"deep.json nests arrays and objects 100001 deep \(at most 64\)"):
        load_event(path)
    assert time.perf_counter() - start < 3


def test_a_file_is_held_to_the_shared_readers_limits(tmp_path):
    path = tmp_path / "nan.json"
    path.write_text('{"class_name": "GaussianDpEvent", "noise_multiplier": NaN}')
    with pytest.raises(InputError, match="is not usable JSON: NaN is not a JSON number"):
        load_event(path)
    path.write_text('{"class_name": "GaussianDpEvent"}')
    with pytest.raises(InputError, match=r"nan.json: missing field 'noise_multiplier' \(in GaussianDpEvent\)$"):
        load_event(path)
    with pytest.raises(InputError, match="no such file"):
        load_event(tmp_path / "absent.json")


def test_the_deepest_buildable_event_is_readable(tmp_path):
    event = m.GaussianDpEvent(1)
    while True:
        try:
            event = m.SelfComposedDpEvent(event, 1)
        except InputError:
            break
    path = tmp_path / "deepest.json"
    path.write_text(json.dumps(to_json(event)))
    assert load_event(path) == event


@pytest.mark.parametrize("event, text", [
    (m.SelfComposedDpEvent(m.PoissonSampledDpEvent("1/100", G(1)), 1000), "1000 x PoissonSampled(q=0.01, "
                                                                           "Gaussian(sigma=1))"),
    (m.ComposedDpEvent([m.SelfComposedDpEvent(m.ComposedDpEvent([G(1), m.LaplaceDpEvent("1/3")]), 2),
                        m.ComposedDpEvent([m.NoOpDpEvent(), m.NonPrivateDpEvent()]), m.ComposedDpEvent([])]),
     "2 x (Gaussian(sigma=1) + Laplace(b=1/3)) + (NoOp + NonPrivate) + Composed()"),
    (m.SampledWithoutReplacementDpEvent(60000, 600, G(2)), "SampledWithoutReplacement(N=60000, b=600, "
                                                            "Gaussian(sigma=2))"),
    (m.ShuffledDpEvent(60000, 600, 250, G("0.5")), "Shuffled(N=60000, b=600, steps=250, Gaussian(sigma=0.5))"),
    (m.MixtureOfGaussiansDpEvent(1, [0, 1], ["0.5", "0.5"]), "MixtureOfGaussians(sigma=1, c=[0, 1], p=[0.5, 0.5])"),
    (m.RepeatAndSelectDpEvent(G(1), 3, "inf"), "RepeatAndSelect(Gaussian(sigma=1), mean=3, shape=inf)"),
])
def test_render_is_one_exact_line(event, text):
    assert render(event) == text


def test_the_shipped_schema_is_the_generated_one():
    jsonschema.Draft202012Validator.check_schema(event_schema())
    assert json.loads(SCHEMA_FILE.read_text(encoding="utf-8")) == event_schema()
    assert not VALIDATOR.is_valid({"class_name": "GaussianDpEvent", "noise_multiplier": "0x1p3"})
    assert not VALIDATOR.is_valid({"class_name": "GaussianDpEvent"})
    assert not VALIDATOR.is_valid(["dp_accounting.dp_event", "ShuffledDpEvent", 10, 5, 1, ["rdp_verify.events",
                                                                                             "NoOpDpEvent"]])


@settings(max_examples=120, deadline=None)
@given(trees)
def test_random_trees_round_trip_and_match_the_schema(event):
    doc = json.loads(json.dumps(to_json(event)))
    assert VALIDATOR.is_valid(doc)
    assert from_named_tuple_json(doc) == event
    assert "\n" not in render(event)
