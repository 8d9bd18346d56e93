"""Exact δ(ε) of compositions of finite-outcome mechanisms, by enumerating the outcome counts.

A mechanism with finitely many outcomes i = 1…m and exact masses (P_i, Q_i) (randomized response:
:mod:`rdp_verify.mechanisms.randomized_response`) used n times non-adaptively releases, up to order, the
vector of counts c = (c_1, …, c_m), Σ c_i = n, with

    P(c) = n!/(c_1!⋯c_m!) · Π_i P_i^{c_i},   Q(c) = n!/(c_1!⋯c_m!) · Π_i Q_i^{c_i},

and the counts are a sufficient statistic: the likelihood ratio of a sequence of outcomes depends on it only
through c. Several such mechanisms (parts j with n_j uses each) compose to the product of their count laws.
The hockey-stick divergence of the composition is then the finite sum

    δ(ε) = Σ_c (P(c) − e^ε·Q(c))_+

(the Neyman–Pearson region of the composed pair; the same formula as one use's, over the C(n+m−1, m−1)
count vectors instead of the m outcomes). The worst case of an adaptive composition of these mechanisms is
this product pair (each use's pair does not depend on the earlier outputs: Zhu, Dong, Wang 2022, AISTATS,
Theorem 10, applied to a dominating pair that is the mechanism's own). For randomized response this is the
classical exact composition (Kairouz, Oh, Viswanath 2015, ICML, Theorem 3.3 for its optimal-composition form).

**Arithmetic.** Every P(c), Q(c) is computed exactly as an integer over the common denominator
Π_j D_j^{n_j} (D_j a common denominator of part j's masses); only e^ε is a ball. Each term
(A_c − e^ε·B_c)_+ is enclosed in Arb (a term whose ball contains 0 contributes [0, its upper end]), so the
returned ball contains δ(ε); no grid, no truncation. :func:`composed_epsilon` inverts δ(ε) exactly: between
consecutive log-likelihood ratios it is (S_A − e^ε·S_B)/D with exact sums. The work is one term per count vector:
:func:`outcome_count` of them (randomized response over k ≥ 3 buckets: (n + 1)(n + 2)/2; k = 2 or
replace-special: n + 1), refused above :data:`MAX_TERMS`.

**One law, rounded once** (:class:`SelfComposed`, what the accountant composes for n > 1 uses of randomized
response). The composed pair is itself a finite pair: one atom per likelihood ratio ρ, with P(ρ) and Q(ρ) the sums
over the count vectors of that ratio (grouping equal ratios is exact: their terms (P − e^ε·Q)_+ share a sign).
When the ratios r_i of one use are integer powers b^{n_i} of one rational b (:func:`lattice`; randomized response
under REPLACE_ONE: r, 1/r, 1), the composed ratio is b^{Σ n_i}, and P of each power is a coefficient of
g(x)^n, g(x) = Σ_i P_i·x^{n_i} (one exact FLINT power: 2n + 1 atoms instead of (n + 1)(n + 2)/2 count vectors),
with Q(b^j) = P(b^j)·b^{−j}; otherwise the count vectors are grouped (:func:`composed_law`). Its PLDs are those of
:mod:`rdp_verify.pld.rounding` for this one pair: each loss log ρ rounded up (upper) or down (lower) to h·ℤ,
⌈log ρ/h⌉ decided in Arb (never a whole number for a rational ρ ≠ 1: Lindemann–Weierstrass), each mass rounded up or
down to 2^−bits by exact integer division, the end atoms holding at most the tail allowance moved to +∞ or the
bottom point (upper) and to the top point or dropped (lower). Valid for the same reason (Meiser & Mohammadi 2018;
Koskela, Jälkö, Honkela 2020): (1) of the composed pair is non-decreasing in each loss and mass. The bracket then
carries one cell's rounding instead of n, and no product is computed. Cost: the atoms' exact integers (O(n²) bits
on the lattice), refused above :data:`MAX_LAW_BITS` in all (then the uses are composed on the grid).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import comb, lcm, log, prod
from typing import Iterator, Sequence

from flint import arb, ctx, fmpz_poly

from ..foundations.inputs import InputError
from ..foundations.results import lower_end, to_arb, upper_end
from ..pld.compose import PLD
from ..pld.rounding import MAX_POINTS, FinitePair
from .base import Mechanism

__all__ = ["MAX_TERMS", "MAX_LAW_BITS", "Part", "outcome_count", "composed_delta", "composed_epsilon", "lattice",
           "composed_law", "ComposedLaw", "SelfComposed", "self_composed"]

MAX_TERMS = 200_000  # count vectors summed at most (about a second at 256 bits)

Part = tuple[Sequence[Fraction], Sequence[Fraction], int]  # (P masses, Q masses, number of uses)


def outcome_count(parts: Sequence[Part]) -> int:
    """The number of count vectors of the composition: Π_j C(n_j + m_j − 1, m_j − 1)."""
    return prod(comb(n + len(p) - 1, len(p) - 1) for p, _, n in parts)


def _counts(n: int, m: int) -> Iterator[tuple[int, ...]]:
    """Every (c_1, …, c_m) of non-negative integers with sum n."""
    if m == 1:
        yield (n,)
        return
    for c in range(n + 1):
        for rest in _counts(n - c, m - 1):
            yield (c, *rest)


def _part_terms(p: Sequence[Fraction], q: Sequence[Fraction], n: int) -> tuple[list[tuple[int, int]], int]:
    """([(A_c, B_c)], D^n): P(c) = A_c/D^n and Q(c) = B_c/D^n exactly, D the masses' common denominator."""
    d = lcm(*(Fraction(x).denominator for x in (*p, *q)))
    a = [int(Fraction(x) * d) for x in p]
    b = [int(Fraction(x) * d) for x in q]
    terms = []
    for c in _counts(n, len(p)):
        weight, rest = 1, n  # the multinomial n!/(c_1!⋯c_m!) as a product of binomials (no huge factorials)
        for ci in c:
            weight, rest = weight * comb(rest, ci), rest - ci
        terms.append((weight * prod(x ** ci for x, ci in zip(a, c)), weight * prod(x ** ci for x, ci in zip(b, c))))
    return terms, d ** n


def _terms(parts: Sequence[Part], direction: str) -> tuple[list[tuple[int, int]], int]:
    """([(A_c, B_c)], D): the composed pair's masses P(c) = A_c/D, Q(c) = B_c/D over every count vector c. The add
    direction's are the remove direction's swapped (the same count vectors and common denominator, P and Q
    exchanged), so both come from one enumeration, kept for the last few compositions."""
    if direction not in ("remove", "add"):
        raise InputError(f"direction={direction!r} must be 'remove' or 'add'")
    terms, denominator = _remove_terms(tuple((tuple(map(Fraction, p)), tuple(map(Fraction, q)), n)
                                             for p, q, n in parts))
    return ([(b, a) for a, b in terms] if direction == "add" else terms), denominator


@lru_cache(maxsize=4)
def _remove_terms(parts: tuple[tuple[tuple[Fraction, ...], tuple[Fraction, ...], int], ...]
                  ) -> tuple[list[tuple[int, int]], int]:
    """The remove direction's terms (the caller must not change the list: it is kept)."""
    for p, q, n in parts:
        if len(p) != len(q) or not p or sum(map(Fraction, p)) != 1 or sum(map(Fraction, q)) != 1 or n < 0:
            raise InputError("the composition needs pairs of finite distributions (masses summing to 1) and counts >= 0")
    if outcome_count(parts) > MAX_TERMS:
        raise InputError(f"{outcome_count(parts)} count vectors: more than {MAX_TERMS}")
    terms, denominator = [(1, 1)], 1
    for p, q, n in parts:  # the product of the parts' count laws
        part, d = _part_terms(p, q, n)
        terms = [(a * x, b * y) for a, b in terms for x, y in part]
        denominator *= d
    return terms, denominator


def composed_epsilon(parts: Sequence[Part], delta: Fraction, prec: int,
                     direction: str = "remove") -> tuple[Fraction, Fraction | None]:
    """[ε_lower, ε_upper] containing ε(δ) = min{ε ≥ 0 : δ(ε) ≤ δ} of the composition (one direction), exact
    rationals; upper None when no finite ε reaches δ (mass where Q = 0 above δ).

    With the count vectors grouped by their likelihood ratio ρ = A_c/B_c > 1 and sorted, ρ_1 > ρ_2 > …, δ(ε) is,
    between consecutive log ρ_i, (SA_i − e^ε·SB_i)/D with SA_i, SB_i the exact sums over the ratios ≥ ρ_i (and
    the mass where Q = 0 in SA). Its values at the breakpoints ε = log ρ_i are exact rationals; the segment
    holding δ is found by comparing them with δ exactly, and there ε(δ) = log((SA_i − δ·D)/SB_i), a logarithm of
    an exact rational enclosed in Arb at ``prec`` bits (lower end rounded down, upper end up). δ(ε) is continuous
    and decreasing, so this is the inverse; no bisection, no grid."""
    delta = Fraction(delta)
    if not 0 <= delta <= 1:
        raise InputError(f"delta={delta} must lie in [0, 1]")
    terms, denominator = _terms(parts, direction)
    target = delta * denominator
    groups: dict[Fraction, list[int]] = {}
    infinite = 0
    for a, b in terms:
        if b == 0:
            infinite += a
        elif a > b:
            g = groups.setdefault(Fraction(a, b), [0, 0])
            g[0] += a
            g[1] += b
    if infinite > target:
        return Fraction(0), None  # δ(ε) ≥ the mass where Q = 0 at every ε: a trivially true lower end
    sa, sb = infinite, 0
    for ratio in sorted(groups, reverse=True):
        if sa - ratio * sb > target:  # δ(log ratio) > δ: ε(δ) lies above log ratio, on the current segment
            break
        sa, sb = sa + groups[ratio][0], sb + groups[ratio][1]
    else:
        if sa - sb <= target:  # δ(0) ≤ δ
            return Fraction(0), Fraction(0)
    with ctx.workprec(prec):
        eps = to_arb((sa - target) / sb).log()
        return max(lower_end(eps), Fraction(0)), upper_end(eps)


def composed_delta(parts: Sequence[Part], epsilon: Fraction, prec: int, direction: str = "remove") -> arb:
    """A ball (at ``prec`` bits) containing δ(ε) of the composition of ``parts`` (module docstring): the remove
    direction of the pairs (P, Q), or with ``direction="add"`` of (Q, P)."""
    terms, denominator = _terms(parts, direction)
    with ctx.workprec(prec):
        e = to_arb(Fraction(epsilon)).exp()
        total = arb(0)
        for a, b in terms:
            t = arb(a) - e * arb(b)
            if t > 0:
                total += t
            elif not t < 0:  # undecided: the term lies in [0, its upper end]
                total += arb(0).union(arb(t.upper()))
        return total / arb(denominator)


# -- the composition as one finite pair, rounded to the grid once ---------------------------------------------

MAX_LAW_BITS = 1 << 28  # the composed law's exact integers, in all (32 MB): beyond, the grid composes the uses


def _common_base(s: Fraction, t: Fraction) -> Fraction | None:
    """The largest b with s = b^k and t = b^l (k, l ≥ 1 whole), for rationals s, t > 1, or None: Euclid's
    algorithm on the exponents, run on the numbers (s/t = b^{k−l}); a pair without a common base makes the heights
    grow, and the search stops."""
    height = 4 * max(x.numerator.bit_length() for x in (s, t)) + 64
    while True:
        if s < t:
            s, t = t, s
        s /= t
        if s == 1:
            return t
        if s.numerator.bit_length() > height or t.numerator.bit_length() > height:
            return None


def _exponent(r: Fraction, base: Fraction) -> int | None:
    """n with r = base^n exactly (r > 0, base > 1), or None."""
    guess = round((log(r.numerator) - log(r.denominator)) /
                  (log(base.numerator) - log(base.denominator)))
    return guess if base ** guess == r else None


def lattice(ratios: Sequence[Fraction]) -> tuple[Fraction, list[int]] | None:
    """(b, [n_i]): a rational b > 1 with r_i = b^{n_i} exactly for every likelihood ratio r_i > 0 (the losses are
    then n_i·log b, a lattice), the largest such b; None when the ratios have no common base. All r_i = 1: b = 2
    and every n_i = 0."""
    base = None
    for r in ratios:
        if r <= 0:
            return None
        if r != 1:
            s = max(r, 1 / r)
            base = s if base is None else _common_base(base, s)
            if base is None:
                return None
    base = Fraction(2) if base is None else base
    exponents = [_exponent(Fraction(r), base) for r in ratios]
    return None if any(n is None for n in exponents) else (base, exponents)


@dataclass(frozen=True)
class ComposedLaw:
    """A finite pair as atoms: P_i = p[i]/denominator, Q_i = q[i]/denominator exactly, likelihood ratio
    ratios[i] = p[i]/q[i] (every q[i] > 0), one atom per distinct ratio."""

    ratios: tuple[Fraction, ...]
    p: tuple[int, ...]
    q: tuple[int, ...]
    denominator: int


def _lattice_law(p: Sequence[Fraction], q: Sequence[Fraction], uses: int) -> ComposedLaw | None:
    """The composed law when the ratios lie on a lattice b^n (:func:`lattice`): the losses n·log b of the counts
    grouped by n, P(n) the coefficients of g(x)^uses, g(x) = Σ_i P_i·x^{n_i} (fmpz_poly over the masses' common
    denominator d), Q(n) = P(n)·b^{−n}; None without a lattice or beyond :data:`MAX_LAW_BITS`."""
    found = lattice([a / b for a, b in zip(p, q)])
    if found is None:
        return None
    (base, exponents), d = found, lcm(*(x.denominator for x in p))
    low, high = min(exponents), max(exponents)
    if (uses * (high - low) + 1) * uses * (d.bit_length() + base.numerator.bit_length() + 1) > MAX_LAW_BITS:
        return None
    g = [0] * (high - low + 1)
    for x, n in zip(p, exponents):
        g[n - low] += int(x * d)
    u, v = base.numerator, base.denominator
    top, bottom = max(uses * high, 0), max(-uses * low, 0)  # over u^top·v^bottom, every Q(n) is whole
    scale = u ** top * v ** bottom
    ratios, ps, qs = [], [], []
    for j, a in enumerate((fmpz_poly(g) ** uses).coeffs()):
        n = uses * low + j
        if a:
            ratios.append(base ** n)
            ps.append(int(a) * scale)
            qs.append(int(a) * v ** (n + bottom) * u ** (top - n))
    return ComposedLaw(tuple(ratios), tuple(ps), tuple(qs), d ** uses * scale)


@lru_cache(maxsize=8)
def composed_law(p: tuple[Fraction, ...], q: tuple[Fraction, ...], uses: int) -> ComposedLaw | None:
    """The exact law of ``uses`` non-adaptive uses of one finite pair (P, Q) with every Q_i > 0, one atom per
    likelihood ratio: on a lattice of losses (:func:`_lattice_law`: randomized response under REPLACE_ONE,
    O(uses) atoms), else the count vectors (:func:`outcome_count`: under REPLACE_SPECIAL, two outcomes, uses + 1
    of them) grouped by ratio; None beyond :data:`MAX_TERMS` count vectors or :data:`MAX_LAW_BITS` of integers."""
    if not all(b > 0 for b in q):
        return None
    law = _lattice_law(p, q, uses)
    if law is not None:
        return law
    parts = ((p, q, uses),)
    d = lcm(*(x.denominator for x in (*p, *q)))
    if outcome_count(parts) > MAX_TERMS or outcome_count(parts) * uses * (d.bit_length() + 1) > MAX_LAW_BITS:
        return None
    terms, denominator = _remove_terms(parts)
    groups: dict[Fraction, list[int]] = {}
    for a, b in terms:
        g = groups.setdefault(Fraction(a, b), [0, 0])
        g[0] += a
        g[1] += b
    ratios = sorted(groups)
    return ComposedLaw(tuple(ratios), tuple(groups[r][0] for r in ratios), tuple(groups[r][1] for r in ratios),
                       denominator)


def _loss_index(ratio: Fraction, h: Fraction) -> int:
    """⌈log(r)/h⌉, proven: log r/h is never a whole number for a rational r ≠ 1 (log r = m·h would make r =
    e^{rational}, transcendental by Lindemann–Weierstrass); the precision doubles until Arb decides."""
    if ratio == 1:
        return 0
    prec = 128 + max(ratio.numerator.bit_length(), ratio.denominator.bit_length()).bit_length()
    while prec <= 1 << 16:
        with ctx.workprec(prec):
            x = to_arb(ratio).log() / to_arb(h)
            lo, up = x.lower().floor(), x.upper().floor()
            if lo == up:
                return int(up.unique_fmpz()) + 1
        prec *= 2
    raise ArithmeticError(f"could not round log({ratio})/{h} to the grid")


def _round_law(law: ComposedLaw, direction: str, h: Fraction, bits: int, tail: Fraction) -> tuple[PLD, PLD]:
    """(upper, lower): the direction's loss (remove: log r under P; add: −log r under Q) rounded up / down to h·ℤ
    once, masses rounded up / down in units of 2^−bits (exact integer divisions); atoms at the ends holding at most
    ``tail`` (their masses rounded up) move to +∞ / the bottom point (upper) and to the top point / are dropped
    (lower), as :func:`rdp_verify.pld.rounding.discretize` does (module docstring)."""
    remove = direction == "remove"
    atoms = sorted(((_loss_index(r if remove else 1 / r, h), r == 1, a if remove else b)
                    for r, a, b in zip(law.ratios, law.p, law.q)),
                   key=lambda atom: atom[:2])  # by loss: at index 0 the exact 0 above the losses in (−h, 0)
    den = law.denominator
    up = [-(-(m << bits) // den) for *_, m in atoms]
    down = [(m << bits) // den for *_, m in atoms]
    allowance = int(tail * 2 ** bits)
    first, spent = 0, 0
    while first < len(atoms) - 1 and spent + up[first] <= allowance:
        spent += up[first]
        first += 1
    last, spent = len(atoms) - 1, 0
    while last > first and spent + up[last] <= allowance:
        spent += up[last]
        last -= 1
    ks = [k for k, _, _ in atoms]
    lows = [k if zero else k - 1 for k, zero, _ in atoms]  # ⌊x⌋ = ⌈x⌉ − 1 except at the exact loss 0
    if ks[last] - lows[first] + 1 > MAX_POINTS:
        raise InputError(f"the composed grid would have {ks[last] - lows[first] + 1} points, beyond the {MAX_POINTS} "
                         f"allowed: take a larger grid step h")
    upper = [0] * (ks[last] - ks[first] + 1)
    upper[0] += sum(up[:first])  # rounded up further, to the bottom point
    lower = [0] * (lows[last] - lows[first] + 1)
    lower[-1] += sum(down[last + 1:])  # rounded down further, to the top point
    for i in range(first, last + 1):
        upper[ks[i] - ks[first]] += up[i]
        lower[lows[i] - lows[first]] += down[i]
    return (PLD.from_masses(upper, ks[first], sum(up[last + 1:]), bits, h, "up"),
            PLD.from_masses(lower, lows[first], 0, bits, h, "down"))


@dataclass(frozen=True)
class SelfComposed(Mechanism):
    """``uses`` non-adaptive uses of a finite-outcome mechanism (randomized response) as one mechanism: its pair is
    the composed law (:func:`composed_law`), exact, and its PLDs round that law's losses to the grid once (module
    docstring) instead of composing ``uses`` rounded PLDs: one cell's error instead of ``uses`` of them."""

    leaf: Mechanism
    uses: int

    def law(self) -> ComposedLaw:
        p, q = self.leaf.finite_masses()
        found = composed_law(tuple(p), tuple(q), self.uses)
        if found is None:
            raise InputError(f"{self.uses} uses of {self.leaf} have no exact composed law here")
        return found

    def finite_masses(self) -> tuple[tuple[Fraction, ...], tuple[Fraction, ...]]:
        law = self.law()
        return (tuple(Fraction(a, law.denominator) for a in law.p), tuple(Fraction(b, law.denominator) for b in law.q))

    def pair(self) -> FinitePair:
        return FinitePair(*self.finite_masses())

    def loss_scale(self) -> Fraction:
        return self.leaf.loss_scale() * self.uses

    def is_symmetric(self) -> bool:
        return self.leaf.is_symmetric()

    def discretized(self, direction: str, h: Fraction, bits: int, tail: Fraction) -> tuple[PLD, PLD]:
        """(upper, lower) of one direction: the composed law rounded to h·ℤ once (:func:`_round_law`)."""
        return _round_law(self.law(), direction, h, bits, tail)


def self_composed(leaf: Mechanism, uses: int) -> SelfComposed | None:
    """``uses`` uses of a finite-outcome ``leaf`` as one mechanism with its exact law (:class:`SelfComposed`), or
    None (one use, no finite masses, or a law too large: the uses are then composed on the grid)."""
    masses = leaf.finite_masses()
    if uses < 2 or masses is None or composed_law(tuple(masses[0]), tuple(masses[1]), uses) is None:
        return None
    return SelfComposed(leaf, uses)
