"""Proven Rényi DP of event trees (rdp_verify.privacy_curve.rdp): composition against independent references (the
SGM's binomial sum, mpmath quadrature of the Laplace and replace-one divergences, exact values), dp_accounting's
RdpAccountant as a peer (and where its conventions differ), zCDP's missing lower end, non-private runs and
refusals by name."""

from fractions import Fraction

import mpmath as mp
import pytest

from rdp_verify.events import model as m
from rdp_verify.events.model import UnsupportedEvent
from rdp_verify.foundations.inputs import InputError
from rdp_verify.privacy_curve.rdp import event_rdp
from tests.mechanisms.test_laplace import renyi_quadrature
from tests.oracles import binomial_log_a

F = Fraction
ADD, REPLACE, SPECIAL = (m.NeighboringRelation.ADD_OR_REMOVE_ONE, m.NeighboringRelation.REPLACE_ONE,
                         m.NeighboringRelation.REPLACE_SPECIAL)
SGM = m.PoissonSampledDpEvent(F(1, 100), m.GaussianDpEvent(1))
DPSGD_LAPLACE = m.ComposedDpEvent([m.SelfComposedDpEvent(SGM, 200), m.SelfComposedDpEvent(m.LaplaceDpEvent(20), 3)])
DPS = 30


def mpf(x: Fraction) -> mp.mpf:
    return mp.mpf(x.numerator) / x.denominator


def contains(interval, ref, rel=mp.mpf(10) ** -25):
    """The exact interval holds the mpmath reference (up to the reference's own error)."""
    slack = rel * abs(ref)
    return mpf(interval.lower) - slack <= ref <= mpf(interval.upper) + slack


def test_dpsgd_and_laplace_releases_add_up():
    orders = [F(2), F(8), F(32)]
    result = event_rdp(DPSGD_LAPLACE, ADD, orders, DPS)
    assert [(p.component, p.uses, p.bound) for p in result.parts] == [
        ("SampledGaussian(q=0.01, sigma=1)", 200, "exact"), ("Laplace(b=20, sensitivity=1)", 3, "exact")]
    with mp.workdps(60):
        for a, value in zip(orders, result.values):
            ref = 200 * binomial_log_a("0.01", "1", int(a)) / (a - 1) + 3 * renyi_quadrature(F(20), a)
            assert contains(value, ref)
            assert value.upper - value.lower < F(1, 10**25) * value.upper  # every part exact: a thin ball


def test_a_gaussian_family_tree_is_the_sgm_table_times_its_steps():
    from rdp_verify.audit.rdp_table import rdp_table

    orders = [F(3, 2), F(5), F(65, 2)]
    tree = m.SelfComposedDpEvent(m.PoissonSampledDpEvent(F(256, 60000), m.GaussianDpEvent(F(11, 10))), 1000)
    ours = event_rdp(tree, ADD, orders, 20)
    table = rdp_table(F(256, 60000), F(11, 10), orders, None, 1000, 20, 15)
    for value, row in zip(ours.values, table["rows"]):
        assert F(row["epsilon"]["lower"]) <= value.lower <= value.upper <= F(row["epsilon"]["upper"])


def test_gaussian_and_tree_aggregation_are_exact_rationals():
    tree = m.ComposedDpEvent([m.GaussianDpEvent(2), m.SingleEpochTreeAggregationDpEvent(F(3), [7, 3])])
    result = event_rdp(tree, SPECIAL, [F(2), F(7, 3)], DPS)
    # alpha/(2*4) for the Gaussian, d = ceil(log2(8)) = 3 uses of alpha/(2*9) for the tree (Kairouz et al. 2021)
    assert [(v.lower, v.upper) for v in result.values] == [(F(1, 4) + F(1, 3),) * 2, (F(7, 24) + F(7, 18),) * 2]


def test_gaussian_under_replace_one_has_twice_the_sensitivity():
    result = event_rdp(m.GaussianDpEvent(2), REPLACE, [F(3)], DPS)
    assert result.values[0].lower == result.values[0].upper == F(3) * 4 / (2 * 4)  # alpha * 2^2/(2 sigma^2)


def test_zcdp_has_no_lower_end():
    alone = event_rdp(m.SelfComposedDpEvent(m.ZCDpEvent(F(1, 2), F(1, 10)), 3), ADD, [F(2), F(10)], DPS)
    assert alone.upper_only and [p.bound for p in alone.parts] == ["upper only"]
    assert [(v.lower, v.upper) for v in alone.values] == [(0, F(3, 10) + 3), (0, F(3, 10) + 15)]
    mixed = event_rdp(m.ComposedDpEvent([m.ZCDpEvent(F(1, 2)), m.LaplaceDpEvent(1)]), ADD, [F(2)], DPS)
    laplace = event_rdp(m.LaplaceDpEvent(1), ADD, [F(2)], DPS).values[0]
    assert not mixed.upper_only
    assert mixed.values[0].lower == laplace.lower and mixed.values[0].upper == laplace.upper + 1


@pytest.mark.parametrize("event", [m.NonPrivateDpEvent(), m.ComposedDpEvent([SGM, m.NonPrivateDpEvent()]),
                                   m.ComposedDpEvent([m.ZCDpEvent(1), m.LaplaceDpEvent(0)]),
                                   m.PoissonSampledDpEvent(F(1, 10), m.NonPrivateDpEvent())])
def test_non_private_runs_are_never_a_number(event):
    result = event_rdp(event, ADD, [F(2)], DPS)
    assert result.non_private and result.values == ()


def test_a_run_of_no_ops_releases_nothing():
    result = event_rdp(m.ComposedDpEvent([m.NoOpDpEvent(), m.SelfComposedDpEvent(m.LaplaceDpEvent(1), 0)]), ADD,
                       [F(2)], DPS)
    assert result.parts == () and result.values[0].lower == result.values[0].upper == 0


def rr_special_orders(p, k, alpha):
    """(D_α(P ‖ Q), D_α(Q ‖ P)) of randomized response at a record against the special record (uniform output),
    every one of the k buckets summed in mpmath."""
    P = [1 - p + p / k] + [p / k] * (k - 1)
    Q = [F(1, k)] * k
    return tuple(mp.log(mp.fsum(mpf(x) ** alpha * mpf(y) ** (1 - alpha) for x, y in zip(a, b))) / (alpha - 1)
                 for a, b in ((P, Q), (Q, P)))


def test_directions_add_up_separately():
    # under REPLACE_SPECIAL, RR(1/2, 4) has the larger remove order and RR(1/100, 4) the larger add order: one pair of
    # datasets realises one order for both, so the run's epsilon_alpha is the larger of the two orders' sums, below
    # the sum of each one's larger order
    tree = m.ComposedDpEvent([m.RandomizedResponseDpEvent(F(1, 2), 4), m.RandomizedResponseDpEvent(F(1, 100), 4)])
    value = event_rdp(tree, SPECIAL, [F(3)], DPS).values[0]
    with mp.workdps(50):
        (r1, a1), (r2, a2) = rr_special_orders(F(1, 2), 4, 3), rr_special_orders(F(1, 100), 4, 3)
        assert r1 > a1 and a2 > r2
        assert contains(value, max(r1 + r2, a1 + a2)) and max(r1 + r2, a1 + a2) < max(r1, a1) + max(r2, a2) - 0.01
        assert value.upper - value.lower < F(1, 10**25)


def sgm_add_order(q, sigma, alpha):
    """log B_α/(α − 1) = D_α(μ0 ‖ μ) of one SGM step by mpmath quadrature (μ0 = N(0, σ²), μ = (1 − q)μ0 + qN(1, σ²))."""
    with mp.workdps(40):
        q, s, a = mpf(q), mpf(sigma), mpf(alpha)
        mu = lambda z: (1 - q) * mp.npdf(z, 0, s) + q * mp.npdf(z, 1, s)  # noqa: E731
        f = lambda z: mp.npdf(z, 0, s) ** a * mu(z) ** (1 - a)  # noqa: E731
        return mp.log(mp.quad(f, [-mp.inf, -10 * s, 0, 10 * s, mp.inf])) / (a - 1)


def test_the_sgm_add_order_is_enclosed_when_another_component_decides_there():
    # RR(1/100, 4) under REPLACE_SPECIAL decides in the add order, where the SGM's steps count with log B/(alpha - 1)
    tree = m.ComposedDpEvent([m.SelfComposedDpEvent(SGM, 100), m.RandomizedResponseDpEvent(F(1, 100), 4)])
    value = event_rdp(tree, SPECIAL, [F(4)], DPS).values[0]
    with mp.workdps(40):
        remove_sgm = 100 * binomial_log_a("0.01", "1", 4) / 3
        add_sgm = 100 * sgm_add_order(F(1, 100), 1, 4)
        remove, add = rr_special_orders(F(1, 100), 4, 4)
        assert add_sgm < remove_sgm and add_sgm + add > remove_sgm + remove
        assert contains(value, add_sgm + add, rel=mp.mpf(10) ** -20)
        assert value.upper - value.lower < F(1, 10**25)


def antipodal_renyi(q, sigma, alpha):
    """D_α((1 − q)N(0, σ²) + qN(1, σ²) ‖ (1 − q)N(0, σ²) + qN(−1, σ²)) by mpmath quadrature: the replace-one pair
    dp_accounting's PLD and rdp-verify dp use (Lebeda et al. 2024), an actual replacement."""
    with mp.workdps(30):
        q, s, a = mpf(q), mpf(sigma), mpf(alpha)
        p_ = lambda z: (1 - q) * mp.npdf(z, 0, s) + q * mp.npdf(z, 1, s)  # noqa: E731
        q_ = lambda z: (1 - q) * mp.npdf(z, 0, s) + q * mp.npdf(z, -1, s)  # noqa: E731
        f = lambda z: mp.exp(a * mp.log(p_(z)) + (1 - a) * mp.log(q_(z)))  # noqa: E731
        return mp.log(mp.quad(f, [-mp.inf, -10 * s, 0, 10 * s, 20 * s + a, mp.inf])) / (a - 1)


@pytest.mark.parametrize("q, sigma, alpha", [(F(1, 100), F(1), F(2)), (F(1, 100), F(1), F(8)),
                                             (F(1, 100), F(4), F(32)), (F(1, 10), F(2), F(8))])
def test_replace_one_bracket_holds_the_antipodal_pair(q, sigma, alpha):
    event = m.SelfComposedDpEvent(m.PoissonSampledDpEvent(q, m.GaussianDpEvent(sigma)), 10)
    result = event_rdp(event, REPLACE, [alpha], DPS)
    (part,) = result.parts
    assert part.bound == "bracket" and "replace-one" in part.component
    value = result.values[0]
    with mp.workdps(60):
        assert mpf(value.lower) == pytest.approx(10 * binomial_log_a(str(q), str(sigma), int(alpha)) / (alpha - 1),
                                                 rel=1e-25)
        anti = 10 * antipodal_renyi(q, sigma, alpha)
        assert mpf(value.lower) < anti < mpf(value.upper)
        assert mpf(value.upper) < 6 * anti  # the least of the Hoelder bounds: within a factor 6 here


def test_replace_one_at_q_one_is_the_gaussian_with_sensitivity_two():
    result = event_rdp(m.PoissonSampledDpEvent(1, m.GaussianDpEvent(2)), REPLACE, [F(5)], DPS)
    assert result.values[0].lower == result.values[0].upper == F(5) * 4 / 8


def composed_tree():
    return m.ComposedDpEvent([m.SelfComposedDpEvent(SGM, 50), m.SelfComposedDpEvent(m.LaplaceDpEvent(F(3)), 2),
                              m.GaussianDpEvent(5), m.ZCDpEvent(F(1, 100)),
                              m.SingleEpochTreeAggregationDpEvent(F(4), 100)])


def test_dp_accountings_rdp_accountant_agrees_at_integer_orders():
    dp = pytest.importorskip("dp_accounting")
    from rdp_verify.reference.dp_peers import to_dp_accounting

    orders = [2, 3, 8, 32, 64]
    peer = dp.rdp.RdpAccountant(orders=[float(a) for a in orders],
                                neighboring_relation=dp.NeighboringRelation.REPLACE_SPECIAL)
    peer.compose(to_dp_accounting(composed_tree(), dp))
    ours = event_rdp(composed_tree(), SPECIAL, [F(a) for a in orders], DPS)
    assert [p.bound for p in ours.parts] == ["exact", "exact", "exact", "exact", "upper only"]
    for value, theirs in zip(ours.values, peer._rdp):
        assert float(value.upper) == pytest.approx(theirs, rel=1e-9)  # the zCDP part is an upper end, as theirs


def test_dp_accountings_replace_one_gaussian_uses_sensitivity_one():
    # a documented convention difference: its RdpAccountant composes GaussianDpEvent at sensitivity 1 whatever the
    # relation, its PLDAccountant (and rdp_verify) at 2 under REPLACE_ONE: a factor 4 in epsilon_alpha, exactly
    dp = pytest.importorskip("dp_accounting")
    peer = dp.rdp.RdpAccountant(orders=[2.0, 10.0], neighboring_relation=dp.NeighboringRelation.REPLACE_ONE)
    peer.compose(dp.GaussianDpEvent(2.0))
    ours = event_rdp(m.GaussianDpEvent(2), REPLACE, [F(2), F(10)], DPS)
    assert [float(v.upper) for v in ours.values] == [4 * x for x in peer._rdp]


@pytest.mark.parametrize("event, relation, named", [
    (m.MixtureOfGaussiansDpEvent(1, [0, 1], [F(1, 2), F(1, 2)]), ADD, "MixtureOfGaussiansDpEvent"),
    (m.PoissonSampledDpEvent(F(1, 10), m.LaplaceDpEvent(1)), ADD, "PoissonSampledDpEvent of a LaplaceDpEvent"),
    (m.SampledWithoutReplacementDpEvent(100, 10, m.GaussianDpEvent(1)), REPLACE, "SampledWithoutReplacementDpEvent"),
    (m.ShuffledDpEvent(100, 10, 10, m.GaussianDpEvent(1)), ADD, "ShuffledDpEvent"),
    (m.BallsInBinsDpEvent(100, 10, 10, m.GaussianDpEvent(1)), ADD, "BallsInBinsDpEvent"),
    (m.TruncatedSubsampledGaussianDpEvent(100, F(1, 10), 10, 1), ADD, "TruncatedSubsampledGaussianDpEvent"),
    (m.RepeatAndSelectDpEvent(m.LaplaceDpEvent(1), 2, 1), ADD, "RepeatAndSelectDpEvent"),
    (m.UnsupportedDpEvent(), ADD, "UnsupportedDpEvent"),
    (m.PoissonSampledDpEvent(F(1, 10), m.ZCDpEvent(1)), ADD, "PoissonSampledDpEvent of a ZCDpEvent"),
    (m.RandomizedResponseDpEvent(F(1, 2), 4), ADD, "RandomizedResponseDpEvent"),
    (m.ComposedDpEvent([m.ZCDpEvent(1), m.LaplaceDpEvent(1)]), REPLACE, "LaplaceDpEvent"),
])
def test_refused_by_name_in_one_line(event, relation, named):
    with pytest.raises(UnsupportedEvent) as info:
        event_rdp(event, relation, [F(2)], DPS)
    assert named in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("orders, message", [([F(1)], "greater than 1"), ([], "empty")])
def test_bad_orders(orders, message):
    with pytest.raises(InputError, match=message):
        event_rdp(m.LaplaceDpEvent(1), ADD, orders, DPS)
