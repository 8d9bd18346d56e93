"""The one run model and its parser: samplers, neighbour relations, what is refused and how it is said."""

from fractions import Fraction

import pytest

from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.run import (
    DP_EVENTS,
    NEIGHBOURING_RELATIONS,
    SAMPLERS,
    Phase,
    merged,
    parse_run,
    run_family,
)


def one(**fields):
    (phase, how), = parse_run({k: str(v) for k, v in fields.items()})
    return phase, how


def test_default_is_poisson_add_remove_and_its_json_is_unchanged():
    phase, how = one(q="0.01", sigma="1", steps=1000)
    assert (phase.sampler, phase.neighbours, phase.default) == ("poisson", "add-remove", True)
    assert phase.to_json() == {"q": "0.01", "sigma": "1", "steps": 1000}  # what certificates recorded before
    assert Phase.from_json(phase.to_json()) == phase and how == "given"


def test_poisson_batch_and_dataset_size_give_q_only():
    phase, how = one(batch_size=256, dataset_size=60000, sigma="1.1", epochs=60, step_convention="ceil")
    assert phase.q == Fraction(256, 60000) and phase.batch_size is None and phase.steps == 14063
    assert how.startswith("q = 256/60000; ceil(")


@pytest.mark.parametrize("sampler", ["fixed", "shuffle", "balls-in-bins"])
def test_other_samplers_keep_their_batches_and_round_trip(sampler):
    phase, _ = one(sampler=sampler, neighbours="replace-one", batch_size=250, dataset_size=60000, sigma="1.3",
                   epochs=3)
    assert (phase.q, phase.steps, phase.batch_size, phase.dataset_size) == (Fraction(1, 240), 720, 250, 60000)
    assert phase.to_json() == {"q": "1/240", "sigma": "1.3", "steps": 720, "sampler": sampler,
                               "neighbours": "replace-one", "batch_size": 250, "dataset_size": 60000}
    assert Phase.from_json(phase.to_json()) == phase


def test_epochs_of_a_per_epoch_sampler():
    phase = Phase(Fraction(1, 4), Fraction(1), 10, "shuffle", "add-remove", 25, 100)
    assert phase.batches_per_epoch == 4 and phase.epochs == (2, 3)  # 10 steps: 2 full epochs, 3 begun


@pytest.mark.parametrize("fields, message", [
    ({"sampler": "fixed", "batch_size": 10, "dataset_size": 100, "sigma": 1, "steps": 5},
     "sampler fixed with add-remove neighbours has no proven bound"),
    ({"sampler": "shuffle", "q": "0.1", "sigma": 1, "steps": 5}, "sampler shuffle needs 'batch_size' and"),
    ({"sampler": "shuffle", "batch_size": 7, "dataset_size": 100, "sigma": 1, "steps": 5},
     "dataset_size=100 is not a multiple of batch_size=7"),
    # issue 27: the real reason first (before: "epochs/q = 100/7 is not a whole number of steps")
    ({"sampler": "shuffle", "batch_size": 7, "dataset_size": 100, "sigma": 1, "epochs": 1},
     "dataset_size=100 is not a multiple of batch_size=7"),
    ({"sampler": "balls-in-bins", "batch_size": 7, "dataset_size": 100, "sigma": 1, "epochs": 2},
     "dataset_size=100 is not a multiple of batch_size=7"),
    ({"sampler": "bogus", "q": "0.1", "sigma": 1, "steps": 5}, "sampler='bogus' is not one of"),
    ({"neighbours": "swap", "q": "0.1", "sigma": 1, "steps": 5}, "neighbours='swap' is not one of"),
    ({"phases": [{"q": "0.1", "sigma": "1", "steps": "5"},
                 {"q": "0.1", "sigma": "1", "steps": "5", "neighbours": "replace-one"}]}, "same neighbour relation"),
    ({"phases": [{"q": "0.1", "sigma": "1", "steps": "5"},
                 {"sampler": "shuffle", "batch_size": "1", "dataset_size": "10", "sigma": "1", "steps": "5"}]},
     "mixing shuffle or balls-in-bins"),
])
def test_refusals_are_one_line(fields, message):
    with pytest.raises(InputError, match=message) as info:
        parse_run({k: (str(v) if not isinstance(v, list) else v) for k, v in fields.items()})
    assert "\n" not in str(info.value)


def test_phase_checks_its_batches():
    with pytest.raises(InputError, match="is not batch_size/dataset_size"):
        Phase(Fraction(1, 10), Fraction(1), 5, "fixed", "replace-one", 2, 10)
    with pytest.raises(InputError, match="together"):
        Phase(Fraction(1, 10), Fraction(1), 5, batch_size=1)
    assert run_family([Phase(Fraction(1, 10), Fraction(1), 5, "fixed", "replace-one", 1, 10)]) == "replace-one"


def test_every_sampler_and_relation_maps_to_dp_accountings_names_where_they_exist():
    assert set(DP_EVENTS) == set(SAMPLERS)
    assert DP_EVENTS["poisson"] == "PoissonSampledDpEvent"
    assert DP_EVENTS["fixed"] == "SampledWithoutReplacementDpEvent"
    assert NEIGHBOURING_RELATIONS == {"add-remove": "ADD_OR_REMOVE_ONE", "replace-one": "REPLACE_ONE"}
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    accountant = pytest.importorskip("dp_accounting.privacy_accountant")
    for name in filter(None, DP_EVENTS.values()):
        assert hasattr(dp_event, name)
    for name in NEIGHBOURING_RELATIONS.values():
        assert hasattr(accountant.NeighboringRelation, name)


def test_identical_consecutive_phases_merge_where_the_mechanism_is_the_same():
    a, b = Phase(Fraction(1, 100), Fraction(1), 1), Phase(Fraction(1, 50), Fraction(1), 2)
    assert merged([a] * 5000) == (Phase(Fraction(1, 100), Fraction(1), 5000),)
    assert merged([a, a, b, b, a]) == (Phase(a.q, a.sigma, 2), Phase(b.q, b.sigma, 4), a)  # consecutive only
    fixed = Phase(Fraction(1, 10), Fraction(1), 3, "fixed", "replace-one", 10, 100)
    assert merged([fixed, fixed]) == (Phase(fixed.q, fixed.sigma, 6, "fixed", "replace-one", 10, 100),)
    assert merged([fixed, Phase(fixed.q, fixed.sigma, 3, neighbours="replace-one")]) == \
        (fixed, Phase(fixed.q, fixed.sigma, 3, neighbours="replace-one"))  # another sampler: kept apart
    shuffled = Phase(Fraction(1, 10), Fraction(1), 15, "shuffle", "add-remove", 10, 100)  # 1.5 epochs each
    assert merged([shuffled, shuffled]) == (shuffled, shuffled)  # each phase begins an epoch: never joined
