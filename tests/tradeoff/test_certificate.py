"""Trade-off certificates: sealed, re-verified field by field, and a tampered one is broken."""

import copy
import json
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

import pytest

from rdp_verify.certificates.certificate import content_hash
from rdp_verify.foundations.run import Phase
from rdp_verify.tradeoff import certify_tradeoff, check_tradeoff_certificate
from rdp_verify.tradeoff.envelope import PerEpochEnvelope

RUNS = {
    "gaussian": [Phase(Fraction(1), Fraction(2), 4)],
    "subsampled": [Phase(Fraction(1, 50), Fraction(3, 2), 100)],
    "replace-one": [Phase(Fraction(1, 50), Fraction(2), 50, neighbours="replace-one")],
    "shuffle": [Phase(Fraction(1, 10), Fraction(1), 20, sampler="shuffle", batch_size=10, dataset_size=100)],
}
BALLS = [Phase(Fraction(1, 10), Fraction(7, 10), 10, sampler="balls-in-bins", batch_size=10, dataset_size=100)]


@lru_cache(maxsize=None)
def _certified(name):
    return certify_tradeoff(RUNS[name], alphas=[Fraction(1, 1000), Fraction(1, 2)], fprs=[Fraction(1, 100)])


def certified(name):
    """The certificate of RUNS[name] at α ∈ {1/1000, 1/2}, FPR 1/100, computed once for the module (the same
    certificate each call: deterministic); each caller gets its own copy."""
    return copy.deepcopy(_certified(name))


# slow: the shuffle certificate's per-epoch fields (envelope_lower_random_allocation, envelope_upper_composed) are
# covered by test_per_epoch_envelopes_recorded_and_rechecked / test_every_per_epoch_envelope_field_is_verified
# (balls-in-bins, default run); its envelopes by test_envelope.py::test_per_epoch_envelopes_tighter_than_before
# [shuffled] (default run)
@pytest.fixture(scope="module", params=[pytest.param(name, marks=pytest.mark.slow) if name == "shuffle" else name
                                        for name in sorted(RUNS)])
def cert(request):
    return certified(request.param)


def reseal(cert):
    body = {k: v for k, v in cert.items() if k != "content_hash"}
    return {**body, "content_hash": content_hash(body)}


def test_confirmed(cert):
    assert check_tradeoff_certificate(json.loads(json.dumps(cert))) == []
    for e in cert["envelope"]:
        assert Fraction(e["f_lower"]) <= Fraction(e["f_upper"])
    assert Fraction(cert["mu"]["lower"]) <= Fraction(cert["mu"]["upper"])


def test_gaussian_run_of_a_million_steps():
    """q = 1, σ = 0.05, 10⁶ steps: the closed form (μ = 20000 exactly), sealed and recomputed by a check."""
    cert = certify_tradeoff([Phase(Fraction(1), Fraction(1, 20), 10**6)])
    assert cert["method"] == "closed form" and cert["settings"] == {"mu_squared": "400000000"}
    assert (cert["mu"]["lower"], cert["mu"]["upper"]) == ("20000", "20000")
    assert {(e["f_lower"], e["f_upper"]) for e in cert["envelope"]} == {("0", "1e-1000")}
    assert check_tradeoff_certificate(json.loads(json.dumps(cert))) == []


@pytest.fixture(scope="module")
def subsampled():
    return certified("subsampled")  # cert's "subsampled" certificate, not computed a second time


@pytest.mark.parametrize("path,value", [
    (("tpr", 0, "lower"), "0.5"),
    (("envelope", 1, "f_upper"), "0.9"),
    pytest.param(("mu", "upper"), "0.1", marks=pytest.mark.slow),
    pytest.param(("advantage", "lower"), "0.3", marks=pytest.mark.slow),
    (("inputs", "fprs", 0), "1/10"),
])
def test_tampered_and_resealed_is_broken(subsampled, path, value):
    bad = copy.deepcopy(subsampled)
    target = bad
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    problems = check_tradeoff_certificate(reseal(bad))
    assert problems and any(p.startswith(".".join(map(str, path[:2]))) or p.startswith(path[0]) for p in problems)


def test_tampered_without_reseal_is_broken(cert):
    bad = copy.deepcopy(cert)
    bad["bayes"][0]["upper"] = "1"
    assert any("content_hash" in p for p in check_tradeoff_certificate(bad))


# slow: the replace-one certificate has the subsampled one's fields (discrete pairs: grids, grid_step, ...), whose
# mutation test is [subsampled] (default run); test_confirmed[replace-one] recomputes it in the default run
@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow) if name in ("shuffle", "replace-one")
                                  else name for name in sorted(RUNS)])
def test_every_field_is_recomputed_or_listed_as_recorded(name):
    """Issue 27: the trade-off format has the mutation test of every other format (each field forged and resealed
    is caught, or declared recorded, not verified)."""
    cert = certified(name)
    from mutations import assert_every_field_checked

    from rdp_verify.certificates.fields import leaf_paths
    from rdp_verify.tradeoff.certificate import POLICY, SCHEMA, recompute
    caught = assert_every_field_checked(cert, recompute(cert), POLICY, POLICY.compare, SCHEMA)
    assert caught >= sum(POLICY.is_verified(p) is True for p in leaf_paths(cert) if not p.startswith("inputs.")) > 20


def test_settings_beyond_the_commands_limits_are_refused_before_any_work(subsampled, monkeypatch):
    from mutations import edited

    from rdp_verify.foundations.inputs import Refused
    from rdp_verify.tradeoff import certificate as tradeoff_certificate

    def started(*args, **kwargs):
        raise AssertionError("work started")
    monkeypatch.setattr(tradeoff_certificate, "compose_run", started)
    with pytest.raises(Refused, match="grid_step=0.0000001 makes a grid of"):
        check_tradeoff_certificate(edited(subsampled, "settings.grid_step", "0.0000001"))
    with pytest.raises(Refused, match="fixed_point_bits=100000"):
        check_tradeoff_certificate(edited(subsampled, "settings.fixed_point_bits", 100000))


# -- per-epoch envelopes (issue 28, item 5): recorded, recomputed, and certificates from before still confirmed ----

BEFORE = Path(__file__).parent / "data" / "tradeoff-v1-before-issue-28.json"  # rdp_verify 0.2.0 before item 5


@pytest.fixture(scope="module")
def before():
    """Certificates of the balls-in-bins and the shuffled run of RUNS written before item 5 (alphas 1/1000 and 1/2,
    FPR 1/100, prior 1/2): no envelope settings recorded."""
    return json.loads(BEFORE.read_text("utf-8"))


def test_certificates_from_before_are_still_confirmed(before):
    for old in before:
        assert not any(k in old["settings"] for k in PerEpochEnvelope.KEYS)
        assert check_tradeoff_certificate(old) == []


@pytest.fixture(scope="module")
def balls_in_bins():
    return certify_tradeoff(BALLS, alphas=[Fraction(1, 1000), Fraction(1, 2)],
                            fprs=[Fraction(1, 100)], priors=[Fraction(1, 2)])


def test_per_epoch_envelopes_recorded_and_rechecked(balls_in_bins, before):
    """The new certificate records the ladder points and the composed pairs, a check recomputes them (round trip
    through JSON), and its envelopes are inside the ones certified before (the same run, the same rates)."""
    cert = balls_in_bins
    s = cert["settings"]
    assert s["envelope_lower_random_allocation"] and len(s["envelope_upper_composed"]) == 2
    assert "envelopes_per_epoch" in cert["proofs"]
    assert check_tradeoff_certificate(json.loads(json.dumps(cert))) == []
    old = next(c for c in before if c["inputs"]["phases"] == cert["inputs"]["phases"])
    for new_row, old_row in zip(cert["envelope"], old["envelope"]):
        assert new_row["alpha"] == old_row["alpha"]
        assert Fraction(old_row["f_lower"]) < Fraction(new_row["f_lower"])
        assert Fraction(new_row["f_upper"]) <= Fraction(old_row["f_upper"])


def test_per_epoch_envelope_settings_are_verified(balls_in_bins):
    """Dropping the settings (and their proof) leaves a certificate whose envelopes a check recomputes as before
    the issue: they no longer match. A forged order or ε is refused as an input."""
    bare = copy.deepcopy(balls_in_bins)
    for key in PerEpochEnvelope.KEYS:
        del bare["settings"][key]
    del bare["proofs"]["envelopes_per_epoch"]
    problems = check_tradeoff_certificate(reseal(bare))
    assert any(p.startswith("envelope.") for p in problems)
    for field, value in (("order", 1), ("from_epsilon", "1/3"), ("to_epsilon", "-1")):
        bad = copy.deepcopy(balls_in_bins)
        bad["settings"]["envelope_lower_random_allocation"][0][field] = value
        assert any(p.startswith("inputs: settings: envelope_lower_random_allocation")
                   for p in check_tradeoff_certificate(reseal(bad)))


def test_every_per_epoch_envelope_field_is_verified(balls_in_bins):
    """The mutation test of the format, on the balls-in-bins certificate's new fields (the rest as above)."""
    from mutations import assert_every_field_checked

    from rdp_verify.tradeoff.certificate import POLICY, SCHEMA, recompute
    cert = balls_in_bins
    keep = {k: cert["settings"][k] for k in PerEpochEnvelope.KEYS}
    small = {**cert, "settings": {"mu_squared_upper": cert["settings"]["mu_squared_upper"], **keep,
                                  "lower_tests": cert["settings"]["lower_tests"][:1]}}
    small = recompute(reseal(small))  # one count test kept: a smaller certificate, recomputed from its settings
    assert small["settings"]["envelope_lower_random_allocation"] == keep["envelope_lower_random_allocation"]
    assert assert_every_field_checked(small, recompute(small), POLICY, POLICY.compare, SCHEMA) > 20


# -- runs read from an event tree (tradeoff --event): mechanisms beyond the Gaussian family on the same pairs ------

def _event(tree):
    from rdp_verify.events.read import from_named_tuple_json
    from rdp_verify.tradeoff.certificate import event_run
    return event_run(from_named_tuple_json(tree))


LAPLACE = {"class_name": "LaplaceDpEvent", "noise_multiplier": "1"}
MIXED = {"class_name": "ComposedDpEvent", "events": [
    {"class_name": "SelfComposedDpEvent", "count": 20,
     "event": {"class_name": "PoissonSampledDpEvent", "sampling_probability": "0.05",
               "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "1"}}},
    {"class_name": "SelfComposedDpEvent", "count": 2, "event": {"class_name": "LaplaceDpEvent", "noise_multiplier": "4"}}]}


@pytest.fixture(scope="module")
def mixed():
    from rdp_verify.tradeoff.certificate import certificate_of
    from rdp_verify.tradeoff.curve import tradeoff
    run = _event(MIXED)
    alphas, fprs = [Fraction(1, 1000), Fraction(1, 2)], [Fraction(1, 100)]
    trade = tradeoff(run.phases, fprs=[*alphas, *fprs], leaves=run.leaves)
    return certificate_of(trade, alphas=alphas, fprs=fprs, run=run)


def test_laplace_envelopes_contain_the_closed_form():
    """One Laplace release (b = 1, sensitivity 1, ε = 1): f(α) = 1 − e·α below α = e⁻¹/2, e⁻¹/(4α) up to 1/2 and
    e⁻¹(1 − α) beyond (Dong, Roth, Su 2022, the Laplace trade-off function, Section 2.2), evaluated in mpmath."""
    import mpmath

    from rdp_verify.tradeoff.curve import tradeoff
    run = _event(LAPLACE)
    alphas = [Fraction(1, 100), Fraction(1, 10), Fraction(3, 10), Fraction(1, 2), Fraction(4, 5)]
    trade = tradeoff(run.phases, fprs=alphas, leaves=run.leaves)
    slack = Fraction(1, 10**70)  # the reference at 80 digits, rounded to 75
    for a in alphas:
        with mpmath.workdps(80):
            x, e = mpmath.mpf(a.numerator) / a.denominator, mpmath.e
            exact = Fraction(mpmath.nstr(1 - e * x if x < 1 / (2 * e) else 1 / (4 * e * x) if x <= 0.5
                                         else (1 - x) / e, 75))
        low, up = trade.f(a)
        assert low - slack <= exact <= up + slack and up - low < Fraction(1, 1000), (a, float(low), float(up))
    # pure ε-DP: the bracket closes where f is read off the line at the largest loss (the tangent fallbacks of
    # rdp_verify.tradeoff.envelope at a kink), not only to the grid's width; at alpha = 1/2, where the curved piece
    # e⁻¹/(4α) meets the line at the smallest loss, the width is the dominated pair's lowered chords there (second
    # order in the grid step 1/50: Laplace's connect-the-dots and lowered-chord pairs, rdp_verify.mechanisms.laplace)
    assert trade.f(Fraction(1, 10))[1] - trade.f(Fraction(1, 10))[0] < Fraction(1, 10**40)
    assert trade.f(Fraction(1, 2))[1] - trade.f(Fraction(1, 2))[0] < Fraction(1, 10**6)
    assert trade.mu_upper() is None and not trade.mu_exact


def test_mixed_event_certificate_confirmed_and_every_field_checked(mixed):
    from mutations import assert_every_field_checked

    from rdp_verify.tradeoff.certificate import POLICY, SCHEMA, recompute
    assert mixed["inputs"]["event"] == MIXED and mixed["inputs"]["neighboring_relation"] == "ADD_OR_REMOVE_ONE"
    assert mixed["mu"]["upper"] is None and mixed["mu"]["how"].startswith("envelope, no upper end")
    assert check_tradeoff_certificate(json.loads(json.dumps(mixed))) == []
    assert_every_field_checked(mixed, recompute(mixed), POLICY, POLICY.compare, SCHEMA)


@pytest.mark.parametrize("path,value", [
    (("inputs", "event", "events", 1, "count"), 3),  # a third Laplace release: a different curve
    (("inputs", "neighboring_relation"), "REPLACE_ONE"),
    (("inputs", "phases"), []),  # the recorded phases must be the tree's
])
def test_mixed_event_tampered_and_resealed_is_broken(mixed, path, value):
    bad = copy.deepcopy(mixed)
    target = bad
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    from rdp_verify.foundations.inputs import Refused
    try:  # a forged tree may be refused before any work (its recorded settings no longer fit it), else it fails
        assert check_tradeoff_certificate(reseal(bad))
    except Refused as exc:
        assert "settings" in str(exc)


def test_composition_is_no_more_private_than_its_gaussian_part(mixed):
    """Adding Laplace releases cannot raise the trade-off function: the mixed run's proven f_low lies below the
    DP-SGD part's proven f_up at every α (Dong, Roth, Su 2022: f of a composition ≤ f of each factor)."""
    from rdp_verify.tradeoff.curve import tradeoff
    alone = tradeoff(_event(MIXED).phases, fprs=[Fraction(1, 1000), Fraction(1, 2)])
    for e in mixed["envelope"]:
        assert Fraction(e["f_lower"]) <= alone.f(Fraction(e["alpha"]))[1]
