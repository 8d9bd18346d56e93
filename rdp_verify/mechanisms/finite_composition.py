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
returned ball contains δ(ε); no grid, no truncation. The work is one term per count vector:
:func:`outcome_count` of them (randomized response over k ≥ 3 buckets: (n + 1)(n + 2)/2; k = 2 or
replace-special: n + 1), refused above :data:`MAX_TERMS`.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb, factorial, lcm, prod
from typing import Iterator, Sequence

from flint import arb, ctx

from ..foundations.inputs import InputError
from ..foundations.results import to_arb

__all__ = ["MAX_TERMS", "Part", "outcome_count", "composed_delta"]

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


def composed_delta(parts: Sequence[Part], epsilon: Fraction, prec: int, direction: str = "remove") -> arb:
    """A ball (at ``prec`` bits) containing δ(ε) of the composition of ``parts`` (module docstring): the remove
    direction of the pairs (P, Q), or with ``direction="add"`` of (Q, P)."""
    if direction not in ("remove", "add"):
        raise InputError(f"direction={direction!r} must be 'remove' or 'add'")
    parts = [(q, p, n) if direction == "add" else (p, q, n) for p, q, n in parts]
    for p, q, n in parts:
        if len(p) != len(q) or not p or sum(map(Fraction, p)) != 1 or sum(map(Fraction, q)) != 1 or n < 0:
            raise InputError("composed_delta needs pairs of finite distributions (masses summing to 1) and counts >= 0")
    if outcome_count(parts) > MAX_TERMS:
        raise InputError(f"{outcome_count(parts)} count vectors: more than {MAX_TERMS}")
    terms, denominator = [(1, 1)], 1
    for p, q, n in parts:  # the product of the parts' count laws
        part, d = _part_terms(p, q, n)
        terms = [(a * x, b * y) for a, b in terms for x, y in part]
        denominator *= d
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
