"""The data of Figure 1 of Mironov–Talwar–Zhang 2019, computed with certified brackets.

**Left panel.** For σ ∈ {4, 10} and q on a log grid from 1e−5 to 0.2, the
largest order α allowed by condition (4) of Theorem 11, by condition (5),
by both (their minimum), and the exact largest α with ε_α ≤ 2q²α/σ²:

    (4)  α ≤ σ²L/2 − 2 ln σ,
    (5)  α ≤ (σ²L²/2 − ln 5 − 2 ln σ) / (L + ln(qα) + 1/(2σ²)),
         L = ln(1 + 1/(q(α − 1))),

as decided in Arb by :mod:`rdp_verify.certificates.theorem11` (L depends on α, so each
condition is a root-finding problem in α). Every largest α is reported as a
bracket [α_lo, α_hi] of exact decimals: the property is **proven** at α_lo
(margin ≥ 0 in ball arithmetic, or the proven ε_α interval lies below the
bound) and proven false at α_hi. It is found by scanning a log grid in α − 1
and then bisecting (geometric mean of α − 1) between the last grid point inside
the set and the next one outside, until (α_hi − α_lo)/α_lo ≤ 1e−4.

*Is each allowed set an interval (1, α*]?*

* (4): **proven**. L is strictly decreasing in α, so σ²L/2 − 2 ln σ − α is
  strictly decreasing: exactly one sign change.
* (5) and the exact curve: **checked on the grid only.** The scan decides the
  sign at every grid point (log-spaced α − 1, ``CONDITION_GRID`` and
  ``EXACT_GRID``) and reports the number of sign changes; one change means
  the set is an interval as far as the grid can see. Between grid points this
  is not proven.

By Theorem 11 the exact largest α can never be below the minimum of (4) and
(5); ``exact_over_minimum`` encloses their ratio (how much room the conditions
leave) *given* that the (5) set and the exact set are intervals, which is
grid-checked only (see above), and the CLI exits 1 if a bracket contradicts this.

**Right panel.** Proven ε_α of SG_{q,σ} on a log grid of α for the
configurations in ``RIGHT_PANEL``, with the Theorem 11 bound 2q²α/σ² and
whether all its conditions hold at each α (decided in Arb).

Exact ε_α comes from :func:`rdp_verify.methods.rigorous.epsilon_many` (Arb; uses
Corollary 7, A_α ≥ B_α) at ``DPS`` digits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Iterable, Sequence

from flint import arb, ctx

from ..certificates import theorem11
from ..foundations.decimals import decimal_text, interval_json
from ..foundations.inputs import SGM, fraction_text
from ..foundations.results import Bounded, arb_to_bounded
from ..methods.rigorous import epsilon_many

__all__ = [
    "SIGMAS",
    "Q_GRID",
    "RIGHT_PANEL",
    "Bracket",
    "certified_sign",
    "largest_in_set",
    "log_grid",
    "condition_signs",
    "left_point",
    "right_curve",
    "figure1_data",
]

DPS = 20
REL_WIDTH = Fraction(1, 10**4)
SIGMAS = (Fraction(4), Fraction(10))
#: 1, 2, 3, 5 per decade from 1e−5 to 0.05, then 0.1 and 0.2 (the edge of Theorem 11's q ≤ 1/5).
Q_GRID = tuple(Fraction(m) * Fraction(10) ** e for e in range(-5, -1) for m in (1, 2, 3, 5)) + (
    Fraction(1, 10),
    Fraction(1, 5),
)
#: (α − 1 from, α − 1 to, points per decade); α ≤ 1e6, the supported domain.
CONDITION_GRID = (Fraction(1, 10**9), Fraction(10**6) - 1, 40)
EXACT_GRID = (Fraction(1, 10**3), Fraction(10**5), 10)
#: Right panel: (q, σ) and α from 1.25 to 1e4, 20 points per decade of α − 1.
RIGHT_PANEL = ((Fraction(1, 100), Fraction(4)), (Fraction(1, 1000), Fraction(10)))
RIGHT_ALPHAS = (Fraction(1, 4), Fraction(10**4) - 1, 20)
_PRECISIONS = (64, 256, 2048)


def certified_sign(expr: Callable[[], arb]) -> bool | None:
    """True if expr() ≥ 0 is proven, False if expr() < 0 is proven, None if still undecided.

    ``expr`` is re-evaluated at 64, 256 and 2048 bits until Arb decides the sign.
    """
    saved = ctx.prec
    try:
        for prec in _PRECISIONS:
            ctx.prec = prec
            x = expr()
            if x >= 0:
                return True
            if x < 0:
                return False
        return None
    finally:
        ctx.prec = saved


def condition_signs(sgm: SGM) -> tuple[bool | None, bool | None]:
    """Proven truth of conditions (4) and (5) of Theorem 11 at sgm (None: undecided)."""
    return (certified_sign(lambda: theorem11.margins(sgm)[3]),
            certified_sign(lambda: theorem11.margins(sgm)[4]))


def log_grid(first: Fraction, last: Fraction, per_decade: int) -> list[Fraction]:
    """1 + t for t log-spaced from ``first`` to ``last`` (both included), rounded to 3 significant digits."""
    k0 = math.floor(math.log10(first) * per_decade)
    k1 = math.ceil(math.log10(last) * per_decade)
    half_step = 10 ** (0.5 / per_decade)  # no two points closer than half a step
    ts = [first]
    for k in range(k0, k1 + 1):
        t = Fraction(decimal_text(Fraction(10 ** (k / per_decade)), 3))
        if ts[-1] * half_step < t < last / half_step:
            ts.append(t)
    return [1 + t for t in ts + [last]]


def _between(lo: Fraction, hi: Fraction) -> Fraction:
    """The shortest decimal near 1 + √((lo − 1)(hi − 1)) strictly inside (lo, hi)."""
    mid = Fraction(1 + math.sqrt(float(lo - 1) * float(hi - 1)))
    for digits in range(2, 60):
        x = Fraction(decimal_text(mid, digits))
        if lo < x < hi:
            return x
    return (lo + hi) / 2


@dataclass(frozen=True)
class Bracket:
    """The largest α in a set, bracketed: ``lo`` proven inside, ``hi`` proven outside.

    ``lo is None``: no grid point is inside. ``hi is None``: every grid point from
    ``lo`` on is inside (the set reaches the end of the scanned range).
    ``sign_changes`` counts changes along the decided grid points;
    ``undecided`` counts grid points whose sign stayed open.
    """

    lo: Fraction | None
    hi: Fraction | None
    grid_first: Fraction
    grid_last: Fraction
    grid_points: int
    sign_changes: int
    undecided: int
    evaluations: int

    def to_json(self) -> dict[str, Any]:
        return {
            "alpha_lo": None if self.lo is None else fraction_text(self.lo),
            "alpha_hi": None if self.hi is None else fraction_text(self.hi),
            "grid": {
                "alpha_from": fraction_text(self.grid_first),
                "alpha_to": fraction_text(self.grid_last),
                "points": self.grid_points,
                "sign_changes": self.sign_changes,
                "undecided": self.undecided,
            },
            "evaluations": self.evaluations,
        }


def largest_in_set(
    inside_many: Callable[[list[Fraction]], list[bool | None]],
    grid: Sequence[Fraction],
    rel_width: Fraction = REL_WIDTH,
) -> Bracket:
    """Certified bracket of the largest α of {α : inside(α)}, by grid scan and bisection.

    ``inside_many`` maps orders to True (proven inside), False (proven outside)
    or None (undecided). Bisection keeps a proven-inside ``lo`` and a
    proven-outside ``hi``; an undecided midpoint stops it early (the bracket
    stays valid, only wider).
    """
    signs = inside_many(list(grid))
    evaluations = len(grid)
    decided = [s for s in signs if s is not None]
    changes = sum(1 for s, t in zip(decided, decided[1:]) if s != t)
    inside = [i for i, s in enumerate(signs) if s is True]
    lo = hi = None
    if inside:
        lo = grid[inside[-1]]
        hi = next((a for a, s in zip(grid[inside[-1] + 1:], signs[inside[-1] + 1:]) if s is False), None)
    elif False in signs:
        hi = grid[signs.index(False)]
    while lo is not None and hi is not None and hi - lo > rel_width * lo:
        mid = _between(lo, hi)
        (sign,) = inside_many([mid])
        evaluations += 1
        if sign is None:
            break
        lo, hi = (mid, hi) if sign else (lo, mid)
    return Bracket(lo, hi, grid[0], grid[-1], len(grid), changes, signs.count(None), evaluations)


def _condition_inside(q: Fraction, sigma: Fraction, which: int) -> Callable[[list[Fraction]], list[bool | None]]:
    return lambda alphas: [condition_signs(SGM(q, sigma, a))[which] for a in alphas]


def _bound_inside(q: Fraction, sigma: Fraction, dps: int) -> Callable[[list[Fraction]], list[bool | None]]:
    """α ↦ True if ε_α ≤ 2q²α/σ² is proven, False if ε_α > 2q²α/σ² is proven."""

    def inside(alphas: list[Fraction]) -> list[bool | None]:
        out: list[bool | None] = []
        for a, eps in zip(alphas, epsilon_many(q, sigma, alphas, dps)):
            bound = theorem11.closed_form_bound(SGM(q, sigma, a))
            out.append(True if eps.upper <= bound else False if eps.lower > bound else None)
        return out

    return inside


def _minimum(c4: Bracket, c5: Bracket) -> dict[str, str | None]:
    """Bracket of min(α4*, α5*): the minimum is monotone in both arguments (None: unbounded)."""
    lo = min(c4.lo, c5.lo) if c4.lo is not None and c5.lo is not None else None
    his = [h for h in (c4.hi, c5.hi) if h is not None]
    return {"alpha_lo": None if lo is None else fraction_text(lo),
            "alpha_hi": fraction_text(min(his)) if his else None}


def _margin_json(q: Fraction, sigma: Fraction, alpha: Fraction | None, which: int) -> dict[str, str] | None:
    """Proven interval of the margin (right-hand side − α) of condition (4) (which=0) or (5) (which=1)."""
    if alpha is None:
        return None
    saved = ctx.prec
    try:
        ctx.prec = 128
        return interval_json(arb_to_bounded(theorem11.margins(SGM(q, sigma, alpha))[3 + which]), 6)
    finally:
        ctx.prec = saved


def _exact_json(q: Fraction, sigma: Fraction, alpha: Fraction | None, dps: int) -> dict[str, Any] | None:
    """Proven ε_α and the exact bound 2q²α/σ² at one end of the exact bracket."""
    if alpha is None:
        return None
    (eps,) = epsilon_many(q, sigma, [alpha], dps)
    return {"epsilon": interval_json(eps, 10), "bound": fraction_text(theorem11.closed_form_bound(SGM(q, sigma, alpha)))}


def left_point(args: tuple[Fraction, Fraction, int]) -> dict[str, Any]:
    """One (σ, q) of the left panel: brackets for (4), (5), their minimum and the exact curve."""
    sigma, q, dps = args
    grid = log_grid(*CONDITION_GRID)
    c4 = largest_in_set(_condition_inside(q, sigma, 0), grid)
    c5 = largest_in_set(_condition_inside(q, sigma, 1), grid)
    exact = largest_in_set(_bound_inside(q, sigma, dps), log_grid(*EXACT_GRID))
    minimum = _minimum(c4, c5)
    applies = q <= Fraction(1, 5) and sigma >= 4
    ratio = None
    if None not in (exact.lo, exact.hi, minimum["alpha_lo"], minimum["alpha_hi"]):
        lo = exact.lo / Fraction(minimum["alpha_hi"])
        hi = exact.hi / Fraction(minimum["alpha_lo"])
        ratio = interval_json(Bounded.between(lo, hi), 6)
    # Theorem 11: every α ≤ min(α4*, α5*) has ε_α ≤ bound, so the exact α* ≥ min(α4*, α5*).
    consistent = not applies or exact.hi is None or minimum["alpha_lo"] is None or exact.hi > Fraction(minimum["alpha_lo"])
    conditions = {}
    for which, bracket, verdict in ((0, c4, _MONOTONE_4), (1, c5, _grid_verdict(c5))):
        conditions[f"condition_{4 + which}"] = {
            **bracket.to_json(),
            "margin_at_lo": _margin_json(q, sigma, bracket.lo, which),
            "margin_at_hi": _margin_json(q, sigma, bracket.hi, which),
            "allowed_set": verdict,
        }
    return {
        "sigma": fraction_text(sigma),
        "q": fraction_text(q),
        "theorem11_applies": applies,
        **conditions,
        "minimum": minimum,
        "exact": {
            **exact.to_json(),
            "set": "alpha with epsilon_alpha <= 2 q^2 alpha / sigma^2",
            "at_lo": _exact_json(q, sigma, exact.lo, dps),
            "at_hi": _exact_json(q, sigma, exact.hi, dps),
            "allowed_set": _grid_verdict(exact),
        },
        "exact_over_minimum": ratio,
        "consistent_with_theorem11": consistent,
    }


_MONOTONE_4 = "proven interval (1, alpha*]: sigma^2 L/2 - 2 ln sigma - alpha is strictly decreasing in alpha"


def _grid_verdict(b: Bracket) -> str:
    if b.sign_changes == 1 and b.undecided == 0:
        return "interval on the scanned grid (one sign change); not proven between grid points"
    return f"{b.sign_changes} sign changes and {b.undecided} undecided points on the scanned grid"


def right_curve(args: tuple[Fraction, Fraction, int]) -> dict[str, Any]:
    """Proven ε_α of SG_{q,σ} on the right-panel α grid, with Theorem 11's bound and its conditions."""
    q, sigma, dps = args
    alphas = log_grid(*RIGHT_ALPHAS)
    points = []
    for a, eps in zip(alphas, epsilon_many(q, sigma, alphas, dps)):
        sgm = SGM(q, sigma, a)
        c4, c5 = condition_signs(sgm)
        points.append({
            "alpha": fraction_text(a),
            "epsilon": interval_json(eps, 8),
            "bound": decimal_text(theorem11.closed_form_bound(sgm), 8),
            "conditions_hold": bool(q <= Fraction(1, 5) and sigma >= 4 and c4 and c5),
        })
    return {"q": fraction_text(q), "sigma": fraction_text(sigma), "points": points}


def figure1_data(
    mapper: Callable[[Callable[[Any], Any], list[Any]], Iterable[Any]] = map,
    sigmas: Sequence[Fraction] | None = None,
    q_grid: Sequence[Fraction] | None = None,
    right_panel: Sequence[tuple[Fraction, Fraction]] | None = None,
    dps: int = DPS,
) -> dict[str, Any]:
    """Both panels as a JSON-ready dict (defaults: ``SIGMAS``, ``Q_GRID``, ``RIGHT_PANEL``).

    ``mapper(fn, items)`` may run the points in parallel (the CLI passes
    :func:`rdp_verify.foundations.parallel.progress_map`).
    """
    points = [(s, q, dps) for s in sigmas or SIGMAS for q in q_grid or Q_GRID]
    left = list(mapper(left_point, points))
    right = list(mapper(right_curve, [(q, s, dps) for q, s in right_panel or RIGHT_PANEL]))
    markers = {(p["q"], p["sigma"]): p for p in left}
    for curve in right:  # where the conditions stop and the exact bound stops holding
        point = markers.get((curve["q"], curve["sigma"])) or left_point((Fraction(curve["sigma"]), Fraction(curve["q"]), dps))
        curve["theorem11_largest_alpha"] = point["minimum"]
        curve["exact_largest_alpha"] = {k: point["exact"][k] for k in ("alpha_lo", "alpha_hi")}
    return {
        "figure": "Figure 1 of Mironov, Talwar, Zhang (2019), recomputed with certified brackets",
        "epsilon": f"proven Arb enclosures at {dps} digits (rdp_verify.rigorous.epsilon_many)",
        "brackets": "alpha_lo is proven inside the set, alpha_hi proven outside; relative width <= 1e-4",
        "exact_over_minimum": ("encloses exact alpha* / min(alpha4*, alpha5*) given that the sets of (5) and of the "
                               "exact bound are intervals, which is checked on the scanned grid only"),
        "left": left,
        "right": right,
    }
