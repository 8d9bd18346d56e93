"""Adversarial checks of two bounds: randomized response composed as one exact law (mechanisms.finite_composition,
folded by curves.accountant) and Laplace's connect-the-dots / lowered-chord pairs (mechanisms.laplace through
pld.pairs.curve_pairs).

References, all independent of the code under test:

* randomized response: the masses written out from the mechanism's definition (keep the input with probability
  1 − p, else a uniform bucket; REPLACE_SPECIAL against the uniform output of ⊥), the n-fold law enumerated over the
  count vectors with multinomial weights in exact Fractions and grouped by exact likelihood ratio (for tiny cases
  also over every sequence of the k bucket outputs); δ(ε) = Σ (P(c) − e^ε·Q(c))_+ in mpmath at 60 digits, both
  directions (remove (P, Q), add (Q, P)); ε(δ) by bisection on it.
* Laplace: the closed form for one use, and for k uses the recursion δ_k(ε) = E_{L~P}[δ_{k−1}(ε − L)] over the one-use
  loss law (atoms 1/2 at ε₀, e^{−ε₀}/2 at −ε₀, density e^{(ℓ−ε₀)/2}/4 on (−ε₀, ε₀)), mpmath quadrature split at every
  kink; ε(δ) by bisection; for 50 uses dp_accounting's optimistic and pessimistic PLDs (a peer).
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction as F
from functools import lru_cache

import mpmath as mp
import pytest
from flint import ctx

from rdp_verify.curves.accountant import bracket, folded
from rdp_verify.foundations.results import lower_end, upper_end
from rdp_verify.mechanisms.finite_composition import SelfComposed
from rdp_verify.mechanisms.laplace import Laplace
from rdp_verify.mechanisms.randomized_response import RandomizedResponse
from rdp_verify.pld.compose import delta_at
from tests.mechanisms.checks import composed

DPS = 60
READ_PREC = 128
SLACK = F(1, 10**35)  # the references' own error (60-digit sums, 1e-40 bisection), far below every bracket's width
QUAD_SLACK = F(1, 10**18)  # Laplace quadrature at 30 digits


def to_mp(x: F):
    """x as an mpf at DPS digits (call inside mp.workdps(DPS) or accept 60-digit rounding here)."""
    with mp.workdps(DPS):
        return mp.mpf(x.numerator) / x.denominator


def exact(x) -> F:
    """The exact value of an mpf as it is stored (no re-rounding to the ambient precision: checks.mp_fraction
    passes its argument through mp.mpf at the current precision, 53 bits by default)."""
    if isinstance(x, (int, F)):
        return F(x)
    sign, man, exp, _ = x._mpf_
    value = F(int(man)) * F(2) ** int(exp)
    return -value if sign else value


# -- randomized response: the exact law by enumeration ----------------------------------------------------------


def rr_outcomes(p: F, k: int, relation: str) -> tuple[list[F], list[F]]:
    """(P, Q) over outcome classes, from the definition: output the input with probability 1 − p, else a uniform
    bucket. REPLACE_ONE: inputs x and x′ (classes: x, x′, the k − 2 others together); REPLACE_SPECIAL: x against ⊥
    whose output is uniform (classes: x, the k − 1 others)."""
    stay, move = 1 - p + p / k, p / k
    if relation == "replace-one":
        return [stay, move, (k - 2) * move], [move, stay, (k - 2) * move]
    return [stay, (k - 1) * move], [F(1, k), F(k - 1, k)]


def compositions(n: int, m: int):
    if m == 1:
        yield (n,)
        return
    for c in range(n + 1):
        for rest in compositions(n - c, m - 1):
            yield (c, *rest)


@lru_cache(maxsize=64)
def rr_law(p: F, k: int, relation: str, uses: int) -> tuple[tuple[F, F], ...]:
    """The remove direction's n-fold law grouped by likelihood ratio: ((ΣP, ΣQ), …), exact, from the count vectors."""
    P, Q = rr_outcomes(p, k, relation)
    groups: dict[F, list[F]] = {}
    total_p = total_q = F(0)
    for c in compositions(uses, len(P)):
        weight = math.factorial(uses)
        for ci in c:
            weight //= math.factorial(ci)
        a = weight * math.prod((x ** ci for x, ci in zip(P, c)), start=F(1))
        b = weight * math.prod((x ** ci for x, ci in zip(Q, c)), start=F(1))
        total_p, total_q = total_p + a, total_q + b
        if a == 0 and b == 0:
            continue
        g = groups.setdefault(a / b, [F(0), F(0)])
        g[0] += a
        g[1] += b
    assert total_p == 1 and total_q == 1
    return tuple((a, b) for a, b in groups.values())


def sequences_law(p: F, k: int, relation: str, uses: int) -> tuple[tuple[F, F], ...]:
    """The same law over every sequence of the k bucket outputs (tiny cases): bucket 0 the input x, bucket 1 x′."""
    stay, move = 1 - p + p / k, p / k
    one_p = [stay] + [move] * (k - 1)
    one_q = ([move, stay] + [move] * (k - 2)) if relation == "replace-one" else [F(1, k)] * k
    groups: dict[F, list[F]] = {}
    for seq in itertools.product(range(k), repeat=uses):
        a = math.prod((one_p[i] for i in seq), start=F(1))
        b = math.prod((one_q[i] for i in seq), start=F(1))
        g = groups.setdefault(a / b, [F(0), F(0)])
        g[0] += a
        g[1] += b
    return tuple((a, b) for a, b in groups.values())


def law_delta(law, eps, direction: str):
    """δ(ε) = Σ (P − e^ε·Q)_+ of a grouped law, remove (P, Q) or add (Q, P), mpmath at DPS digits."""
    with mp.workdps(DPS):
        x = mp.exp(eps)
        total = mp.mpf(0)
        for a, b in law:
            if direction == "add":
                a, b = b, a
            t = to_mp(a) - x * to_mp(b)
            if t > 0:
                total += t
        return total


def epsilon_of(delta_fn, delta: F, top):
    """min{ε ≥ 0 : δ(ε) ≤ δ} for a continuous non-increasing δ(·) with δ(top) ≤ δ, by bisection to 1e-45."""
    with mp.workdps(DPS):
        d = to_mp(delta)
        if delta_fn(mp.mpf(0)) <= d:
            return mp.mpf(0)
        lo, hi = mp.mpf(0), mp.mpf(top)
        assert delta_fn(hi) <= d
        while hi - lo > mp.mpf(10) ** -45:
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if delta_fn(mid) > d else (lo, mid)
        return hi


def rr_epsilon(p: F, k: int, relation: str, uses: int, delta: F):
    """ε(δ) of n uses: the larger of the two directions'."""
    law = rr_law(p, k, relation, uses)
    with mp.workdps(DPS):
        top = max(abs(mp.log(to_mp(a / b))) for a, b in law) + 1
        return max(epsilon_of(lambda e: law_delta(law, e, d), delta, top) for d in ("remove", "add"))


# -- Laplace: the closed form and the recursion over the one-use loss law ----------------------------------------


def lap_delta1(t, e0):
    if t >= e0:
        return mp.mpf(0)
    if t <= -e0:
        return 1 - mp.exp(t)
    return 1 - mp.exp((t - e0) / 2)


def lap_delta2(t, e0):
    """δ_2(t) in closed form: the recursion below with its integral done piece by piece (δ_1(t − ℓ) is 0 for
    ℓ ≤ t − ε₀, 1 − e^{(t−ℓ−ε₀)/2} between, 1 − e^{t−ℓ} for ℓ ≥ t + ε₀), each piece an exponential with an
    elementary antiderivative."""
    def middle(a, b):  # ∫_a^b ¼e^{(ℓ−ε₀)/2} − ¼e^{t/2−ε₀} dℓ
        return mp.exp((b - e0) / 2) / 2 - mp.exp((a - e0) / 2) / 2 - mp.exp(t / 2 - e0) * (b - a) / 4

    def left(a, b):  # ∫_a^b ¼e^{(ℓ−ε₀)/2} − ¼e^{t−ε₀/2}·e^{−ℓ/2} dℓ
        return (mp.exp((b - e0) / 2) - mp.exp((a - e0) / 2)) / 2 + mp.exp(t - e0 / 2) * (mp.exp(-b / 2) - mp.exp(-a / 2)) / 2

    integral = mp.mpf(0)
    a, b = max(-e0, t - e0), min(e0, t + e0)
    if a < b:
        integral += middle(a, b)
    a = max(-e0, t + e0)
    if a < e0:
        integral += left(a, e0)
    return lap_delta1(t - e0, e0) / 2 + mp.exp(-e0) / 2 * lap_delta1(t + e0, e0) + integral


def lap_delta(t, e0, k: int, closed: bool = True):
    """δ_k(t) = ½·δ_{k−1}(t − ε₀) + ½e^{−ε₀}·δ_{k−1}(t + ε₀) + ∫_{−ε₀}^{ε₀} e^{(ℓ−ε₀)/2}/4 · δ_{k−1}(t − ℓ) dℓ, the
    integral split where t − ℓ crosses a kink j·ε₀ of δ_{k−1} (|j| < k)."""
    if k == 1:
        return lap_delta1(t, e0)
    if k == 2 and closed:
        return lap_delta2(t, e0)
    if t >= k * e0:
        return mp.mpf(0)
    cuts = sorted({-e0, e0, *(t - j * e0 for j in range(-(k - 1), k) if -e0 < t - j * e0 < e0)})
    integral = mp.quad(lambda ell: mp.exp((ell - e0) / 2) / 4 * lap_delta(t - ell, e0, k - 1, closed), cuts)
    return lap_delta(t - e0, e0, k - 1, closed) / 2 + mp.exp(-e0) / 2 * lap_delta(t + e0, e0, k - 1, closed) + integral


def lap_epsilon(e0: F, k: int, delta: F):
    with mp.workdps(30):
        e = to_mp(e0)
        if k == 1:  # δ(ε) = 1 − e^{(ε − ε₀)/2} on [−ε₀, ε₀]
            return max(mp.mpf(0), e + 2 * mp.log(1 - to_mp(delta)))
        d = to_mp(delta)
        if lap_delta(mp.mpf(0), e, k) <= d:
            return mp.mpf(0)
        lo, hi = mp.mpf(0), k * e
        while hi - lo > mp.mpf(10) ** -22:
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if lap_delta(mid, e, k) > d else (lo, mid)
        return hi


# -- comparisons -------------------------------------------------------------------------------------------------


def inside(lower: F, reference, upper: F | None, slack: F) -> bool:
    ref = exact(reference)
    return lower <= ref + slack and (upper is None or ref - slack <= upper)


def pld_contains(plds, direction: str, eps: F, reference, slack: F) -> tuple[F, F]:
    """Asserts lower PLD's δ(ε) ≤ reference ≤ upper PLD's δ(ε) (ends of the Arb balls); returns (lower, upper)."""
    with ctx.workprec(READ_PREC):
        lo = lower_end(delta_at(plds[direction, "lower"], eps, READ_PREC))
        up = upper_end(delta_at(plds[direction, "upper"], eps, READ_PREC))
    ref = exact(reference)
    assert lo <= ref + slack and ref - slack <= up, (direction, eps, float(lo), float(ref), float(up))
    return lo, up


def rr_pld_check(p: F, k: int, relation: str, uses: int, h: F, tail: F, rng: random.Random | None = None) -> int:
    """SelfComposed(rr, uses).plds(h, 64, tail) bracket the exact δ(ε) of both directions at ε = 0, negative ε, the
    exact losses ±j·log r of the law written to 30 digits (and 1e-25 either side), grid points j·h around them, and
    a few others. Returns the number of checks."""
    law = rr_law(p, k, relation, uses)
    plds = SelfComposed(RandomizedResponse(p, k, relation), uses).plds(h, 64, tail)
    with mp.workdps(DPS):
        logs = sorted({mp.log(to_mp(a / b)) for a, b in law})
    if rng is not None:
        logs = rng.sample(logs, min(4, len(logs)))
    else:
        logs = logs[:2] + logs[len(logs) // 2: len(logs) // 2 + 1] + logs[-2:]
    count = 0
    for direction in ("remove", "add"):
        sign = 1 if direction == "remove" else -1
        epsilons = [F(0), F(-1, 2), F(-5), F(1, 3), F(7, 2)]
        for loss in logs:
            written = F(mp.nstr(sign * loss, 30, min_fixed=-mp.inf, max_fixed=mp.inf))
            grid = math.floor(written / h)
            epsilons += [written, written + F(1, 10**25), written - F(1, 10**25), -written, grid * h, (grid + 1) * h]
        for eps in epsilons:
            pld_contains(plds, direction, eps, law_delta(law, to_mp(eps), direction), SLACK)
            count += 1
    return count


def rr_bracket_check(p: F, k: int, relation: str, uses: int, delta: F) -> F | None:
    """bracket([], delta, leaves=[(rr, uses)]) holds the exact ε(δ); returns its relative width."""
    rr = RandomizedResponse(p, k, relation)
    assert isinstance(folded([(rr, uses)])[0][0], SelfComposed)  # the exact law is what is under test
    reference = rr_epsilon(p, k, relation, uses, delta)
    found = bracket([], delta=delta, leaves=[(rr, uses)])
    assert inside(found.lower, reference, found.upper, SLACK), \
        (p, k, relation, uses, delta, float(found.lower), mp.nstr(reference, 20), found.upper and float(found.upper))
    return found.relative_width()


def breakpoint_deltas(p: F, k: int, relation: str, uses: int) -> list[tuple[F, F]]:
    """(δ, ρ) with δ the exact remove-direction δ(log ρ) at a likelihood ratio ρ of the law (a kink of δ(ε)): there
    ε(δ) is log ρ itself, on the lattice. Only δ in [1e-12, 1/2]."""
    groups = sorted(((a / b, a, b) for a, b in rr_law(p, k, relation, uses) if a > b), reverse=True)
    out = []
    for i in range(1, len(groups)):
        rho = groups[i][0]
        d = sum(a - rho * b for _, a, b in groups[:i])
        if F(1, 10**12) <= d <= F(1, 2):
            out.append((d, rho))
    return out


DECIMAL_P = F(mp.nstr(4 / (3 + mp.e), 12))  # 4/(3 + e) written to 12 digits

RR_CASES = [  # (p, k, relation, uses, δ): a lattice under each relation, p = 1 (every ratio 1), a decimal p,
    # replace-special off a lattice (k − p(k − 1) and p have no common base) and on one with uneven exponents
    # (p = 1/4, k = 5: ratios 2 = 2^1 and 1/4 = 2^−2)
    (F(1, 2), 4, "replace-one", 20, F(1, 10**5)),
    (F(1), 7, "replace-one", 9, F(1, 10**3)),
    (DECIMAL_P, 3, "replace-one", 17, F(1, 10**8)),
    (F(1, 2), 5, "replace-special", 25, F(1, 10**5)),
    (F(1, 4), 5, "replace-special", 30, F(1, 10**3)),
    (F(2, 7), 2, "replace-one", 60, F(1, 10**8)),
]


def test_reference_count_vectors_agree_with_every_sequence():
    # the reference's grouped count-vector law against the k^n sequences of bucket outputs (exact Fractions)
    for p, k, relation, uses in [(F(1, 2), 3, "replace-one", 4), (F(2, 5), 4, "replace-special", 3),
                                 (F(1), 2, "replace-one", 5), (F(1, 4), 5, "replace-special", 4)]:
        assert sorted(rr_law(p, k, relation, uses)) == sorted(sequences_law(p, k, relation, uses))


@pytest.mark.parametrize("case", RR_CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}")
def test_rr_bracket_holds_the_exact_epsilon(case):
    width = rr_bracket_check(*case)
    assert width is not None and width <= F(1, 1000)  # the default tolerance is met


def test_rr_bracket_at_a_kink_of_delta():
    # δ chosen exactly at δ(log ρ): ε(δ) = log ρ is a lattice point of the law
    p, k, relation, uses = F(1, 2), 4, "replace-one", 12
    for d, rho in breakpoint_deltas(p, k, relation, uses)[:2]:
        found = bracket([], delta=d, leaves=[(RandomizedResponse(p, k, relation), uses)])
        with mp.workdps(DPS):
            assert inside(found.lower, mp.log(to_mp(rho)), found.upper, SLACK)


@pytest.mark.parametrize("case", [(F(1, 2), 4, "replace-one", 20), (F(1, 4), 5, "replace-special", 13),
                                  (F(3, 5), 6, "replace-special", 7)], ids=str)
def test_rr_plds_bracket_the_exact_delta(case):
    for h in (F(1, 7), F(1, 100)):
        for tail in (F(1, 10**12), F(1, 10**3)):
            rr_pld_check(*case, h, tail)


LAPLACE_CASES = [(F(1), F(1), F(3, 100)), (F(3), F(1), F(1, 7)), (F(7, 10), F(1, 3), F(1, 100)),
                 (F(1, 3), F(1, 20), F(1, 600)), (F(20), F(3), F(3, 200))]  # ε₀/h whole in the 1st, 4th and 5th


def laplace_pld_check(b: F, s: F, h: F, uses: int, extra: list[F] = ()) -> int:
    """Laplace(b, s).plds(h, 64, 1e-12) (uses = 1, both directions) or its ``uses``-fold composition (checks.composed,
    remove) bracket the reference δ at ε around the kinks j·ε₀, inside, outside and at grid points."""
    e0 = s / b
    plds = Laplace(b, s).plds(h, 64, F(1, 10**12))
    if uses > 1:
        plds = dict(zip([("remove", "lower"), ("remove", "upper")], composed(plds, "remove", uses, F(1, 10**12), 64)))
    epsilons = [F(0), -e0, e0, e0 / 2, -e0 / 3, e0 - h / 3, uses * e0 - h / 5, uses * e0, uses * e0 + F(1, 10),
                -uses * e0 - F(1, 10), (uses - 1) * e0, h * math.floor(e0 / h), h * math.floor(e0 / h) + h / 2,
                -(e0 + h / 2), *extra]
    count = 0
    for eps in epsilons:
        with mp.workdps(30):
            reference = lap_delta(to_mp(eps), to_mp(e0), uses)
        for direction in (("remove", "add") if uses == 1 else ("remove",)):
            pld_contains(plds, direction, eps, reference, QUAD_SLACK)
            count += 1
    return count


def test_laplace_delta2_closed_form_agrees_with_quadrature():
    # the reference's closed-form δ_2 against the nested quadrature of the recursion (split at the kinks)
    with mp.workdps(30):
        for e0 in (mp.mpf(1) / 3, mp.mpf(20)):
            for t in (-3 * e0, -e0 / 2, mp.mpf(0), e0 / 3, 1.5 * e0, 2 * e0 - mp.mpf(1) / 100):
                assert abs(lap_delta(t, e0, 2, closed=True) - lap_delta(t, e0, 2, closed=False)) < mp.mpf(10) ** -25


@pytest.mark.parametrize("case", LAPLACE_CASES, ids=str)
def test_laplace_plds_bracket_one_and_two_uses(case):
    laplace_pld_check(*case, 1)
    laplace_pld_check(*case, 2)


def test_laplace_plds_bracket_three_uses():
    laplace_pld_check(F(7, 10), F(1, 3), F(1, 100), 3)


@pytest.mark.parametrize("b, s, uses, delta", [(F(1), F(1), 1, F(1, 10**5)), (F(1), F(5, 7), 2, F(1, 10**3)),
                                              (F(3), F(1), 2, F(1, 10**8))], ids=str)
def test_laplace_bracket_holds_the_reference_epsilon(b, s, uses, delta):
    reference = lap_epsilon(s / b, uses, delta)
    found = bracket([], delta=delta, leaves=[(Laplace(b, s), uses)])
    assert inside(found.lower, reference, found.upper, QUAD_SLACK)
    assert found.relative_width() <= F(1, 1000)


def test_laplace_width_is_tiny_where_the_kinks_are_grid_points():
    # with h = ε₀/m the atoms keep their losses and both pairs are exact there: at δ = 1e-8 (ε near 2ε₀) the
    # bracket is orders below a first-order one (2e-10 relative here, against 7e-4 at h = 1/2000, not a divisor)
    from rdp_verify.curves.accountant import default_settings

    leaves, delta = [(Laplace(F(1), F(5, 7)), 2)], F(1, 10**8)
    reference = lap_epsilon(F(5, 7), 2, delta)
    widths = {}
    for h in (F(1, 70), F(1, 2000)):
        found = bracket([], delta=delta, leaves=leaves, settings=default_settings([], h, delta, leaves=leaves))
        assert inside(found.lower, reference, found.upper, QUAD_SLACK)
        widths[h] = found.relative_width()
    assert widths[F(1, 70)] < F(1, 10**8) < widths[F(1, 2000)]


# -- long sweeps -------------------------------------------------------------------------------------------------

P_CHOICES = [F(a, b) for b in range(2, 11) for a in range(1, b + 1)] + [DECIMAL_P, F(mp.nstr(1 / mp.pi, 15)),
                                                                        F(999, 1000), F(1, 1000)]
DELTAS = [F(1, 10**3), F(1, 10**5), F(1, 10**8)]
RELATIONS = ["replace-one", "replace-special"]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_sweep_rr_bracket(seed):
    rng = random.Random(seed)
    for _ in range(30):
        rr_bracket_check(rng.choice(P_CHOICES), rng.randint(2, 12), rng.choice(RELATIONS), rng.randint(2, 60),
                         rng.choice(DELTAS))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2))
def test_sweep_rr_bracket_at_kinks_and_at_delta_zero(seed):
    rng = random.Random(100 + seed)
    for _ in range(20):
        p, k, relation, uses = rng.choice(P_CHOICES[:-4]), rng.randint(2, 12), rng.choice(RELATIONS), rng.randint(2, 40)
        groups = [(a, b) for a, b in rr_law(p, k, relation, uses) if a > b]
        tv = sum(a - b for a, b in groups)  # δ(0) of the remove direction
        kinks = breakpoint_deltas(p, k, relation, uses)
        picks = [d for d, _ in rng.sample(kinks, min(1, len(kinks)))]
        picks += [d for d in (tv, tv * (1 - F(1, 10**6)), tv * (1 + F(1, 10**6))) if 0 < d < 1]
        for d in picks:
            rr_bracket_check(p, k, relation, uses, d)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_sweep_rr_plds(seed):
    rng = random.Random(200 + seed)
    for _ in range(8):
        p, k, relation, uses = rng.choice(P_CHOICES), rng.randint(2, 12), rng.choice(RELATIONS), rng.randint(2, 60)
        for h in (F(1, 7), F(1, 100), F(1, 1000)):
            for tail in (F(1, 10**12), F(1, 10**3)):
                rr_pld_check(p, k, relation, uses, h, tail, rng)


LAPLACE_VALUES = [F(1), F(3), F(1, 3), F(7, 10), F(20), F(1, 20), F(2), F(5, 7)]


def draw_laplace(rng: random.Random) -> tuple[F, F] | None:
    """A random (b, s) from LAPLACE_VALUES, or None when ε₀ = s/b > 30 (a grid too long for a sweep)."""
    b, s = rng.choice(LAPLACE_VALUES), rng.choice(LAPLACE_VALUES)
    return (b, s) if s / b <= 30 else None


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_sweep_laplace_plds(seed):
    rng = random.Random(300 + seed)
    for _ in range(12):
        if (drawn := draw_laplace(rng)) is None:
            continue
        b, s = drawn
        e0 = s / b
        h = e0 / rng.choice([3, 10, 50, 200]) if rng.random() < 0.4 else \
            rng.choice([F(3, 100), F(1, 7), F(1, 100), F(1, 64), F(1, 1000)])
        h = max(h, e0 / 3000)
        for uses in (1, 2, 3):
            laplace_pld_check(b, s, h, uses, [F(rng.randint(-1000, 1000), 1000) * uses * e0 for _ in range(3)])


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2))
def test_sweep_laplace_bracket(seed):
    rng = random.Random(400 + seed)
    for _ in range(10):
        if (drawn := draw_laplace(rng)) is None:
            continue
        b, s = drawn
        uses, delta = rng.choice([1, 2, 3]), rng.choice(DELTAS)
        reference = lap_epsilon(s / b, uses, delta)
        found = bracket([], delta=delta, leaves=[(Laplace(b, s), uses)])
        assert inside(found.lower, reference, found.upper, QUAD_SLACK), (b, s, uses, delta)


@pytest.mark.slow
@pytest.mark.parametrize("b, s", [(F(1), F(1)), (F(20), F(3)), (F(7, 10), F(1, 3)), (F(10), F(1))], ids=str)
def test_laplace_fifty_uses_against_dp_accounting(b, s):
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    for delta in DELTAS:
        found = bracket([], delta=delta, leaves=[(Laplace(b, s), 50)])
        peer = {pessimistic: pld.from_laplace_mechanism(float(b), sensitivity=float(s), pessimistic_estimate=pessimistic,
                                                        value_discretization_interval=1e-4, use_connect_dots=pessimistic)
                .self_compose(50).get_epsilon_for_delta(float(delta)) for pessimistic in (False, True)}
        assert found.lower <= F(peer[True]) + F(1, 10**6) and F(peer[False]) - F(1, 10**6) <= found.upper


def mixed_delta(law, e0, eps, direction: str):
    """δ(ε) of the exact randomized-response law composed with one Laplace use: E over the law's loss of the Laplace
    curve at ε minus it (remove: P-mass at log ρ; add: Q-mass at −log ρ)."""
    with mp.workdps(DPS):
        total = mp.mpf(0)
        for a, b in law:
            mass, loss = (a, mp.log(to_mp(a / b))) if direction == "remove" else (b, -mp.log(to_mp(a / b)))
            total += to_mp(mass) * lap_delta1(eps - loss, e0)
        return total


@pytest.mark.slow
@pytest.mark.parametrize("case", [(F(1, 2), 4, "replace-one", 10, F(1), F(1)),
                                  (F(1, 2), 5, "replace-special", 8, F(3), F(1)),
                                  (F(1, 4), 5, "replace-special", 6, F(7, 10), F(1, 3))], ids=str)
def test_rr_folded_beside_laplace(case):
    # the folded law composed on the grid with another leaf: ε(δ) against the exact mixture by bisection
    p, k, relation, uses, b, s = case
    law = rr_law(p, k, relation, uses)
    e0 = to_mp(s / b)
    for delta in (F(1, 10**3), F(1, 10**6)):
        with mp.workdps(DPS):
            top = max(abs(mp.log(to_mp(a / c))) for a, c in law) + e0 + 1
            reference = max(epsilon_of(lambda e, d=d: mixed_delta(law, e0, e, d), delta, top) for d in ("remove", "add"))
        found = bracket([], delta=delta, leaves=[(RandomizedResponse(p, k, relation), uses), (Laplace(b, s), 1)])
        assert inside(found.lower, reference, found.upper, SLACK), (case, delta, float(found.lower),
                                                                     mp.nstr(reference, 15), float(found.upper))
