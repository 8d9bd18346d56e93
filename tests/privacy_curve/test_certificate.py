"""Proven ε(δ) of event trees (rdp_verify.privacy_curve.certificate): every mechanism family of issue 29's "Done
when" bracketed two-sidedly within relative width 1e-3 around an independent reference (closed forms, exact
enumeration, mpmath quadrature, dp_accounting's optimistic and pessimistic PLDs); sealed certificates confirmed and
forgeries caught; non-private runs never given a number; random trees bracketed or refused as documented."""

import math
from fractions import Fraction

import mpmath as mp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutations import assert_every_field_checked, edited

from rdp_verify.certificates.certificate import content_hash, schema_errors
from rdp_verify.curves.accountant import default_settings
from rdp_verify.events import model as m
from rdp_verify.events.model import UnsupportedEvent
from rdp_verify.foundations.inputs import InputError, Refused
from rdp_verify.privacy_curve import certificate as certificate_module
from rdp_verify.privacy_curve.certificate import (
    POLICY,
    SCHEMA,
    NotPrivate,
    certify_event,
    check_event_certificate,
    event_bracket,
)
from rdp_verify.privacy_curve.table import resolve
from tests.curve_oracles import mixture_delta

F = Fraction
DELTA = F(1, 10**5)
WIDTH = F(1, 1000)  # the relative width
PEER_SLACK = 1e-9  # dp_accounting computes in double precision
ADD, REPLACE, SPECIAL = (m.NeighboringRelation.ADD_OR_REMOVE_ONE, m.NeighboringRelation.REPLACE_ONE,
                         m.NeighboringRelation.REPLACE_SPECIAL)
DPS = 50


def sc(event, count):
    return m.SelfComposedDpEvent(event, count)


def comp(*events):
    return m.ComposedDpEvent(events)


def mpf(x: Fraction):
    return mp.mpf(x.numerator) / x.denominator


def proven(event, relation=None, settings=None):
    """The proven bracket of ε(δ = 1e-5), checked finite, ordered and within the issue's width."""
    run = resolve(event, relation)
    if settings is not None:
        settings = default_settings(run.phases, settings, DELTA, leaves=run.leaves)
    b = event_bracket(run, delta=DELTA, settings=settings)
    assert b.upper is not None and 0 <= b.lower <= b.upper
    assert b.relative_width() <= WIDTH, float(b.relative_width())
    return b


def assert_contains(b, reference):
    """lower ≤ reference ≤ upper, compared at 50 digits (the references are computed at that precision)."""
    with mp.workdps(DPS):
        assert mpf(b.lower) <= reference <= mpf(b.upper), (float(b.lower), reference, float(b.upper))


# -- references ---------------------------------------------------------------------------------------------------


def compose_atoms(law: dict, n: int) -> dict:
    """The n-fold convolution of a law {loss in units: P-mass} (exact if the masses are)."""
    out = {0: law[next(iter(law))] ** 0}
    for _ in range(n):
        new: dict = {}
        for a, pa in out.items():
            for b, pb in law.items():
                new[a + b] = new.get(a + b, 0) + pa * pb
        out = new
    return out


def epsilon_of_atoms(law: dict, ratio, delta) -> mp.mpf:
    """ε(δ) of a pair whose loss takes the values k·log(ratio) with P-masses law[k] (Q-mass law[k]·ratio^−k): on the
    segment of ε between two consecutive loss values, δ(ε) = A − e^ε B with A, B the P- and Q-mass above it, so
    ε = log((A − δ)/B) on the segment where it lands; the max over the two directions (the add direction's loss is
    −k under Q). Segments are chosen exactly when the masses are Fractions."""
    best = mp.mpf(0)
    for sign in (1, -1):
        atoms = sorted(((sign * k, p if sign == 1 else p / ratio ** k, p / ratio ** k if sign == 1 else p)
                        for k, p in law.items()), key=lambda t: t[0], reverse=True)
        a = b = 0
        for j, (_, pa, qa) in enumerate(atoms):
            a, b = a + pa, b + qa
            below = atoms[j + 1][0] if j + 1 < len(atoms) else None
            if a > delta and (below is None or (a - delta) / b >= ratio ** below):
                x = (a - delta) / b
                best = max(best, mp.log(mpf(x) if isinstance(x, Fraction) else x))
                break
    return best


def gaussian_delta(mu, eps):
    """Balle & Wang 2018, Theorem 8: δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)."""
    return mp.ncdf(mu / 2 - eps / mu) - mp.exp(eps) * mp.ncdf(-mu / 2 - eps / mu)


def root(delta_of, b):
    """ε with delta_of(ε) = δ (δ(ε) decreasing), by the secant method from the bracket's ends."""
    return mp.findroot(lambda eps: delta_of(eps) - mpf(DELTA), (mpf(b.lower), mpf(b.upper)), solver="secant")


# -- closed forms, exact enumeration, quadrature ------------------------------------------------------------------


@pytest.mark.parametrize("b", [F(1), F(1, 2), F(5)])
def test_laplace_once_is_the_closed_form(b):
    """ε(δ) = ε₀ + 2·log(1 − δ), ε₀ = 1/b (δ(ε) = 1 − e^{(ε − ε₀)/2} on [0, ε₀])."""
    bracket = proven(m.LaplaceDpEvent(b))
    with mp.workdps(DPS):
        assert_contains(bracket, mpf(1 / b) + 2 * mp.log(1 - mpf(DELTA)))
    assert event_bracket(resolve(m.LaplaceDpEvent(b), SPECIAL), delta=DELTA).lower == bracket.lower


def test_randomized_response_composed_is_exact_enumeration():
    """RR(p = 1/2, k = 4) under REPLACE_ONE, 3 uses: the loss is ±log 5 or 0 per use; masses in Fractions."""
    p, k, n = F(1, 2), 4, 3
    keep, other = 1 - p + p / k, p / k
    law = compose_atoms({1: keep, -1: other, 0: (k - 2) * other}, n)
    bracket = proven(sc(m.RandomizedResponseDpEvent(p, k), n), REPLACE)
    with mp.workdps(DPS):
        reference = epsilon_of_atoms(law, keep / other, DELTA)
        assert_contains(bracket, reference)
        assert reference < n * mp.log(5)


@pytest.mark.parametrize("a, s, n", [(F(1, 2), 1, 4), (F(1, 2), 2, 3), (F(3, 10), 3, 2)])
def test_discrete_laplace_composed_is_exact_enumeration(a, s, n):
    """DLap(a), sensitivity s: the loss is a·(|z − s| − |z|), constant for z ≤ 0 (P-mass 1/(1 + r), r = e^−a) and
    z ≥ s (mass r^s/(1 + r)), a·(s − 2z) with mass tanh(a/2)·r^z between; composed n times in mpmath."""
    bracket = proven(sc(m.DiscreteLaplaceDpEvent(a, s), n))
    with mp.workdps(DPS):
        r = mp.exp(-mpf(a))
        law = {s: 1 / (1 + r), -s: r ** s / (1 + r)}
        for z in range(1, s):
            law[s - 2 * z] = law.get(s - 2 * z, 0) + (1 - r) / (1 + r) * r ** z
        assert_contains(bracket, epsilon_of_atoms(compose_atoms(law, n), 1 / r, mpf(DELTA)))


def test_tree_aggregation_is_the_gaussian_closed_form():
    """Tree aggregation (σ = 2, 7 steps) under REPLACE_SPECIAL: the Gaussian mechanism with μ = √d/σ, d = 3."""
    bracket = proven(m.SingleEpochTreeAggregationDpEvent(2, 7), SPECIAL)
    with mp.workdps(DPS):
        mu = mp.sqrt(3) / 2
        assert_contains(bracket, root(lambda eps: gaussian_delta(mu, eps), bracket))


def test_a_mixture_of_gaussians_once_is_the_quadrature():
    """N(0, 1) against ½N(0, 1) + ¼N(1, 1) + ¼N(2, 1), once (max over both directions). The grid is given
    (h = 1/250: width 5e-4 in 0.9 s; the automatic first grid, h = 1/2000, takes about 10 s)."""
    sigma, cs, ps = F(1), [F(0), F(1), F(2)], [F(1, 2), F(1, 4), F(1, 4)]
    bracket = proven(m.MixtureOfGaussiansDpEvent(sigma, cs, ps), settings=F(1, 250))
    with mp.workdps(20):  # ample for a bracket 5e-4 wide
        args = (mpf(sigma), [mpf(c) for c in cs], [mpf(w) for w in ps])

        def delta_of(eps):
            return max(mixture_delta(*args, eps, d) for d in ("remove", "add"))

        assert delta_of(mpf(bracket.lower)) >= mpf(DELTA) >= delta_of(mpf(bracket.upper))
        reference = root(delta_of, bracket)
    assert_contains(bracket, reference)


# -- dp_accounting's optimistic and pessimistic PLDs --------------------------------------------------------------


def peer_epsilons(build, delta=DELTA):
    """(optimistic ε, pessimistic ε) of dp_accounting's PLD ``build(pessimistic)``."""
    pytest.importorskip("dp_accounting")
    return tuple(build(pessimistic).get_epsilon_for_delta(float(delta)) for pessimistic in (False, True))


def assert_meets_peer(b, peer):
    """The bracket intersects [optimistic, pessimistic] (each widened by 1e-9 relative for float noise)."""
    optimistic, pessimistic = peer
    assert optimistic <= pessimistic * (1 + PEER_SLACK)
    assert b.lower <= F(pessimistic) * F(1 + PEER_SLACK) and F(optimistic) * F(1 - PEER_SLACK) <= b.upper, \
        (float(b.lower), float(b.upper), peer)


def test_laplace_composed_agrees_with_dp_accounting():
    """Laplace(b = 10) used 10 times: the peer's PLDs at interval 1e-5 (their width is about 2e-7 here)."""
    bracket = proven(sc(m.LaplaceDpEvent(10), 10))

    def build(pessimistic):
        from dp_accounting.pld import privacy_loss_distribution as pld
        return pld.from_laplace_mechanism(10.0, pessimistic_estimate=pessimistic, use_connect_dots=pessimistic,
                                          value_discretization_interval=1e-5).self_compose(10)

    peer = peer_epsilons(build)
    assert_meets_peer(bracket, peer)
    assert bracket.lower <= F(peer[1]) and F(peer[0]) <= bracket.upper  # here it contains both peer ends


def test_poisson_sampled_laplace_agrees_with_dp_accounting():
    """PoissonSampled(q = 1/4, Laplace(b = 1)) used 5 times (both directions differ)."""
    bracket = proven(sc(m.PoissonSampledDpEvent(F(1, 4), m.LaplaceDpEvent(1)), 5))

    def build(pessimistic):
        from dp_accounting.pld import privacy_loss_distribution as pld
        return pld.from_laplace_mechanism(1.0, sampling_prob=0.25, pessimistic_estimate=pessimistic,
                                          use_connect_dots=pessimistic,
                                          value_discretization_interval=1e-4).self_compose(5)

    assert_meets_peer(bracket, peer_epsilons(build))


def test_dp_sgm_composed_with_laplace_releases_agrees_with_dp_accounting():
    """ComposedDpEvent: 100 steps of PoissonSampled(0.01, Gaussian(1)) then 2 releases of Laplace(b = 10)."""
    event = comp(sc(m.PoissonSampledDpEvent(F(1, 100), m.GaussianDpEvent(1)), 100), sc(m.LaplaceDpEvent(10), 2))
    run = resolve(event)
    assert len(run.phases) == 1 and len(run.leaves) == 1
    bracket = proven(event)

    def build(pessimistic):
        from dp_accounting.pld import privacy_loss_distribution as pld
        sgm = pld.from_gaussian_mechanism(1.0, sampling_prob=0.01, pessimistic_estimate=pessimistic,
                                          use_connect_dots=pessimistic, value_discretization_interval=1e-4)
        lap = pld.from_laplace_mechanism(10.0, pessimistic_estimate=pessimistic, use_connect_dots=pessimistic,
                                         value_discretization_interval=1e-4)
        return sgm.self_compose(100).compose(lap.self_compose(2))

    assert_meets_peer(bracket, peer_epsilons(build))


# -- non-private and empty runs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("event", [m.NonPrivateDpEvent(), m.LaplaceDpEvent(0), comp(m.LaplaceDpEvent(1),
                                                                                     m.GaussianDpEvent(0)),
                                   comp(sc(m.PoissonSampledDpEvent(F(1, 100), m.GaussianDpEvent(1)), 10),
                                        m.NonPrivateDpEvent())])
@pytest.mark.parametrize("point", [{"delta": DELTA}, {"epsilon": F(1)}])
def test_a_non_private_run_raises_not_private_never_a_number(event, point):
    with pytest.raises(NotPrivate, match="non-private event.*no finite epsilon is proven") as info:
        event_bracket(resolve(event), **point)
    assert "\n" not in str(info.value)
    with pytest.raises(NotPrivate):
        certify_event(event, **point)


def test_a_run_that_releases_nothing_is_an_input_error():
    with pytest.raises(InputError, match="releases nothing"):
        event_bracket(resolve(m.NoOpDpEvent()), delta=DELTA)


# -- certificates -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def laplace_cert():
    return certify_event(m.LaplaceDpEvent(1), delta=DELTA)


@pytest.fixture(scope="module", params=["laplace", "randomized response δ(ε)", "sgm and laplace"])
def cert(request, laplace_cert):
    if request.param == "laplace":
        return laplace_cert
    if request.param == "randomized response δ(ε)":
        return certify_event(sc(m.RandomizedResponseDpEvent(F(1, 2), 4), 3), "REPLACE_ONE", epsilon=F(4))
    return certify_event(comp(sc(m.PoissonSampledDpEvent(F(1, 100), m.GaussianDpEvent(1)), 10),
                              m.LaplaceDpEvent(10)), delta=DELTA, tolerance=F(1, 100))


def test_a_fresh_certificate_is_sealed_and_confirmed(cert):
    assert schema_errors(cert, SCHEMA) == [] and cert["content_hash"] == content_hash(cert)
    assert cert["verdict"] == "certified" and cert["cross_check"]["consistent"]
    quantity = "epsilon" if "delta" in cert["inputs"] else "delta"
    assert 0 < F(cert[quantity]["lower"]) <= F(cert[quantity]["upper"]) and cert[quantity]["tolerance_met"]
    assert check_event_certificate(cert) == []


def test_the_certificate_records_the_bracket_and_the_exact_cross_check(laplace_cert):
    c = laplace_cert
    assert c["inputs"]["event"] == {"class_name": "LaplaceDpEvent", "noise_multiplier": "1"}
    assert c["inputs"]["neighboring_relation"] == "ADD_OR_REMOVE_ONE"
    assert c["components"] == [{"mechanism": "Laplace", "uses": 1}]
    with mp.workdps(DPS):
        assert mpf(F(c["epsilon"]["lower"])) <= 1 + 2 * mp.log(1 - mpf(DELTA)) <= mpf(F(c["epsilon"]["upper"]))
    cross = c["cross_check"]
    assert cross["bound_kind"] == "proven" and cross["informative"]
    # the exact δ at ε₀ − 2·10⁻⁵: 1 − e^{−10⁻⁵}, within the proven δ bracket
    eps = F(cross["epsilon"])
    exact = 1 - math.exp(float(eps - 1) / 2)
    assert abs(F(cross["estimate"]["value"]) - F(exact)) <= F(1, 10**15)
    assert F(cross["proven_delta"]["lower"]) <= F(cross["estimate"]["value"]) <= F(cross["proven_delta"]["upper"])


def test_every_field_is_recomputed_or_listed_as_recorded(laplace_cert):
    fresh = certificate_module.recompute(laplace_cert)
    assert assert_every_field_checked(laplace_cert, fresh, POLICY, certificate_module.compare_event, SCHEMA) > 30


@pytest.mark.parametrize("path, change", [
    ("epsilon.upper", lambda c: str(F(c["epsilon"]["upper"]) + F(1, 10**12))),
    ("epsilon.upper", lambda c: c["epsilon"]["lower"]),
    ("settings.grid_step", lambda c: "0.002"),
    ("settings.fixed_point_bits", lambda c: c["settings"]["fixed_point_bits"] + 1),
    ("inputs.event.noise_multiplier", lambda c: "2"),
    ("inputs.event", lambda c: {"class_name": "DiscreteLaplaceDpEvent", "noise_parameter": "1", "sensitivity": 1}),
    ("inputs.delta", lambda c: "0.00002"),
    ("inputs.neighboring_relation", lambda c: "REPLACE_ONE"),  # Laplace is not defined for it: refused
])
def test_a_forged_certificate_is_not_confirmed(laplace_cert, path, change):
    forged = edited(laplace_cert, path, change(laplace_cert))
    problems = check_event_certificate(forged)
    assert problems and all(": " in p for p in problems), problems


def test_a_forged_cross_check_judgement_with_its_verdict_rewritten_is_not_confirmed(laplace_cert):
    """consistent flipped and the verdict and its reason rewritten to follow: the judgement is re-derived from the
    certificate's estimate and proven δ (before, the verdict was re-derived from the claimed judgement only)."""
    forged = edited(laplace_cert, "cross_check.consistent", False)
    forged = edited(forged, "verdict", "inconsistent")
    forged = edited(forged, "verdict_reason", certificate_module.verdict_of("epsilon", forged["epsilon"],
                                                                          forged["cross_check"])[1])
    assert check_event_certificate(forged) == [
        "cross_check.consistent: not derived from the certificate's estimate and proven delta"]


def test_a_forged_certificate_without_reseal_fails_integrity(laplace_cert):
    forged = dict(laplace_cert, epsilon=dict(laplace_cert["epsilon"], upper="1"))
    assert check_event_certificate(forged)


def test_settings_beyond_the_commands_are_refused_before_work(laplace_cert):
    with pytest.raises(Refused, match="single_step_tail"):
        check_event_certificate(edited(laplace_cert, "settings.single_step_tail", "0.1"))
    with pytest.raises(Refused, match="fixed_point_bits"):
        check_event_certificate(edited(laplace_cert, "settings.fixed_point_bits", 100000))


def test_a_closed_form_run_is_not_an_event_certificate(laplace_cert):
    """A q = 1 Gaussian run gets rdp-verify dp's certificate (closed form, no grid); as an event certificate it is
    refused (before: a traceback would follow from grid settings for a run without a grid)."""
    forged = edited(laplace_cert, "inputs.event", {"class_name": "GaussianDpEvent", "noise_multiplier": "1"})
    problems = check_event_certificate(forged)
    assert any(p.startswith("inputs: ") for p in problems), problems


def test_a_forged_event_is_failed_by_its_recomputed_bracket(laplace_cert):
    """Poisson-sampled Gaussian steps alone are a valid event certificate (the drop-in accountant writes them under
    REPLACE_SPECIAL); such an event in place of the recorded one is recomputed, and its bracket fails."""
    forged = edited(laplace_cert, "inputs.event", {"class_name": "PoissonSampledDpEvent", "sampling_probability": "0.5",
                                                   "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "1"}})
    problems = check_event_certificate(forged)
    assert any(p.startswith("epsilon") for p in problems), problems


# -- random trees -------------------------------------------------------------------------------------------------

moderate = st.fractions(min_value=F(1, 2), max_value=10, max_denominator=20)
probability = st.fractions(min_value=F(1, 100), max_value=1, max_denominator=100)
_supported = st.one_of(
    st.builds(m.LaplaceDpEvent, moderate),
    st.builds(m.DiscreteLaplaceDpEvent, moderate, st.integers(1, 3)),
    st.builds(m.RandomizedResponseDpEvent, st.fractions(min_value=F(1, 10), max_value=1, max_denominator=20),
              st.integers(1, 4)),
    st.builds(m.MixtureOfGaussiansDpEvent, st.integers(1, 3), st.just([0, 1]), st.just([F(1, 2), F(1, 2)])),
    st.builds(m.SingleEpochTreeAggregationDpEvent, st.integers(1, 4), st.integers(0, 7)),
    st.builds(m.PoissonSampledDpEvent, probability, st.builds(m.LaplaceDpEvent, moderate)),
    st.builds(m.PoissonSampledDpEvent, probability, st.builds(m.GaussianDpEvent, st.integers(1, 4))),
    st.builds(m.GaussianDpEvent, st.integers(1, 4)),
    st.just(m.NoOpDpEvent()), st.just(m.NonPrivateDpEvent()), st.just(m.LaplaceDpEvent(0)),
)
random_trees = st.recursive(_supported, lambda child: st.one_of(
    st.builds(m.SelfComposedDpEvent, child, st.integers(0, 3)),
    st.builds(m.ComposedDpEvent, st.lists(child, max_size=3)),
), max_leaves=4)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_trees, st.sampled_from([ADD, REPLACE, SPECIAL]))
def test_random_trees_get_a_finite_ordered_bracket_or_a_documented_refusal(event, relation):
    """On a fixed coarse grid (h = 1/100, one evaluation): no exception but UnsupportedEvent / InputError /
    NotPrivate (NotPrivate exactly for a non-private run), and 0 ≤ lower ≤ upper < ∞."""
    try:
        run = resolve(event, relation)
    except UnsupportedEvent:
        return
    if run.non_private or run.empty:
        with pytest.raises(NotPrivate if run.non_private else InputError):
            event_bracket(run, delta=DELTA)
        return
    s = default_settings(run.phases, F(1, 100), DELTA, leaves=run.leaves)
    try:
        b = event_bracket(run, delta=DELTA, settings=s)
    except InputError as exc:  # documented refusals (e.g. a run beyond the supported size)
        assert not isinstance(exc, NotPrivate) and "\n" not in str(exc)
        return
    assert b.upper is not None and 0 <= b.lower <= b.upper


# -- random trees against dp_accounting's optimistic and pessimistic pair ------------------------------------------

_PEER_LEAVES = st.one_of(
    st.tuples(st.just("laplace"), st.sampled_from([F(1, 2), F(1), F(3)]), st.just(F(1))),
    st.tuples(st.just("sampled-laplace"), st.sampled_from([F(1, 2), F(1)]), st.sampled_from([F(1, 10), F(1, 2)])),
    st.tuples(st.just("discrete-laplace"), st.sampled_from([F(1, 2), F(1)]), st.just(F(1))),
    st.tuples(st.just("gaussian"), st.sampled_from([F(1), F(2)]), st.just(F(1))),
    st.tuples(st.just("sgm"), st.sampled_from([F(1), F(2)]), st.sampled_from([F(1, 10), F(1, 2)])),
)


def _ours(kind, x, q):
    return {"laplace": lambda: m.LaplaceDpEvent(x), "discrete-laplace": lambda: m.DiscreteLaplaceDpEvent(x, 1),
            "gaussian": lambda: m.GaussianDpEvent(x),
            "sampled-laplace": lambda: m.PoissonSampledDpEvent(q, m.LaplaceDpEvent(x)),
            "sgm": lambda: m.PoissonSampledDpEvent(q, m.GaussianDpEvent(x))}[kind]()


def _theirs(kind, x, q, pessimistic):
    from dp_accounting.pld import privacy_loss_distribution as pld
    common = dict(pessimistic_estimate=pessimistic, value_discretization_interval=1e-3)
    if kind in ("laplace", "sampled-laplace"):
        return pld.from_laplace_mechanism(float(x), sampling_prob=float(q) if kind != "laplace" else 1.0, **common)
    if kind == "discrete-laplace":
        return pld.from_discrete_laplace_mechanism(float(x), sensitivity=1, **common)
    return pld.from_gaussian_mechanism(float(x), sampling_prob=float(q) if kind == "sgm" else 1.0, **common)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_PEER_LEAVES, st.integers(1, 3)), min_size=1, max_size=3))
def test_random_trees_agree_with_dp_accountings_optimistic_and_pessimistic_pair(parts):
    """ComposedDpEvent of random leaves used 1-3 times each, under ADD_OR_REMOVE_ONE: dp_accounting's optimistic and
    pessimistic PLDs (interval 1e-3, composed in the same order) and our bracket intersect (float slack 1e-9): a
    pessimistic value below our proven lower end, or an optimistic one above our proven upper end, would be a peer
    defect (none is documented for these mechanisms)."""
    pytest.importorskip("dp_accounting")
    event = comp(*[sc(_ours(*leaf), n) for leaf, n in parts])
    run = resolve(event)
    b = event_bracket(run, delta=DELTA, settings=default_settings(run.phases, F(1, 100), DELTA, leaves=run.leaves))

    def build(pessimistic):
        total = None
        for leaf, n in parts:
            one = _theirs(*leaf, pessimistic).self_compose(n)
            total = one if total is None else total.compose(one)
        return total

    assert_meets_peer(b, peer_epsilons(build))


def test_each_direction_of_an_asymmetric_run_holds_its_own_exact_delta():
    """Poisson-sampled Laplace once (its two directions differ): the bracket of each direction at ε holds that
    direction's exact δ (Neyman–Pearson, no grid); a run of symmetric mechanisms composes one direction for both,
    an asymmetric one must not."""
    from flint import ctx

    from rdp_verify.mechanisms.sampled_laplace import SampledLaplace

    eps, leaf = F(1, 20), SampledLaplace(F(1), F(1, 4))  # the losses lie in [-0.17, 0.36]
    # tolerance 1/100 (0.5 CPU-s; the default 1/1000 took 2): the larger (remove) direction's bracket is 0.2 % wide, the
    # two directions' exact δ are 20 % apart (the add direction's lower end is 0 at either tolerance)
    b = event_bracket(resolve(m.PoissonSampledDpEvent(F(1, 4), m.LaplaceDpEvent(1))), epsilon=eps, tolerance=F(1, 100))
    with ctx.workprec(200):
        exact = {d: leaf.hockey_stick(eps, 200, d) for d in ("remove", "add")}
        assert exact["remove"].upper() < exact["add"].lower() or exact["add"].upper() < exact["remove"].lower()
        for d, (low, up) in b.by_direction.items():
            assert low <= F(exact[d].lower().str(60, radius=False)) and F(exact[d].upper().str(60, radius=False)) <= up


def test_a_huge_pure_dp_epsilon_is_certified_and_its_cross_check_never_writes_huge_numbers():
    """Laplace(b = 1e-9), ε₀ = 1e9: ε(1e-5) = 1e9 + 2 log(1 − 1e-5) (closed form) inside the bracket, at once; the
    add direction's exact δ at ε ≈ 1e9 cancels (e^ε times a tiny CDF): it is clamped into [0, 1] (uninformative),
    not written out with a 434-million-digit exponent (which hung the command before)."""
    cert = certify_event(m.LaplaceDpEvent(F(1, 10**9)), delta=DELTA)
    low, up = F(cert["epsilon"]["lower"]), F(cert["epsilon"]["upper"])
    assert low <= 10**9 - F(2, 10**5) - F(1, 10**9) and 10**9 - F(2, 10**5) <= up  # 2 log(1 − δ) ≈ −2.00001e-5
    assert cert["cross_check"]["consistent"] and check_event_certificate(cert) == []
