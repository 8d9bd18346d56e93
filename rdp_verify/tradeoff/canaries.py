"""Empirical canary attacks held against a run's certified trade-off curve: ``bug`` or ``consistent``.

**Input.** Either the attack's scores, one row per canary with its membership label (``score,member``),
or its confusion counts at each threshold (``threshold,tp,fp,tn,fn``). A canary is predicted a member
when its score is at least the threshold; with scores, every distinct score is a threshold. Each
threshold's test has false-positive rate FPR = FP/(FP + TN) and false-negative rate FNR = FN/(TP + FN).
Scores are decimal (or ``p/q``) text read exactly: two texts of one value (``1.0`` and ``1``) are one
threshold, two values that round to one double are two.

**Assumption.** The canaries are independent trials: each member or non-member outcome is an independent
draw of the same test on neighbouring datasets (one canary per training run, as in Jagielski, Ullman,
Oprea 2020 and Nasr et al. 2021; or canaries whose effects do not interact). The one-run audit of
Steinke, Nasr, Jagielski 2023 (arXiv 2305.08846), which drops that assumption at the cost of a weaker
bound, is :mod:`rdp_verify.tradeoff.one_run` (``audit --method one-run``).

**Confidence boxes** (Nasr, Hayes, Steinke, Balle, Tramèr, Jagielski, Carlini, Terzis 2023, arXiv
2302.07956, Section 3): at confidence 1 − γ, each rate gets the exact one-sided Clopper–Pearson upper
bound (Clopper and Pearson 1934; :mod:`rdp_verify.tradeoff.binomial`) at a level ℓ such that all boxes hold
at once with probability ≥ 1 − γ. Two **level rules**:

* ``any-threshold`` (scores; and counts rows unless the user says otherwise): ℓ = γ/(2·max(m, n₁, n₀)) for
  m thresholds, n₁ members, n₀ non-members. It holds for *every* threshold of one attack's scores at
  once, so for any the data could have picked (the observed scores, or one chosen after looking): the
  false-positive count falls as the threshold rises, so if some threshold's true FPR exceeds the bound
  for its count k, the fixed threshold where the true rate equals that bound has at most k false
  positives, an event of probability ≤ ℓ; the union over k = 0..n₀ − 1 (and over the n₁ false-negative
  counts) is at most (n₀ + n₁)·ℓ ≤ γ. Counts rows get it only when they can be the thresholds of one
  list of scores: the same members and non-members in every row, counts nested (a row with more true
  positives has at least as many false positives), and numeric thresholds ordered as their counts;
  otherwise they are refused in one line (:func:`bonferroni_level`).
* ``fixed-in-advance`` (counts rows, only when the user says the thresholds were fixed before the canaries
  were scored: ``--thresholds-fixed-in-advance``): ℓ = γ/(2m), Bonferroni over the 2m bounds. Picking
  the best-looking threshold after seeing the scores and submitting it alone breaks this (a false
  ``bug`` on 3 of 10 seeds of a run-matched attack, issue 30); the other rule does not.

For k events in n trials the bound is the p with P(Binomial(n, p) ≤ k) = ℓ, a rational at or above it
proven in Arb (pessimistic for the attack). With probability ≥ 1 − γ every threshold's true (FPR, FNR) lies in
[0, FPR_U] × [0, FNR_U].

**Verdict.** Every test on neighbouring datasets has FNR ≥ f(FPR) and FPR ≥ f(FNR) (f symmetric), and
f ≥ f_low (:mod:`rdp_verify.tradeoff.envelope`). If FNR_U < f_low(FPR_U) (or FPR_U < f_low(FNR_U)) for some
threshold, its whole box lies below the certified curve: were the implementation the mechanism it claims,
this happens with probability at most γ. The verdict is then ``bug``. The report lists the first :data:`LISTED`
such thresholds (in threshold order) and says "at least 10" when it stops there.

The verdict is the conclusion of every line the report prints (issue 39): it is also ``bug`` when the printed
empirical ε (below) exceeds the run's proven ε upper end ε_up at the same δ. The run is (ε_up, δ)-DP, so
f(α) ≥ 1 − δ − e^{ε_up}·α (Dong, Roth, Su 2022, Proposition 2.5); a box with log((1 − δ − FNR_U)/FPR_U) > ε_up has
FNR_U < 1 − δ − e^{ε_up}·FPR_U ≤ f(FPR_U) (and symmetrically), so it lies below the run's curve: the same event
"some box misses its threshold's true rates", of probability at most γ, and no further union bound. (f_low is
proven at every FPR_U, so such a box is usually listed below the curve as well; the rule makes the verdict agree
with the printed ε whatever the rounding.) Otherwise ``consistent``. For q = 1 runs f_low is the lower end of
the Arb ball of G_μ itself, the run's exact curve (:mod:`rdp_verify.tradeoff.envelope`), and for every run it is
evaluated at each box's own FPR_U: the test loses nothing to a grid.

**Empirical ε.** (ε, δ)-DP implies FNR ≥ 1 − δ − e^ε·FPR and FPR ≥ 1 − δ − e^ε·FNR (Kairouz, Oh,
Viswanath 2015), so with confidence 1 − γ, ε ≥ max over thresholds of
max(log((1 − δ − FNR_U)/FPR_U), log((1 − δ − FPR_U)/FNR_U)) (Nasr et al. 2023, Equation 2), rounded
down; beside the proven ε upper end at δ, their ratio is the auditing gap.

**Screening** (a million canaries in seconds). The audit is *defined* threshold by threshold as above; it
does not evaluate every threshold. When the thresholds form a chain (scores always; counts rows whose tp
and fp both grow, or both fall, down the file, with the same members and non-members in every row), a
block of consecutive thresholds [a, b] has false-positive counts at least k_f = min(fp_a, fp_b) and
false-negative counts at least k_n = min(fn_a, fn_b). The Clopper–Pearson bound grows with the count, so
every threshold's FPR_U ≥ L_f and FNR_U ≥ L_n, where L_f, L_n are rationals *proven* to lie below the
exact bounds at k_f and k_n (:func:`rdp_verify.tradeoff.binomial.clopper_pearson_lower`). Then, proven:

* **no box of the block lies below the curve** when L_f + L_n ≥ 1, or f_up(L_f) ≤ L_n and f_up(L_n) ≤ L_f:
  at each threshold, f_low(FPR_U) ≤ f(FPR_U) ≤ f(L_f) ≤ f_up(L_f) ≤ L_n ≤ FNR_U (f_low is a proven lower
  bound of f, f is non-increasing, f_up a proven upper bound), and symmetrically;
* **no ε of the block exceeds** the upper end of max(log((1 − δ − L_n)/L_f), log((1 − δ − L_f)/L_n)),
  since each ratio falls as FNR_U and FPR_U grow and the reported ε is a lower end of the log.

Blocks that are not cleared are halved, down to single thresholds, which are evaluated exactly as the
definition says. The verdict visits blocks in threshold order and stops at the :data:`LISTED`-th box below
the curve; the empirical ε is a best-first branch and bound (a block is dropped once its bound is strictly
below the best ε found, so the maximum and the first threshold attaining it are those of the exhaustive
audit). Nothing is skipped on a floating-point estimate: the float64 quantiles only choose where to look.
Every report field is therefore identical to the exhaustive audit's (``screen=False``), which the tests check.
"""

from __future__ import annotations

import heapq
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, overload

import numpy as np
from flint import ctx

from ..curves.accountant import epsilon_bracket
from ..foundations.decimals import decimal_text
from ..foundations.files import parse_csv, read_text
from ..foundations.inputs import InputError, check_delta, fraction_text, parse_rational
from ..foundations.results import lower_end, to_arb, upper_end
from .binomial import clopper_pearson_lower, clopper_pearson_upper
from .curve import TradeOff

__all__ = ["Counts", "CountTable", "read_canaries", "parse_canaries", "clopper_pearson_upper", "DEFAULT_CONFIDENCE",
           "DEFAULT_DELTA", "check_confidence", "empirical_epsilon", "boxes", "audit_canaries", "ASSUMPTION",
           "LEVEL_RULES", "level_rule", "bonferroni_level", "LISTED"]

DEFAULT_CONFIDENCE = Fraction(95, 100)
DEFAULT_DELTA = Fraction(1, 10**5)
ASSUMPTION = ("the canaries are independent trials of the same test on neighbouring datasets (one canary per "
              "training run, or canaries whose effects do not interact); canaries inserted at random into one "
              "training run are audited by --method one-run or one-run-fdp (Steinke, Nasr, Jagielski 2023)")
ASSUMPTION_V1 = ("the canaries are independent trials of the same test on neighbouring datasets (one canary per "
                 "training run, or canaries whose effects do not interact); the one-run audit of Steinke, Nasr, "
                 "Jagielski 2023 is not implemented")  # as format version 1 wrote it: its reports are checked against it
LEVEL_RULES = ("any-threshold", "fixed-in-advance")
LISTED = 10  # boxes below the curve listed (the first in threshold order); the audit stops there
MEMBER = {"1": True, "0": False}  # the only labels: a word such as "yes" or "out" is refused, not guessed
_PREC = 128
_PLAIN = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)"  # parse_rational's decimals without an exponent: float() reads them
_PLAIN_RE = re.compile(_PLAIN)
_NOT_PLAIN = re.compile(rf"^(?!{_PLAIN}$).*$", re.MULTILINE)
_MAX_TEXT = 100  # parse_rational's limit on a number's text


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


class CountTable(Sequence[Counts]):
    """Confusion counts at every threshold, as columns: what :func:`parse_canaries` returns.

    A sequence of :class:`Counts` (``table[i]``, ``len``, iteration, equality with any sequence of Counts), in
    threshold order (with scores: from the highest score down; with counts rows: the file's order), and
    columns for bulk use: ``tp``, ``fp``, ``tn``, ``fn``, ``members``, ``non_members`` (NumPy int64 arrays, one
    entry per threshold), ``from_scores`` (the thresholds are the observed scores) and ``threshold(i)`` (the
    i-th threshold's text: a score's exact value as :func:`~rdp_verify.foundations.inputs.fraction_text`
    writes it, or the counts row's cell). ``len(table)`` is the number of thresholds m."""

    def __init__(self, tp: Any, fp: Any, tn: Any, fn: Any, thresholds: Callable[[int], str] | Sequence[str] | None,
                 from_scores: bool = False) -> None:
        self.tp, self.fp, self.tn, self.fn = (np.asarray(c, dtype=np.int64) for c in (tp, fp, tn, fn))
        self.members = self.tp + self.fn
        self.non_members = self.fp + self.tn
        self.from_scores = from_scores
        self._thresholds = thresholds
        self._monotone: bool | None = None

    @classmethod
    def of(cls, counts: Sequence[Counts]) -> CountTable:
        """A table of any sequence of :class:`Counts` (a table is returned as it is)."""
        if isinstance(counts, CountTable):
            return counts
        rows = list(counts)
        return cls([c.tp for c in rows], [c.fp for c in rows], [c.tn for c in rows], [c.fn for c in rows],
                   [c.threshold for c in rows], from_scores=bool(rows) and rows[0].from_scores)

    def as_scores(self) -> CountTable:
        """The same counts, marked as read off observed scores."""
        return CountTable(self.tp, self.fp, self.tn, self.fn, self._thresholds, from_scores=True)

    def threshold(self, i: int) -> str:
        t = self._thresholds
        if t is None:
            return f"#{i + 1}"  # a report's sequence records the counts, not the scores
        return t(i) if callable(t) else t[i]

    def __len__(self) -> int:
        return int(self.tp.size)

    @overload
    def __getitem__(self, i: int) -> Counts: ...

    @overload
    def __getitem__(self, i: slice) -> list[Counts]: ...

    def __getitem__(self, i: int | slice) -> Counts | list[Counts]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return Counts(self.threshold(i), int(self.tp[i]), int(self.fp[i]), int(self.tn[i]), int(self.fn[i]),
                      from_scores=self.from_scores)

    def __iter__(self) -> Iterator[Counts]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"CountTable({len(self)} thresholds, from_scores={self.from_scores})"

    @property
    def monotone(self) -> bool:
        """The thresholds form a chain in their order: the same members and non-members in every row, and tp and
        fp both non-decreasing (or both non-increasing) down the table (always so with scores)."""
        if self._monotone is None:
            tp, fp = np.diff(self.tp), np.diff(self.fp)
            same = bool((self.members == self.members[0]).all() and (self.non_members == self.non_members[0]).all())
            self._monotone = same and bool(((tp >= 0) & (fp >= 0)).all() or ((tp <= 0) & (fp <= 0)).all())
        return self._monotone


def check_confidence(value: Fraction) -> Fraction:
    value = Fraction(value)
    if not 0 < value < 1:
        raise InputError(f"confidence {value} must lie strictly between 0 and 1")
    return value


def _count(text: str, row: int, name: str) -> int:
    if not re.fullmatch(r"[0-9]{1,15}", text):  # ASCII digits only: "²" is a digit to str.isdigit
        raise InputError(f"row {row}: {name} {text!r} is not a whole number >= 0")
    return int(text)


def parse_canaries(text: str, what: str = "the canary file") -> CountTable:
    """Confusion counts per threshold from CSV text (module docstring), read by the shared CSV reader
    (:func:`rdp_verify.foundations.files.parse_csv`: a byte-order mark dropped, every row exactly the header's
    cells) and refused with one line when malformed. Labels are 1 (member) and 0 (non-member) only."""
    rows = parse_csv(text, what)
    if not rows:
        raise InputError(f"{what} has no rows (a header and at least one row are needed)")
    keys = {k.lower(): k for k in rows[0]}
    if {"threshold", "tp", "fp", "tn", "fn"} <= keys.keys():
        cols: dict[str, list[int]] = {k: [] for k in ("tp", "fp", "tn", "fn")}
        thresholds = []
        for i, r in enumerate(rows, start=2):
            values = [_count(r[keys[k]], i, k) for k in ("tp", "fp", "tn", "fn")]
            if values[0] + values[3] == 0 or values[1] + values[2] == 0:
                raise InputError(f"row {i}: every threshold needs members (tp + fn > 0) and non-members (fp + tn > 0)")
            for k, v in zip(("tp", "fp", "tn", "fn"), values):
                cols[k].append(v)
            thresholds.append(r[keys["threshold"]])
        return CountTable(cols["tp"], cols["fp"], cols["tn"], cols["fn"], thresholds)
    if {"score", "member"} <= keys.keys():
        return _from_scores([r[keys["score"]] for r in rows], [r[keys["member"]] for r in rows])
    raise InputError(f"{what} needs the columns score,member (one row per canary) "
                     "or threshold,tp,fp,tn,fn (one row per threshold)")


def _to_float(x: Fraction) -> float:
    """x correctly rounded to a double, ±inf beyond the range (monotone, like float() of decimal text)."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def _score_values(texts: list[str]) -> np.ndarray:
    """Each score as a double, correctly rounded (so x < y exactly implies double(x) <= double(y)); a text that
    is not a number is refused in one line, as parse_rational refuses it."""
    joined = "\n".join(texts)
    if (joined.count("\n") == len(texts) - 1 and max(map(len, texts)) <= _MAX_TEXT
            and _NOT_PLAIN.search(joined) is None):
        return np.fromiter(map(float, texts), dtype=np.float64, count=len(texts))
    out = np.empty(len(texts))
    for i, t in enumerate(texts):
        if len(t) <= _MAX_TEXT and _PLAIN_RE.fullmatch(t):
            out[i] = float(t)
        else:
            out[i] = _to_float(parse_rational(t, f"row {i + 2}: score"))
    return out


def _from_scores(texts: list[str], labels: list[str]) -> CountTable:
    """Counts at every distinct score (predict member when score ≥ threshold), highest first.

    The scores are sorted as doubles (correctly rounded, hence in exact order except among equal doubles);
    a run of equal doubles whose texts differ is sorted and grouped by exact value (Fractions)."""
    n = len(texts)
    if not set(labels) <= MEMBER.keys():
        i = next(i for i, label in enumerate(labels) if label not in MEMBER)
        raise InputError(f"row {i + 2}: member {labels[i]!r} is not a label: 1 (member) or 0 (non-member)")
    values = _score_values(texts)
    member = np.array(labels) == "1"
    members = int(member.sum())
    if members == 0 or members == n:
        raise InputError("the canary scores need both members and non-members")
    order = np.argsort(-values, kind="stable")
    ordered = values[order]
    starts = np.concatenate(([0], np.flatnonzero(ordered[1:] != ordered[:-1]) + 1))
    text_array = np.array(texts, dtype=object)[order]
    differ = np.flatnonzero(text_array[1:] != text_array[:-1]) + 1
    is_start = np.zeros(n, dtype=bool)
    is_start[starts] = True
    suspects = differ[~is_start[differ]]  # equal doubles, different texts: decide exactly
    if suspects.size:
        ends = np.append(starts[1:], n)
        extra = []
        for g in np.unique(np.searchsorted(starts, suspects, side="right") - 1):
            s, e = int(starts[g]), int(ends[g])
            exact = sorted(((parse_rational(texts[j], "score"), int(j)) for j in order[s:e]), key=lambda v: -v[0])
            order[s:e] = [j for _, j in exact]
            extra += [s + i for i in range(1, e - s) if exact[i][0] != exact[i - 1][0]]
        starts = np.union1d(starts, np.array(extra, dtype=np.int64))
    tp_step = np.add.reduceat(member[order].astype(np.int64), starts)
    fp_step = np.diff(np.append(starts, n)) - tp_step
    tp, fp = np.cumsum(tp_step), np.cumsum(fp_step)
    firsts = order[starts]

    def threshold(i: int) -> str:
        return fraction_text(parse_rational(texts[int(firsts[i])], "score"))

    return CountTable(tp, fp, (n - members) - fp, members - tp, threshold, from_scores=True)


def read_canaries(path: str | Path) -> CountTable:
    """:func:`parse_canaries` of a file (:func:`rdp_verify.foundations.files.read_text`)."""
    return parse_canaries(read_text(path, "canary file"), f"canary file {path}")


# -- levels ---------------------------------------------------------------------------------------------

def _not_one_score_list(table: CountTable) -> str | None:
    """Why counts rows cannot be the thresholds of one attack's scores on one set of canaries (None: they can)."""
    if not ((table.members == table.members[0]).all() and (table.non_members == table.non_members[0]).all()):
        return "the rows do not all count the same members and non-members"
    order = np.lexsort((table.tp, table.tp + table.fp))
    if (np.diff(table.tp[order]) < 0).any() or (np.diff(table.fp[order]) < 0).any():
        return "their counts are not nested (a row with more true positives must not have fewer false positives)"
    try:
        values = [parse_rational(table.threshold(i), "threshold") for i in range(len(table))]
    except InputError:
        return None  # labels, not numbers: the counts alone are checked
    order = sorted(range(len(table)), key=lambda i: -values[i])
    for a, b in zip(order, order[1:]):
        if values[a] == values[b] and (table.tp[a], table.fp[a]) != (table.tp[b], table.fp[b]) or \
                table.tp[b] < table.tp[a] or table.fp[b] < table.fp[a]:
            return "a higher threshold has more positives than a lower one"
    return None


def level_rule(counts: Sequence[Counts], fixed_in_advance: bool = False) -> str:
    """The level rule (module docstring): ``fixed-in-advance`` only when asked for, with counts rows;
    ``any-threshold`` otherwise, refused in one line when the counts rows cannot be one attack's thresholds."""
    table = CountTable.of(counts)
    if fixed_in_advance:
        if table.from_scores:
            raise InputError("thresholds read off the scores are chosen by the data, not fixed in advance: "
                             "--thresholds-fixed-in-advance goes with counts rows (threshold,tp,fp,tn,fn)")
        return "fixed-in-advance"
    if not table.from_scores:
        why = _not_one_score_list(table)
        if why is not None:
            raise InputError(f"the counts rows cannot be the thresholds of one attack's scores ({why}), so no level "
                             "valid for thresholds chosen after seeing the data applies: give the scores "
                             "(score,member), or pass --thresholds-fixed-in-advance if every threshold was fixed "
                             "before the canaries were scored")
    return "any-threshold"


def bonferroni_level(counts: Sequence[Counts], confidence: Fraction, fixed_in_advance: bool = False,
                     rule: str | None = None) -> Fraction:
    """The level of each Clopper–Pearson bound (module docstring): γ/(2m) under ``fixed-in-advance``,
    γ/(2·max(m, members, non-members)) under ``any-threshold`` (``rule``, else :func:`level_rule`)."""
    table = CountTable.of(counts)
    rule = level_rule(table, fixed_in_advance) if rule is None else rule
    m = len(table)
    if rule == "any-threshold":
        m = max(m, int(table.members.max()), int(table.non_members.max()))
    return (1 - check_confidence(confidence)) / (2 * m)


# -- one threshold --------------------------------------------------------------------------------------

def arb_log_lower(x: Fraction) -> Fraction:
    """log(x) rounded down, x > 0 rational."""
    with ctx.workprec(_PREC):
        return lower_end(to_arb(x).log())


def _arb_log_upper(x: Fraction) -> Fraction:
    with ctx.workprec(_PREC):
        return upper_end(to_arb(x).log())


def empirical_epsilon(fpr_u: Fraction, fnr_u: Fraction, delta: Fraction) -> Fraction | None:
    """max(log((1 − δ − FNR_U)/FPR_U), log((1 − δ − FPR_U)/FNR_U)) rounded down; None when neither is defined."""
    best = None
    for a, b in ((fnr_u, fpr_u), (fpr_u, fnr_u)):
        if 1 - delta - a > 0 and b > 0:
            value = arb_log_lower((1 - delta - a) / b)
            best = value if best is None else max(best, value)
    return best


UpperBound = Callable[[int, int, Fraction], Fraction]


class _Audit:
    """The thresholds of one audit: exact boxes of single thresholds, cached, and proven bounds on blocks
    (module docstring, Screening)."""

    def __init__(self, trade: TradeOff, table: CountTable, level: Fraction, delta: Fraction,
                 upper: UpperBound = clopper_pearson_upper, tick: Callable[[int], None] | None = None) -> None:
        self.trade, self.table, self.level, self.delta, self._upper = trade, table, level, delta, upper
        self.tick = tick or (lambda n: None)
        self._uppers: dict[tuple[int, int], Fraction] = {}
        self._lowers: dict[tuple[int, int], Fraction] = {}
        self._f_up: dict[Fraction, Fraction] = {}
        self.boxes: dict[int, dict[str, Any]] = {}
        self.fp, self.fn = table.fp, table.fn
        self.n0, self.n1 = table.non_members, table.members

    def upper(self, k: int, n: int) -> Fraction:
        if (k, n) not in self._uppers:
            self._uppers[(k, n)] = self._upper(k, n, self.level)
        return self._uppers[(k, n)]

    def lower(self, k: int, n: int) -> Fraction:
        if (k, n) not in self._lowers:
            self._lowers[(k, n)] = clopper_pearson_lower(k, n, self.level)
        return self._lowers[(k, n)]

    def box(self, i: int) -> dict[str, Any]:
        """Threshold i's box, as the definition says: the bounds, f_low at FPR_U (when the box is not trivially
        above the curve), whether it lies below the curve, its empirical ε."""
        if i not in self.boxes:
            fpr_u = self.upper(int(self.fp[i]), int(self.n0[i]))
            fnr_u = self.upper(int(self.fn[i]), int(self.n1[i]))
            box: dict[str, Any] = {"index": i, "fpr_upper": fpr_u, "fnr_upper": fnr_u, "below": False}
            if fpr_u + fnr_u < 1:  # else the box reaches the trivial line 1 − α, above every trade-off curve
                box["f_lower"] = self.trade.f_lower(fpr_u)
                box["below"] = fnr_u < box["f_lower"] or fpr_u < self.trade.f_lower(fnr_u)
            box["epsilon"] = empirical_epsilon(fpr_u, fnr_u, self.delta)
            self.boxes[i] = box
        return self.boxes[i]

    def _corners(self, a: int, b: int) -> tuple[Fraction, Fraction]:
        """Proven lower ends of every FPR_U and FNR_U in the block [a, b] of a chain."""
        kf, kn = min(int(self.fp[a]), int(self.fp[b])), min(int(self.fn[a]), int(self.fn[b]))
        return self.lower(kf, int(self.n0[a])), self.lower(kn, int(self.n1[a]))

    def _f_upper(self, alpha: Fraction) -> Fraction:
        if alpha not in self._f_up:
            self._f_up[alpha] = self.trade.envelopes.upper(alpha)
        return self._f_up[alpha]

    def clear(self, a: int, b: int) -> bool:
        """Proven: no box of the block [a, b] lies below the curve (module docstring)."""
        lf, ln = self._corners(a, b)
        if lf + ln >= 1:
            return True
        return self._f_upper(lf) <= ln and self._f_upper(ln) <= lf

    def epsilon_bound(self, a: int, b: int) -> Fraction | float | None:
        """A proven upper bound of every empirical ε in the block [a, b] (inf: none proven; None: no threshold of
        the block has an ε)."""
        lf, ln = self._corners(a, b)
        bound: Fraction | float | None = None
        for x, y in ((ln, lf), (lf, ln)):
            if 1 - self.delta - x > 0:
                value = _arb_log_upper((1 - self.delta - x) / y) if y > 0 else math.inf
                bound = value if bound is None else max(bound, value)
        return bound

    def below(self, limit: int | None, screen: bool) -> list[dict[str, Any]]:
        """The first ``limit`` boxes below the curve, in threshold order (all of them with None)."""
        m, found = len(self.table), []
        if not (screen and self.table.monotone):
            for i in range(m):
                self.tick(1)
                if self.box(i)["below"]:
                    found.append(self.box(i))
                    if limit is not None and len(found) >= limit:
                        break
            return found
        stack = [(0, m - 1)]
        while stack and (limit is None or len(found) < limit):
            a, b = stack.pop()
            if a == b:
                self.tick(1)
                if self.box(a)["below"]:
                    found.append(self.box(a))
            elif self.clear(a, b):
                self.tick(b - a + 1)
            else:
                mid = (a + b) // 2
                stack += [(mid + 1, b), (a, mid)]
        return found

    def strongest(self, screen: bool) -> dict[str, Any] | None:
        """The first threshold with the largest empirical ε (None when no threshold has one)."""
        best: dict[str, Any] | None = None

        def better(box: dict[str, Any]) -> bool:
            e = box["epsilon"]
            return e is not None and (best is None or e > best["epsilon"]
                                      or e == best["epsilon"] and box["index"] < best["index"])

        m = len(self.table)
        if not (screen and self.table.monotone):
            for i in range(m):
                self.tick(1)
                if better(self.box(i)):
                    best = self.box(i)
            return best
        heap: list[tuple[Any, int, int]] = []

        def push(a: int, b: int) -> None:
            bound = self.epsilon_bound(a, b)
            if bound is None:
                self.tick(b - a + 1)
            else:
                heapq.heappush(heap, (-bound, a, b))

        push(0, m - 1)
        while heap:
            bound, a, b = heapq.heappop(heap)
            if best is not None and -bound < best["epsilon"]:
                self.tick(sum(y - x + 1 for _, x, y in heap) + b - a + 1)
                break
            if a == b:
                self.tick(1)
                if better(self.box(a)):
                    best = self.box(a)
            else:
                mid = (a + b) // 2
                push(a, mid)
                push(mid + 1, b)
        return best


def boxes(counts: Sequence[Counts], confidence: Fraction, fixed_in_advance: bool = False) -> list[dict[str, Any]]:
    """Every threshold's confidence box: the two Clopper–Pearson upper bounds at :func:`bonferroni_level`
    (exhaustive: one pair of bounds per distinct count)."""
    table = CountTable.of(counts)
    level = bonferroni_level(table, confidence, fixed_in_advance)
    cache: dict[tuple[int, int], Fraction] = {}

    def upper(k: int, n: int) -> Fraction:
        if (k, n) not in cache:
            cache[(k, n)] = clopper_pearson_upper(k, n, level)
        return cache[(k, n)]

    return [{"counts": c, "fpr_upper": upper(c.fp, c.non_members), "fnr_upper": upper(c.fn, c.members)}
            for c in table]


def _short(x: Fraction, rounding: str) -> str:
    return decimal_text(x, 6, rounding)


def _gap(best_eps: Fraction | None, proven_upper: Fraction | None) -> str | None:
    if best_eps is not None and best_eps > 0 and proven_upper:
        return _short(best_eps / proven_upper, "down")
    return None


def audit_canaries(trade: TradeOff, counts: Sequence[Counts], *, confidence: Fraction = DEFAULT_CONFIDENCE,
                   delta: Fraction = DEFAULT_DELTA, fixed_in_advance: bool = False, screen: bool = True,
                   tick: Callable[[int], None] | None = None) -> dict[str, Any]:
    """The verdict of an attack's counts against the run's certified curve, with the empirical ε at δ and
    the auditing gap (module docstring). Rates and ε are printed rounded outward (rates up, ε down).

    ``fixed_in_advance``: the counts rows' thresholds were fixed before the canaries were scored (the
    ``fixed-in-advance`` level rule). ``screen=False`` evaluates every threshold (the definition; the same
    report, slower). ``tick(n)``: called as n more thresholds are settled, twice over (verdict, then ε)."""
    confidence, delta = check_confidence(confidence), check_delta(delta)
    table = CountTable.of(counts)
    if not len(table):
        raise InputError("no thresholds to audit")
    rule = level_rule(table, fixed_in_advance)
    level = bonferroni_level(table, confidence, rule=rule)
    search = _Audit(trade, table, level, delta, tick=tick)
    below = search.below(LISTED, screen)
    best = search.strongest(screen)
    proven = epsilon_bracket(trade.curves, delta)
    best_eps = None if best is None else best["epsilon"]

    def box_json(box: dict[str, Any]) -> dict[str, Any]:
        i = box["index"]
        out: dict[str, Any] = {"rank": i + 1}
        if table.from_scores:
            if table._thresholds is not None:
                out["score"] = table.threshold(i)
        else:
            out["threshold"] = table.threshold(i)
        out.update({"tp": int(table.tp[i]), "fp": int(table.fp[i]), "tn": int(table.tn[i]), "fn": int(table.fn[i]),
                    "fpr_upper": _short(box["fpr_upper"], "up"), "fnr_upper": _short(box["fnr_upper"], "up")})
        if "f_lower" in box:
            out["certified_fnr_lower"] = _short(box["f_lower"], "down")
        return out

    many = "at least " if len(below) >= LISTED else ""
    # the printed empirical ε against the printed proven upper end (module docstring, Verdict): above it, the
    # strongest box lies below the line 1 − δ − e^{ε_up}·α, which lies below the run's curve
    over = best_eps is not None and proven.upper is not None and best_eps > proven.upper
    if below:
        reason = (f"{many}{len(below)} threshold(s) have their whole confidence box below the certified trade-off "
                  f"curve: at confidence {fraction_text(confidence)} the implementation is not the mechanism it states")
    elif over:
        assert best is not None and proven.upper is not None
        reason = (f"the threshold of rank {best['index'] + 1} has empirical epsilon >= "
                  f"{_short(best_eps, 'down')} at delta = {fraction_text(delta)}, above the run's proven epsilon <= "
                  f"{_short(proven.upper, 'up')}: its confidence box lies below the line 1 - delta - "
                  "exp(epsilon)*FPR of that proven (epsilon, delta), which lies below the run's trade-off curve: at "
                  f"confidence {fraction_text(confidence)} the implementation is not the mechanism it states")
    else:  # the text of reports written before this rule, which the rule never changes for a consistent verdict
        reason = "no threshold's confidence box lies below the certified trade-off curve"
    return {
        "verdict": "bug" if below or over else "consistent",
        "verdict_reason": reason,
        "confidence": fraction_text(confidence),
        "thresholds": len(table),
        "level_rule": rule,
        "bonferroni_level": fraction_text(level),
        "assumption": ASSUMPTION,
        "below_curve": [box_json(b) for b in below],
        "strongest": box_json(best) if best is not None else None,
        "delta": fraction_text(delta),
        "empirical_epsilon_lower": None if best_eps is None else _short(max(best_eps, Fraction(0)), "down"),
        "proven_epsilon": {"lower": _short(proven.lower, "down"),
                           "upper": None if proven.upper is None else _short(proven.upper, "up")},
        "auditing_gap": _gap(best_eps, proven.upper),
    }


# -- format version 1 (reports written before issue 30), re-checked as they were computed ------------------

def _float_quantile_v1(k: int, n: int, level: float) -> float:
    """The p with P(Binomial(n, p) ≤ k) = level in double precision, as version 1 found it (a starting point)."""
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


def _upper_v1(k: int, n: int, level: Fraction) -> Fraction:
    """Version 1's bound: the same proof from version 1's starting point (so the same rational)."""
    if k == n:
        return Fraction(1)
    return clopper_pearson_upper(k, n, level, estimate=_float_quantile_v1(k, n, float(level)))


def audit_canaries_v1(trade: TradeOff, counts: Sequence[Counts], *, confidence: Fraction,
                      delta: Fraction) -> dict[str, Any]:
    """The audit as format version 1 defined it (every threshold evaluated; counts rows at γ/(2m), the scores'
    thresholds at γ/(2·max(m, n₁, n₀)); every box below the curve counted), to re-check version-1 reports."""
    confidence, delta = check_confidence(confidence), check_delta(delta)
    table = CountTable.of(counts)
    level = bonferroni_level(table, confidence, rule="any-threshold" if table.from_scores else "fixed-in-advance")
    search = _Audit(trade, table, level, delta, upper=_upper_v1)
    below = search.below(None, screen=False)
    best = search.strongest(screen=False)
    proven = epsilon_bracket(trade.curves, delta)
    best_eps = None if best is None else best["epsilon"]

    def box_json(box: dict[str, Any]) -> dict[str, Any]:
        c = table[box["index"]]
        out = {"threshold": c.threshold, "tp": c.tp, "fp": c.fp, "tn": c.tn, "fn": c.fn,
               "fpr_upper": _short(box["fpr_upper"], "up"), "fnr_upper": _short(box["fnr_upper"], "up")}
        if "f_lower" in box:
            out["certified_fnr_lower"] = _short(box["f_lower"], "down")
        return out

    return {
        "verdict": "bug" if below else "consistent",
        "verdict_reason": (f"{len(below)} threshold(s) have their whole confidence box below the certified trade-off "
                           f"curve: at confidence {fraction_text(confidence)} the implementation is not the mechanism "
                           "it states" if below else
                           "no threshold's confidence box lies below the certified trade-off curve"),
        "confidence": fraction_text(confidence),
        "thresholds": len(table),
        "bonferroni_level": fraction_text(level),
        "assumption": ASSUMPTION_V1,
        "below_curve": [box_json(b) for b in below[:LISTED]],
        "strongest": box_json(best) if best is not None else None,
        "delta": fraction_text(delta),
        "empirical_epsilon_lower": None if best_eps is None else _short(max(best_eps, Fraction(0)), "down"),
        "proven_epsilon": {"lower": _short(proven.lower, "down"),
                           "upper": None if proven.upper is None else _short(proven.upper, "up")},
        "auditing_gap": _gap(best_eps, proven.upper),
    }
