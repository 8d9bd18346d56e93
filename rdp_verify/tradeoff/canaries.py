"""Empirical canary attacks held against a run's certified trade-off curve: ``bug`` or ``consistent``.

**Input.** Either the attack's scores, one row per canary with its membership label (``score,member``),
or its confusion counts at each threshold (``threshold,tp,fp,tn,fn``). A canary is predicted a member
when its score is at least the threshold; with scores, every distinct score is a threshold. Each
threshold's test has false-positive rate FPR = FP/(FP + TN) and false-negative rate FNR = FN/(TP + FN).

**Assumption.** The canaries are independent trials: each member or non-member outcome is an independent
draw of the same test on neighbouring datasets (one canary per training run, as in Jagielski, Ullman,
Oprea 2020 and Nasr et al. 2021; or canaries whose effects do not interact). The one-run audit of
Steinke, Nasr, Jagielski 2023 (arXiv 2305.08846), which drops that assumption at the cost of a weaker
bound, is not implemented.

**Confidence boxes** (Nasr, Hayes, Steinke, Balle, Tramèr, Jagielski, Carlini, Terzis 2023, arXiv
2302.07956, Section 3): at confidence 1 − γ, each rate gets the exact one-sided Clopper–Pearson upper
bound (Clopper and Pearson 1934) at a level ℓ such that all boxes hold at once with probability ≥ 1 − γ.
With m thresholds fixed before the outcomes are seen (counts given per threshold), ℓ = γ/(2m)
(Bonferroni over the 2m bounds). With scores, the thresholds are the observed scores, chosen by the data;
then ℓ = γ/(2·max(m, n₁, n₀)) (n₁ members, n₀ non-members): the false-positive count falls as the
threshold rises, so if some threshold's true rate exceeds the bound for its count k, the fixed threshold
where the true rate equals that bound has at most k false positives, an event of probability ≤ ℓ; the
union over k = 0..n₀ − 1 (and over the n₁ false-negative counts) is at most (n₀ + n₁)·ℓ ≤ γ. for k events in n trials, the p with
P(Binomial(n, p) ≤ k) = γ/(2m), i.e. I_p(k + 1, n − k) = 1 − γ/(2m), the regularized incomplete beta
function, enclosed by Arb (python-flint ``beta_lower``); the bound reported is a rational (found in
double precision, then nudged up) where the inequality is proven, so it is at or above the exact quantile
(pessimistic for the attack). With probability ≥ 1 − γ every threshold's true (FPR, FNR) lies in [0, FPR_U] × [0, FNR_U].

**Verdict.** Every test on neighbouring datasets has FNR ≥ f(FPR) and FPR ≥ f(FNR) (f symmetric), and
f ≥ f_low (:mod:`rdp_verify.tradeoff.envelope`), which is decreasing. If FNR_U < f_low(FPR_U) for some
threshold, its whole box lies below the certified curve: were the implementation the mechanism it claims,
this happens with probability at most γ. The verdict is then ``bug``; otherwise ``consistent``.

**Empirical ε.** (ε, δ)-DP implies FNR ≥ 1 − δ − e^ε·FPR and FPR ≥ 1 − δ − e^ε·FNR (Kairouz, Oh,
Viswanath 2015), so with confidence 1 − γ, ε ≥ max over thresholds of
max(log((1 − δ − FNR_U)/FPR_U), log((1 − δ − FPR_U)/FNR_U)) (Nasr et al. 2023, Equation 2), rounded
down; beside the proven ε upper end at δ, their ratio is the auditing gap.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from flint import ctx

from ..curves.accountant import epsilon_bracket
from ..foundations.decimals import decimal_text
from ..foundations.files import parse_csv, read_text
from ..foundations.inputs import InputError, check_delta, fraction_text, parse_rational
from ..foundations.results import lower_end, to_arb
from .curve import TradeOff

__all__ = ["Counts", "read_canaries", "parse_canaries", "clopper_pearson_upper", "DEFAULT_CONFIDENCE",
           "DEFAULT_DELTA", "check_confidence", "empirical_epsilon", "boxes", "audit_canaries", "ASSUMPTION"]

DEFAULT_CONFIDENCE = Fraction(95, 100)
DEFAULT_DELTA = Fraction(1, 10**5)
ASSUMPTION = ("the canaries are independent trials of the same test on neighbouring datasets (one canary per "
              "training run, or canaries whose effects do not interact); the one-run audit of Steinke, Nasr, "
              "Jagielski 2023 is not implemented")
MEMBER = {"1": True, "0": False}  # the only labels: a word such as "yes" or "out" is refused, not guessed
_PREC = 128


@dataclass(frozen=True)
class Counts:
    """One threshold's confusion counts: members predicted member (tp) or not (fn); non-members (fp, tn)."""

    threshold: str
    tp: int
    fp: int
    tn: int
    fn: int
    from_scores: bool = False  # the threshold is one of the observed scores (chosen by the data)

    @property
    def members(self) -> int:
        return self.tp + self.fn

    @property
    def non_members(self) -> int:
        return self.fp + self.tn


def check_confidence(value: Fraction) -> Fraction:
    value = Fraction(value)
    if not 0 < value < 1:
        raise InputError(f"confidence {value} must lie strictly between 0 and 1")
    return value


def _count(text: str, row: int, name: str) -> int:
    if not re.fullmatch(r"[0-9]{1,15}", text):  # ASCII digits only: "²" is a digit to str.isdigit
        raise InputError(f"row {row}: {name} {text!r} is not a whole number >= 0")
    return int(text)


def parse_canaries(text: str, what: str = "the canary file") -> list[Counts]:
    """Confusion counts per threshold from CSV text (module docstring), read by the shared CSV reader
    (:func:`rdp_verify.foundations.files.parse_csv`: a byte-order mark dropped, every row exactly the header's
    cells) and refused with one line when malformed. Labels are 1 (member) and 0 (non-member) only."""
    rows = parse_csv(text, what)
    if not rows:
        raise InputError(f"{what} has no rows (a header and at least one row are needed)")
    rows = [{k.lower(): v for k, v in r.items()} for r in rows]
    columns = set(rows[0])
    if {"threshold", "tp", "fp", "tn", "fn"} <= columns:
        counts = []
        for i, r in enumerate(rows, start=2):
            c = Counts(r["threshold"], *(_count(r[k], i, k) for k in ("tp", "fp", "tn", "fn")))
            if c.members == 0 or c.non_members == 0:
                raise InputError(f"row {i}: every threshold needs members (tp + fn > 0) and non-members (fp + tn > 0)")
            counts.append(c)
        return counts
    if {"score", "member"} <= columns:
        scored = []
        for i, r in enumerate(rows, start=2):
            if r["member"] not in MEMBER:
                raise InputError(f"row {i}: member {r['member']!r} is not a label: 1 (member) or 0 (non-member)")
            scored.append((parse_rational(r["score"], f"row {i}: score"), MEMBER[r["member"]]))
        members = sum(m for _, m in scored)
        if members == 0 or members == len(scored):
            raise InputError("the canary scores need both members and non-members")
        return _thresholds(scored)
    raise InputError(f"{what} needs the columns score,member (one row per canary) "
                     "or threshold,tp,fp,tn,fn (one row per threshold)")


def _thresholds(scored: list[tuple[Fraction, bool]]) -> list[Counts]:
    """Counts at every distinct score (predict member when score ≥ threshold)."""
    members = sum(m for _, m in scored)
    non_members = len(scored) - members
    tp = fp = 0
    counts = []
    ordered = sorted(scored, key=lambda s: -s[0])
    i = 0
    while i < len(ordered):
        score = ordered[i][0]
        while i < len(ordered) and ordered[i][0] == score:
            tp, fp = tp + ordered[i][1], fp + (not ordered[i][1])
            i += 1
        counts.append(Counts(fraction_text(score), tp, fp, non_members - fp, members - tp, from_scores=True))
    return counts


def read_canaries(path: str | Path) -> list[Counts]:
    """:func:`parse_canaries` of a file (:func:`rdp_verify.foundations.files.read_text`)."""
    return parse_canaries(read_text(path, "canary file"), f"canary file {path}")


def _float_quantile(k: int, n: int, level: float) -> float:
    """The p with P(Binomial(n, p) ≤ k) = level in double precision (a starting point, not a proof)."""
    j = np.arange(k + 1)
    log_choose = np.concatenate(([0.0], np.cumsum(np.log((n - j[:-1]) / (j[:-1] + 1))))) if k else np.zeros(1)

    def log_cdf(p: float) -> float:
        terms = log_choose + j * math.log(p) + (n - j) * math.log1p(-p)
        top = terms.max()
        return float(top + math.log(np.exp(terms - top).sum()))

    lo, hi, target = k / n, 1.0, math.log(level)
    for _ in range(80):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if log_cdf(mid) > target else (lo, mid)
    return hi


def clopper_pearson_upper(k: int, n: int, level: Fraction) -> Fraction:
    """A rational p_U with P(Binomial(n, p_U) ≤ k) ≤ level proven: at or above the exact one-sided
    Clopper–Pearson upper bound at level ``level`` (module docstring), typically within a relative 1e-9 of it
    (the margin grows tenfold until the inequality is proven).

    A double-precision bisection finds the quantile; the rational just above it is then proven in Arb,
    I_p(k + 1, n − k) ≥ 1 − level, moving up by tenfold larger steps until it is (then up to 1)."""
    if not (0 <= k <= n and n > 0):
        raise InputError(f"{k} events of {n} trials")
    if k == n:
        return Fraction(1)
    with ctx.workprec(_PREC):
        target = 1 - to_arb(Fraction(level))
        estimate = Fraction(_float_quantile(k, n, float(level)))
        pad = Fraction(1, 10**9)
        while pad < 1:
            p = _rounded_up(estimate * (1 + pad))
            if p >= 1:
                break
            if to_arb(p).beta_lower(k + 1, n - k, 1) >= target:
                return p
            pad *= 10
        return Fraction(1)


def _rounded_up(x: Fraction) -> Fraction:
    """x rounded up to 12 significant decimal digits (a short exact rational)."""
    return Fraction(decimal_text(x, 12, "up"))


def arb_log_lower(x: Fraction) -> Fraction:
    """log(x) rounded down, x > 0 rational."""
    with ctx.workprec(_PREC):
        return lower_end(to_arb(x).log())


def empirical_epsilon(fpr_u: Fraction, fnr_u: Fraction, delta: Fraction) -> Fraction | None:
    """max(log((1 − δ − FNR_U)/FPR_U), log((1 − δ − FPR_U)/FNR_U)) rounded down; None when neither is defined."""
    best = None
    for a, b in ((fnr_u, fpr_u), (fpr_u, fnr_u)):
        if 1 - delta - a > 0 and b > 0:
            value = arb_log_lower((1 - delta - a) / b)
            best = value if best is None else max(best, value)
    return best


def bonferroni_level(counts: Sequence[Counts], confidence: Fraction) -> Fraction:
    """The level of each Clopper–Pearson bound (module docstring): γ/(2m) for m thresholds fixed in advance;
    γ/(2·max(m, members, non-members)) when the thresholds are the observed scores."""
    m = len(counts)
    if counts and counts[0].from_scores:
        m = max(m, counts[0].members, counts[0].non_members)
    return (1 - check_confidence(confidence)) / (2 * m)


def boxes(counts: Sequence[Counts], confidence: Fraction) -> list[dict[str, Any]]:
    """Each threshold's confidence box: the two Clopper–Pearson upper bounds at :func:`bonferroni_level`."""
    level = bonferroni_level(counts, confidence)
    cache: dict[tuple[int, int], Fraction] = {}

    def upper(k: int, n: int) -> Fraction:
        if (k, n) not in cache:
            cache[(k, n)] = clopper_pearson_upper(k, n, level)
        return cache[(k, n)]

    return [{"counts": c, "fpr_upper": upper(c.fp, c.non_members), "fnr_upper": upper(c.fn, c.members)}
            for c in counts]


def _short(x: Fraction, rounding: str) -> str:
    return decimal_text(x, 6, rounding)


def audit_canaries(trade: TradeOff, counts: Sequence[Counts], *, confidence: Fraction = DEFAULT_CONFIDENCE,
                   delta: Fraction = DEFAULT_DELTA) -> dict[str, Any]:
    """The verdict of an attack's counts against the run's certified curve, with the empirical ε at δ and
    the auditing gap (module docstring). Rates and ε are printed rounded outward (rates up, ε down)."""
    confidence, delta = check_confidence(confidence), check_delta(delta)
    if not counts:
        raise InputError("no thresholds to audit")
    found = boxes(counts, confidence)
    below, best, best_eps = [], None, None
    for box in found:
        fpr_u, fnr_u = box["fpr_upper"], box["fnr_upper"]
        if fpr_u + fnr_u < 1:  # else the box reaches the trivial line 1 − α, above every trade-off curve
            box["f_lower"] = trade.f_lower(fpr_u)
            if fnr_u < box["f_lower"] or fpr_u < trade.f_lower(fnr_u):
                below.append(box)
        eps = empirical_epsilon(fpr_u, fnr_u, delta)
        if eps is not None and (best_eps is None or eps > best_eps):
            best, best_eps = box, eps
    proven = epsilon_bracket(trade.curves, delta)
    gap = None
    if best_eps is not None and best_eps > 0 and proven.upper:
        gap = _short(best_eps / proven.upper, "down")

    def box_json(box: dict[str, Any]) -> dict[str, Any]:
        c = box["counts"]
        out = {"threshold": c.threshold, "tp": c.tp, "fp": c.fp, "tn": c.tn, "fn": c.fn,
               "fpr_upper": _short(box["fpr_upper"], "up"), "fnr_upper": _short(box["fnr_upper"], "up")}
        if "f_lower" in box:
            out["certified_fnr_lower"] = _short(box["f_lower"], "down")
        return out

    verdict = "bug" if below else "consistent"
    level = bonferroni_level(counts, confidence)
    return {
        "verdict": verdict,
        "verdict_reason": (f"{len(below)} threshold(s) have their whole confidence box below the certified trade-off "
                           f"curve: at confidence {fraction_text(confidence)} the implementation is not the mechanism "
                           "it states" if below else
                           "no threshold's confidence box lies below the certified trade-off curve"),
        "confidence": fraction_text(confidence),
        "thresholds": len(counts),
        "bonferroni_level": fraction_text(level),
        "assumption": ASSUMPTION,
        "below_curve": [box_json(b) for b in below[:10]],
        "strongest": box_json(best) if best is not None else None,
        "delta": fraction_text(delta),
        "empirical_epsilon_lower": None if best_eps is None else _short(max(best_eps, Fraction(0)), "down"),
        "proven_epsilon": {"lower": _short(proven.lower, "down"),
                           "upper": None if proven.upper is None else _short(proven.upper, "up")},
        "auditing_gap": gap,
    }
