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
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import comb, factorial, lcm, prod
from typing import Iterator, Sequence

from flint import arb, ctx

from ..foundations.inputs import InputError
from ..foundations.results import lower_end, to_arb, upper_end

__all__ = ["MAX_TERMS", "Part", "outcome_count", "composed_delta", "composed_epsilon"]

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
        weight = factorial(n) // prod(factorial(ci) for ci in c)
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
