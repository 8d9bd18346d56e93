"""Two discrete pairs on a loss grid log A + h·ℤ that bracket one SGM step: one dominates it, one is dominated.

**Curves and dominance.** A pair (P, Q) is described by its curve H(x) = E_Q[(dP/dQ − x)_+] + P(dQ = 0),
x ≥ 0: convex, non-increasing, H(0) = 1, H'(0+) ≥ −1. Conversely every such function is the curve of
a pair, and a convex piecewise-linear one with kinks at x_k = A·e^{kh} is the curve of a pair whose
atoms have privacy loss log A + kh (P-mass at the kink x_k is x_k times the jump of the slope; a kink at 0 is
Q-mass at loss −∞, the limit H(∞) is P-mass at +∞). (P, Q) *dominates* (P', Q') when H ≥ H' on
[0, ∞); by Blackwell's theorem for binary experiments (Blackwell 1953, Ann. Math. Statist. 24; see also Dong, Roth, Su 2022)
(P', Q') is then a post-processing of (P, Q), and dominance survives composition: if each factor
dominates, the products do (Zhu, Dong, Wang 2022, Theorem 10). So the privacy curve of the composed true
pairs lies between those of the composed discrete pairs.

**Upper pair: connect the dots** (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022, PoPETs). The
piecewise-linear interpolation H̄ of H at the grid x_{k_lo} < … < x_{k_hi}, continued by the chord from
(0, 1) on the left and by the constant H(x_{k_hi}) on the right, is convex (chords of a convex function)
and ≥ H. Its pair has P-mass p̄_k = x_k·(s_{k+1} − s_k) at x_k (s the chord slopes), P-mass
H(x_{k_hi}) at +∞ (the truncated tail) and Q-mass 1 + s_{k_lo} at −∞.

**The grid** (:func:`grid_range`): the anchor A is 1, or just above the sliver where Q's mass of the
likelihood ratio sits for σ ≪ 1 (:func:`anchor_for`: otherwise the dominated pair collapses); the
range reaches where each direction's tail has mass below the per-step allowance. With a budget,
the curve is evaluated only at :func:`grid_points` (every 2^j-th point where it is nearly linear);
the masses of the points skipped are 0 and both constructions below are unchanged (a cell is then
the span between consecutive evaluated points).

**Lower pair: lowered chords and a proven convex hull.** On a cell [a, b] of width Δ with
M ≥ sup H'' (:meth:`StepCurve.curvature_bound`), Taylor's theorem gives
H(x) ≥ (1 − t)H(a) + tH(b) − t(1 − t)·Δ²M/2 for x = a + tΔ. A line through (a, H(a) − u) and
(b, H(b) − v), u, v ≥ 0, therefore lies below H on the cell when (1 − t)u + tv ≥ t(1 − t)·D for all
t ∈ [0, 1], D = Δ²M/2, which is equivalent to (√u + √v)² ≥ D (minimise u/t + v/(1 − t)). The target
values are H(x_k) − d_k with d_k = max of D/4 over the adjacent cells, but never below the trivial
curve (1 − x)_+ (a lower value would not be a pair's curve); where a cell fails the criterion because
one end sits on that floor, the other end is lowered to (√D − √u)², or also put on the floor. The
two grid ends are put on the floor (1 − x below x_{k_lo}, 0 above x_{k_hi}), so every atom is on the
grid, P has total mass 1 and Q total mass 1. The lower convex hull of the points is taken with every
kink's mass proven positive in ball arithmetic (a vertex whose mass is not is removed), and then the
criterion is verified again on every cell of the final curve; if any check fails, the grid gets no
dominated pair (its masses are 0, so the δ read off it is 0, a true but vacuous lower bound).
The curve is convex, equals 1 − x near 0, vanishes beyond x_{k_hi} and lies below H: a dominated pair.
Its error is second order in h (Taylor), unlike rounding every loss down (first order, T·h in ε).

**The add direction** uses the same two pairs with P and Q swapped (the perspective map
H ↦ 1 − x + x·H(1/x) keeps both the interpolation and the dominance): its P-masses are the Q-masses
p_k/x_k of the remove pair, at loss −log x_k.

**Fixed point.** Masses are enclosed in Arb balls at :func:`precision` bits and written as integers in
units of 2^−bits: the upper pair's rounded up (and the masses at ±∞ kept separately, rounded up), the
lower pair's rounded down. Rounding up the masses of a dominating pair and down those of a dominated
one keeps every δ computed from them on the safe side (:mod:`rdp_verify.curves.compose`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import mpmath
from flint import arb, ctx

from ..foundations.results import to_arb
from .replace_one import ReplaceOneCurve, SymmetrisedCurve, replace_loss_scale, replace_tail
from .single_step import StepCurve

__all__ = ["PAIRS", "Grid", "StepPLD", "LowerPairError", "discretize", "curve_pairs", "grid_points", "grid_range", "anchor_for", "loss_scale",
           "precision"]

# the one-step pairs: SG(q, σ) under add/remove; replace-one under Poisson sampling (the mixture pair); replace-one
# with fixed-size batches (upper: the symmetrised remove curve of SG(q, σ/2); lower: SG(q, σ/2)'s own pairs)
PAIRS = ("sgm", "replace-one", "fixed-replace-one")
GUARD_BITS = 64  # Arb precision above the fixed-point bits: covers second-difference cancellation


class LowerPairError(ArithmeticError):
    """The dominated (lower) pair could not be verified: refuse rather than guess."""


@dataclass(frozen=True)
class Grid:
    """Losses log(anchor) + kh for k_lo ≤ k ≤ k_hi (remove direction); x_k = anchor·e^{kh}.

    The anchor is 1 (the usual lattice h·ℤ) or, when nearly all of Q's mass of the likelihood ratio
    Λ sits in a sliver just above its infimum 1 − q (σ ≪ 1: the steps that miss the record), a
    rational just above that sliver (:func:`anchor_for`), with x_{k_lo} ≤ 1 − q. The range must straddle
    x = 1: x_{k_lo} < 1 < x_{k_hi} (the trivial floor (1 − x)_+ is used at both ends).
    """

    h: Fraction
    k_lo: int
    k_hi: int
    anchor: Fraction = Fraction(1)

    def __post_init__(self) -> None:
        if not (self.h > 0 and self.k_lo < self.k_hi and 0 < self.anchor <= 1):
            raise ValueError("need h > 0, k_lo < k_hi and 0 < anchor <= 1")

    @property
    def size(self) -> int:
        return self.k_hi - self.k_lo + 1


@dataclass(frozen=True)
class StepPLD:
    """Fixed-point privacy-loss distributions of one SGM step, both bounds and both directions.

    ``remove_upper[i]`` is an integer ≥ 2^bits·p̄_k (P-mass of the dominating pair at loss
    log(anchor) + kh, k = k_lo + i); ``remove_upper_inf`` ≥ 2^bits·(its P-mass at +∞).
    ``remove_lower[i]`` ≤ 2^bits·π_k (the dominated pair). ``add_upper[i]`` / ``add_lower[i]`` are the
    same for the add direction at loss −log(anchor) − kh (P-mass p_k/x_k); ``add_upper_inf`` bounds its
    mass at +∞.
    """

    q: Fraction
    sigma: Fraction
    grid: Grid
    bits: int
    remove_upper: tuple[int, ...]
    remove_upper_inf: int
    remove_lower: tuple[int, ...]
    add_upper: tuple[int, ...]
    add_upper_inf: int
    add_lower: tuple[int, ...]
    checks: dict[str, Any] = field(default_factory=dict)
    pair: str = "sgm"  # which one-step pairs (PAIRS) were discretised


def _upper_int(x: arb, scale: arb) -> int:
    return max(0, int((x * scale).upper().ceil().unique_fmpz()))


def _lower_int(x: arb, scale: arb) -> int:
    return max(0, int((x * scale).lower().floor().unique_fmpz()))


class _Curve:
    """Grid points, native values and slopes of H on the grid (G-units left of x = 1, H-units right).

    G = H − (1 − x) differs from H by a linear function, so its chords differ by exactly −1 in slope
    and its second differences (the masses) are the same; using G where x < 1 keeps full relative
    accuracy where H ≈ 1 − x. A cell whose left end is left of 1 and right end right of it is in
    H-units (the G value at its left end converted).
    """

    def __init__(self, curve: StepCurve, grid: Grid, ks: list[int] | None = None):
        self.grid = grid
        self.k = list(range(grid.k_lo, grid.k_hi + 1)) if ks is None else list(ks)
        hx, anchor = to_arb(grid.h), to_arb(grid.anchor)
        self.x = [anchor * (hx * k).exp() for k in self.k]  # exact 1 at k = 0 on the usual lattice
        # t = x − (1 − q) = anchor·expm1(kh) + (anchor − (1 − q)), without the cancellation of the difference
        offset = to_arb(grid.anchor - (1 - curve.q_exact))
        ts = [anchor * (hx * k).expm1() + offset for k in self.k]
        if not (self.x[0] < 1 and self.x[-1] > 1):
            raise ArithmeticError("the grid does not straddle x = 1")
        # G-side: x ≤ 1, a prefix of the grid (at x = 1 exactly both units agree, and conversions stay exact)
        self.g = [not x > 1 for x in self.x]
        self.f, self.fp = [], []  # native value and native slope (G, G' on the G-side; H, H' else)
        for g, x, t, k in zip(self.g, self.x, ts, self.k):
            value, slope = curve.values(x, g_side=g, t=t, k=k)
            self.f.append(value)
            self.fp.append(slope)

    def g_side(self, i: int) -> bool:
        return self.g[i]

    def one_side(self, i: int) -> bool:
        """Cell [i, i + 1] lies on one side of x = 1 (x = 1 itself counts on both: there 1 − x = 0), so a
        native 0 at both ends is the floor (1 − x)_+ on the whole cell."""
        return self.g[i] == self.g[i + 1] or (self.x[i].is_exact() and self.x[i] == 1)

    def cell_slopes(self, i: int) -> tuple[arb, arb]:
        """H'(x_i), H'(x_{i+1}) in the units of cell [i, i+1] (G-units if x_{i+1} ≤ 1, else H-units)."""
        left = self.fp[i] - 1 if self.g[i] and not self.g[i + 1] else self.fp[i]  # G' − 1 = H'
        return left, self.fp[i + 1]

    def span_slope(self, i: int, j: int, values: list[arb]) -> tuple[arb, str]:
        """Slope of the chord through (x_i, values[i]) and (x_j, values[j]) (native values), with its unit."""
        xi, xj, vi, vj = self.x[i], self.x[j], values[i], values[j]
        if self.g[j]:
            return (vj - vi) / (xj - xi), "G"
        if not self.g[i]:
            return (vj - vi) / (xj - xi), "H"
        return (vj - (vi + 1 - xi)) / (xj - xi), "H"  # the G value at i converted to H

    def kink(self, i: int, left: tuple[arb, str], right: tuple[arb, str]) -> arb:
        """P-mass x_i·(right slope − left slope) at grid point i, slopes in their units."""
        (sl, ul), (sr, ur) = left, right
        if ul == ur:
            return self.x[i] * (sr - sl)
        return self.x[i] * (sr - sl + 1)  # left in G-units (H-slope = G-slope − 1), right in H-units


def _upper_masses(c: _Curve) -> tuple[list[arb], arb, arb]:
    """Connect the dots: P-masses at the grid, at +∞, and the Q-mass at −∞ (= add direction's +∞)."""
    n = len(c.x)
    left0 = (c.f[0] / c.x[0], "G")  # chord of G from (0, 0): G(0) = H(0) − 1 = 0
    slopes = [c.span_slope(i, i + 1, c.f) for i in range(n - 1)]
    masses = []
    for i in range(n):
        left = left0 if i == 0 else slopes[i - 1]
        right = (arb(0), "H") if i == n - 1 else slopes[i]
        masses.append(c.kink(i, left, right))
    return masses, c.f[-1], left0[0]


def _sqrt_lower(x: arb) -> arb:
    """A lower bound of √max(x, 0), as an exact point."""
    lo = x.lower()
    return arb(0) if not lo > 0 else lo.sqrt().lower()


@dataclass(frozen=True)
class _Cell:
    """What bounds the gap E = chord − H on one cell of width Δ (all exact upper bounds).

    Taylor: E(a + tΔ) ≤ t(1 − t)·D with D = Δ²·sup H''/2. Tangents (H convex): E(x) ≤ α(x − a) and
    E(x) ≤ β(b − x) with α = s − H'(a), β = H'(b) − s, s the chord slope.
    """

    d: arb
    alpha: arb
    beta: arb
    width: arb

    def holds(self, u: arb, v: arb) -> bool:
        """The line through (a, H(a) − u), (b, H(b) − v) is proven ≤ H on the cell (u, v: gap balls).

        Taylor: (1 − t)u + tv ≥ t(1 − t)D for all t ⟺ (√u + √v)² ≥ D. Tangents: a line is above the
        tent min(αΔt, βΔ(1 − t)) iff it is at its apex t = β/(α + β) ⟺ αu + βv ≥ αβΔ.
        """
        su, sv = _sqrt_lower(u), _sqrt_lower(v)
        if ((su + sv) * (su + sv)).lower() >= self.d:
            return True
        lo_u, lo_v = u.lower(), v.lower()
        lo_u, lo_v = (lo_u if lo_u > 0 else arb(0)), (lo_v if lo_v > 0 else arb(0))
        return bool((self.alpha * lo_u + self.beta * lo_v).lower() >= (self.alpha * self.beta * self.width).upper())

    def symmetric(self) -> arb:
        """A gap g that makes the cell hold with u = v = g: min(D/4, αβΔ/(α + β))."""
        tent = (self.alpha * self.beta * self.width / (self.alpha + self.beta)).upper() \
            if (self.alpha + self.beta) > 0 else arb(0)
        return min(self.d / 4, tent) * (1 + arb(2) ** -40)

    def need(self, fixed: arb, fixed_is_left: bool) -> arb:
        """The smallest gap at the other end that makes the cell hold, given the gap ``fixed``."""
        root = (self.d.sqrt() - _sqrt_lower(fixed)).upper()
        taylor = (root * root).upper() if root > 0 else arb(0)
        lo = fixed.lower() if fixed.lower() > 0 else arb(0)
        own, other = (self.beta, self.alpha) if fixed_is_left else (self.alpha, self.beta)
        if own > 0:
            tent = ((self.alpha * self.beta * self.width - other * lo) / own).upper()
            tent = tent if tent > 0 else arb(0)
        else:
            tent = taylor
        return min(taylor, tent) * (1 + arb(2) ** -40)


def _cells(curve: StepCurve, c: _Curve) -> list[_Cell]:
    cells = []
    for i in range(len(c.x) - 1):
        dx = c.x[i + 1] - c.x[i]
        m = curve.curvature_bound(c.x[i], c.x[i + 1], ks=(c.k[i], c.k[i + 1]))
        s, _ = c.span_slope(i, i + 1, c.f)
        left, right = c.cell_slopes(i)
        cells.append(_Cell(d=(dx * dx * m / 2).upper(), alpha=(s - left).upper(), beta=(right - s).upper(),
                           width=dx.upper()))
    return cells


def _lower_masses(curve: StepCurve, c: _Curve) -> tuple[list[arb], dict[str, Any]]:
    """The dominated pair's P-masses on the grid (module docstring), verified, or LowerPairError."""
    n = len(c.x)
    cells = _cells(curve, c)
    zero = arb(0)
    lowering = []
    for i in range(n):
        adjacent = [cells[j].symmetric() for j in (i - 1, i) if 0 <= j < n - 1]
        lowering.append(max(adjacent) if adjacent else zero)
    floor = [False] * n  # True: the target value is the floor (native value 0)
    floor[0] = floor[-1] = True

    def gap(i: int) -> arb:
        return c.f[i] if floor[i] else lowering[i]

    for i in range(n):
        if not floor[i] and not (c.f[i] - lowering[i]) > 0:
            floor[i] = True
    # Cells with one end on the floor: lower the other end as far as the cell needs, or floor it too.
    # A cell with both ends on the floor is the floor line itself, below H. Each change re-queues the
    # neighbouring cells; floors only grow and lowerings only rise, so this ends.
    work, checked = list(range(n - 1)), 0
    while work:
        i = work.pop()
        checked += 1
        if floor[i] and floor[i + 1] and c.one_side(i):  # the floor line itself
            continue
        if cells[i].holds(gap(i), gap(i + 1)):
            continue
        if floor[i] and floor[i + 1]:  # across x = 1 the chord between the two floors is above the floor
            raise LowerPairError(f"lower pair: cell [{c.k[i]}h, {c.k[i + 1]}h] across x = 1 is not proven below H")
        end, other = (i + 1, i) if floor[i] else (i, i + 1)
        if floor[other]:
            lowering[end] = max(lowering[end], cells[i].need(c.f[other], fixed_is_left=other == i))
            if not (c.f[end] - lowering[end]) > 0 or not cells[i].holds(gap(i), gap(i + 1)):
                floor[end] = True
        else:  # two lowered ends fail only through rounding: give up on this cell's ends
            floor[i] = floor[i + 1] = True
        work.extend(j for j in (i - 1, i, i + 1) if 0 <= j < n - 1)
    target = [zero if floor[i] else c.f[i] - lowering[i] for i in range(n)]

    # lower convex hull, keeping only vertices whose kink mass is proven positive
    left0, right_end = (zero, "G"), (zero, "H")  # slope −1 (G-units 0) below x_lo; 0 above x_hi
    chain: list[int] = [0]
    for j in range(1, n):
        while len(chain) >= 2:
            a, v = chain[-2], chain[-1]
            mass = c.kink(v, c.span_slope(a, v, target), c.span_slope(v, j, target))
            if mass.lower() > 0:
                break
            chain.pop()
        chain.append(j)
    masses = [zero] * n
    for idx, v in enumerate(chain):  # the end vertices too: slope −1 on the left, 0 on the right
        left = left0 if idx == 0 else c.span_slope(chain[idx - 1], v, target)
        right = right_end if idx == len(chain) - 1 else c.span_slope(v, chain[idx + 1], target)
        m = c.kink(v, left, right)
        if not m.lower() >= 0:
            raise LowerPairError(f"lower pair: the kink at grid loss {c.k[v]}h is not proven convex")
        masses[v] = m
    # verify every cell of the final curve against H
    curve_values = list(target)
    for a, b in zip(chain, chain[1:]):
        slope, unit = c.span_slope(a, b, target)
        for i in range(a + 1, b):
            base = target[a] if (unit == "G" or not c.g_side(a)) else target[a] + 1 - c.x[a]
            value = base + slope * (c.x[i] - c.x[a])
            if unit == "H" and c.g_side(i):
                value = value - (1 - c.x[i])  # back to G-units
            curve_values[i] = value
    for i in range(n - 1):
        u, v = c.f[i] - curve_values[i], c.f[i + 1] - curve_values[i + 1]
        # native 0 at both ends of a cell on one side of x = 1 (x = 1 itself counts on both sides: there 1 − x = 0):
        # the floor (1 − x)_+ itself, below every curve (nothing to verify; u, v may round below 0). A chord
        # across x = 1 is above the floor and is verified like any other.
        on_floor = curve_values[i].is_zero() and curve_values[i + 1].is_zero() and c.one_side(i)
        if on_floor:
            continue
        if not (u.lower() >= 0 and v.lower() >= 0 and cells[i].holds(u, v)):
            raise LowerPairError(f"lower pair: cell [{c.k[i]}h, {c.k[i + 1]}h] is not proven below H")
    checks = {"cells_verified": n - 1, "hull_vertices": len(chain), "floor_points": sum(floor),
              "cell_checks": checked}
    return masses, checks


def precision(bits: int, h: Fraction) -> int:
    """Arb working precision for a grid step h: the masses are second differences of H over cells of
    width about h, which cancel about 2·log2(1/h) bits, on top of the fixed-point bits and the guard."""
    return bits + GUARD_BITS + 2 * max(0, h.denominator.bit_length() - h.numerator.bit_length())


def discretize(q: Fraction, sigma: Fraction, grid: Grid, bits: int, budget: Fraction | None = None,
               pair: str = "sgm") -> StepPLD:
    """The two fixed-point discrete pairs of one step on ``grid`` (module docstring): of SG(q, σ) (``pair``
    "sgm"), of the replace-one mixture pair of Poisson sampling ("replace-one"), or for fixed-size batches
    under replace-one ("fixed-replace-one": the upper pair from the symmetrised curve of SG(q, σ/2), the
    lower pairs from SG(q, σ/2)'s remove curve; :mod:`rdp_verify.curves.replace_one`).

    With a ``budget`` (SG's curve only), the curve is evaluated only at the grid points :func:`grid_points`
    selects (where it is nearly linear, every 2^j-th point); the pairs' atoms lie on those points, the masses of the
    others are 0. Both pairs stay proven (a chord over several cells is as valid as over one); only
    their distance from the curve grows, by at most the budget. Where the dominated pair cannot be
    verified on this grid, its masses are all 0: every δ read off it is 0, a true lower bound.
    """
    prec = precision(bits, grid.h)
    if pair not in PAIRS:
        raise ValueError(f"pair={pair!r}: one of {', '.join(PAIRS)}")
    if pair == "sgm":
        curve = lower_curve = StepCurve(q, sigma, prec)
    elif pair == "replace-one":
        curve = lower_curve = ReplaceOneCurve(q, sigma, prec)
    else:
        curve, lower_curve = SymmetrisedCurve(q, sigma, prec), StepCurve(q, sigma / 2, prec)
    ks = grid_points(q, sigma, grid, budget) if budget is not None and pair == "sgm" \
        else list(range(grid.k_lo, grid.k_hi + 1))
    return StepPLD(q=q, sigma=sigma, grid=grid, bits=bits, **curve_pairs(curve, lower_curve, grid, ks, bits, prec),
                   pair=pair)


def curve_pairs(curve: Any, lower_curve: Any, grid: Grid, ks: list[int], bits: int, prec: int) -> dict[str, Any]:
    """The fixed-point masses of the dominating pair (connect the dots on ``curve``) and the dominated pair (lowered
    chords on ``lower_curve``) at the grid points ``ks``, both directions (module docstring), as :class:`StepPLD`'s
    fields. A curve gives ``values(x, g_side, t, k)`` (G or H and its slope at the grid point x = anchor·e^{kh},
    balls), ``curvature_bound(a, b, ks)`` (≥ sup H'' on the open cell between the grid points of indices ks, +∞
    allowed: the tangent bounds then decide) and ``q_exact`` (t = x − (1 − q_exact) is passed to ``values``): :class:`rdp_verify.curves.single_step.StepCurve`, or another mechanism's curve
    (:class:`rdp_verify.mechanisms.laplace.LaplaceCurve`)."""
    with ctx.workprec(prec):
        c = _Curve(curve, grid, ks)
        upper, upper_inf, q_minus_inf = _upper_masses(c)
        c_lower = c if lower_curve is curve else _Curve(lower_curve, grid, ks)
        try:
            lower, checks = _lower_masses(lower_curve, c_lower)
        except ArithmeticError as exc:  # no verified dominated pair on this grid (LowerPairError, or a bound that
            # the working precision could not make finite): the trivial lower bound δ ≥ 0
            lower, checks = [arb(0)] * len(c.x), {"lower_pair": f"refused ({exc}): masses 0, lower bound 0"}
        scale = arb(2) ** bits
        q_weights = [1 / x for x in c.x]  # Q-mass = P-mass·e^{−loss} = P-mass/x

        def dense(values: list[int]) -> tuple[int, ...]:
            out = [0] * grid.size
            for k, v in zip(ks, values):
                out[k - grid.k_lo] = v
            return tuple(out)

        return {
            "remove_upper": dense([_upper_int(m, scale) for m in upper]),
            "remove_upper_inf": _upper_int(upper_inf, scale),
            "remove_lower": dense([_lower_int(m, scale) for m in lower]),
            "add_upper": dense([_upper_int(m * w, scale) for m, w in zip(upper, q_weights)]),
            "add_upper_inf": _upper_int(q_minus_inf, scale),
            "add_lower": dense([_lower_int(m * w, scale) for m, w in zip(lower, q_weights)]),
            "checks": {**checks, "points_evaluated": len(ks)},
        }


_SELECTED: dict[tuple[Fraction, Fraction, Grid, Fraction], list[int]] = {}  # the last few selections (a check
# counts them before it discretises, with the same arguments)


class TooManyPoints(ValueError):
    """:func:`grid_points` would select more than its ``max_points``."""


def grid_points(q: Fraction, sigma: Fraction, grid: Grid, budget: Fraction, max_points: int | None = None) -> list[int]:
    """:func:`_grid_points`, remembered for the last few arguments; with ``max_points``, the walk stops and
    raises :class:`TooManyPoints` as soon as it selects more (so a forged budget costs no more than that)."""
    key = (q, sigma, grid, budget)
    if key not in _SELECTED:
        points = _grid_points(q, sigma, grid, budget, max_points)
        while len(_SELECTED) >= 4:
            del _SELECTED[next(iter(_SELECTED))]
        _SELECTED[key] = points
    points = _SELECTED[key]
    if max_points is not None and len(points) > max_points:
        raise TooManyPoints(f"more than {max_points} grid points selected")
    return list(points)


def _grid_points(q: Fraction, sigma: Fraction, grid: Grid, budget: Fraction, max_points: int | None) -> list[int]:
    """The grid points at which the curve is evaluated: walking away from the peak of H'', each span is as
    long as 2^j grid cells allows while the chord's Taylor gap Δ²·H''/8 stays within ``budget`` (H'' =
    σφ(z/σ)/t decreases away from its peak, so the largest H'' of a span is at its end nearer the peak).
    The walk re-tests the stride at every point (about two evaluations per point kept). Decided in
    mpmath at a fixed precision: the same points on every machine.
    """
    with mpmath.workdps(_DPS):
        s, qm, hm = (mpmath.mpf(x.numerator) / x.denominator for x in (sigma, q, grid.h))
        a = mpmath.mpf(grid.anchor.numerator) / grid.anchor.denominator
        offset = a - 1 + qm
        limit = mpmath.mpf(budget.numerator) / budget.denominator

        def t(k: int) -> Any:
            return a * mpmath.expm1(k * hm) + offset

        at_near: dict[int, Any] = {}  # near -> (H''(x_near), e^{near·h}): the walk asks at each point about twice

        def gap(near: int, far: int) -> Any:  # Δ²·H''(x_near)/8 for the span between the two points
            if near not in at_near:
                tk = t(near)
                at_near.clear()  # the walk never returns to an earlier point
                at_near[near] = None if tk <= 0 else (s * mpmath.npdf(_z_at(q, sigma, tk) / s) / tk,
                                                      mpmath.exp(near * hm))
            if at_near[near] is None:
                return mpmath.mpf(0)
            curvature, e_near = at_near[near]
            width = a * abs(mpmath.exp(far * hm) - e_near)
            return width * width * curvature / 8

        # H = 1 − x where t ≤ 0: the grid points there need no evaluation but the last one
        edge = grid.k_lo if t(grid.k_lo) > 0 else min(grid.k_hi, int(mpmath.floor(mpmath.log1p(-offset / a) / hm)) + 1)
        while edge > grid.k_lo and t(edge - 1) > 0:  # guard the rounding of the floor above
            edge -= 1
        while t(edge) <= 0:
            edge += 1
        # the peak of H'' on t > 0: t_c = q·e^{−3/(2σ²)} (z = −1), clamped to [edge, k_hi]
        t_c = qm * mpmath.exp(-3 / (2 * s * s))
        ratio = (t_c - offset) / a
        peak = int(mpmath.floor(mpmath.log1p(ratio) / hm)) if ratio > -1 else edge
        peak = min(max(peak, edge), grid.k_hi)
        one = int(mpmath.floor(-mpmath.log(a) / hm))  # x_one ≤ 1 < x_{one + 1}: no chord may jump over x = 1
        points = {grid.k_lo, max(edge - 1, grid.k_lo), edge, grid.k_hi, peak,
                  min(max(one, grid.k_lo), grid.k_hi), min(max(one + 1, grid.k_lo), grid.k_hi)}
        # the peak of H'' lies in the cell [peak, peak + 1]: walk right from its right end, left from its left end
        points.add(min(peak + 1, grid.k_hi))
        for d, end in ((1, grid.k_hi), (-1, edge)):
            k, stride = (min(peak + 1, grid.k_hi) if d == 1 else peak), 1
            while k != end:
                # the span's width grows with x while H'' falls, so the allowed stride can shrink again: re-test it
                # at every point, halving it until the span is flat enough, or doubling it while it stays so
                while stride > 1 and gap(k, k + d * stride) > limit:
                    stride //= 2
                while stride < 2**20 and gap(k, k + d * 2 * stride) <= limit:
                    stride *= 2
                k = min(k + stride, end) if d == 1 else max(k - stride, end)
                points.add(k)
                if max_points is not None and len(points) > max_points:
                    raise TooManyPoints(f"more than {max_points} grid points selected")
    return sorted(points)


# -- choosing the grid (heuristics in deterministic mpmath: any choice gives proven bounds) -----------

_DPS = 30  # mpmath digits for the grid heuristics: results are the same on every machine
_SPREAD_DPS = 15  # digits of the loss's standard deviation (only the first step size's heuristic uses it)


def _z_at(q: Fraction, sigma: Fraction, t: Any) -> Any:
    """The z where the remove pair's likelihood ratio w(z) is x = 1 − q + t, or None for t ≤ 0:
    w(z) = x ⟺ z = 1/2 + σ²·log(t/q)."""
    if t <= 0:
        return None
    qm = mpmath.mpf(q.numerator) / q.denominator
    s2 = mpmath.mpf(sigma.numerator) ** 2 / mpmath.mpf(sigma.denominator) ** 2
    return mpmath.mpf(1) / 2 + s2 * (mpmath.log(t) - mpmath.log(qm))


def _upper_tail(q: Fraction, sigma: Fraction, t: Any) -> Any:
    """P(Λ > 1 − q + t) for the remove pair (P = μ): q·Φ̄((z − 1)/σ) + (1 − q)·Φ̄(z/σ)."""
    z = _z_at(q, sigma, t)
    if z is None:
        return mpmath.mpf(1)
    s = mpmath.mpf(sigma.numerator) / sigma.denominator
    qm = mpmath.mpf(q.numerator) / q.denominator
    return qm * mpmath.ncdf(-(z - 1) / s) + (1 - qm) * mpmath.ncdf(-z / s)


def _lower_tail(q: Fraction, sigma: Fraction, t: Any) -> Any:
    """Q(Λ < 1 − q + t) for the remove pair (Q = μ0): Φ(z/σ); the add direction's mass beyond."""
    z = _z_at(q, sigma, t)
    if z is None:
        return mpmath.mpf(0)
    return mpmath.ncdf(z / (mpmath.mpf(sigma.numerator) / sigma.denominator))


def anchor_for(q: Fraction, sigma: Fraction, h: Fraction) -> Fraction:
    """The grid's anchor: 1, or a rational 1 − q + τ with 0 < τ < q (a heuristic in mpmath; any anchor
    gives proven bounds, this one keeps the lower bound tight).

    Under Q, t = Λ − (1 − q) = q·e^r with r ~ N(−1/(2σ²), 1/σ²), and the curve is linear below
    t = 0. A dominated pair with atoms only on the grid can leave the floor (1 − x)_+ only at a grid
    point: on the cell whose left end lies below 1 − q its lower curve must stay on the floor, so it
    loses G(x) = E_Q[(x − Λ)_+] at the cell's right end x. For σ ≪ 1 nearly all of Q's mass sits in a
    sliver of t far thinner than a cell, and on the lattice e^{kh} that loss is everything (the pair
    collapses). A grid anchored at x_0 = 1 − q + τ loses G(x_0) = τΦ(d) − qΦ(d − 1/σ),
    d = (log(τ/q) + 1/(2σ²))·σ, plus about m·Δ for the mass m of t in its first cell of width
    Δ = x_0·(e^h − 1). (The grid keeps one point below 1 − q, where the curve is linear, so the upper
    pair is exact there and moves no mass to loss −∞.) τ is chosen among q·e^r for r at −40 … 40
    standard deviations of r to minimise that sum; if the lattice e^{kh} (whose point just above 1 − q
    plays x_0) does as well, the anchor is 1.
    """
    if q == 1:
        return Fraction(1)
    with mpmath.workdps(_DPS):
        s, qm, hm = (mpmath.mpf(x.numerator) / x.denominator for x in (sigma, q, h))
        mean = -1 / (2 * s * s)

        def floor_loss(tau: Any) -> Any:  # G(1 − q + τ) = E_Q[(τ − t)_+]
            d = (mpmath.log(tau / qm) - mean) * s
            return tau * mpmath.ncdf(d) - qm * mpmath.ncdf(d - 1 / s)

        def loss(tau: Any) -> Any:
            d = (mpmath.log(tau / qm) - mean) * s
            width = (1 - qm + tau) * mpmath.expm1(hm)
            d2 = (mpmath.log((tau + width) / qm) - mean) * s
            return floor_loss(tau) + (mpmath.ncdf(d2) - mpmath.ncdf(d)) * width

        k = mpmath.ceil(mpmath.log1p(-qm) / hm)  # the lattice point e^{kh} just above 1 − q
        usual = mpmath.exp(k * hm) - (1 - qm)
        best, tau = (loss(usual), None) if usual > 0 else (mpmath.inf, None)
        for j in range(-80, 81):
            candidate = qm * mpmath.exp(mean + j / (2 * s))
            if candidate < qm / 2:
                value = loss(candidate)
                if value < best:
                    best, tau = value, candidate
        if tau is None:
            return Fraction(1)
        tau = Fraction(mpmath.nstr(tau, 3, strip_zeros=False, min_fixed=1, max_fixed=0))
    return 1 - q + tau


def _last_index(fn: Any, start: int, step: int) -> int:
    """Starting at a k with fn(k) true, the last k in the direction of ``step`` (±1) with fn(k) true
    (fn true up to some point, then false): doubling, then bisection."""
    good, jump = start, 1
    while fn(start + step * jump):
        good, jump = start + step * jump, jump * 2
    bad = start + step * jump
    while abs(bad - good) > 1:
        mid = (good + bad) // 2
        good, bad = (mid, bad) if fn(mid) else (good, mid)
    return good


def _bisect(fn: Any, a: Any, b: Any) -> Any:
    """A point near the switch of a predicate that is true at ``a`` and false at ``b`` (100 halvings)."""
    for _ in range(100):
        mid = (a + b) / 2
        a, b = (mid, b) if fn(mid) else (a, mid)
    return (a + b) / 2


def grid_range(q: Fraction, sigma: Fraction, h: Fraction, tail: Fraction, pair: str = "sgm") -> Grid:
    """A grid on the anchor's lattice (:func:`anchor_for`) wide enough that each direction's one-step
    tail beyond it has mass at most ``tail``.

    With x_k = anchor·e^{kh}: k_hi is the smallest k with P(Λ > x_k) ≤ tail; k_lo is, on an anchored
    lattice, the last point at or below 1 − q (one or a few points below the anchor), else the largest
    k < 0 with Q(Λ < x_k) ≤ tail (since P(Λ > 1) and Q(Λ < 1) are at least 1/2, the range straddles x = 1). Computed in mpmath at a fixed precision, so the grid is the same on
    every machine; the certificate records it and ``check`` recomputes it. The choice only affects
    tightness: whatever lies beyond the grid is accounted for safely (the upper pair's tail mass goes
    to ±∞, the lower pair's curve to the floor).

    The replace-one curves (``pair``) are symmetric: their grid is −k_hi … k_hi on the lattice h·ℤ, k_hi the
    smallest k ≥ 1 with P(log Λ > kh) ≤ ``tail`` (for fixed-size batches, Λ of SG(q, σ/2)'s remove pair).
    """
    if pair != "sgm":
        with mpmath.workdps(_DPS):
            hm, limit = mpmath.mpf(h.numerator) / h.denominator, mpmath.mpf(tail.numerator) / tail.denominator
            qm = mpmath.mpf(q.numerator) / q.denominator

            def above(k: int) -> bool:
                if pair == "replace-one":
                    return replace_tail(q, sigma, k * hm) > limit
                return _upper_tail(q, sigma / 2, mpmath.expm1(k * hm) + qm) > limit

            k = _last_index(above, 1, 1) + 1 if above(1) else 1
        return Grid(h, -k, k)
    anchor = anchor_for(q, sigma, h)
    with mpmath.workdps(_DPS):
        hm = mpmath.mpf(h.numerator) / h.denominator
        limit = mpmath.mpf(tail.numerator) / tail.denominator
        a = mpmath.mpf(anchor.numerator) / anchor.denominator
        offset = a - 1 + mpmath.mpf(q.numerator) / q.denominator  # t_k = anchor·expm1(kh) + offset

        def t(k: int) -> Any:
            return a * mpmath.expm1(k * hm) + offset

        k0 = int(mpmath.floor(-mpmath.log(a) / hm)) + 1  # the smallest k with x_k > 1

        def upper_above(k: int) -> bool:
            return _upper_tail(q, sigma, t(k)) > limit

        def lower_above(k: int) -> bool:
            return _lower_tail(q, sigma, t(k)) > limit

        k_hi = _last_index(upper_above, k0, 1) + 1 if upper_above(k0) else k0
        if anchor < 1:  # the last point at or below 1 − q: the curve is linear there, the upper pair exact
            k_lo = int(mpmath.floor(mpmath.log((1 - mpmath.mpf(q.numerator) / q.denominator) / a) / hm))
            while t(k_lo) > 0:
                k_lo -= 1
        else:
            k_lo = _last_index(lower_above, -1, -1) - 1 if lower_above(-1) else -1
    return Grid(h, k_lo, k_hi, anchor)


def loss_scale(q: Fraction, sigma: Fraction, tail: Fraction, pair: str = "sgm") -> tuple[float, float]:
    """(width, spread): the width of the one-step loss range outside which each direction has mass at
    most ``tail``, and the standard deviation of the remove pair's loss under P (a heuristic in mpmath
    for the grid's first step size; never a bound). ``pair`` "replace-one": the same for that pair.
    """
    if pair == "replace-one":
        return replace_loss_scale(q, sigma, tail)
    if pair == "fixed-replace-one":  # the remove pair of SG(q, σ/2), whose range and spread the symmetrised curve shares
        sigma = sigma / 2
    with mpmath.workdps(_DPS):
        limit = mpmath.mpf(tail.numerator) / tail.denominator
        qm = mpmath.mpf(q.numerator) / q.denominator
        s = mpmath.mpf(sigma.numerator) / sigma.denominator
        # the loss is increasing in z: the range's ends are the z-quantiles of P's upper and Q's lower tail
        hi = _bisect(lambda z: qm * mpmath.ncdf(-(z - 1) / s) + (1 - qm) * mpmath.ncdf(-z / s) > limit,
                     -80 * s, 1 + 80 * s)
        lo = _bisect(lambda z: mpmath.ncdf(z / s) <= limit, -80 * s, 80 * s)

        def loss(z: Any) -> Any:  # log(1 − q + q·e^r) without cancellation
            r = (2 * z - 1) / (2 * s * s)
            return r if q == 1 else mpmath.log1p(qm * mpmath.expm1(r))

        width = loss(hi) - loss(lo)
        # Var_P(L) = E_{μ0}[w·(log w)²] − E_{μ0}[w·log w]², by quadrature over z
        seen: dict[Any, tuple[Any, Any]] = {}

        def at(z: Any) -> tuple[Any, Any]:  # (density, loss) at z, μ = μ0·w; both quadratures use the same nodes
            # (same intervals, rule and precision): each node is evaluated once
            if z not in seen:
                ell = loss(z)
                seen[z] = (mpmath.npdf(z, 0, s) * mpmath.exp(ell), ell)
            return seen[z]

        cut = sorted({mpmath.mpf(0), mpmath.mpf(1), lo, hi})
        with mpmath.workdps(_SPREAD_DPS):  # a step size needs a few digits, not thirty: four times faster
            m1 = mpmath.quad(lambda z: at(z)[0] * at(z)[1], [-mpmath.inf] + cut + [mpmath.inf])
            m2 = mpmath.quad(lambda z: at(z)[0] * at(z)[1] ** 2, [-mpmath.inf] + cut + [mpmath.inf])
            return float(width), float(mpmath.sqrt(max(m2 - m1 * m1, 0)))
