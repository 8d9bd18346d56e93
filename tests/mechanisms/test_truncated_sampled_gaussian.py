"""Truncated Poisson sampling (``TruncatedSubsampledGaussianDpEvent``): the proven bracket of one use against a brute
force over every sample and every truncation (mpmath quadrature of the exact Gaussian mixtures), the constants against
direct binomial sums, the rounding directions, the never-truncated case against the Poisson-sampled Gaussian,
dp_accounting's PLD accountant as a peer, and ``rdp-verify dp --event`` / ``check`` with the refusals."""

import json
from fractions import Fraction as F
from itertools import combinations
from math import comb

import mpmath as mp
import pytest
from flint import ctx

from rdp_verify.cli import main
from rdp_verify.curves.discretize import discretize as step_discretize
from rdp_verify.curves.discretize import grid_range
from rdp_verify.events import model as m
from rdp_verify.events.flatten import to_phases
from rdp_verify.foundations.inputs import InputError
from rdp_verify.foundations.results import to_arb
from rdp_verify.foundations.run import Phase
from rdp_verify.mechanisms.gaussian import GaussianPair
from rdp_verify.mechanisms.truncated_sampled_gaussian import (
    GUARD,
    TruncatedSampledGaussian,
    _mixed,
    _rounded,
    _step_pld,
    binomial_tail,
)
from rdp_verify.pld.compose import PLD
from rdp_verify.pld.rounding import PoissonSampled, hockey_stick
from rdp_verify.privacy_curve.table import resolve
from tests.mechanisms.checks import BITS, PREC, TAIL, bracket, holds, width

N, Q, B, SIGMA = 6, F(1, 3), 2, F(1)  # truncation is frequent: t = P(Bin(5, 1/3) ≥ 2) = 131/243
RELATIONS = {"add-remove": "ADD_OR_REMOVE_ONE", "replace-one": "REPLACE_ONE", "replace-special": "REPLACE_SPECIAL"}
SLACK = F(1, 10**15)  # the quadrature's error, far below every margin


# -- the independent reference: every Poisson sample, every truncation, the exact mixtures' hockey-stick -----------


def mixture(gradients, q, b):
    """{sum of the kept gradients: probability}: every subset S sampled (q^|S|(1 − q)^(n − |S|)), a batch of more
    than b cut to each b-subset with equal probability (independent of the module)."""
    n, out = len(gradients), {}
    for r in range(n + 1):
        for sample in combinations(range(n), r):
            kept = [sample] if r <= b else list(combinations(sample, b))
            for batch in kept:
                mean = sum((gradients[i] for i in batch), F(0))
                out[mean] = out.get(mean, F(0)) + q**r * (1 - q) ** (n - r) / len(kept)
    return out


def _mpf(x):
    return mp.mpf(x.numerator) / x.denominator


def hockey(p_law, q_law, eps, sigma=SIGMA):
    """∫ (p − e^ε q)_+ for the mixtures p = Σ w N(m, σ²), q likewise: the sign changes of p − e^ε q located on a grid
    and bisected, then mpmath quadrature of each positive piece (split at the means)."""
    s, e = _mpf(sigma), mp.exp(_mpf(eps))
    pm = [(_mpf(a), _mpf(w)) for a, w in p_law.items()]
    qm = [(_mpf(a), _mpf(w)) for a, w in q_law.items()]

    def f(x):
        return sum(w * mp.npdf(x, a, s) for a, w in pm) - e * sum(w * mp.npdf(x, a, s) for a, w in qm)

    means = sorted({a for a, _ in pm + qm})
    lo, hi, n = means[0] - 12 * s, means[-1] + 12 * s, 240
    xs = [lo + (hi - lo) * (i + mp.mpf(1) / 3) / n for i in range(n)]  # off the means: no sign change on a node
    values = [f(x) for x in xs]
    cuts = [mp.ninf]
    for i in range(n - 1):
        if values[i] * values[i + 1] < 0:
            a, b = xs[i], xs[i + 1]
            for _ in range(80):
                mid = (a + b) / 2
                a, b = (mid, b) if (f(mid) > 0) == (values[i] > 0) else (a, mid)
            cuts.append((a + b) / 2)
    cuts.append(mp.inf)
    total = mp.mpf(0)
    for a, b in zip(cuts, cuts[1:]):
        probe = b - 1 if a == mp.ninf else a + 1 if b == mp.inf else (a + b) / 2
        if f(probe) > 0:
            total += mp.quad(f, [a] + [c for c in means if a < c < b] + [b])
    return total


def laws(others, neighbours):
    """(M(D), M(D′)): D holds the record (gradient −1); D′ lacks it (add/remove), holds the special record (gradient 0)
    or the record replaced by gradient +1 -- every record sampled and truncated alike."""
    with_x = mixture(others + [F(-1)], Q, B)
    if neighbours == "add-remove":
        return with_x, mixture(others, Q, B)
    return with_x, mixture(others + [F(0) if neighbours == "replace-special" else F(1)], Q, B)


ZERO, ONES, MIXED = [F(0)] * (N - 1), [F(1)] * (N - 1), [F(0), F(0), F(1), F(1), F(1)]


@pytest.mark.parametrize("neighbours", ["add-remove", pytest.param("replace-one", marks=pytest.mark.slow),
                                        pytest.param("replace-special", marks=pytest.mark.slow)])
def test_one_use_brackets_the_brute_force_over_every_sample(neighbours):
    """The upper end is above every instance's exact δ (others' gradients 0, all +1, mixed: a displaced +1 moves the
    sum by 2), the lower end below the realised pair's (others 0), which the exact enclosure's lower end equals; and
    the truncation term carries the bound: p·H(A₁) alone falls below the brute force."""
    mech = TruncatedSampledGaussian(N, Q, B, SIGMA, neighbours)
    plds = mech.plds(F(1, 50), BITS, TAIL)
    uppers, realised = mech.exact_pairs(PREC)
    without_truncation = []
    with mp.workdps(24):
        for eps in (F(0), F(1, 2), F(2)):
            for direction in ("remove", "add"):
                exact = {}
                for name, others in (("zero", ZERO), ("ones", ONES), ("mixed", MIXED)):
                    p_law, q_law = laws(others, neighbours)
                    exact[name] = hockey(*((p_law, q_law) if direction == "remove" else (q_law, p_law)), eps)
                lo, up = bracket(plds, direction, eps)
                assert holds(lo, exact["zero"], up + 1, SLACK)  # the lower end: below the realised pair
                assert holds(lo - 1, max(exact.values()), up, SLACK)  # the upper end: above every instance
                enclosure = mech.hockey_stick(eps, PREC, direction)
                assert holds(enclosure - 1, max(exact.values()), enclosure, SLACK)
                with ctx.workprec(PREC):  # the realised pair at π is the brute force's own instance, to 1e-15
                    assert holds(hockey_stick(realised, direction, eps), exact["zero"],
                                 hockey_stick(realised, direction, eps), SLACK)
                    first = to_arb(uppers[0][0]) * hockey_stick(uppers[0][1], direction, eps)
                without_truncation.append(bool(first.upper() < max(exact.values()) - SLACK))
    assert any(without_truncation)


# -- the constants, exactly ----------------------------------------------------------------------------------------


def direct_tail(n, q, k):
    return sum((comb(n, j) * q**j * (1 - q) ** (n - j) for j in range(max(k, 0), n + 1)), F(0))


@pytest.mark.parametrize("n, q, k", [(6, F(1, 3), 2), (300, F(7, 19), 40), (300, F(7, 19), 250), (5, F(1), 5),
                                     (5, F(1), 6), (40, F(1, 2), 0), (40, F(3, 4), 41)])
def test_binomial_tails_are_the_direct_sums(n, q, k):
    assert F(int(binomial_tail(n, q, k).numerator), int(binomial_tail(n, q, k).denominator)) == direct_tail(n, q, k)


def test_the_weights_the_rate_and_the_keep_probability_are_exact():
    """t = P(Bin(N−1, q) ≥ B); γ = q·E[B/(K+1) | K ≥ B] summed directly (dp_accounting's binom.sf(B, N, q)·B/(t·N)
    by the identity of the module docstring); π = E[min(Bin(N, q), B)]/N, the realised record's chance of being kept."""
    for n, q, b in ((N, Q, B), (40, F(3, 20), 7), (12, F(1), 5)):
        p, t, gamma, pi = (F(int(x.numerator), int(x.denominator))
                           for x in TruncatedSampledGaussian(n, q, b, SIGMA).constants())
        pmf = [comb(n - 1, k) * q**k * (1 - q) ** (n - 1 - k) for k in range(n)]
        assert t == sum(pmf[b:], F(0)) and p == 1 - t
        assert gamma * t == q * sum((F(b, k + 1) * pmf[k] for k in range(b, n)), F(0))
        kept = sum((min(k, b) * comb(n, k) * q**k * (1 - q) ** (n - k) for k in range(n + 1)), F(0))
        assert pi == kept / n


def test_rounding_directions_keep_each_bound_on_its_side():
    """Long denominators (q = 1/7, N = 200): the weights and γ are rounded up, π down, never past 2^−(bits+GUARD);
    the mixture's masses are at least the weighted sums."""
    mech = TruncatedSampledGaussian(200, F(1, 7), 30, SIGMA)
    p, t, gamma, pi = (F(int(x.numerator), int(x.denominator)) for x in mech.constants())
    unit = F(1, 2 ** (BITS + GUARD))
    (w1, _, rate1, _), (w2, _, rate2, _) = mech.components(BITS)
    assert p <= w1 < p + unit and t <= w2 < t + unit and gamma <= rate2 < gamma + unit and rate1 == mech.q
    assert pi - unit < mech.lower_rate(BITS) <= pi
    assert _rounded(mech.constants()[1], 8, "down") <= t <= _rounded(mech.constants()[1], 8, "up")
    one = PLD.from_masses([5, 0, 7], -1, 3, BITS, F(1, 10), "up")
    two = PLD.from_masses([2, 9], 0, 1, BITS, F(1, 10), "up")
    mixed = _mixed([(w1, one), (w2, two)], BITS)
    exact = {k: w1 * int(one.coeffs[k + 1]) + w2 * (int(two.coeffs[k]) if k >= 0 else 0) for k in (-1, 0, 1)}
    assert mixed.offset == -1 and all(int(mixed.coeffs[k + 1]) >= exact[k] for k in exact)
    assert mixed.inf >= w1 * 3 + w2 * 1


# -- no truncation: the Poisson-sampled Gaussian ------------------------------------------------------------------


@pytest.mark.parametrize("relation", list(RELATIONS.values()))
def test_a_batch_that_cannot_be_truncated_is_the_poisson_sampled_gaussian(relation):
    """B ≥ N: the table gives the Poisson-sampled Gaussian's phase (the same bracket, certificate and accountant
    ledger); the mechanism itself has t = 0, π = q, the SGM step's own dominated pair and its dominating pair on
    the lattice h·ℤ (the step's grid is anchored here), both around the exact δ of SG(q, 1)."""
    for b in (N, N + 5):
        truncated = m.SelfComposedDpEvent(m.TruncatedSubsampledGaussianDpEvent(N, Q, b, SIGMA), 3)
        poisson = m.SelfComposedDpEvent(m.PoissonSampledDpEvent(Q, m.GaussianDpEvent(SIGMA)), 3)
        ours, theirs = resolve(truncated, relation), resolve(poisson, relation)
        assert ours.phases == theirs.phases and not ours.leaves and not theirs.leaves
        if relation != "REPLACE_SPECIAL":
            assert to_phases(truncated, relation) == to_phases(poisson, relation)
    mech = TruncatedSampledGaussian(N, Q, N, SIGMA)
    p, t, gamma, pi = mech.constants()
    assert (p, t, gamma, pi) == (1, 0, 0, Q) and not mech.structural
    h = F(1, 64)
    step = step_discretize(Q, SIGMA, grid_range(Q, SIGMA, h, TAIL), BITS, budget=10 * TAIL)
    plds = mech.plds(h, BITS, TAIL)
    exact = PoissonSampled(GaussianPair(SIGMA, F(1)), Q)
    for direction in ("remove", "add"):
        mine, sgm = plds[direction, "lower"], _step_pld(step, direction, "lower")
        assert (mine.coeffs, mine.offset, mine.inf, mine.shift) == (sgm.coeffs, sgm.offset, sgm.inf, sgm.shift)
        for eps in (F(0), F(1, 2), F(1)):
            with ctx.workprec(PREC):
                value = hockey_stick(exact, direction, eps)
            lo, up = bracket(plds, direction, eps)
            assert holds(lo, value, up) and width(lo, up) < F(1, 10**3)


# -- dp_accounting's PLD accountant, a peer ----------------------------------------------------------------------


@pytest.mark.slow  # about 5 s: dp_accounting's PLDs at its default grid, our bracket and its check
def test_dp_accountings_estimate_lies_above_the_proven_bracket():
    """One use at N = 100, q = 0.1, B = 12 (t = 0.29), σ = 1: dp_accounting's ε(1e-5) is above our proven upper end
    (its second component is the replace-one pair at σ/2, looser than SG(γ, 2)): conservative, not inside; ours is
    the drop-in accountant's answer, sealed and confirmed by check."""
    dp = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    from rdp_verify.accountants.dp_accounting_api import CertifiedPldAccountant
    from rdp_verify.privacy_curve.certificate import check_event_certificate

    event = dp.TruncatedSubsampledGaussianDpEvent(100, 0.1, 12, 1.0)
    theirs = pld_privacy_accountant.PLDAccountant().compose(event).get_epsilon(1e-5)
    acc = CertifiedPldAccountant().compose(event)
    ours = acc.get_epsilon(1e-5)
    cert = acc.certificate()
    lower, upper = F(cert["epsilon"]["lower"]), F(cert["epsilon"]["upper"])
    assert F(ours) >= upper and cert["verdict"] == "certified"
    assert F(theirs) > upper  # "above": dp_accounting is conservative here, by its looser second pair
    assert lower < upper < F(theirs)
    assert check_event_certificate(cert) == []


# -- the command line -------------------------------------------------------------------------------------------


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def event(**fields):
    return {"class_name": "TruncatedSubsampledGaussianDpEvent", **{"dataset_size": 20, "sampling_probability": "0.25",
                                                                   "truncated_batch_size": 6, "noise_multiplier": "2",
                                                                   **fields}}


def test_dp_event_gives_a_bracket_and_check_confirms_it(capsys, tmp_path):
    path, out_file = tmp_path / "event.json", tmp_path / "cert.json"
    path.write_text(json.dumps(event()))
    code, out, err = run(capsys, "dp", "--event", path, "--delta", "1e-5", "--out", out_file)
    assert code == 0 and err == "" and "TruncatedSampledGaussian x 1" in out
    cert = json.loads(out_file.read_text())
    lower, upper = F(cert["epsilon"]["lower"]), F(cert["epsilon"]["upper"])
    assert 0 < lower < upper and cert["verdict"] == "certified" and "truncated sampling" in cert["proofs"]
    assert cert["cross_check"]["consistent"] and "dominating pair" in cert["cross_check"]["method"]
    code, out, err = run(capsys, "check", out_file)
    assert code == 0 and "confirmed" in out


@pytest.mark.parametrize("fields, message", [
    ({"truncated_batch_size": 0}, "truncated_batch_size=0 must be a whole number"),
    ({"sampling_probability": "1.5"}, "sampling_probability=1.5 is outside [0, 1]"),
    ({"sampling_probability": "-0.1"}, "sampling_probability=-0.1 is outside [0, 1]"),
    ({"dataset_size": 0}, "dataset_size=0 must be a whole number"),
    ({"noise_multiplier": "-1"}, "noise_multiplier=-1 must be positive or zero"),
    ({"noise_multiplier": "0.01"}, "noise_multiplier=0.01 is outside the supported range [0.05, 1e6]"),
    ({"sampling_probability": "1e-13"}, "sampling_probability=1e-13 is below the supported minimum"),
    ({"dataset_size": 2 * 10**6, "truncated_batch_size": 100}, "dataset_size=2000000 is beyond the 1000000 records"),
    ({"dataset_size": 10**6, "sampling_probability": "1/999983", "truncated_batch_size": 400000},
     "the exact binomial tails would take about"),
])
def test_bad_parameters_are_one_line_exit_2(capsys, tmp_path, fields, message):
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event(**fields)))
    code, out, err = run(capsys, "dp", "--event", path, "--delta", "1e-5")
    assert code == 2 and out == "" and message in err and err.count("\n") == 1, err


def test_the_drop_in_accountant_takes_it():
    """A batch that can be truncated goes through the event tree (a leaf, answered by certify_event); one that
    cannot stays in the accountant's SGM ledger, as a Poisson-sampled Gaussian step."""
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    from rdp_verify.accountants.dp_accounting_api import CertifiedPldAccountant

    acc = CertifiedPldAccountant()
    assert acc.supports(dp_event.TruncatedSubsampledGaussianDpEvent(100, 0.1, 12, 1.0))
    acc.compose(dp_event.TruncatedSubsampledGaussianDpEvent(100, 0.1, 100, 1.0), 3)
    assert acc.phases == [Phase(F(1, 10), F(1), 3)] and not acc._mixed
    acc.compose(dp_event.TruncatedSubsampledGaussianDpEvent(100, 0.1, 12, 1.0))
    assert acc._mixed and acc._run().leaves == ((TruncatedSampledGaussian(100, F(1, 10), 12, F(1)), 1),)


def test_what_releases_nothing_or_everything():
    """q = 0 releases nothing (as dp_accounting's accountant skips it); σ = 0 is not private."""
    assert resolve(m.TruncatedSubsampledGaussianDpEvent(10, 0, 2, 1)).empty
    assert resolve(m.TruncatedSubsampledGaussianDpEvent(10, 0, 2, 0)).empty  # no record sampled: noise irrelevant
    assert resolve(m.TruncatedSubsampledGaussianDpEvent(10, F(1, 2), 2, 0)).non_private
    with pytest.raises(InputError, match="neighbours='zero-out' must be one of"):
        TruncatedSampledGaussian(10, F(1, 2), 2, SIGMA, "zero-out")
