"""The best ε over all real orders α > 1, bracketed by proven bounds (branch and bound).

For a run with RDP curve R(α) (:func:`rdp_verify.accounting.rdp.composed_rdp`) and a
conversion ε = R(α) + c(α, δ) (:mod:`rdp_verify.accounting.rdp`), we bracket

    ε* = max(0, inf_{α > 1} f(α)),   f(α) = R(α) + c(α, δ),

by an **upper bound** -- f at the best order found, a proven (ε, δ)-DP guarantee --
and a **proven lower bound**: no order α > 1, real or not on any list, gives a
smaller ε under this conversion.

**Convexity.** Write λ = α − 1, L = log(1/δ) and f = (G(λ) + L)/λ with

    G(λ) = K(λ) + φ(λ),   K(λ) = λ·R(1 + λ) = Σ_i T_i·log max(A_α, B_α)(q_i, σ_i),

φ = 0 (``mironov2017``) or φ(λ) = λ·log(λ/(1+λ)) − log(1+λ) (``balle2020``).
G is convex on [0, ∞) with G(0) = 0:

* log A_α = log E_{μ0}[w^α] and log B_α = log E_{μ0}[w^{1−α}] (Section 3 of
  Mironov–Talwar–Zhang 2019, w = μ/μ0) are cumulant generating functions in α,
  hence convex (Hölder: E[w^{tα+(1−t)β}] ≤ E[w^α]^t E[w^β]^{1−t}); equivalently
  (α − 1)·D_α is convex in α (van Erven & Harremoës 2014, Corollary 2). A maximum
  of convex functions and a sum with weights T_i ≥ 0 are convex, so K is.
  K(0) = 0 since A_1 = B_1 = 1, and K is continuous at 0 (D_α → KL, finite).
* φ'(λ) = log(λ/(1+λ)) and φ''(λ) = 1/(λ(1+λ)) > 0 for λ > 0; φ(λ) → 0 as λ → 0.

This is a departure from a plain monotone bound (R non-decreasing, van Erven &
Harremoës 2014, Theorem 3, plus monotone pieces of c): that bound's gap on a cell
of width h is O(h), the convex one's is O(h²), so far fewer rigorous evaluations
reach the same bracket (about 5–10× fewer at relative gap 1e-4).

**Cell bound.** Between nodes a < b (evaluated G enclosures), convexity gives two
support lines: l1 through (a, G(a)) with the slope of the chord from the node left
of a (for λ ≥ a, G(λ) ≥ l1(λ)), and l2 through (b, G(b)) with the slope of the
chord to the node right of b (for λ ≤ b, G(λ) ≥ l2(λ)). On any piece where
G ≥ m·λ + k, (G + L)/λ ≥ m + (k + L)/λ, which is monotone in λ, so its minimum
on the piece is at an end. Splitting [a, b] at any point x̃ (the lines' crossing)
gives the proven bound

    min f on [a, b] ≥ min(g1(a), g1(x̃), g2(x̃), g2(b)),   g_i(t) = (l_i(t) + L)/t,

evaluated in Arb with the chord slopes formed from the enclosures (the ball
result contains the value for the true G, so its lower end is safe). The two
ends of the domain are covered the same way:

* (1, 1 + 1e-9]: G ≥ l2 (chord of the first two nodes) for λ ≤ λ0; if
  l2(0) + L > 0 then (l2 + L)/λ is decreasing and its minimum is f(λ0), else the
  piece gives no bound (−∞) and the result says so by a lower bound of 0;
* [1e6, ∞): G ≥ l1 for λ ≥ λmax, so f ≥ min(f(λmax), slope of l1)
  (the limit of m + (k + L)/λ as λ → ∞ is m).

Node values come from the proven enclosures of the rigorous engine at 20
digits; nothing here is estimated. The search starts from half-decade nodes
α − 1 = 10^(k/2), refines the cell with the smallest bound (geometric midpoint
when wide, else the crossing point of its support lines), and stops when the
bracket is within ``rtol`` (or f ≤ 0 somewhere: then ε* = 0 exactly), when the
evaluation budget is spent, or when the weakest piece is one of the two end
pieces, which no supported order can refine (the optimum lies beyond α = 1e6,
e.g. q = 1e-12, σ = 1e4); ``converged`` says whether ``rtol`` was met, and the
bracket is proven either way. About 40 evaluations reach rtol = 1e-4 on
DP-SGD-like runs (≈ 45 for 1e-7: the O(h²) gap).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

from flint import arb, ctx

from ..foundations.decimals import decimal_text
from ..foundations.inputs import ALPHA_GAP_MIN, ALPHA_MAX, check_delta
from ..foundations.results import Bounded, arb_to_bounded, bounded_to_arb, to_arb
from ..foundations.run import Phase
from .rdp import (
    DPS,
    PREC,
    check_conversion,
    composed_rdp,
    epsilon_from_rdp,
    log_inv_delta,
)

__all__ = ["Optimum", "optimal_epsilon", "RTOL", "MAX_EVALUATIONS"]

RTOL = Fraction(1, 10**4)
MAX_EVALUATIONS = 400
LAM_MIN = ALPHA_GAP_MIN  # smallest supported α − 1
LAM_MAX = ALPHA_MAX - 1
_START = [LAM_MIN] + [Fraction(decimal_text(Fraction(10 ** (k / 2)), 2)) for k in range(-17, 12)] + [LAM_MAX]


@dataclass(frozen=True)
class Optimum:
    """Proven bracket of ε* = max(0, inf over α > 1 of ε(α)) under one conversion."""

    conversion: str
    epsilon: Bounded  # [proven lower bound of ε*, proven ε at ``order``]
    order: Fraction  # the order whose ε is the upper end
    evaluations: int  # orders α at which R(α) was enclosed (evaluations are cached per (q, σ, α))
    converged: bool  # the bracket met ``rtol`` within the budget


class _Search:
    """Nodes λ_0 = 0 < λ_1 < ... with enclosures of G(λ) and f(1 + λ)."""

    def __init__(self, phases: Sequence[Phase], delta: Fraction, conversion: str, dps: int):
        self.phases, self.delta, self.conversion, self.dps = phases, delta, conversion, dps
        self.L = log_inv_delta(delta)
        self.lam: list[Fraction] = [Fraction(0)]
        self.G: list[arb] = [arb(0)]  # G(0) = 0 exactly
        self.f: list[Bounded | None] = [None]

    def add(self, lam: Fraction) -> None:
        alpha = 1 + lam
        f = epsilon_from_rdp(composed_rdp(self.phases, alpha, self.dps), alpha, self.delta, self.conversion)
        g = to_arb(lam) * bounded_to_arb(f) - self.L  # G = λ f − L
        i = bisect.bisect(self.lam, lam)
        self.lam.insert(i, lam)
        self.G.insert(i, g)
        self.f.insert(i, f)

    def _slope(self, i: int) -> arb:
        """Slope of the chord between nodes i and i + 1."""
        return (self.G[i + 1] - self.G[i]) / to_arb(self.lam[i + 1] - self.lam[i])

    def _g(self, at: int, slope: arb, t: Fraction) -> arb:
        """(l(t) + L)/t for the line through node ``at`` with ``slope``."""
        return (self.G[at] + to_arb(t - self.lam[at]) * slope + self.L) / to_arb(t)

    def crossing(self, i: int) -> Fraction:
        """Where the support lines of cell [λ_i, λ_{i+1}] cross (a float guess, clamped)."""
        a, b = self.lam[i], self.lam[i + 1]
        if i + 2 >= len(self.lam):
            return b
        s1, s2 = float(self._slope(i - 1).mid()), float(self._slope(i + 1).mid())
        ga, gb = float(self.G[i].mid()), float(self.G[i + 1].mid())
        if not s2 > s1:
            return (a + b) / 2
        x = (gb - ga + float(a) * s1 - float(b) * s2) / (s1 - s2)
        return min(max(Fraction(x) if math.isfinite(x) else (a + b) / 2, a), b)

    def cell_bound(self, i: int) -> Fraction | float:
        """Lower bound of f on [λ_i, λ_{i+1}] (i = 0 is (0, λ_1]; −inf: no bound)."""
        if i == 0:
            if self.G[1] - to_arb(self.lam[1]) * self._slope(1) + self.L > 0:
                return self.f[1].lower  # (l2 + L)/λ decreases on (0, λ_1]
            return -math.inf
        s1 = self._slope(i - 1)
        if i + 2 >= len(self.lam):  # last cell: no node to the right of it
            return _low(self._g(i, s1, t) for t in (self.lam[i], self.lam[i + 1]))
        s2 = self._slope(i + 1)
        x = self.crossing(i)
        return _low([self._g(i, s1, self.lam[i]), self._g(i, s1, x),
                     self._g(i + 1, s2, x), self._g(i + 1, s2, self.lam[i + 1])])

    def tail_bound(self) -> Fraction:
        """Lower bound of f on [λ_max, ∞)."""
        n = len(self.lam) - 1
        return min(self.f[n].lower, _low([self._slope(n - 1)]))


def _split_point(a: Fraction, b: Fraction, guess: Fraction) -> Fraction:
    """A short decimal in the middle three quarters of (a, b), near ``guess``."""
    if b > 4 * a:  # wide on a log scale: geometric midpoint
        guess = Fraction(math.sqrt(a * b))
    lo, hi = a + (b - a) / 8, b - (b - a) / 8
    guess = min(max(guess, lo), hi)
    for digits in range(2, 60):
        x = Fraction(decimal_text(guess, digits))
        if lo <= x <= hi:
            return x
    return guess


def optimal_epsilon(phases: Sequence[Phase], delta: Fraction, conversion: str, rtol: Fraction = RTOL,
                    max_evaluations: int = MAX_EVALUATIONS, dps: int = DPS) -> Optimum:
    """Proven bracket of the best ε over all real α > 1 (module docstring: method and proofs)."""
    check_delta(delta)
    check_conversion(conversion)
    with ctx.workprec(PREC):
        search = _Search(phases, delta, conversion, dps)
        for lam in _START:
            search.add(lam)
        while True:
            n_cells = len(search.lam) - 1
            bounds = [search.cell_bound(i) for i in range(n_cells)] + [search.tail_bound()]
            lower = min(bounds)
            best = min(range(1, len(search.lam)), key=lambda i: search.f[i].upper)
            upper = search.f[best].upper
            gap_ok = upper <= 0 or upper - lower <= rtol * upper
            evaluations = len(search.lam) - 1
            if gap_ok or evaluations >= max_evaluations:
                break
            worst = min(range(len(bounds)), key=lambda i: bounds[i])
            if worst in (0, n_cells):  # an end piece beyond the supported orders: cannot refine
                break
            a, b = search.lam[worst], search.lam[worst + 1]
            x = _split_point(a, b, search.crossing(worst))
            if not a < x < b:
                break
            search.add(x)
    lo = max(Fraction(0), lower) if lower != -math.inf else Fraction(0)
    return Optimum(conversion, Bounded.between(min(lo, max(upper, Fraction(0))), max(upper, Fraction(0))),
                   1 + search.lam[best], evaluations, gap_ok)


def _low(balls) -> Fraction | float:
    """The smallest lower end of some Arb balls, exactly (−inf if one is not finite)."""
    ends = [b.lower() for b in balls]
    if not all(e.is_finite() for e in ends):
        return -math.inf
    return min(arb_to_bounded(e).value for e in ends)
