"""Lemmas 9 and 10 of Mironov–Talwar–Zhang 2019: the pieces of A_α split at z0, proven.

Section 3.2 writes A_α = A^(1) + A^(2) with

    A^(1) = ∫_{−∞}^{z0} μ0 w^α dz,   A^(2) = ∫_{z0}^{∞} μ0 w^α dz,
    z0 = 1/2 + σ² ln(1 + 1/(q(α − 1))),   w = 1 − q + q μ1/μ0,

and bounds them by

    Lemma 9  (any α ≥ 1, q ∈ [0, 1]):  A^(1) ≤ 1 + q²α(α − 1)(e^{1/σ²} − 1),
    Lemma 10 (q ≤ 1/5, σ ≥ 4, (4), (5)):  A^(2) ≤ 0.9 q²α(α − 1)/σ².

z0 is irrational, so it is enclosed in Arb by an exact dyadic bracket
[z0_lo, z0_hi] (width ~2^−prec·z0). The three integrals over (−∞, z0_lo],
[z0_lo, z0_hi] (the sliver S) and [z0_hi, ∞) are proven enclosures from
:func:`rdp_verify.methods.rigorous.partial_moment`; the integrand is positive, so

    A^(1) ∈ [P1.lower, P1.upper + S.upper],   A^(2) ∈ [P2.lower, P2.upper + S.upper].

partial_moment's error is absolute, 10^−dps relative to the whole A_α: a
piece much smaller than that (A^(2) is often below 1e−50) is enclosed as
[0, ~10^−dps·A_α], which still decides Lemma 10 whenever the bound is larger.
P1 + S + P2 must overlap the full enclosure of A_α
(:func:`rdp_verify.methods.rigorous.enclose`); ``sum_consistent`` reports it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from flint import arb, ctx

from ..foundations.decimals import interval_json
from ..foundations.inputs import SGM, fraction_text
from ..foundations.results import Bounded, arb_to_bounded, to_arb
from ..methods.rigorous import enclose, partial_moment
from .table1 import conditions

__all__ = ["Pieces", "z0_bracket", "pieces", "lemma9_bound", "lemma10_bound", "lemmas_report"]


MAX_DPS = 300


def _with_prec(dps: int, fn: Any) -> Any:
    saved = ctx.prec
    try:
        ctx.prec = math.ceil(dps * math.log2(10)) + 40
        return fn()
    finally:
        ctx.prec = saved


def z0_bracket(sgm: SGM, dps: int = 30) -> tuple[Fraction, Fraction]:
    """Exact rationals z0_lo ≤ z0 ≤ z0_hi, z0 = 1/2 + σ² ln(1 + 1/(q(α − 1))) (Section 3.2)."""
    ball = _with_prec(dps, lambda: arb(0.5) + to_arb(sgm.sigma**2) * (1 + 1 / to_arb(sgm.q * (sgm.alpha - 1))).log())
    z0 = arb_to_bounded(ball)
    return z0.lower, z0.upper


def lemma9_bound(sgm: SGM, dps: int = 30) -> Bounded:
    """Lemma 9's bound 1 + q²α(α − 1)(e^{1/σ²} − 1), enclosed in Arb."""
    q, s, a = sgm.q, sgm.sigma, sgm.alpha
    return arb_to_bounded(_with_prec(dps, lambda: 1 + to_arb(q * q * a * (a - 1)) * to_arb(1 / (s * s)).expm1()))


def lemma10_bound(sgm: SGM) -> Fraction:
    """Lemma 10's bound 0.9·q²α(α − 1)/σ² (an exact rational)."""
    return Fraction(9, 10) * sgm.q**2 * sgm.alpha * (sgm.alpha - 1) / sgm.sigma**2


@dataclass(frozen=True)
class Pieces:
    """Proven integrals over (−∞, z0_lo], [z0_lo, z0_hi], [z0_hi, ∞) and the whole A_α."""

    z0: tuple[Fraction, Fraction]
    left: Bounded
    sliver: Bounded
    right: Bounded
    total: Bounded

    @property
    def a1(self) -> Bounded:
        """A^(1) = left + part of the sliver (≥ 0: the integrand is positive)."""
        return Bounded.between(max(self.left.lower, Fraction(0)), self.left.upper + self.sliver.upper)

    @property
    def a2(self) -> Bounded:
        """A^(2) = right + the rest of the sliver (≥ 0: the integrand is positive)."""
        return Bounded.between(max(self.right.lower, Fraction(0)), self.right.upper + self.sliver.upper)

    @property
    def sum_consistent(self) -> bool:
        """left + sliver + right overlaps the independent enclosure of A_α."""
        parts = (self.left, self.sliver, self.right)
        return Bounded.between(sum(x.lower for x in parts), sum(x.upper for x in parts)).overlaps(self.total)


def pieces(sgm: SGM, dps: int = 30) -> Pieces:
    """A^(1) and A^(2) of Section 3.2 split at z0, each a proven interval."""
    z0_lo, z0_hi = z0_bracket(sgm, dps)
    left = partial_moment(sgm, sgm.alpha, None, z0_lo, dps)
    sliver = partial_moment(sgm, sgm.alpha, z0_lo, z0_hi, dps)
    right = partial_moment(sgm, sgm.alpha, z0_hi, None, dps)
    total = arb_to_bounded(_with_prec(dps, lambda: enclose(sgm, dps).log_a.exp()))
    return Pieces((z0_lo, z0_hi), left, sliver, right, total)


def _status(value: Bounded, bound: Bounded) -> str:
    if value.upper <= bound.lower:
        return "holds (proven)"
    if value.lower > bound.upper:
        return "violated (proven)"
    return "undecided"


def _ratio(num: Bounded, den: Bounded) -> dict[str, str] | None:
    """num/den as a proven interval, for positive den."""
    if den.lower <= 0:
        return None
    lo = num.lower / (den.upper if num.lower >= 0 else den.lower)
    hi = num.upper / (den.lower if num.upper >= 0 else den.upper)
    return interval_json(Bounded.between(lo, hi), 8)


def lemmas_report(sgm: SGM, dps: int = 30) -> dict[str, Any]:
    """A^(1) against Lemma 9, A^(2) against Lemma 10 (with its conditions), and A^(1) + A^(2) = A_α.

    ``dps`` is doubled (up to 300) while a comparison is undecided; the report
    records the digits used.
    """
    b10 = Bounded(lemma10_bound(sgm), Fraction(0))
    while True:  # pieces far below A_α need more digits (the error is relative to A_α)
        p = pieces(sgm, dps)
        b9 = lemma9_bound(sgm, dps)
        undecided = "undecided" in _status(p.a1, b9) + _status(p.a2, b10)
        if not undecided or dps >= MAX_DPS:
            break
        dps = min(2 * dps, MAX_DPS)
    conds = conditions("theorem11", sgm)
    return {
        **sgm.texts(),
        "dps": dps,
        "z0": {"lower": fraction_text(p.z0[0]), "upper": fraction_text(p.z0[1])},
        "A1": interval_json(p.a1, 25),
        "A2": interval_json(p.a2, 25),
        "sliver": interval_json(p.sliver, 6),
        "A": interval_json(p.total, 25),
        "sum_consistent": p.sum_consistent,
        "lemma9": {
            "statement": "A1 <= 1 + q^2 alpha (alpha - 1) (exp(1/sigma^2) - 1), unconditional",
            "bound": interval_json(b9, 25),
            "status": _status(p.a1, b9),
            # (A1 − 1)/(bound − 1): how much of Lemma 9's excess over 1 is used
            "excess_ratio": _ratio(Bounded.between(p.a1.lower - 1, p.a1.upper - 1), Bounded.between(b9.lower - 1, b9.upper - 1)),
        },
        "lemma10": {
            "statement": "A2 <= 0.9 q^2 alpha (alpha - 1) / sigma^2 if q <= 1/5, sigma >= 4, (4) and (5)",
            "conditions": conds,
            "conditions_hold": all(v is True for v in conds.values()),
            "bound": fraction_text(b10.value),
            "status": _status(p.a2, b10),
            "ratio": _ratio(p.a2, b10),
        },
    }
